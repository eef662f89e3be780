"""Which (run, query) pairs are evaluated: the query table, and its warnings.

A query counts when it has a label. ``missing="zero"``: queries in the qrels that a
run lacks score 0 and are named in a warning; ``"skip"``: only queries in both.
Queries only in the run are dropped with a warning. One place for both rules, used
by :func:`~searcheval_frames.core.evaluate.evaluate`, the curves and the partitioned
and distributed paths.
"""

from __future__ import annotations

import warnings

import polars as pl

from .._deprecation import outside_stacklevel
from ..errors import IdMismatchError, SearchEvalWarning
from .ranking import RankedJudged

KEYS = ["run", "query_id"]


def _examples(ids: pl.Series, n: int = 3) -> str:
    vals = ids.unique(maintain_order=True).head(n).to_list()
    return ", ".join(repr(v) for v in vals)


def query_table(
    run_q: pl.DataFrame, runs: pl.DataFrame, qrels: pl.DataFrame, missing: str
) -> pl.DataFrame:
    """(run, query_id) pairs to evaluate, with warnings for what is dropped or zeroed.

    ``run_q`` holds the distinct (run, query_id) pairs of the run, ``runs`` the run names.
    """
    judged_q = qrels.select("query_id").unique()
    overlap = run_q.join(judged_q, on="query_id", how="semi")
    if overlap.height == 0:
        raise IdMismatchError(
            "the run and the qrels have no query id in common. Run query ids look like "
            f"{_examples(run_q['query_id'])}; qrels query ids look like "
            f"{_examples(qrels['query_id'])}. Check that both use the same id scheme "
            "(e.g. '301' vs 'q301', or a query text column read as the id), or pass "
            "columns={'query_id': ...}."
        )
    only_run = run_q.join(judged_q, on="query_id", how="anti").select("query_id").unique()
    if only_run.height:
        ids = only_run.sort("query_id")["query_id"].to_list()
        warnings.warn(
            f"{len(ids)} query id(s) in the run have no relevance labels and are not "
            f"evaluated: {_short(ids)}",
            SearchEvalWarning,
            stacklevel=outside_stacklevel(),
        )
    if missing == "skip":
        return overlap
    table = runs.join(judged_q, how="cross")
    lacking = table.join(run_q, on=KEYS, how="anti")
    if lacking.height:
        per_run = lacking.group_by("run", maintain_order=True).agg(pl.col("query_id").sort())
        for name, ids in per_run.iter_rows():
            warnings.warn(
                f"run {name!r} has no results for {len(ids)} of {judged_q.height} judged "
                f"queries; they score 0 (as trec_eval -c): {_short(ids)}. Pass "
                "missing='skip' to evaluate only the queries present in both.",
                SearchEvalWarning,
                stacklevel=outside_stacklevel(),
            )
    return table


def query_plan(
    run: pl.DataFrame, ranked: RankedJudged, qrels: pl.DataFrame, missing: str
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The run names in order of first appearance and the (run, query_id) pairs to evaluate.

    Shared by :func:`~searcheval_frames.core.evaluate.evaluate_frames` and :mod:`searcheval_frames.figures.curves`, so both treat
    missing and unjudged queries (and warn about them) the same way.
    """
    names = ranked.num_ret.get_column("run").unique()
    if names.len() > 1:  # keep the order in which runs first appear
        names = run.get_column("run").unique(maintain_order=True)
    run_order = pl.DataFrame({"run": names})
    return run_order, query_table(ranked.num_ret.select(KEYS), run_order, qrels, missing)


def _short(ids: list[str], n: int = 5) -> str:
    text = ", ".join(repr(i) for i in ids[:n])
    return text + (f" and {len(ids) - n} more" if len(ids) > n else "")
