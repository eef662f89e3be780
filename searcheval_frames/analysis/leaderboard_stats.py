"""The numbers behind :func:`~searcheval_frames.leaderboard` (numpy, no frames).

Everything works on one matrix ``X`` of per-query scores, queries x runs (``n`` x
``k``), complete (every run scored on every query):

* :func:`anova_two_way`: the two-way ANOVA without replication (Sakai 2018, ch. 4–5):
  ``SS_sys = n Σ_j (x̄_.j − x̄)²``, ``SS_topic = k Σ_i (x̄_i. − x̄)²``,
  ``SS_E = SS_total − SS_sys − SS_topic`` with ``(k−1)(n−1)`` degrees of freedom,
  ``V_E = SS_E / ((k−1)(n−1))`` and Tukey's margin of error
  ``MOE = q_{1−α}(k, (k−1)(n−1)) √(V_E / n)``.
* :func:`tukey_hsd`: all pairs, ``p = P(Q > |x̄_a − x̄_b| / √(V_E/n))`` with ``Q`` the
  studentized range (:data:`scipy.stats.studentized_range`).
* :func:`range_null`: randomised Tukey HSD's null distribution of the range of the run
  means when each query's scores are shuffled across runs (Sakai 2018, sec. 4.4); a
  compiled kernel when numba is installed, else batched numpy.
* :func:`rank_bootstrap`: run means over query bootstrap samples (multinomial weights
  times ``X``, one matrix product per batch), their ranks, rank intervals and the
  share of samples in which each run ranks first.
* :func:`letters`: compact letter display (Piepho 2004, insert-and-absorb).

>>> import numpy as np
>>> X = np.array([[0.2, 0.4, 0.5], [0.1, 0.3, 0.2], [0.6, 0.7, 0.9], [0.3, 0.3, 0.6]])
>>> a = anova_two_way(X, alpha=0.05)
>>> round(a["V_E"], 5), round(a["F_system"], 3)
(0.00806, 7.759)
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ..optional import require

__all__ = ["anova_two_way", "letters", "pairwise_family", "range_null", "rank_bootstrap",
           "tukey_for_pairs", "tukey_hsd", "warm_kernel"]

_BATCH = 8_000_000  # elements per block


def anova_two_way(X: np.ndarray, *, alpha: float = 0.05) -> dict[str, float]:
    """Two-way ANOVA without replication of a queries x runs matrix (see module doc)."""
    stats = require("scipy.stats", "sef.leaderboard")

    n, k = X.shape
    grand = float(X.mean())
    ss_total = float(((X - grand) ** 2).sum())
    ss_sys = n * float(((X.mean(axis=0) - grand) ** 2).sum())
    ss_topic = k * float(((X.mean(axis=1) - grand) ** 2).sum())
    ss_e = max(ss_total - ss_sys - ss_topic, 0.0)
    df_sys, df_topic, df_e = k - 1, n - 1, (k - 1) * (n - 1)
    v_sys, v_topic = ss_sys / df_sys, ss_topic / max(df_topic, 1)
    v_e = ss_e / df_e if df_e > 0 else math.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        f_sys = v_sys / v_e if v_e > 0 else math.nan
        f_topic = v_topic / v_e if v_e > 0 else math.nan
    q = float(stats.studentized_range.ppf(1.0 - alpha, k, df_e)) if df_e > 0 else math.nan
    return {
        "n_queries": float(n), "n_runs": float(k),
        "SS_system": ss_sys, "SS_topic": ss_topic, "SS_E": ss_e, "SS_total": ss_total,
        "df_system": float(df_sys), "df_topic": float(df_topic), "df_E": float(df_e),
        "V_system": v_sys, "V_topic": v_topic, "V_E": v_e,
        "F_system": f_sys, "F_topic": f_topic,
        "p_system": float(stats.f.sf(f_sys, df_sys, df_e)) if v_e > 0 else math.nan,
        "p_topic": float(stats.f.sf(f_topic, df_topic, df_e)) if v_e > 0 else math.nan,
        "q_crit": q,
        "tukey_moe": q * math.sqrt(v_e / n) if v_e > 0 else math.nan,
    }


def tukey_hsd(X: np.ndarray, v_e: float, *, confidence: float = 0.95,
              df: float | None = None) -> tuple[np.ndarray, float]:
    """Tukey HSD p-values (k x k) on the two-way residual variance, and the simultaneous
    margin ``q_{conf}(k, (k−1)(n−1)) √(V_E/n)`` of every pairwise difference (``df``
    overrides the residual degrees of freedom, e.g. ``k(n−1)`` for a one-way design)."""
    stats = require("scipy.stats", "sef.leaderboard")

    n, k = X.shape
    df = (k - 1) * (n - 1) if df is None else df
    se = math.sqrt(v_e / n)
    m = X.mean(axis=0)
    diff = np.abs(m[:, None] - m[None, :]) / se
    with warnings.catch_warnings():
        # scipy's quadrature says "probably divergent, or slowly convergent" for a range
        # near 0 with many degrees of freedom (12 runs x 2,000 queries, diff 0.27): there
        # p = 0.99999999993, equal to the infinite-df value to 1e-13; nothing to tell users
        warnings.filterwarnings("ignore", "The integral is probably divergent")
        p = stats.studentized_range.sf(diff, k, df)
    np.fill_diagonal(p, 1.0)
    margin = float(stats.studentized_range.ppf(confidence, k, df)) * se
    return np.minimum(p, 1.0), margin


# --------------------------------------------------------------------------- randomised HSD
def _numba_kernel() -> Any:
    try:
        from numba import njit, prange
    except ImportError:  # numba is optional (extra "fast")
        return None

    @njit(parallel=True, cache=True)
    def kernel(R: np.ndarray, B: int, seed: int) -> np.ndarray:  # pragma: no cover - compiled
        n, k = R.shape
        out = np.empty(B)
        golden = np.uint64(0x9E3779B97F4A7C15)
        for b in prange(B):
            s = np.uint64(seed) * golden + np.uint64(b + 1) * np.uint64(0xBF58476D1CE4E5B9)
            perm = np.arange(k)
            acc = np.zeros(k)
            for i in range(n):
                for j in range(k - 1, 0, -1):  # Fisher–Yates with splitmix64 draws
                    s += golden
                    z = (s ^ (s >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
                    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
                    z = z ^ (z >> np.uint64(31))
                    r = np.int64(((z >> np.uint64(32)) * np.uint64(j + 1)) >> np.uint64(32))
                    t = perm[j]
                    perm[j] = perm[r]
                    perm[r] = t
                for j in range(k):
                    acc[j] += R[i, perm[j]]
            out[b] = (acc.max() - acc.min()) / n
        return out

    return kernel


_KERNEL: list[Any] = []


def _kernel() -> Any:
    """The compiled kernel (built on first use), or None without numba."""
    if not _KERNEL:
        _KERNEL.append(_numba_kernel())
    return _KERNEL[0]


def warm_kernel() -> None:
    """Compile (or load from numba's cache) the randomised-HSD kernel now, on a tiny
    input, so a later :func:`range_null` does not wait for it; nothing without numba.
    Not to be called while another thread runs :func:`range_null`."""
    kernel = _kernel()
    if kernel is not None:
        kernel(np.zeros((2, 2)), 1, 0)


def _numpy_ranges(R: np.ndarray, B: int, rng: np.random.Generator, tick: Any) -> np.ndarray:
    n, k = R.shape
    out = np.empty(B)
    block = max(1, _BATCH // (n * k))
    for b0 in range(0, B, block):
        m = min(block, B - b0)
        perm = np.argsort(rng.random((m, n, k), dtype=np.float32), axis=-1)
        sums = np.take_along_axis(np.broadcast_to(R, (m, n, k)), perm, axis=-1).sum(axis=1)
        out[b0:b0 + m] = (sums.max(axis=1) - sums.min(axis=1)) / n
        tick(m)
    return out


def range_null(X: np.ndarray, n_resamples: int, rng: np.random.Generator, *,
               engine: str = "auto", tick: Any = None) -> np.ndarray:
    """Range of the run means, ``max_j x̄*_j − min_j x̄*_j``, in each of ``n_resamples``
    randomisations that shuffle every query's scores across the runs independently.

    ``engine="numba"`` (compiled, ~100x faster; used by ``"auto"`` when numba is
    installed) or ``"numpy"`` (batched argsort of random keys). Both draw uniform
    permutations; the streams differ, so results agree within Monte Carlo error.
    """
    R = np.ascontiguousarray(X - X.mean(axis=1, keepdims=True))  # row means cancel
    tick = tick or (lambda _m: None)
    if engine in ("auto", "numba"):
        kernel = _kernel()
        if kernel is not None:
            seed = int(rng.integers(0, 2**62))
            out = np.empty(n_resamples)
            step = max(1, min(n_resamples, 200_000_000 // max(R.size, 1)))
            for b0 in range(0, n_resamples, step):  # chunks only to tick the progress bar
                m = min(step, n_resamples - b0)
                out[b0:b0 + m] = kernel(R, m, seed + b0)
                tick(m)
            return out
        if engine == "numba":
            from ..optional import require

            require("numba", "range_null(engine='numba') (or pass engine='numpy')")
    return _numpy_ranges(R, n_resamples, rng, tick)


def range_tolerance(X: np.ndarray) -> float:
    """How far two ranges may differ and still be one value: ``1e-12 · max(1, max|X|)``.

    A shuffled range and an observed difference are sums of the same scores in other
    orders; with discrete measures (P@10 in tenths) they are often the same number up
    to float noise, and the noise must not decide whether a shuffle counts (scipy's
    ``permutation_test`` compares with a relative tolerance for the same reason).
    """
    return 1e-12 * max(1.0, float(np.abs(X).max())) if X.size else 0.0


def randomized_margin(ranges: np.ndarray, alpha: float, tol: float = 0.0) -> float:
    """The margin ``M`` with ``p = (#{range* >= |d| - tol} + 1)/(B + 1) <= alpha  <=>
    |d| > M`` (so an interval ``d ± M`` excludes 0 exactly when ``p <= alpha``).

    >>> randomized_margin(np.arange(1.0, 20.0), 0.1)
    18.0
    """
    r = np.sort(ranges)
    b = r.size
    allowed = math.floor(alpha * (b + 1) - 1 + 1e-9)  # hits allowed for p <= alpha
    if allowed < 0:
        return math.inf
    return float(r[b - allowed - 1]) + tol if allowed < b else -math.inf


def randomized_p(ranges: np.ndarray, absdiff: np.ndarray, tol: float = 0.0) -> np.ndarray:
    """``(#{range* >= |d| - tol} + 1) / (B + 1)`` for every entry of ``absdiff``."""
    r = np.sort(ranges)
    hits = r.size - np.searchsorted(r, np.asarray(absdiff) - tol, side="left")
    return (hits + 1.0) / (r.size + 1.0)


# --------------------------------------------------------------------------- ranks
def rank_bootstrap(X: np.ndarray, n_resamples: int, rng: np.random.Generator, *,
                   confidence: float = 0.95) -> dict[str, np.ndarray]:
    """Ranks of the runs (1 = best mean) over query bootstrap samples.

    Returns ``rank_low``/``rank_high`` (the ``(1 ± confidence)/2`` quantiles of each
    run's bootstrap rank, lower/higher order statistic) and ``p_best`` (share of samples
    where the run ranks first).
    """
    n, k = X.shape
    ranks = np.empty((n_resamples, k), dtype=np.int32)
    block = max(1, _BATCH // (n + k))
    weights = np.empty((min(block, n_resamples), n))  # (one buffer: no page faults a batch)
    for b0 in range(0, n_resamples, block):
        m = min(block, n_resamples - b0)
        # multinomial weights: how often each query is drawn (bincount beats multinomial)
        draws = rng.integers(0, n, (m, n))
        w = weights[:m]
        if n >= 256:  # one bincount per sample: its n cells stay in cache (m * n do not)
            for i in range(m):
                w[i] = np.bincount(draws[i], minlength=n)
        else:
            draws += (np.arange(m) * n)[:, None]
            w[...] = np.bincount(draws.ravel(), minlength=m * n).reshape(m, n)
        means = w @ X / n
        order = np.argsort(-means, axis=1, kind="stable")
        r = np.empty_like(order)
        np.put_along_axis(r, order, np.arange(1, k + 1)[None, :].repeat(m, 0), axis=1)
        ranks[b0:b0 + m] = r
    tail = (1.0 - confidence) / 2.0
    return {
        "rank_low": np.quantile(ranks, tail, axis=0, method="lower").astype(np.int64),
        "rank_high": np.quantile(ranks, 1.0 - tail, axis=0, method="higher").astype(np.int64),
        "p_best": (ranks == 1).mean(axis=0),
    }


# --------------------------------------------------------------------------- letters
def letters(order: list[int], significant: np.ndarray) -> list[str]:
    """Compact letter display: runs sharing a letter are not significantly different.

    ``order`` lists run indices best first; ``significant`` is a symmetric k x k bool
    matrix. Insert-and-absorb (Piepho 2004): start with one group of all runs; for
    each significant pair split every group holding both; drop groups contained in
    another; letter the groups by their best run.

    >>> sig = np.array([[0, 0, 1], [0, 0, 0], [1, 0, 0]], dtype=bool)
    >>> letters([0, 1, 2], sig)
    ['a', 'ab', 'b']
    """
    k = len(order)
    groups: list[frozenset[int]] = [frozenset(order)]
    for a in range(k):
        for b in range(a + 1, k):
            if not significant[order[a], order[b]]:
                continue
            i, j = order[a], order[b]
            new: list[frozenset[int]] = []
            for g in groups:
                if i in g and j in g:
                    new += [g - {i}, g - {j}]
                else:
                    new.append(g)
            uniq = list(dict.fromkeys(new))
            groups = [g for g in uniq if g and not any(g < h for h in uniq)]
    pos = {r: n for n, r in enumerate(order)}
    groups.sort(key=lambda g: sorted(pos[r] for r in g))
    names = [_letter(n) for n in range(len(groups))]
    return ["".join(nm for nm, g in zip(names, groups, strict=True) if r in g)
            for r in range(k)]


def _letter(i: int) -> str:
    s = ""
    i += 1
    while i:
        i, rem = divmod(i - 1, 26)
        s = chr(97 + rem) + s
    return s


def pairwise_family(X: np.ndarray, test: str, *, alpha: float, ci: float, n_resamples: int,
                    rng: np.random.Generator, progress: bool = True) -> dict[str, Any]:
    """p-values (adjusted), simultaneous margins and significance for every pair (i < j)
    of the columns of ``X``; shared by :func:`leaderboard` and
    ``compare(pairs="all", correction="tukey")``."""
    from . import stats as _st
    from .inference import interval_alphas

    n, k = X.shape
    anova = anova_two_way(X, alpha=alpha)
    means = X.mean(axis=0)
    iu, ju = np.triu_indices(k, 1)
    delta = means[iu] - means[ju]
    if test == "tukey_hsd":
        pmat, margin = tukey_hsd(X, anova["V_E"], confidence=ci)
        p, half = pmat[iu, ju], np.full(iu.size, margin)
    elif test == "randomized_tukey_hsd":
        with _st.progress(n_resamples, desc="randomised Tukey HSD", enabled=progress):
            ranges = range_null(X, n_resamples, rng, tick=_st.tick)
        tol = range_tolerance(X)
        p = randomized_p(ranges, np.abs(delta), tol)
        half = np.full(iu.size, randomized_margin(ranges, 1.0 - ci, tol))
    else:
        stats = require("scipy.stats", "sef.leaderboard")

        d = X[:, iu] - X[:, ju]
        sd = d.std(axis=0, ddof=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            raw = 2.0 * stats.t.sf(np.abs(delta / (sd / math.sqrt(n))), n - 1)
        p = _st.adjust_pvalues(raw, "holm")
        lv = interval_alphas(raw, 1.0 - ci, "holm")
        half = stats.t.ppf(1.0 - lv / 2.0, n - 1) * sd / math.sqrt(n)
    sig = (p <= alpha) & (np.abs(delta) > half)
    return {"i": iu, "j": ju, "delta": delta, "p": p, "half": half, "significant": sig,
            "anova": anova}


def tukey_for_pairs(X: np.ndarray, columns: list[str], pairs: list[tuple[str, str]], *,
                    alpha: float, ci: float) -> list[tuple[float, float, bool]]:
    """Tukey HSD over all columns of ``X`` (one family), reported for ``pairs`` (run,
    baseline): ``(p_adjusted, half-width of the simultaneous interval, significant)``.
    This is ``compare(..., correction="tukey")``; the leaderboard uses the same
    :func:`pairwise_family`. NaNs when the design cannot be tested."""
    n, _k = X.shape
    if n < 3 or anova_two_way(X)["SS_E"] <= 1e-12 * max(1.0, float(np.abs(X).max())):
        return [(math.nan, math.nan, False)] * len(pairs)
    fam = pairwise_family(X, "tukey_hsd", alpha=alpha, ci=ci, n_resamples=1,
                          rng=np.random.default_rng(0), progress=False)
    idx = {c: j for j, c in enumerate(columns)}
    found = {(int(i), int(j)): t for t, (i, j) in enumerate(zip(fam["i"], fam["j"],
                                                                  strict=True))}
    out = []
    for a, b in pairs:
        t = found[(min(idx[a], idx[b]), max(idx[a], idx[b]))]
        out.append((float(fam["p"][t]), float(fam["half"][t]), bool(fam["significant"][t])))
    return out

