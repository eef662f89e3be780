"""One coherent inference per comparison: each paired test with the interval that inverts it.

A p-value and a confidence interval answer the same question only when the interval is
the set of shifts ``θ`` the test does *not* reject: ``CI = {θ : p(d − θ) > α}``. Then
"the interval excludes 0" and "p ≤ α" are the same statement and a verdict cannot
contradict itself. This module pairs every test of :func:`~searcheval_frames.compare`
with its own interval:

======================  ===================================================  ==========
test                    interval (inverts the test)                          statistic
======================  ===================================================  ==========
paired t                Student t interval ``d̄ ± t_{1−α/2,n−1} s/√n``          mean
randomization           sign-flip interval from the *same* flip patterns     mean
Wilcoxon signed-rank    Hodges–Lehmann interval (inverting ``scipy.stats``)  pseudo-median
sign                    order-statistic interval (inverting ``binomtest``)   median
======================  ===================================================  ==========

The randomization interval is exact duality: with ``B`` sign patterns ``s``, shifting
the differences by ``θ`` moves the flipped statistic to ``A_s − θ C_s``; the pattern
counts as "at least as extreme" for ``θ ≥ t_s`` where ``t_s`` is the mean of ``d`` over
the queries that ``s`` flips. So ``p(θ)`` is a step function of ``θ`` known in closed
form, and the interval is read off the sorted ``t_s`` (no second resampling). The
Wilcoxon and sign intervals are found by bisection on the test's own p-value, so they
agree with it wherever ``p(θ)`` is unimodal (it is, up to the normal approximation's tie
correction; Hodges & Lehmann 1963, Lehmann *Nonparametrics* ch. 4).

Multiplicity: when p-values are adjusted, each interval is computed at the level that
makes it agree with the adjusted p-value (:func:`interval_alphas`): Bonferroni ``α/m``;
Holm ``α/(m − i + 1)`` for the ``i``-th smallest p when rejected and ``α/(m − r)`` for the
rest (``r`` rejections; these match Holm's decisions but only the Bonferroni intervals
have simultaneous coverage); Benjamini–Hochberg/Yekutieli: the false-coverage-rate
intervals of Benjamini & Yekutieli (2005), level ``1 − Rα/m`` with ``R`` rejections.

Degenerate data never look certain (:func:`degenerate_reason`): below
:data:`MIN_QUERIES` queries (``"too few queries"``), every difference zero (``"all
ties"``) or every difference equal (``"no spread"``), the p-value and the interval are
NaN and the reason is kept.

>>> import numpy as np
>>> d = np.array([0.1, 0.3, -0.05, 0.2, 0.15, 0.25])
>>> r = paired_inference(d, "t")
>>> round(r.p, 4), round(r.ci_low, 4), round(r.ci_high, 4), r.reason
(0.0261, 0.028, 0.2886, None)
>>> paired_inference(np.array([1.0, 1.0]), "t").reason
'too few queries'
"""

from __future__ import annotations

import math
import warnings
from typing import Any, NamedTuple

import numpy as np

from .._deprecation import outside_stacklevel
from ..errors import SearchEvalWarning
from ..optional import require
from .degenerate import MIN_QUERIES, degenerate_reason

__all__ = [
    "INTERVAL_LABELS",
    "MIN_QUERIES",
    "Inference",
    "degenerate_reason",
    "flip_means",
    "infer_family",
    "interval_alphas",
    "paired_inference",
]

#: What each test's interval is, for captions and tables.
INTERVAL_LABELS: dict[str, str] = {
    "t": "Student t interval of the mean difference",
    "permutation": "sign-flip randomization interval of the mean difference",
    "wilcoxon": "Hodges–Lehmann interval of the pseudo-median difference",
    "sign": "order-statistic interval of the median difference",
}

_BATCH = 4_000_000  # pattern x query elements per block


