"""``evaluate(dataset=)`` and ``evaluate(weights=)``: per-query values evaluated once, then
kept apart by dataset (issue #35) or averaged per search (issue #34).

:func:`~searcheval_frames.core.evaluate.evaluate` passes itself in (``evaluate_fn``) with
its arguments, as it does for ``by=``, so this module never imports it back.

* ``dataset="collection"``: a column of the runs **and** the qrels naming each query's
  dataset. Each dataset's runs are evaluated against that dataset's qrels only, so a
  query id two datasets share stays two queries; the summary is one row per
  ``run, <dataset>, measure`` with ``n_queries`` (the value of a dataset equals
  ``evaluate`` on the runs and qrels filtered to it).
* ``weights=``: the traffic-weighted mean of the sampled test queries beside the plain
  one (:func:`~searcheval_frames.core.weights.weighted_summary`: the Hájek estimator and
  its design-bootstrap interval); with ``per_query=True`` each query's ``weight``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl

from ..errors import IdMismatchError, InvalidOptionError, MissingColumnError
from ..frames import input_kind, is_path, to_native, to_polars
from .results import summarize
from .weights import weighted_summary, weights_table

__all__ = ["evaluate_datasets", "evaluate_weighted"]

_OWN = ("run", "qrels", "measures", "per_query", "dataset", "weights", "queries", "by")


def _options(args: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in args.items() if k not in _OWN}


def _frame(obj: Any, arg: str, dataset: str) -> pl.DataFrame:
    if obj is None or is_path(obj):
        raise InvalidOptionError(
            f"evaluate(dataset={dataset!r}): {arg} must be a dataframe holding the "
            f"{dataset!r} column; got {type(obj).__name__}. Example: "
            f"evaluate(pl.read_csv('data/structured/runs.csv'), qrels, ['nDCG@10'], "
            f"dataset={dataset!r})")
    df = to_polars(obj, arg)
    if dataset not in df.columns:
        raise MissingColumnError(
            f"evaluate(dataset={dataset!r}): {arg} has no column {dataset!r} (its columns: "
            f"{', '.join(df.columns)}); both the runs and the qrels name each query's "
            "dataset, e.g. dataset='collection'")
    return df.with_columns(pl.col(dataset).cast(pl.String))


def evaluate_datasets(evaluate_fn: Callable[..., Any], args: dict[str, Any]) -> Any:
    """``evaluate(run, qrels, measures, dataset=...)`` (``args``: its arguments)."""
    dataset = args["dataset"]
    run_df = _frame(args["run"], "run", dataset)
    qrels_df = _frame(args["qrels"], "qrels", dataset)
    options = _options(args)
    parts = []
    for (name,), part in run_df.partition_by(dataset, as_dict=True,
                                             maintain_order=True).items():
        q = qrels_df.filter(pl.col(dataset) == name).drop(dataset)
        if q.height == 0:
            raise IdMismatchError(
                f"evaluate(dataset={dataset!r}): the runs have dataset {name!r} but the "
                "qrels have no labels for it; give the qrels the same dataset column")
        pq = to_polars(evaluate_fn(part.drop(dataset), q, args["measures"], per_query=True,
                                   **options), "run")
        parts.append(pq.with_columns(pl.lit(name, pl.String).alias(dataset)))
    long = pl.concat(parts)
    if args["per_query"]:
        out = long.select("run", dataset, "query_id", "measure", "value")
    else:
        rows = []
        for (name,), sub in long.group_by(dataset, maintain_order=True):
            n = sub.group_by("run").agg(pl.col("query_id").n_unique().cast(pl.Int64)
                                        .alias("n_queries"))
            agg = summarize(sub.drop(dataset)).join(n, on="run", how="left")
            rows.append(agg.with_columns(pl.lit(name, pl.String).alias(dataset)))
        out = pl.concat(rows).select("run", dataset, "measure", "n_queries", "value")
    return to_native(out, input_kind(args["run"]))


def evaluate_weighted(evaluate_fn: Callable[..., Any], args: dict[str, Any]) -> Any:
    """``evaluate(run, qrels, measures, weights=...)`` (``args``: its arguments)."""
    weights, queries = args["weights"], args["queries"]
    long = to_polars(evaluate_fn(args["run"], args["qrels"], args["measures"],
                                 per_query=True, **_options(args)), "run")
    if args["per_query"]:
        table = weights_table(weights, queries, func="evaluate").select("query_id", "weight")
        out = long.join(table, on="query_id", how="left")
    else:
        out = weighted_summary(long, weights, queries=queries, summary=summarize(long),
                               func="evaluate")
    return to_native(out, input_kind(args["run"]))
