"""Slices of the queries: which slice each query is in, and evaluate's ``by=``.

A *slice* is a value of a query attribute: a column of a query-metadata frame
(``queries=``, one row per query with ``query_id`` and e.g. ``intent``,
``length_bucket``, ``dataset``) or a polars expression over that frame
(``pl.col("query").str.split(" ").list.len() <= 3``). Every measure depends on one
query's rows only, so the value of a slice is the aggregate (mean, sum or geometric
mean, exactly as :func:`~searcheval_frames.evaluate` aggregates) of its queries'
values: the same number as evaluating the run and qrels filtered to those queries.

:func:`slice_keys` is shared by ``evaluate(by=)``, ``compare(by=)``
(:mod:`searcheval_frames.analysis.slices`) and the report, so that they cut the
queries the same way. (A leaderboard can take ``by=`` the same way: evaluate per
query, :func:`attach_slices`, and rank within each slice.)
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import polars as pl

from .._deprecation import outside_stacklevel
from ..errors import DuplicateRowsError, MissingColumnError, SearchEvalWarning
from ..frames import is_path, to_polars
from ..options import option_error
from .results import summarize

__all__ = ["By", "attach_slices", "evaluate_by", "slice_columns", "slice_keys"]

#: what ``by=`` accepts: a column name, a polars expression, or a list of them
By = str | pl.Expr | Sequence[str | pl.Expr]


def _queries_frame(queries: Any, func: str) -> pl.DataFrame:
    if queries is None:
        raise option_error(func, "queries", queries, "by= needs queries=: a frame with a "
                           "query_id column and the attribute to slice by, or a query file "
                           "(read with sef.read_queries)",
                           "queries=pd.DataFrame({'query_id': [...], 'intent': [...]})")
    if is_path(queries):
        from ..io import read_queries

        df = read_queries(queries)
    else:
        df = to_polars(queries, "queries")
    if isinstance(df, pl.LazyFrame):
        df = df.collect()
    if "query_id" not in df.columns:
        raise MissingColumnError(
            f"queries= has no 'query_id' column (columns: {', '.join(df.columns)}); "
            "rename the query id column to query_id")
    return df.with_columns(pl.col("query_id").cast(pl.String))


def _exprs(by: Any, func: str = "evaluate") -> list[pl.Expr]:
    items = [by] if isinstance(by, str | pl.Expr) else list(by) if isinstance(by, Sequence) \
        else None
    if not items or not all(isinstance(b, str | pl.Expr) for b in items):
        raise option_error(func, "by", by, "must be a column of queries=, a polars "
                           "expression over it, or a list of them",
                           "by='intent' or by=pl.col('query').str.len_chars() > 30")
    return [pl.col(b) if isinstance(b, str) else b for b in items]


def slice_columns(by: Any) -> list[str]:
    """The names of the slice columns ``by`` makes (a column's name, an expression's
    output name).

    >>> slice_columns(["intent", pl.col("query").str.len_chars().alias("chars")])
    ['intent', 'chars']
    """
    return [e.meta.output_name() for e in _exprs(by)]


def slice_keys(queries: Any, by: Any, func: str = "evaluate") -> pl.DataFrame:
    """``query_id`` and one column per ``by`` item, one row per query of ``queries``
    (``func``: the public function called, for the messages).

    >>> q = pl.DataFrame({"query_id": ["1", "2"], "query": ["a b c", "d"]})
    >>> slice_keys(q, (pl.col("query").str.split(" ").list.len() > 1).alias("long")).rows()
    [('1', True), ('2', False)]
    """
    df = _queries_frame(queries, func)
    exprs = _exprs(by, func)
    for e in exprs:
        missing = [c for c in e.meta.root_names() if c not in df.columns]
        if missing:
            raise MissingColumnError(
                f"by=: queries= has no column {missing[0]!r} (it has: {', '.join(df.columns)}); "
                "add it to the query frame or slice by one of those")
    keys = df.select("query_id", *exprs)
    names = keys.columns[1:]
    if len(set(names)) != len(names) or "query_id" in names:
        raise option_error(func, "by", by, f"the slices need distinct names other than "
                           f"query_id (these are {names}); name expressions with .alias()",
                           "by=[pl.col('query').str.len_chars().alias('chars')]")
    dup = keys.filter(pl.col("query_id").is_duplicated())
    if dup.height:
        raise DuplicateRowsError(
            f"queries=: query {dup['query_id'][0]!r} appears {dup.height} times; a query "
            "belongs to one slice, so give one row per query_id")
    return keys


def attach_slices(per_query: pl.DataFrame, keys: pl.DataFrame, what: str = "evaluate") -> pl.DataFrame:
    """``per_query`` (with ``query_id``) plus the slice columns of ``keys``.

    Queries absent from the metadata get null slices, named in a warning (they are
    still counted, in a slice of their own).
    """
    out = per_query.join(keys, on="query_id", how="left")
    lacking = per_query.join(keys, on="query_id", how="anti")["query_id"].unique(
        maintain_order=True)
    if lacking.len():
        shown = ", ".join(lacking.head(5).to_list())
        warnings.warn(
            f"{what}(by=...): {lacking.len()} evaluated queries have no row in queries= "
            f"({shown}{', ...' if lacking.len() > 5 else ''}); they form a null slice",
            SearchEvalWarning, stacklevel=outside_stacklevel())
    return out


def evaluate_by(per_query: pl.DataFrame, keys: pl.DataFrame) -> pl.DataFrame:
    """``run, <slices>, measure, n_queries, value``: evaluate's aggregate per slice.

    ``per_query``: evaluate's long per-query result (canonical names).
    """
    names = keys.columns[1:]
    sliced = attach_slices(per_query, keys)
    parts = []
    for group, sub in sliced.group_by(names, maintain_order=True):
        # queries per run (with missing="skip" the runs of a slice may differ)
        n = sub.group_by("run").agg(pl.col("query_id").n_unique().cast(pl.Int64)
                                    .alias("n_queries"))
        agg = summarize(sub.drop(names)).join(n, on="run", how="left")
        parts.append(agg.with_columns(
            *(pl.lit(v, dtype=sliced.schema[c]).alias(c) for c, v in zip(names, group, strict=True))))
    if not parts:
        return pl.DataFrame(schema={"run": pl.String, **{c: sliced.schema[c] for c in names},
                                    "measure": pl.String, "n_queries": pl.Int64,
                                    "value": pl.Float64})
    out = pl.concat(parts).select("run", *names, "measure", "n_queries", "value")
    order = per_query.select("run").unique(maintain_order=True).with_row_index("_r")
    return out.join(order, on="run").sort(["_r", *names], nulls_last=True,
                                          maintain_order=True).drop("_r")