class Inference(NamedTuple):
    """p-value, interval and (when they are NaN) the reason, of one paired comparison.

    An internal value (four numbers), not a result: :func:`~searcheval_frames.compare`
    writes them into its frame.
    """

    p: float
    ci_low: float
    ci_high: float
    reason: str | None


_NAN = float("nan")


# --------------------------------------------------------------------------- t
def _t(d: np.ndarray, alpha: float, alternative: str) -> Inference:
    stats = require("scipy.stats", "paired tests and intervals")

    n = d.size
    mean, se = float(d.mean()), float(d.std(ddof=1) / math.sqrt(n))
    t = mean / se
    if alternative == "two-sided":
        p = 2.0 * float(stats.t.sf(abs(t), n - 1))
        half = float(stats.t.ppf(1.0 - alpha / 2.0, n - 1)) * se
        return Inference(min(1.0, p), mean - half, mean + half, None)
    q = float(stats.t.ppf(1.0 - alpha, n - 1)) * se
    if alternative == "greater":
        return Inference(float(stats.t.sf(t, n - 1)), mean - q, math.inf, None)
    return Inference(float(stats.t.cdf(t, n - 1)), -math.inf, mean + q, None)


# --------------------------------------------------------------------------- randomization
def flip_means(d: np.ndarray, n_resamples: int, rng: np.random.Generator) -> tuple[np.ndarray, int,
                                                                                   bool]:
    """The sign-flip patterns of the randomization test as ``t_s`` values.

    Returns ``(t, n_identity, exact)``: ``t`` the mean of ``d`` over the queries each
    non-identity pattern flips, ``n_identity`` how many patterns flip nothing, and
    whether all ``2**n`` patterns were enumerated (when that is ``<= n_resamples``).
    """
    n = d.size
    exact = n <= 30 and 2**n <= n_resamples
    if exact:
        codes = np.arange(2**n, dtype=np.int64)
        flips = ((codes[:, None] >> np.arange(n)) & 1).astype(np.float64)
        sums, counts = flips @ d, flips.sum(axis=1)
    else:
        block = max(1, _BATCH // max(n, 1))
        sums = np.empty(n_resamples)
        counts = np.empty(n_resamples)
        for b0 in range(0, n_resamples, block):
            k = min(block, n_resamples - b0)
            mask = (rng.random((k, n)) < 0.5).astype(np.float64)  # 1 = flip this query
            sums[b0:b0 + k] = mask @ d
            counts[b0:b0 + k] = mask.sum(axis=1)
    keep = counts > 0
    t = sums[keep] / counts[keep]
    t[np.abs(t) <= 1e-12 * max(1.0, float(np.abs(d).max()))] = 0.0  # float noise of Σ = 0
    return t, int((~keep).sum()), exact


def _perm(d: np.ndarray, alpha: float, alternative: str, n_resamples: int,
          rng: np.random.Generator) -> Inference:
    t, ident, exact = flip_means(d, n_resamples, rng)
    t.sort()
    extra = 0 if exact else 1  # Monte Carlo p-values count the observed pattern once
    total = t.size + ident + extra
    ge = ident + np.searchsorted(t, 0.0, side="right")  # patterns with t_s <= 0
    le = ident + t.size - np.searchsorted(t, 0.0, side="left")  # t_s >= 0
    p_ge, p_le = (ge + extra) / total, (le + extra) / total
    # p(θ) > a  <=>  count(θ) + extra > a * total; count(θ) = ident + #{t_s <= θ} (lower side)
    sided = alternative == "two-sided"
    level = alpha / 2.0 if sided else alpha
    need = math.floor(level * total - extra - ident) + 1  # smallest count that keeps θ
    lo = -math.inf if need <= 0 else (float(t[need - 1]) if need <= t.size else _NAN)
    hi = math.inf if need <= 0 else (float(t[t.size - need]) if need <= t.size else _NAN)
    if alternative == "greater":
        return Inference(float(p_ge), lo, math.inf, None)
    if alternative == "less":
        return Inference(float(p_le), -math.inf, hi, None)
    return Inference(float(min(1.0, 2.0 * min(p_ge, p_le))), lo, hi, None)


# --------------------------------------------------------------------------- rank tests
def _rank_p(d: np.ndarray, test: str, alternative: str, options: dict[str, Any]) -> float:
    stats = require("scipy.stats", "paired tests and intervals")

    if test == "sign":
        wins, losses = int((d > 0).sum()), int((d < 0).sum())
        if wins + losses == 0:
            return 1.0
        return float(stats.binomtest(wins, wins + losses, 0.5, alternative=alternative).pvalue)
    if not d.any():
        return 1.0
    nz = d[d != 0]
    tied = np.unique(np.abs(nz)).size < nz.size or nz.size < d.size
    if not options and d.size <= 13 and tied:  # where scipy would enumerate (slowly)
        return _signed_rank_exact(nz, alternative)  # ties or zeros: exact, deterministic
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(stats.wilcoxon(d, alternative=alternative, **options).pvalue)


def _signed_rank_exact(nz: np.ndarray, alternative: str) -> float:
    """Exact signed-rank p-value with ties (midranks) over all ``2**n`` sign patterns, by
    dynamic programming on doubled midranks (what scipy's permutation method enumerates
    for small samples, without its cost or, for n > 13, its Monte Carlo noise)."""
    rankdata = require("scipy.stats", "paired tests and intervals").rankdata

    r2 = np.rint(2.0 * rankdata(np.abs(nz))).astype(np.int64)  # doubled midranks
    counts = np.zeros(int(r2.sum()) + 1)
    counts[0] = 1.0
    for r in r2:  # each query adds its rank to T+ or not
        counts[r:] = counts[r:] + counts[:-r].copy() if r else counts
    probs = counts / counts.sum()
    t = int(r2[nz > 0].sum())
    ge, le = float(probs[t:].sum()), float(probs[:t + 1].sum())
    if alternative == "greater":
        return ge
    if alternative == "less":
        return le
    return min(1.0, 2.0 * min(ge, le))


def _center(d: np.ndarray, test: str) -> float:
    if test == "sign":
        return float(np.median(d))
    x = d if d.size <= 2000 else np.random.default_rng(0).choice(d, 2000, replace=False)
    i, j = np.triu_indices(x.size)
    return float(np.median((x[i] + x[j]) / 2.0))  # Hodges–Lehmann estimate


def _jump_near(d: np.ndarray, test: str, x: float) -> float:
    """The data point (sign test) or Walsh average (Wilcoxon) nearest to ``x``: where the
    step function ``p(θ)`` jumps."""
    s = np.sort(d)
    target = s if test == "sign" else 2.0 * x - s  # partner of each d_i for (d_i + d_j) / 2 ~ x
    idx = np.clip(np.searchsorted(s, target), 1, s.size - 1)
    near = np.where(np.abs(s[idx - 1] - target) <= np.abs(s[idx] - target), s[idx - 1], s[idx])
    cands = near if test == "sign" else (s + near) / 2.0
    return float(cands[np.argmin(np.abs(cands - x))])


def _edge(pfun: Any, inside: float, outside: float, alpha: float, d: np.ndarray,
          test: str) -> float:
    """Bisect between ``inside`` (p > alpha) and ``outside`` (p <= alpha), then snap to the
    jump of ``p(θ)`` the bisection converged to (so an end lands exactly on 0 when 0 is
    the jump)."""
    scale = max(1.0, float(np.max(np.abs(d))))
    for _ in range(200):
        mid = (inside + outside) / 2.0
        if mid in (inside, outside) or abs(outside - inside) <= 1e-11 * scale:
            break
        if pfun(mid) > alpha:
            inside = mid
        else:
            outside = mid
    jump = _jump_near(d, test, inside)
    tol = 1e-9 * max(1.0, float(np.max(np.abs(d))))
    if abs(jump - inside) <= tol and pfun(jump) > alpha:
        return jump
    return inside


def _rank(d: np.ndarray, test: str, alpha: float, alternative: str,
          options: dict[str, Any]) -> Inference:
    p = _rank_p(d, test, alternative, options)
    span = float(np.ptp(d)) + float(np.max(np.abs(d)))
    far_lo, far_hi = float(d.min()) - span, float(d.max()) + span

    def pf(side: str) -> Any:
        return lambda th: _rank_p(d - th, test, side, options)

    lo, hi = -math.inf, math.inf
    level = alpha / 2.0 if alternative == "two-sided" else alpha
    cands = [_center(d, test), float(np.median(d)), float(d.mean())]
    c = max(cands, key=lambda th: min(pf("greater")(th), pf("less")(th)))
    if alternative in ("two-sided", "greater"):
        f = pf("greater")
        if f(c) <= level:
            return Inference(p, _NAN, _NAN, "interval not found")
        lo = -math.inf if f(far_lo) > level else _edge(f, c, far_lo, level, d, test)
    if alternative in ("two-sided", "less"):
        f = pf("less")
        if f(c) <= level:
            return Inference(p, _NAN, _NAN, "interval not found")
        hi = math.inf if f(far_hi) > level else _edge(f, c, far_hi, level, d, test)
    return Inference(p, lo, hi, None)


# --------------------------------------------------------------------------- public
def paired_inference(
    d: np.ndarray,
    test: str,
    *,
    alpha: float = 0.05,
    alternative: str = "two-sided",
    n_resamples: int = 10_000,
    rng: np.random.Generator | None = None,
    options: dict[str, Any] | None = None,
) -> Inference:
    """p-value and the interval that inverts the test, on per-query differences ``d``.

    Parameters
    ----------
    d
        Per-query differences ``x − y`` (new minus baseline).
    test
        Canonical test name: ``"t"``, ``"permutation"``, ``"wilcoxon"`` or ``"sign"``.
    alpha
        The interval is at confidence ``1 − alpha`` (pass the multiplicity-matched
        level from :func:`interval_alphas`).
    alternative
        ``"two-sided"``, ``"greater"`` or ``"less"`` (one-sided intervals).
    n_resamples, rng
        Sign-flip patterns of the randomization test and their generator.
    options
        Extra keyword arguments of :func:`scipy.stats.wilcoxon`.

    Returns
    -------
    Inference
        ``p``, ``ci_low``, ``ci_high``; all NaN with ``reason`` for degenerate data.

    Notes
    -----
    Two-sided two-tailed duality: ``ci_low > 0 or ci_high < 0  <=>  p <= alpha`` (up to
    floating point at the interval's ends). The Student interval is
    ``d̄ ± t_{1−α/2, n−1} s_d / √n`` (Student 1908).

    Examples
    --------
    >>> r = paired_inference(np.array([0.2, 0.1, 0.4, 0.3, 0.0, 0.2]), "sign")
    >>> round(r.p, 4), r.ci_low, r.ci_high
    (0.0625, 0.0, 0.4)
    """
    d = np.asarray(d, dtype=np.float64)
    reason = degenerate_reason(d)
    if reason is not None:
        return Inference(_NAN, _NAN, _NAN, reason)
    if test == "t":
        return _t(d, alpha, alternative)
    if test == "permutation":
        return _perm(d, alpha, alternative, int(n_resamples), rng or np.random.default_rng())
    return _rank(d, test, alpha, alternative, dict(options or {}))


def interval_alphas(p_raw: np.ndarray, alpha: float, correction: str) -> np.ndarray:
    """The per-comparison level at which each interval agrees with the adjusted p-value.

    ``p_raw`` are the unadjusted p-values of one family (NaN ones do not count);
    ``correction`` a canonical name of :func:`~searcheval_frames.analysis.stats.adjust_pvalues`.
    See the module docstring for the rules (Bonferroni ``α/m``; Holm step levels;
    Benjamini–Yekutieli 2005 FCR levels ``Rα/m``).

    >>> interval_alphas(np.array([0.001, 0.02, 0.3]), 0.05, "holm").round(4).tolist()
    [0.0167, 0.025, 0.05]
    """
    p = np.asarray(p_raw, dtype=np.float64)
    out = np.full(p.shape, float(alpha))
    ok = np.flatnonzero(~np.isnan(p))
    m = ok.size
    if m == 0 or correction == "none":
        return out
    q = p[ok]
    if correction == "bonferroni":
        out[ok] = alpha / m
        return out
    order = np.argsort(q, kind="stable")
    if correction == "holm":
        steps = alpha / (m - np.arange(m))
        passed = q[order] <= steps
        r = m if passed.all() else int(np.argmin(passed))
        lv = np.where(np.arange(m) < r, steps, alpha / max(m - r, 1))
        res = np.empty(m)
        res[order] = lv
        out[ok] = res
        return out
    a = alpha if correction == "bh" else alpha / float(np.sum(1.0 / np.arange(1, m + 1)))
    below = np.flatnonzero(q[order] <= a * np.arange(1, m + 1) / m)
    r = int(below[-1]) + 1 if below.size else 0
    out[ok] = a * max(r, 1) / m
    return out


def infer_family(
    items: list[tuple[np.ndarray, np.random.Generator, np.random.Generator]],
    families: list[Any],
    *,
    test: str,
    alternative: str,
    correction: str,
    alpha: float,
    ci: float,
    ci_method: str,
    n_resamples: int,
    options: dict[str, Any] | None = None,
) -> dict[str, np.ndarray]:
    """p-values (raw and adjusted), matched intervals and reasons of many comparisons.

    ``items`` holds, per comparison, the differences and two generators (test,
    interval); ``families`` a key per comparison: p-values are adjusted, and interval
    levels matched (:func:`interval_alphas`, family level ``1 − ci``), within each key.
    ``ci_method="test"`` gives each test its own interval; a bootstrap method
    (``"bca"``, ``"percentile"``, ``"basic"``) or ``"t"`` keeps the older separate
    interval at the same matched level. ``significant`` needs both: adjusted p ≤ ``alpha``
    and an interval on the side of 0 the difference lies on.
    """
    import copy

    from . import stats as _st

    n = len(items)
    p, lo, hi = np.full(n, _NAN), np.full(n, _NAN), np.full(n, _NAN)
    reasons: list[str | None] = [None] * n
    saved = [copy.deepcopy(r) for _, r, _ in items]  # the randomization interval reuses them
    for i, (d, rng, _) in enumerate(items):
        res = paired_inference(d, test, alpha=1.0 - ci, alternative=alternative,
                               n_resamples=n_resamples, rng=rng, options=options)
        p[i], reasons[i] = res.p, res.reason
        _st.tick()
    adj = np.full(n, _NAN)
    levels = np.full(n, 1.0 - ci)
    keys = np.array([str(f) for f in families], dtype=object)
    for key in dict.fromkeys(keys):
        idx = np.flatnonzero(keys == key)
        adj[idx] = _st.adjust_pvalues(p[idx], correction)
        levels[idx] = interval_alphas(p[idx], 1.0 - ci, correction)
    for i, (d, _, rng_ci) in enumerate(items):
        if reasons[i] is not None:
            _st.tick()  # the interval's share of the progress bar
            continue
        if ci_method == "test":
            res = paired_inference(d, test, alpha=float(levels[i]), alternative=alternative,
                                   n_resamples=n_resamples, rng=saved[i], options=options)
            lo[i], hi[i] = res.ci_low, res.ci_high
            reasons[i] = res.reason
            _st.tick()
        else:
            lo[i], hi[i] = _st.bootstrap_ci(d, np.zeros_like(d), confidence=1.0 - levels[i],
                                            method=ci_method, n_resamples=n_resamples,
                                            rng=rng_ci)
    delta = np.array([float(np.mean(d)) if d.size else _NAN for d, _, _ in items])
    side = (lo > 0) & (delta > 0) | (hi < 0) & (delta < 0)
    sig = side & (np.nan_to_num(adj, nan=1.0) <= alpha)
    return {"p_value": p, "p_adjusted": adj, "ci_low": lo, "ci_high": hi,
            "ci_level": 1.0 - levels, "significant": sig,
            "reason": np.array(reasons, dtype=object)}


def describe_interval(test: str, ci_method: str, correction: str, n_resamples: int) -> str:
    """What the interval beside a p-value is, and how it is adjusted (captions).

    >>> describe_interval("t", "test", "holm", 1000)
    'Student t interval of the mean difference (inverts the test), Holm-matched levels'
    """
    if ci_method == "test":
        text = INTERVAL_LABELS[test] + " (inverts the test)"
        if test == "permutation":
            text = text.replace(" (inverts", f", {n_resamples:,} sign flips (inverts")
    elif ci_method == "t":
        text = "Student t interval of the mean difference"
    else:
        from .stats import CI_METHODS

        text = f"{CI_METHODS[ci_method]} bootstrap of the mean difference, {n_resamples:,} resamples"
    adjusted = {"none": "", "bonferroni": ", Bonferroni levels (simultaneous)",
                "holm": ", Holm-matched levels", "bh": ", FCR levels (Benjamini–Yekutieli 2005)",
                "by": ", FCR levels (Benjamini–Yekutieli 2005)",
                "tukey": ", Tukey simultaneous"}
    return text + adjusted.get(correction, "")


def fill_frame(frame: Any, items: list[tuple[np.ndarray, np.random.Generator,
                                             np.random.Generator]],
               *, family: str, **kwargs: Any) -> Any:
    """Fill a comparison frame's p, interval, significance and reason columns (polars),
    warning once about comparisons that cannot be tested."""
    import polars as pl

    if frame.height == 0:
        return frame
    fams = (["all"] * frame.height if family == "all"
            else frame.get_column("measure").to_list())
    tukey = kwargs["correction"] == "tukey"
    rest = {key: v for key, v in kwargs.items() if key != "tukey_rows"}
    out = infer_family(items, fams, **{**rest, "correction": "none" if tukey else
                                       rest["correction"]})
    if tukey:  # one family of all pairs of runs per measure: p, interval, verdict from HSD
        tk = np.array(kwargs["tukey_rows"], dtype=np.float64).reshape(-1, 3)
        delta = frame.get_column("delta").to_numpy()
        ok = np.array([r is None for r in out["reason"]])
        out["p_adjusted"] = np.where(ok, tk[:, 0], _NAN)
        out["ci_low"] = np.where(ok, delta - tk[:, 1], _NAN)
        out["ci_high"] = np.where(ok, delta + tk[:, 1], _NAN)
        out["significant"] = ok & (tk[:, 2] > 0)
    frame = frame.with_columns(
        pl.Series("ci_low", out["ci_low"], dtype=pl.Float64),
        pl.Series("ci_high", out["ci_high"], dtype=pl.Float64),
        pl.Series("p_value", out["p_value"], dtype=pl.Float64),
        pl.Series("p_adjusted", out["p_adjusted"], dtype=pl.Float64),
        pl.Series("significant", out["significant"], dtype=pl.Boolean),
        pl.Series("reason", out["reason"].tolist(), dtype=pl.String),
    )
    bad = frame.filter(pl.col("reason").is_not_null())
    if bad.height:
        shown = "; ".join(f"{r} vs {b} on {m} ({why}, {n} queries)" for r, b, m, why, n in
                          bad.select("run", "baseline", "measure", "reason", "n_queries")
                          .head(5).iter_rows())
        more = f" and {bad.height - 5} more" if bad.height > 5 else ""
        warnings.warn(
            f"compare: {bad.height} comparison(s) cannot be tested: {shown}{more}. Their "
            f"p-value and interval are NaN. A paired test needs at least {MIN_QUERIES} "
            "queries whose differences are not all equal; evaluate more queries.",
            SearchEvalWarning, stacklevel=outside_stacklevel())
    return frame
