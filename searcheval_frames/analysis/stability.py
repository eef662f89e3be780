"""Can this table be trusted? Discriminative power and stability of system rankings.

* :func:`discriminative_power` (Sakai 2006, "Evaluating evaluation metrics based
  on the bootstrap", SIGIR): for each measure, run a paired test on every pair of
  runs; the discriminative power is the fraction of pairs with ``p <= α``, and the
  sorted p-values (achieved significance levels, ASL) give the ASL curve.
* :func:`stability`: how much the ranking of the runs depends on the queries.
  For each query-set size ``s``, draw ``n_samples`` random subsets of ``s``
  queries (without replacement) and compare the ranking of the runs by mean score
  on the subset with the ranking on all queries by Kendall's τ (τ-b, ties as in
  :func:`scipy.stats.kendalltau`). And the *swap rate* of Voorhees & Buckley
  (2002, "The effect of topic set size on retrieval experiment error", SIGIR):
  draw two disjoint subsets A and B of ``s`` queries, and count a swap for a pair
  of runs when A and B order it in opposite directions; swap rates are binned by
  the absolute difference ``|Δ_A|`` of the pair's means on A.

Everything is vectorised with numpy: a subset is a 0/1 membership matrix, the
subset means of all samples are one matrix product, and τ and swaps are computed
over all samples and run pairs at once (only the sizes are looped over).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, Literal, NamedTuple

import numpy as np
import polars as pl

from .._deprecation import old_spelling, outside_stacklevel
from ..errors import InvalidOptionError, SearchEvalWarning
from ..frames import to_native
from ..options import check_choice, check_float, check_int, check_optional_int
from . import stats as _st
from .calling import per_query_first, per_query_of, renamed
from .degenerate import MIN_QUERIES, degenerate_reason
from .inference import paired_inference
from .paired import load_paired, run_pairs

__all__ = [
    "DiscriminativePower",
    "Stability",
    "bootstrap_asl",
    "discriminative_power",
    "kendall_tau_rows",
    "quantile_name",
    "stability",
]

_TESTS = (*_st.TESTS, "bootstrap")
_BATCH = 4_000_000


# --------------------------------------------------------------------------- discriminative power
class DiscriminativePower(NamedTuple):
    """``summary``: one row per measure; ``asl``: one row per (measure, run pair), sorted.

    Both in the caller's frame kind; ``.frame`` is ``summary`` (``summary, asl = ...``
    unpacking works too).
    """

    summary: Any
    asl: Any

    @property
    def frame(self) -> Any:
        """The per-measure summary, in the caller's frame kind."""
        return self.summary


