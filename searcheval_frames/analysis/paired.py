"""Per-query scores as paired matrices, and vectorised paired tests (internal).

Shared by :mod:`.power` and :mod:`.stability`: :func:`load_paired` turns a per-query
frame or a :class:`~searcheval_frames.Comparison` into one queries x runs matrix per
measure (after the missing-query policy of :func:`~searcheval_frames.compare`),
:func:`run_pairs` lists the (run, baseline) pairs, :func:`row_pvalues` runs a paired
test on every row of a matrix of differences at once.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import polars as pl

from .._deprecation import outside_stacklevel
from ..errors import (
    EmptyInputError,
    InsufficientDataError,
    InvalidOptionError,
    SearchEvalError,
    UnknownMeasureError,
)
from ..frames import Kind, input_kind
from ..optional import require
from ..options import check_choice, check_str_list
from .compare import Comparison
from .degenerate import MIN_QUERIES
from .pairs import pair_queries as _pair_queries
from .pairs import per_query_input as _per_query_input
from .pairs import select_measures as _select_measures

__all__ = ["Paired", "load_paired", "pooled_sd", "row_pvalues", "run_pairs"]

_MISSING = ("zero", "skip", "error")
_BATCH = 4_000_000  # elements per block in vectorised resampling


# --------------------------------------------------------------------------- input
class Paired(NamedTuple):
    """Per-query scores as one queries x runs matrix per measure (internal).

    Not a result: power and stability build their results (frames in ``kind``) from it.
    """

    kind: Kind
    runs: list[str]
    measures: list[str]
    matrices: dict[str, np.ndarray]  # measure -> (queries x runs), columns in `runs` order
    comparison: Comparison | None


def load_paired(
    func: str,
    data: Any,
    measure: str | Sequence[str] | None,
    missing: str,
    columns: Mapping[str, str] | None = None,
) -> Paired:
    """Per-query frame or Comparison -> paired matrices, with the checks every function needs."""
    missing = check_choice(func, "missing", missing, _MISSING)
    if isinstance(data, Comparison):
        kind, pq, runs, present = data.kind, data.per_query, list(data.runs), list(data.measures)
    else:
        if data is None:
            raise EmptyInputError(
                f"{func}: no per-query scores given; pass evaluate(runs, qrels, measures, "
                "per_query=True) or a sef.compare(...) result"
            )
        kind = input_kind(data)
        pq = _per_query_input(data, columns)
        runs = pq.get_column("run").unique(maintain_order=True).to_list()
        present = pq.get_column("measure").unique(maintain_order=True).to_list()
    if measure is None:
        chosen = present
    else:
        wanted = check_str_list(func, "measure", measure, example="measure='nDCG@10'")
        try:
            pq, chosen = _select_measures(pq, wanted)
        except SearchEvalError as exc:
            raise UnknownMeasureError(
                f"{func}(measure={measure!r}): {str(exc).split(': ', 1)[-1]}. Pass one of "
                "those names, or evaluate the measure first."
            ) from None
    if len(runs) < 2:
        raise InsufficientDataError(
            f"{func}: needs per-query scores of at least two runs; the frame has only "
            f"{runs}. Evaluate several runs together: evaluate(runs, qrels, measures, "
            "per_query=True) with a 'run' column naming each system."
        )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        paired = _pair_queries(pq, runs, missing)
    if not isinstance(data, Comparison):  # a Comparison warned when it was made
        for w in caught:
            warnings.warn(str(w.message).replace("compare:", f"{func}:", 1), w.category,
                          stacklevel=outside_stacklevel())
    matrices: dict[str, np.ndarray] = {}
    for m in chosen:
        wide = (
            paired.filter(pl.col("measure") == m)
            .pivot(on="run", index="query_id", values="value")
            .sort("query_id")
        )
        if wide.height < 2:
            raise InsufficientDataError(
                f"{func}: measure {m!r} has {wide.height} query(ies) scored by every run; "
                "power and stability need at least 2 (and tell little below ~10). Evaluate "
                "more queries, or use missing='zero' to keep queries some runs lack."
            )
        matrices[m] = wide.select(runs).to_numpy().astype(np.float64)
    return Paired(kind, runs, chosen, matrices,
                  data if isinstance(data, Comparison) else None)


def run_pairs(
    func: str, data: Paired, measure: str, baseline: str | Sequence[str] | None
) -> list[tuple[str, str]]:
    """(run, baseline) pairs: each run vs the baseline(s), or all unordered pairs."""
    runs = data.runs
    bases = None
    if baseline is not None:
        bases = check_str_list(func, "baseline", baseline, example=f"baseline={runs[0]!r}")
        unknown = [b for b in bases if b not in runs]
        if unknown:
            raise InvalidOptionError(
                f"{func}(baseline={unknown[0]!r}): not a run of the per-query frame; the "
                f"runs are {runs}. Pass one of them, or baseline=None for all pairs."
            )
    if data.comparison is not None:
        fr = data.comparison.to_polars().filter(pl.col("measure") == measure)
        out = list(fr.select("run", "baseline").iter_rows())
        return [p for p in out if bases is None or p[1] in bases]
    if bases is None:
        return [(runs[j], runs[i]) for i in range(len(runs)) for j in range(i + 1, len(runs))]
    out, seen = [], set()
    for b in bases:
        for r in runs:
            if r != b and frozenset((r, b)) not in seen:
                seen.add(frozenset((r, b)))
                out.append((r, b))
    return out


def pooled_sd(x: np.ndarray) -> float:
    """Sakai's pooled σ_d = sqrt(2 V_E), V_E the two-way ANOVA residual variance.

    >>> x = np.array([[0.2, 0.3], [0.5, 0.4], [0.1, 0.4]])
    >>> bool(np.isclose(pooled_sd(x), np.std(x[:, 0] - x[:, 1], ddof=1)))
    True
    """
    q, r = x.shape
    resid = x - x.mean(axis=1, keepdims=True) - x.mean(axis=0, keepdims=True) + x.mean()
    return math.sqrt(2.0 * float((resid**2).sum()) / ((q - 1) * (r - 1)))


# --------------------------------------------------------------------------- tests
def _sign_flip_p(d: np.ndarray, alternative: str, n_resamples: int,
                 rng: np.random.Generator) -> np.ndarray:
    """Vectorised paired randomization test on the rows of ``d`` (Monte Carlo sign flips,
    p-value as scipy.stats.permutation_test: (hits + 1) / (B + 1), two-sided = 2 min).
    Sign patterns are drawn in blocks, so memory stays bounded for long rows."""
    rows, n = d.shape
    obs = d.mean(axis=1)[:, None]
    tol = 1e-14 * np.maximum(1.0, np.abs(obs))
    ge = np.zeros(rows)
    le = np.zeros(rows)
    block = max(1, min(n_resamples, _BATCH // max(n, rows)))
    for b0 in range(0, n_resamples, block):
        signs = rng.choice(np.array([-1.0, 1.0]), size=(min(block, n_resamples - b0), n))
        null = d @ signs.T / n  # rows x block
        ge += (null >= obs - tol).sum(axis=1)
        le += (null <= obs + tol).sum(axis=1)
    ge = (ge + 1.0) / (n_resamples + 1.0)
    le = (le + 1.0) / (n_resamples + 1.0)
    if alternative == "greater":
        return ge
    if alternative == "less":
        return le
    return np.minimum(1.0, 2.0 * np.minimum(ge, le))


def row_pvalues(
    d: np.ndarray, test: str, alternative: str = "two-sided", *, n_resamples: int = 1000,
    rng: np.random.Generator | None = None,
) -> np.ndarray:
    """p-values of a paired test on every row of a (samples x queries) difference matrix,
    vectorised; equal to :func:`~searcheval_frames.analysis.stats.paired_test` row by row
    for ``"t"``, ``"wilcoxon"`` and ``"sign"`` (Monte Carlo for ``"permutation"``); NaN
    for rows that cannot be tested."""
    stats = require("scipy.stats", "paired tests")

    d = np.atleast_2d(np.asarray(d, dtype=np.float64))
    zero = ~d.any(axis=1)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if test == "t":
            p = stats.ttest_1samp(d, 0.0, axis=1, alternative=alternative).pvalue
        elif test == "wilcoxon":
            p = stats.wilcoxon(d, axis=1, alternative=alternative).pvalue
        elif test == "sign":  # binomial(ties dropped, 1/2) is symmetric: 2 x the smaller tail
            k = (d > 0).sum(axis=1)
            m = (d != 0).sum(axis=1)
            if alternative == "greater":
                p = stats.binom.sf(k - 1, m, 0.5)
            elif alternative == "less":
                p = stats.binom.cdf(k, m, 0.5)
            else:
                p = np.minimum(1.0, 2.0 * stats.binom.cdf(np.minimum(k, m - k), m, 0.5))
        else:
            p = _sign_flip_p(d, alternative, n_resamples, rng or np.random.default_rng())
    p = np.asarray(p, dtype=np.float64)
    # rows that cannot be tested (as degenerate_reason: too few queries, all ties, no
    # spread) are NaN, like paired_test; NaN never counts as a rejection (#26)
    top = np.abs(d).max(axis=1)
    flat = np.ptp(d, axis=1) <= 1e-12 * np.maximum(1.0, top)
    p[zero | flat | (d.shape[1] < MIN_QUERIES)] = np.nan
    return p


