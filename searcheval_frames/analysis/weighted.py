"""Traffic-weighted comparisons: Δ per search beside Δ per query (issue #34).

:func:`weighted_compare` takes paired per-query values (``run, query_id, measure,
value``: a :class:`~searcheval_frames.Comparison`'s ``.per_query`` or evaluate's
``per_query=True``) and the test queries' weights, and gives per (run, baseline,
measure) the plain means and Δ ("the average query") beside the Hájek traffic-weighted
means and Δ ("the average search") with a design-bootstrap interval of the weighted Δ
(:mod:`searcheval_frames.core.weights`: the per-query differences resampled as the
queries were drawn, the same resamples for both runs).

>>> import polars as pl
>>> pq = pl.DataFrame({"run": ["a", "a", "b", "b"], "query_id": ["1", "2"] * 2,
...                    "measure": "P@5", "value": [0.0, 1.0, 1.0, 1.0]})
>>> w = {"1": 9.0, "2": 1.0}
>>> weighted_compare(pq, w, baseline="a", n_resamples=200).select(
...     "delta", "weighted_delta").row(0)
(0.5, 0.9)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from ..core.weights import check_bootstrap, hajek, per_series

__all__ = ["WEIGHTED_COLUMNS", "weighted_compare"]

WEIGHTED_COLUMNS = ("run", "baseline", "measure", "n_queries", "mean", "baseline_mean",
                    "delta", "weighted_mean", "weighted_baseline_mean", "weighted_delta",
                    "ci_low", "ci_high")


def weighted_compare(per_query: Any, weights: Any, *, baseline: str | Sequence[str] | None = None,
                     queries: Any = None, strata: str | None = None, seed: int | None = 0,
                     ci: float = 0.95, n_resamples: int = 2000,
                     func: str = "weighted_compare") -> pl.DataFrame:
    """Per (run, baseline, measure): plain and traffic-weighted means and Δ, with the
    design-bootstrap interval (``ci_low``, ``ci_high``) of the weighted Δ.

    Parameters
    ----------
    per_query
        ``run, query_id, measure, value``, paired (each run has the same queries).
    weights
        As :func:`~searcheval_frames.core.weights.weights_table` takes them: a column
        of ``queries``, a frame ``query_id, weight``, a dict or a ``QuerySample``.
    baseline
        Run name(s) to compare against (default: the first run).
    strata
        The column the design stratified on (default: the sample's own).
    """
    check_bootstrap(func, ci, n_resamples, seed)
    pq, design, values = per_series(per_query, weights, queries=queries, strata=strata,
                                    n_resamples=n_resamples, seed=seed, func=func)
    runs = pq["run"].unique(maintain_order=True).to_list()
    bases = [runs[0]] if baseline is None else (
        [baseline] if isinstance(baseline, str) else list(baseline))
    measures = pq["measure"].unique(maintain_order=True).to_list()
    rows = []
    for base in bases:
        for run in (r for r in runs if r != base):
            for m in measures:
                rows.append(_row(run, base, m, values, design, ci))
    return pl.DataFrame([r for r in rows if r is not None], orient="row",
                        schema=dict.fromkeys(WEIGHTED_COLUMNS[:3], pl.String)
                        | {"n_queries": pl.Int64}
                        | dict.fromkeys(WEIGHTED_COLUMNS[4:], pl.Float64))


def _row(run: str, base: str, m: str, values: dict[tuple[str, str], np.ndarray],
         design: Any, ci: float) -> tuple[Any, ...] | None:
    a, b = values.get((run, m)), values.get((base, m))
    if a is None or b is None:
        return None
    both = np.isfinite(a) & np.isfinite(b)
    if not both.all():  # not paired on every weighted query: only the shared ones
        a, b, design = a[both], b[both], design.subset(both)
    w = design.weights
    d = a - b
    lo, hi = design.interval(d, ci)
    return (run, base, m, int(a.size), float(a.mean()), float(b.mean()), float(d.mean()),
            hajek(a, w), hajek(b, w), hajek(d, w), lo, hi)

