"""The noncentral t behind the paired t-test's power: power, queries needed, detectable Δ.

Shared by :mod:`.power` (power analysis) and :mod:`.slices` (the minimum detectable
Δ of each slice); see :mod:`.power` for the formulas (Sakai, "Topic set size
design", *Information Retrieval Journal* 19(3), 2016).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..optional import require

__all__ = ["detectable", "n_needed", "t_power", "upper_tail"]

_MAX_N = 10**9  # largest query-set size searched analytically


def t_power(
    effect: Any, n: Any, alpha: float, alternative: str = "two-sided"
) -> np.ndarray:
    """Power of the paired (one-sample) t-test for standardised effect ``Δ/σ_d``.

    >>> round(float(t_power(0.5, 34, 0.05)), 4)
    0.8078
    """
    stats = require("scipy.stats", "sef.power")

    effect = np.asarray(effect, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    df = n - 1.0
    nc = effect * np.sqrt(n)
    level = alpha / 2.0 if alternative == "two-sided" else alpha
    crit = stats.t.ppf(1.0 - level, df)
    if alternative == "greater":
        return upper_tail(crit, df, nc)
    if alternative == "less":
        return upper_tail(crit, df, -nc)
    return upper_tail(crit, df, nc) + upper_tail(crit, df, -nc)


def upper_tail(crit: Any, df: Any, nc: Any) -> np.ndarray:
    """P(t'(df, nc) >= crit); scipy's nct returns NaN deep in a tail, so try the
    equivalent forms and fall back to 0 / 1 where all of them fail."""
    stats = require("scipy.stats", "sef.power")

    with np.errstate(all="ignore"):
        p = np.asarray(stats.nct.sf(crit, df, nc), dtype=np.float64)
        bad = np.isnan(p)
        if bad.any():
            p = np.where(bad, stats.nct.cdf(-crit, df, -nc), p)
            bad = np.isnan(p)
        if bad.any():
            p = np.where(bad, 1.0 - stats.nct.cdf(crit, df, nc), p)
            bad = np.isnan(p) & np.isfinite(nc) & np.isfinite(df)
            p = np.where(bad, (np.broadcast_to(nc, p.shape) > crit).astype(np.float64), p)
    return np.clip(p, 0.0, 1.0)


def n_needed(effect: np.ndarray, alpha: float, target: float, alternative: str) -> np.ndarray:
    """Smallest integer n >= 2 with t_power >= target (-1 when out of reach)."""
    effect = np.asarray(effect, dtype=np.float64)
    ok = np.isfinite(effect) & (effect != 0)
    if alternative == "greater":
        ok &= effect > 0
    elif alternative == "less":
        ok &= effect < 0
    e = np.where(ok, effect, 1.0)
    lo = np.ones_like(e)  # power(lo) < target (n = 1 is never enough)
    hi = np.full_like(e, 2.0)
    for _ in range(40):  # grow hi until power(hi) >= target
        short = ok & (t_power(e, hi, alpha, alternative) < target) & (hi < _MAX_N)
        if not short.any():
            break
        lo = np.where(short, hi, lo)
        hi = np.where(short, np.minimum(hi * 4.0, _MAX_N), hi)
    ok &= t_power(e, hi, alpha, alternative) >= target
    while True:
        open_ = ok & (hi - lo > 1)
        if not open_.any():
            break
        mid = np.floor((lo + hi) / 2.0)
        reach = t_power(e, mid, alpha, alternative) >= target
        hi = np.where(open_ & reach, mid, hi)
        lo = np.where(open_ & ~reach, mid, lo)
    return np.where(ok, hi, -1.0).astype(np.int64)


def detectable(n: np.ndarray, alpha: float, target: float, alternative: str) -> np.ndarray:
    """Smallest standardised effect |Δ/σ_d| with power >= target at n queries."""
    n = np.asarray(n, dtype=np.float64)
    lo = np.zeros_like(n)
    hi = np.ones_like(n)
    for _ in range(200):
        short = t_power(hi, n, alpha, "greater" if alternative == "less" else alternative) < target
        if not short.any():
            break
        lo = np.where(short, hi, lo)
        hi = np.where(short, hi * 2.0, hi)
    alt = "greater" if alternative == "less" else alternative
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if not ((mid > lo) & (mid < hi)).any():
            break
        reach = t_power(mid, n, alpha, alt) >= target
        hi = np.where(reach, mid, hi)
        lo = np.where(reach, lo, mid)
    return hi