def bootstrap_asl(d: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Sakai's paired bootstrap test on each row of ``d`` (pairs x queries).

    ``idx`` (B x n) holds the bootstrap draws of query positions, shared by all
    pairs. ``t(z) = z̄ / (σ̂ / √n)``; under the null the centred ``w = z - z̄`` are
    resampled, and ``ASL = #{b : |t(w*_b)| >= |t(z)|} / B`` (two-sided).

    >>> d = np.array([[0.1, 0.2, 0.3, 0.1, 0.2, 0.0, 0.1, -0.1, 0.2, 0.1],
    ...               [0.1, -0.2, 0.3, 0.1, -0.2, 0.0, 0.1, -0.1, 0.2, -0.1]])
    >>> idx = np.random.default_rng(0).integers(0, 10, size=(10000, 10))
    >>> bootstrap_asl(d, idx).tolist()  # t-test: 0.0086, 0.7163
    [0.007, 0.7063]
    """
    d = np.atleast_2d(np.asarray(d, dtype=np.float64))
    b, n = idx.shape
    counts = np.bincount((np.arange(b)[:, None] * n + idx).ravel(), minlength=b * n)
    counts = counts.reshape(b, n).astype(np.float64)
    mean = d.mean(axis=1)
    with np.errstate(all="ignore"):
        t_obs = np.abs(mean / (d.std(axis=1, ddof=1) / math.sqrt(n)))
        w = d - mean[:, None]
        hits = np.zeros(d.shape[0])
        step = max(1, _BATCH // max(d.shape[0], 1))
        for s in range(0, b, step):
            c = counts[s:s + step].T  # n x chunk
            m = (w @ c) / n
            var = np.maximum(((w**2) @ c - n * m**2) / (n - 1), 0.0)
            t = np.abs(m / np.sqrt(var / n))
            hits += (t >= t_obs[:, None]).sum(axis=1)
    asl = hits / b
    asl[~d.any(axis=1)] = 1.0
    return asl


_DP_SCHEMA = {"measure": pl.String, "test": pl.String, "alpha": pl.Float64,
              "n_runs": pl.Int64, "n_queries": pl.Int64, "n_pairs": pl.Int64,
              "n_significant": pl.Int64, "discriminative_power": pl.Float64}
_ASL_SCHEMA = {"measure": pl.String, "run": pl.String, "baseline": pl.String,
               "delta": pl.Float64, "p_value": pl.Float64, "rank": pl.Int64,
               "significant": pl.Boolean}


def _old_discriminative_power(per_query: Any, measures: Any = None) -> None:
    """``discriminative_power``'s signature before issue #31 (per-query values first)."""


@old_spelling("discriminative_power", _old_discriminative_power, per_query_first(),
              renamed({}))
def discriminative_power(
    runs: Any = None,
    qrels: Any = None,
    measures: str | Sequence[str] | None = None,
    *,
    per_query: Any = None,
    test: str = "t",
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: int | None = 0,
    missing: Literal["zero", "skip", "error"] = "zero",
    columns: Mapping[str, str] | None = None,
    **evaluate_options: Any,
) -> DiscriminativePower:
    """Fraction of run pairs each measure tells apart, and its ASL curve (Sakai 2006).

    Parameters
    ----------
    runs, qrels, measures
        The runs (at least two), evaluated against the qrels on ``measures`` first
        (``**evaluate_options``: ``relevance_level=2`` ...); with ``per_query=``,
        ``measures`` selects measures (default all).
    per_query
        Instead of runs and qrels: the long per-query frame ``run, query_id, measure,
        value`` of at least two runs, or a :class:`~searcheval_frames.Comparison` (its
        paired queries; all pairs are tested).
    test
        ``"t"``, ``"wilcoxon"``, ``"permutation"`` (alias ``"randomization"``), ``"sign"``
        (:func:`~searcheval_frames.analysis.stats.paired_test`, two-sided) or
        ``"bootstrap"`` (Sakai's paired bootstrap test).
    alpha
        Significance level in (0, 1). p-values are not corrected for multiple testing
        (as in Sakai's method: it compares measures, not systems).
    n_resamples, seed
        Resamples of the randomization / bootstrap tests and their seed (each measure /
        pair draws its own reproducible stream).
    missing, columns
        As for :func:`~searcheval_frames.compare`.

    Returns
    -------
    DiscriminativePower
        ``summary`` (caller's kind): ``measure, test, alpha, n_runs, n_queries, n_pairs,
        n_significant, discriminative_power``; ``asl``: ``measure, run, baseline, delta,
        p_value, rank, significant`` sorted by p-value within measure (``rank`` 1 = most
        significant): plot ``p_value`` against ``rank`` for the ASL curve.

    Examples
    --------
    >>> import polars as pl, searcheval_frames as sef
    >>> pq = pl.DataFrame({"run": ["a"] * 4 + ["b"] * 4 + ["c"] * 4,
    ...                    "query_id": ["1", "2", "3", "4"] * 3, "measure": "P@5",
    ...                    "value": [.2, .4, .4, .6, .4, .6, .6, .8, .2, .4, .6, .6]})
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:  # b − a = 0.2 on every query
    ...     warnings.simplefilter("always")
    ...     summary, asl = sef.discriminative_power(per_query=pq)
    >>> [str(w.message).split(";")[0] for w in caught]
    ["discriminative_power: 1 of 3 run pairs on 'P@5' cannot be tested (1 no spread)"]
    >>> summary.select("n_pairs", "n_significant").row(0)
    (3, 0)
    """
    fn = "discriminative_power"
    test = check_choice(fn, "test", test, _TESTS, example="test='randomization'")
    test = test if test == "bootstrap" else _st.TESTS[test]
    alpha = check_float(fn, "alpha", alpha, minimum=0, maximum=1, open_min=True,
                        open_max=True, example="alpha=0.05")
    n_resamples = check_int(fn, "n_resamples", n_resamples, minimum=100,
                            example="n_resamples=10000")
    seed = check_optional_int(fn, "seed", seed, minimum=0, example="seed=0")
    values, columns = per_query_of(fn, runs, qrels, measures, per_query, missing=missing,
                                   columns=columns, evaluate_options=evaluate_options)
    data = load_paired(fn, values, measures, missing, columns)
    col = {r: i for i, r in enumerate(data.runs)}
    summary: list[dict[str, Any]] = []
    parts: list[pl.DataFrame] = []
    for m in data.measures:
        x = data.matrices[m]
        pairs = run_pairs(fn, data._replace(comparison=None), m, None)
        d = np.stack([x[:, col[r]] - x[:, col[b]] for r, b in pairs])
        if test == "bootstrap":
            rng = _st.pair_rng(seed, m, "bootstrap")
            p = bootstrap_asl(d, rng.integers(0, d.shape[1], size=(n_resamples, d.shape[1])))
        else:
            p = np.array([  # the p-values of compare (same test code, same streams)
                paired_inference(x[:, col[r]] - x[:, col[b]], test, n_resamples=n_resamples,
                                 rng=_st.pair_rng(seed, r, b, m).spawn(2)[0]).p
                for r, b in pairs
            ])
        p = np.where([degenerate_reason(row) is not None for row in d], np.nan, p)
        _warn_untestable(fn, m, d)
        sig = np.nan_to_num(p, nan=1.0) <= alpha
        asl = pl.DataFrame({
            "measure": m, "run": [r for r, _ in pairs], "baseline": [b for _, b in pairs],
            "delta": d.mean(axis=1), "p_value": p, "significant": sig,
        }).sort("p_value", nulls_last=True, maintain_order=True)
        parts.append(asl.with_columns(pl.int_range(1, asl.height + 1).alias("rank")))
        summary.append({"measure": m, "test": test, "alpha": alpha, "n_runs": len(data.runs),
                        "n_queries": x.shape[0], "n_pairs": len(pairs),
                        "n_significant": int(sig.sum()),
                        "discriminative_power": float(sig.mean())
                        if x.shape[0] >= MIN_QUERIES else float("nan")})
    out = pl.DataFrame(summary, schema=_DP_SCHEMA, orient="row")
    asl_all = pl.concat(parts).select(list(_ASL_SCHEMA)).cast(_ASL_SCHEMA)  # type: ignore[arg-type]
    return DiscriminativePower(to_native(out, data.kind), to_native(asl_all, data.kind))


# --------------------------------------------------------------------------- stability
class Stability(NamedTuple):
    """``summary``: one row per (measure, size); ``swaps``: per (measure, size, Δ bin).

    Both in the caller's frame kind; ``.frame`` is ``summary`` (``summary, swaps = ...``
    unpacking works too).
    """

    summary: Any
    swaps: Any

    @property
    def frame(self) -> Any:
        """The per-(measure, size) summary, in the caller's frame kind."""
        return self.summary


def _signs(diff: np.ndarray, scale: float) -> np.ndarray:
    """Sign of differences of means, with float noise (below 1e-12 x scale) a tie."""
    return np.where(np.abs(diff) <= 1e-12 * scale, 0.0, np.sign(diff))


def kendall_tau_rows(sub: np.ndarray, full: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """Kendall's τ-b between each row of ``sub`` (samples x runs) and ``full`` (runs).

    ``τ_b = Σ_{i<j} sgn(a_i - a_j) sgn(b_i - b_j) / sqrt(n_a · n_b)``, with ``n_a``,
    ``n_b`` the pairs not tied in each ranking (scipy's default variant).

    >>> kendall_tau_rows(np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]]), np.array([1.0, 2.0, 4.0]))
    array([ 1., -1.])
    """
    i, j = np.triu_indices(full.size, 1)
    a = _signs(sub[:, i] - sub[:, j], scale)
    b = _signs(full[i] - full[j], scale)
    with np.errstate(all="ignore"):
        return (a @ b) / np.sqrt(np.count_nonzero(a, axis=1) * np.count_nonzero(b))


def _membership(order: np.ndarray, start: int, stop: int) -> np.ndarray:
    m = np.zeros(order.shape, dtype=np.float64)
    np.put_along_axis(m, order[:, start:stop], 1.0, axis=1)
    return m


def quantile_name(q: float) -> str:
    """The column of the ``q`` quantile of τ: ``tau_q05`` for 0.05, ``tau_q2.5`` for 0.025."""
    pct = q * 100
    return f"tau_q{round(pct):02d}" if abs(pct - round(pct)) < 1e-9 else f"tau_q{pct:g}"




def _old_stability(per_query: Any, measure: Any = None, sizes: Any = None) -> None:
    """``stability``'s signature before issue #31 (per-query values first)."""


@old_spelling("stability", _old_stability, per_query_first(), renamed({}))
def stability(
    runs: Any = None,
    qrels: Any = None,
    measure: str | Sequence[str] | None = None,
    *,
    per_query: Any = None,
    sizes: int | Sequence[int] | None = None,
    n_samples: int = 1000,
    seed: int | None = 0,
    quantiles: Sequence[float] = (0.05, 0.25, 0.75, 0.95),
    bins: int | Sequence[float] = 10,
    missing: Literal["zero", "skip", "error"] = "zero",
    columns: Mapping[str, str] | None = None,
    **evaluate_options: Any,
) -> Stability:
    """Kendall's τ to the full ranking, and swap rates, for random query subsets.

    Parameters
    ----------
    runs, qrels, measure
        The runs (at least two), evaluated against the qrels on ``measure`` (name or
        names) first (``**evaluate_options``: ``relevance_level=2`` ...); with
        ``per_query=``, ``measure`` selects measures (default all).
    per_query
        Instead of runs and qrels: the long per-query frame of at least two runs, or a
        :class:`~searcheval_frames.Comparison`.
    sizes
        Query-subset sizes (each between 1 and the number of queries); default 10 sizes
        from ~n/10 to n. Swap rates need two disjoint subsets: sizes above n/2 get none.
    n_samples, seed
        Random subsets (and subset pairs) per size, and the seed.
    quantiles
        Quantiles of τ to report (columns ``tau_q05`` ...).
    bins
        Swap-rate bins of ``|Δ_A|``: a number of equal-width bins from 0 to the largest
        pair difference on all queries (the last bin is open-ended), or the bin edges
        (e.g. ``numpy.arange(0, 0.2, 0.01)`` as Voorhees & Buckley).
    missing, columns
        As for :func:`~searcheval_frames.compare`.

    Returns
    -------
    Stability
        ``summary`` (caller's kind): ``measure, size, n_samples, n_queries, n_runs,
        tau_mean, tau_median, tau_q.., tau_min, swap_rate``; ``swaps``: ``measure, size,
        bin, delta_low, delta_high, n_comparisons, n_swaps, swap_rate``.

    Examples
    --------
    >>> import polars as pl, searcheval_frames as sef
    >>> pq = pl.DataFrame({"run": ["a"] * 4 + ["b"] * 4, "query_id": ["1", "2", "3", "4"] * 2,
    ...                    "measure": "P@5", "value": [.2, .4, .4, .6, .4, .6, .6, .8]})
    >>> summary, swaps = sef.stability(per_query=pq, sizes=[2, 4], n_samples=100)
    >>> summary["tau_mean"].to_list(), summary["swap_rate"].to_list()
    ([1.0, 1.0], [0.0, None])
    """
    fn = "stability"
    n_samples = check_int(fn, "n_samples", n_samples, minimum=1, example="n_samples=1000")
    seed = check_optional_int(fn, "seed", seed, minimum=0, example="seed=0")
    qs = [check_float(fn, "quantiles", q, minimum=0, maximum=1, example="quantiles=[0.05, 0.95]")
          for q in (quantiles if isinstance(quantiles, Sequence) else [quantiles])]
    if isinstance(bins, Sequence | np.ndarray):
        edges = np.asarray([check_float(fn, "bins", b, minimum=0, example="bins=10")
                            for b in bins])
        if edges.size < 2 or np.any(np.diff(edges) <= 0):
            raise InvalidOptionError(
                f"stability(bins={list(bins)!r}): bin edges must be at least two increasing "
                "numbers >= 0, e.g. bins=[0, 0.01, 0.02, 0.05], or a number of bins: bins=10")
    else:
        nbins = check_int(fn, "bins", bins, minimum=1, example="bins=10")
    values, columns = per_query_of(fn, runs, qrels, measure, per_query, missing=missing,
                                   columns=columns, evaluate_options=evaluate_options)
    data = load_paired(fn, values, measure, missing, columns)
    if sizes is not None:
        size_list = _size_list(fn, sizes)
    rows: list[dict[str, Any]] = []
    swap_rows: list[dict[str, Any]] = []
    for m in data.measures:
        x = data.matrices[m]
        nq, nr = x.shape
        scale = max(1.0, float(np.abs(x).max()))
        full = x.mean(axis=0)
        if sizes is None:
            size_list = sorted({int(v) for v in np.linspace(max(2, round(nq / 10)), nq, 10)})
        big = [s for s in size_list if s > nq]
        if big:
            raise InvalidOptionError(
                f"stability(sizes={size_list}): {big[0]} is more than the {nq} queries of "
                f"measure {m!r}; use sizes between 1 and {nq}.")
        if nq < MIN_QUERIES:
            warnings.warn(f"stability: measure {m!r} has {nq} queries (too few queries; at "
                          f"least {MIN_QUERIES}); its τ and swap rates are NaN.",
                          SearchEvalWarning, stacklevel=outside_stacklevel())
        i, j = np.triu_indices(nr, 1)
        if not isinstance(bins, Sequence | np.ndarray):
            top = float(np.abs(full[i] - full[j]).max()) or 1.0
            edges = np.linspace(0.0, top, nbins + 1)
        for s in size_list:
            rng = _st.pair_rng(seed, m, f"size={s}")
            tau, nswap, ncomp = _subsets(x, full, scale, s, edges, n_samples, rng)
            if nq < MIN_QUERIES:  # a "τ = 1" on two queries would only look stable (#26)
                tau, ncomp = np.full(1, np.nan), np.zeros_like(ncomp)
            row: dict[str, Any] = {"measure": m, "size": s, "n_samples": n_samples,
                                   "n_queries": nq, "n_runs": nr,
                                   "tau_mean": float(np.mean(tau)),
                                   "tau_median": float(np.median(tau))}
            row.update({quantile_name(q): float(np.quantile(tau, q)) for q in qs})
            row["tau_min"] = float(np.min(tau))
            row["swap_rate"] = float(nswap.sum() / ncomp.sum()) if ncomp.sum() else None
            rows.append(row)
            if ncomp.sum():
                swap_rows += _swap_rows(m, s, edges, nswap, ncomp)
    summary = pl.DataFrame(rows).with_columns(pl.col("swap_rate").cast(pl.Float64))
    swap_schema = {"measure": pl.String, "size": pl.Int64, "bin": pl.Int64,
                   "delta_low": pl.Float64, "delta_high": pl.Float64,
                   "n_comparisons": pl.Int64, "n_swaps": pl.Int64, "swap_rate": pl.Float64}
    swaps = pl.DataFrame(swap_rows, schema=swap_schema, orient="row")
    return Stability(to_native(summary, data.kind), to_native(swaps, data.kind))


def _subsets(x: np.ndarray, full: np.ndarray, scale: float, s: int, edges: np.ndarray,
             n_samples: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """τ of ``n_samples`` random subsets of ``s`` queries to the full ranking, and the
    swaps / comparisons per Δ bin between pairs of disjoint subsets (when ``2s <= n``)."""
    nq, nr = x.shape
    i, j = np.triu_indices(nr, 1)
    taus, nswap, ncomp = [], np.zeros(edges.size - 1), np.zeros(edges.size - 1)
    step = max(1, _BATCH // max(nq, nr * nr))
    for start in range(0, n_samples, step):
        c = min(step, n_samples - start)
        order = np.argsort(rng.random((c, nq)), axis=1)
        mean_a = _membership(order, 0, s) @ x / s
        taus.append(kendall_tau_rows(mean_a, full, scale))
        if 2 * s <= nq:
            mean_b = _membership(order, s, 2 * s) @ x / s
            da = mean_a[:, i] - mean_a[:, j]
            swapped = _signs(da, scale) * _signs(mean_b[:, i] - mean_b[:, j], scale) < 0
            k = np.clip(np.searchsorted(edges, np.abs(da), side="right") - 1,
                        0, edges.size - 2)
            ncomp += np.bincount(k.ravel(), minlength=edges.size - 1)
            nswap += np.bincount(k.ravel(), weights=swapped.ravel(),
                                 minlength=edges.size - 1)
    # τ is undefined (NaN) for a sample whose runs all tie; those are left out,
    # and every statistic is NaN when the full ranking itself is one big tie
    tau = np.concatenate(taus)
    tau = tau[~np.isnan(tau)] if (~np.isnan(tau)).any() else np.full(1, np.nan)
    return tau, nswap, ncomp


def _swap_rows(m: str, s: int, edges: np.ndarray, nswap: np.ndarray,
               ncomp: np.ndarray) -> list[dict[str, Any]]:
    """One row per Δ bin: its edges (the last open-ended), comparisons, swaps, rate."""
    return [{"measure": m, "size": s, "bin": b, "delta_low": float(edges[b]),
             "delta_high": float(edges[b + 1]) if b < edges.size - 2 else math.inf,
             "n_comparisons": int(ncomp[b]), "n_swaps": int(nswap[b]),
             "swap_rate": float(nswap[b] / ncomp[b]) if ncomp[b] else None}
            for b in range(edges.size - 1)]


def _size_list(fn: str, sizes: Any) -> list[int]:
    """``stability``'s ``sizes=``: one size or several, each an integer >= 1."""
    items = list(sizes) if isinstance(sizes, Sequence | np.ndarray) else [sizes]
    size_list = [check_int(fn, "sizes", int(s) if isinstance(s, np.integer) else s,
                           minimum=1, example="sizes=[10, 20, 30]") for s in items]
    if not size_list:
        raise InvalidOptionError("stability(sizes=[]): give at least one size, or None")
    return size_list


def _warn_untestable(fn: str, measure: str, d: np.ndarray) -> None:
    """One warning naming how many run pairs cannot be tested, and why."""
    reasons = [degenerate_reason(row) for row in d]
    bad = [r for r in reasons if r is not None]
    if bad:
        kinds = ", ".join(f"{bad.count(r)} {r}" for r in dict.fromkeys(bad))
        warnings.warn(f"{fn}: {len(bad)} of {len(reasons)} run pairs on {measure!r} cannot be "
                      f"tested ({kinds}); their p-values are NaN and they count as not "
                      "significant.", SearchEvalWarning, stacklevel=outside_stacklevel())
