"""A query log as distinct normalised queries with their counts (what the sampler draws from).

A log is one row per search (a ``query`` column; repeated texts are counted) or one row
per query with its ``count``; any frame kind, a dict ``{query: count}``, or a CSV / TSV /
Parquet / JSON Lines file. Texts are normalised before counting
(:mod:`~searcheval_frames.evalset.queryset.normalize`), so one query typed two ways is
one query; the text shown is its most frequent spelling. The counting is two polars
``group_by`` passes (raw texts, then their normalised forms): no Python loop over rows.

>>> import polars as pl
>>> t = log_table(pl.DataFrame({"query": ["BM25", "bm25 ", "hnsw", "bm25"]}), "demo")
>>> t.select("query", "count").rows()
[('bm25', 3), ('hnsw', 1)]
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import polars as pl

from ...errors import InvalidOptionError, MissingColumnError, format_rows
from ...frames import find_column
from ...frames.kinds import to_polars
from ...io.texts import read_docs
from ...options import option_error
from .normalize import Normalize, normalize_frame

__all__ = ["COUNT_COLUMNS", "LOG_QUERY_COLUMNS", "LogError", "log_columns", "log_table"]

LOG_QUERY_COLUMNS = ("query", "query_text", "search_query", "search_term", "search", "keywords",
                     "term", "q", "text", "question")
COUNT_COLUMNS = ("count", "frequency", "freq", "searches", "n_searches", "hits", "volume", "n")
QID_COLUMNS = ("query_id", "qid")


class LogError(InvalidOptionError):
    """The query log cannot be sampled as given (what is wrong and how to fix it)."""


def _frame(log: Any, func: str) -> pl.DataFrame:
    if isinstance(log, Mapping):
        return pl.DataFrame({"query": [str(k) for k in log], "count": list(log.values())},
                            strict=False)
    if isinstance(log, str | os.PathLike):
        return read_docs(log, "log")
    return to_polars(log, "log")


def log_columns(df: pl.DataFrame, columns: Mapping[str, str] | None,
                func: str) -> tuple[str, str | None, str | None]:
    """(query, count or None, query_id or None) column names of a log frame."""
    given = dict(columns or {})
    if set(given) - {"query", "count", "query_id"}:
        raise option_error(func, "columns", given, "its keys are 'query', 'count' and "
                           "'query_id' (values: your column names)", "columns={'query': 'q'}")
    for key, col in given.items():
        if col not in df.columns:
            raise MissingColumnError(f"{func}(columns={given!r}): the log has no column {col!r} "
                                     f"(for {key!r}); its columns are {df.columns}")
    qid = given.get("query_id") or find_column(df, QID_COLUMNS)
    query = given.get("query") or find_column(df, LOG_QUERY_COLUMNS, exclude=[qid or ""])
    if query is None:
        raise MissingColumnError(
            f"{func}: the log has no query text column; its columns are {df.columns}. "
            f"Recognised names: {', '.join(LOG_QUERY_COLUMNS)}. Name it, e.g. "
            "columns={'query': 'search_terms'}")
    count = given.get("count") or find_column(df, COUNT_COLUMNS, exclude=[query, qid or ""])
    return query, count, qid


def _check_query_column(df: pl.DataFrame, query: str, func: str) -> pl.DataFrame:
    dtype = df.schema[query]
    if dtype == pl.Categorical or isinstance(dtype, pl.Enum):
        return df.with_columns(pl.col(query).cast(pl.String))
    if dtype not in (pl.String, pl.Null):
        raise LogError(
            f"{func}: the query column {query!r} holds {dtype}, not text:\n"
            f"{format_rows(df.select(query))}\nPoint columns={{'query': ...}} at the column "
            "with the query texts")
    return df


def _check_counts(df: pl.DataFrame, count: str, func: str) -> pl.DataFrame:
    dtype = df.schema[count]
    if not dtype.is_numeric():
        raise LogError(f"{func}: the count column {count!r} holds {dtype}, not numbers:\n"
                       f"{format_rows(df.select(count))}\nGive searches per query as integers")
    rows = df.with_row_index("row")
    bad = rows.filter(pl.col(count).is_null() | pl.col(count).is_nan()
                      if dtype.is_float() else pl.col(count).is_null())
    if bad.height:
        raise LogError(f"{func}: {bad.height} row(s) of the log have no count:\n"
                       f"{format_rows(bad.select('row', count))}\nFill them or drop them")
    neg = rows.filter(pl.col(count) < 0)
    if neg.height:
        raise LogError(f"{func}: {neg.height} row(s) of the log have a negative count:\n"
                       f"{format_rows(neg.select('row', count))}\nCounts are searches per "
                       "query (>= 0); fix the log")
    if dtype.is_float():
        frac = rows.filter(pl.col(count) != pl.col(count).floor())
        if frac.height:
            raise LogError(f"{func}: {frac.height} count(s) are not whole numbers:\n"
                           f"{format_rows(frac.select('row', count))}\nCounts are searches")
    return df.with_columns(pl.col(count).cast(pl.Int64))


def _empty_rows(df: pl.DataFrame, query: str, func: str) -> LogError:
    rows = df.with_row_index("row").filter(
        pl.col(query).is_null() | (pl.col("_key").fill_null("") == ""))
    return LogError(f"{func}: {rows.height} row(s) of the log have an empty query (after "
                    f"normalisation):\n{format_rows(rows.select('row', query))}\nDrop them "
                    "first, e.g. log.filter(pl.col('query').str.strip_chars() != '')")


def log_table(log: Any, func: str, *, normalize: Normalize = True,
              columns: Mapping[str, str] | None = None) -> pl.DataFrame:
    """Distinct queries: ``key`` (normalised), ``query`` (most frequent spelling), ``count``,
    ``log_query_id`` (the log's id of that spelling, or null), most frequent first (ties by
    ``key``). Raises :class:`LogError` for an unusable log."""
    df = _frame(log, func)
    query, count, qid = log_columns(df, columns, func)
    df = _check_query_column(df, query, func)
    if count is not None:
        df = _check_counts(df, count, func)
    keys = [query] if qid is None else [query, qid]
    n = pl.col(count).sum() if count is not None else pl.len()
    raw = df.group_by(keys).agg(n.cast(pl.Int64).alias("count"))
    raw = normalize_frame(raw, query, normalize, "_key")
    if raw.filter(pl.col(query).is_null() | (pl.col("_key").fill_null("") == "")).height:
        raise _empty_rows(normalize_frame(df.select(query), query, normalize, "_key"), query,
                          func)
    ident = pl.col(qid).cast(pl.String) if qid is not None else pl.lit(None, pl.String)
    raw = raw.with_columns(ident.alias("log_query_id"), pl.col(query).str.strip_chars())
    raw = raw.group_by("_key", query).agg(pl.col("log_query_id").first(), pl.col("count").sum())
    out = (raw.group_by("_key").agg(
               pl.col(query).sort_by(["count", query], descending=[True, False]).first()
               .alias("query"),
               pl.col("log_query_id").sort_by(["count", query], descending=[True, False])
               .first(), pl.col("count").sum())
           .rename({"_key": "key"})
           .sort("count", "key", descending=[True, False]))
    if count is None and out.height and int(out["count"].max()) <= 1:  # type: ignore[arg-type]
        raise LogError(
            f"{func}: the log has no count column and no query occurs twice ({out.height} "
            "rows, all different): that is a list of queries, not a log of searches, so "
            "nothing says which queries are frequent. Pass one row per search, or a count "
            f"column (recognised: {', '.join(COUNT_COLUMNS)}; or columns={{'count': ...}})")
    return out.select("key", "query", "count", "log_query_id")
