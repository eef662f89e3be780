"""Query-level error analysis: which queries got better, which got worse, by how much.

:func:`query_diff` lays the per-query scores of a run next to a baseline's and sorts
the differences, so the queries that got worse come first. It pairs queries exactly
as :func:`~searcheval_frames.compare` does (same ``missing=`` policy, same tie
tolerance), so its wins / ties / losses add up to the comparison's W/T/L.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import polars as pl

from ..core.evaluate import check_evaluate_options
from ..errors import InsufficientDataError, InvalidOptionError
from ..frames import input_kind, to_native
from ..options import check_choice, check_float
from ._inputs import queries_table
from .pairs import pair_queries as _pair_queries
from .pairs import per_query_input as _per_query_input
from .pairs import select_measures as _select_measures

__all__ = ["DIFF_COLUMNS", "diff_frame", "query_diff"]

#: Columns of :func:`query_diff`'s result (``query`` only when ``queries=`` is given).
DIFF_COLUMNS: tuple[str, ...] = (
    "run", "baseline", "measure", "query_id", "query", "baseline_value", "value", "delta",
    "outcome",
)
DEFAULT_MEASURE = "nDCG@10"


def diff_frame(
    pq: pl.DataFrame,
    *,
    baseline: str | None,
    run: str | None,
    measure: str | None,
    missing: str,
    tie_tolerance: float,
    queries: pl.DataFrame | None,
    func: str = "query_diff",
) -> pl.DataFrame:
    """The polars core of :func:`query_diff` on a canonical per-query frame."""
    measures = pq.get_column("measure").unique(maintain_order=True).to_list()
    if measure is None:
        if len(measures) != 1:
            raise InvalidOptionError(
                f"{func}: the per-query frame has several measures {measures}; pick one with "
                f"measure=, e.g. measure={measures[0]!r}"
            )
        measure = measures[0]
    pq, (meas,) = _select_measures(pq, [measure])
    names = pq.get_column("run").unique(maintain_order=True).to_list()
    base = baseline if baseline is not None else (names[0] if names else None)
    if base not in names:
        raise InvalidOptionError(f"{func}: baseline={base!r} is not a run; the runs are {names}")
    others = [r for r in names if r != base]
    if run is not None:
        if run not in others:
            raise InvalidOptionError(
                f"{func}: run={run!r} is not a run other than the baseline; choose one of "
                f"{others}"
            )
        others = [run]
    if not others:
        raise InsufficientDataError(f"{func}: need a second run besides baseline {base!r}; runs: {names}")
    paired = _pair_queries(pq, [str(base), *others], missing)
    b = paired.filter(pl.col("run") == base).select(
        "query_id", pl.col("value").alias("baseline_value")
    )
    order = {r: i for i, r in enumerate(others)}
    out = (
        paired.filter(pl.col("run") != base)
        .join(b, on="query_id", how="inner")
        .with_columns((pl.col("value") - pl.col("baseline_value")).alias("delta"))
        .with_columns(
            pl.when(pl.col("delta") > tie_tolerance).then(pl.lit("win"))
            .when(pl.col("delta") < -tie_tolerance).then(pl.lit("loss"))
            .otherwise(pl.lit("tie")).alias("outcome"),
            pl.lit(base).alias("baseline"),
            pl.lit(meas).alias("measure"),
            pl.col("run").replace_strict(order, return_dtype=pl.Int64).alias("_order"),
        )
        .sort(["_order", "delta", "query_id"])
    )
    cols = ["run", "baseline", "measure", "query_id", "baseline_value", "value", "delta", "outcome"]
    if queries is not None:
        out = out.join(queries, on="query_id", how="left", maintain_order="left")
        cols.insert(4, "query")
    return out.select(cols)




def query_diff(
    runs: Any = None,
    qrels: Any = None,
    measure: str | None = None,
    *,
    per_query: Any = None,
    baseline: str | None = None,
    run: str | None = None,
    queries: Any = None,
    missing: Literal["zero", "skip", "error"] = "zero",
    tie_tolerance: float = 1e-9,
    columns: Mapping[str, str] | None = None,
    **evaluate_options: Any,
) -> Any:
    """Per-query differences of a run against a baseline, worst losses first.

    For each query ``delta = value - baseline_value`` of one measure;
    ``outcome`` is ``"win"`` (delta > ``tie_tolerance``), ``"loss"`` (delta <
    −``tie_tolerance``) or ``"tie"``. The mean of ``delta`` is the comparison's
    Δ, and the outcome counts are its W/T/L.

    Parameters
    ----------
    runs, qrels
        Runs (frames or file paths) and relevance labels: evaluated with
        :func:`~searcheval_frames.evaluate` (``per_query=True``) on ``measure``.
        Without ``qrels``, ``runs`` is a per-query frame ``run, query_id,
        measure, value`` (as ``per_query=``).
    baseline
        The reference run (default: the first run).
    run
        The run compared with it (default: every other run, one block each).
    measure
        The measure (default: ``"nDCG@10"`` when evaluating; the only measure of
        a per-query frame).
    per_query
        A per-query frame (``evaluate(..., per_query=True)``) instead of runs.
    queries
        Query texts (frame ``query_id, query``, dict or query file): adds a
        ``query`` column.
    missing
        A query one run has and the other lacks: ``"zero"`` (scores 0, warned),
        ``"skip"`` (dropped from both), ``"error"``; as in :func:`compare`.
    tie_tolerance
        Differences within this are ties.
    columns
        Map ``run, query_id, measure, value`` of a per-query frame to your names.
    **evaluate_options
        Passed to ``evaluate`` (``relevance_level=``, ``depth=`` ...).

    Returns
    -------
    DataFrame (the kind of the input)
        ``run, baseline, measure, query_id, [query], baseline_value, value,
        delta, outcome``, sorted by run, then ``delta`` ascending (the biggest
        losses first), then query id.

    Examples
    --------
    >>> import polars as pl, searcheval_frames as sef
    >>> pq = pl.DataFrame({"run": ["a"] * 3 + ["b"] * 3, "query_id": ["1", "2", "3"] * 2,
    ...                    "measure": "AP", "value": [0.2, 0.5, 0.4, 0.6, 0.3, 0.4]})
    >>> d = sef.query_diff(pq, baseline="a")
    >>> d.select("query_id", "delta", "outcome").rows()
    [('2', -0.2, 'loss'), ('3', 0.0, 'tie'), ('1', 0.39999999999999997, 'win')]
    """
    check_evaluate_options("query_diff", evaluate_options, own=query_diff)  # (issue #22)
    missing = check_choice("query_diff", "missing", missing, ("zero", "skip", "error"))
    tie_tolerance = check_float("query_diff", "tie_tolerance", tie_tolerance, minimum=0.0,
                                example="tie_tolerance=1e-9")
    if per_query is not None and runs is not None:
        raise InvalidOptionError("query_diff: pass either runs (with qrels) or per_query=, not both")
    source = per_query if per_query is not None else runs
    if source is None:
        raise InvalidOptionError("query_diff: pass runs and qrels, or a per-query frame")
    kind = input_kind(source)
    if qrels is not None:
        if per_query is not None:
            raise InvalidOptionError("query_diff: qrels= goes with runs, not with per_query=")
        from ..core.evaluate import evaluate

        meas = measure if measure is not None else DEFAULT_MEASURE
        ev = evaluate(runs, qrels, [meas], per_query=True, columns=columns,
                      missing="skip" if missing == "error" else missing, **evaluate_options)
        pq = _per_query_input(ev, None)
    else:
        if evaluate_options:
            raise InvalidOptionError(
                f"query_diff: unexpected argument(s) {sorted(evaluate_options)}; evaluation "
                "options apply only with runs and qrels="
            )
        pq = _per_query_input(source, columns)
    out = diff_frame(pq, baseline=baseline, run=run, measure=measure, missing=missing,
                   tie_tolerance=tie_tolerance, queries=queries_table(queries))
    return to_native(out, kind)
