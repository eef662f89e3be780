"""Agreement statistics of a judge against human labels, all from a confusion matrix.

Cohen's kappa (plain, linear, quadratic), Krippendorff's alpha (nominal, ordinal,
interval) for two coders and no missing values, and tau_AP between two rankings. Every
label statistic is a function of the human × judge confusion matrix, so the bootstrap
resamples queries by summing per-query matrices.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["alpha_from_confusion", "kappa_from_confusion", "krippendorff_alpha", "tau_ap"]


def kappa_from_confusion(m: np.ndarray, cats: np.ndarray, weights: str | None = None) -> float:
    """Cohen's kappa from counts ``m[i, j]`` (rater a gave ``cats[i]``, b gave ``cats[j]``).

    ``kappa = 1 - sum(w * m) / sum(w * e)``, ``e`` the counts expected from the margins,
    ``w`` the disagreement weights: 0/1, ``|i - j|`` or ``(i - j)**2`` over grade values.
    """
    m = np.asarray(m, dtype=np.float64)
    n = m.sum()
    if n == 0:
        return float("nan")
    e = np.outer(m.sum(axis=1), m.sum(axis=0)) / n
    d = np.abs(cats[:, None] - cats[None, :]).astype(np.float64)
    w = (d > 0).astype(np.float64) if weights is None else d if weights == "linear" else d**2
    denom = float((w * e).sum())
    return float("nan") if denom == 0 else float(1.0 - (w * m).sum() / denom)


def _delta2(counts: np.ndarray, cats: np.ndarray, level: str) -> np.ndarray:
    if level == "nominal":
        return (cats[:, None] != cats[None, :]).astype(np.float64)
    if level == "interval":
        return (cats[:, None] - cats[None, :]).astype(np.float64) ** 2
    # ordinal (Krippendorff 2011): (sum of n_g for g from c to k, minus (n_c + n_k) / 2)^2
    cum = np.concatenate([[0.0], np.cumsum(counts)])
    k = len(cats)
    i, j = np.meshgrid(np.arange(k), np.arange(k), indexing="ij")
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    between = cum[hi + 1] - cum[lo]
    return (between - (counts[i] + counts[j]) / 2.0) ** 2


def alpha_from_confusion(m: np.ndarray, cats: np.ndarray, level: str = "ordinal") -> float:
    """Krippendorff's alpha of two coders from their confusion matrix (no missing values).

    The coincidence matrix is ``o = m + m.T``, ``n_c`` its margins and ``n = 2N``;
    ``alpha = 1 - (n - 1) * sum(o * d2) / sum(n_c n_k d2)``, with ``d2`` the squared
    difference of the chosen level (Krippendorff, *Computing Krippendorff's alpha-
    reliability*, 2011).
    """
    m = np.asarray(m, dtype=np.float64)
    o = m + m.T
    nc = o.sum(axis=1)
    n = nc.sum()
    if n < 2:
        return float("nan")
    d2 = _delta2(nc, cats, level)
    expected = float((np.outer(nc, nc) * d2).sum())
    if expected == 0:
        return float("nan")
    return float(1.0 - (n - 1) * (o * d2).sum() / expected)


def krippendorff_alpha(a: Sequence[int] | np.ndarray, b: Sequence[int] | np.ndarray,
                       level: str = "ordinal") -> float:
    """Krippendorff's alpha of two coders' integer labels on the same items.

    >>> round(krippendorff_alpha([0, 1, 2, 3, 3], [0, 1, 2, 3, 2]), 4)
    0.8955
    """
    a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    cats = np.unique(np.concatenate([a, b]))
    m = np.zeros((len(cats), len(cats)))
    np.add.at(m, (np.searchsorted(cats, a), np.searchsorted(cats, b)), 1)
    return alpha_from_confusion(m, cats, level)


def tau_ap(truth: Sequence[float] | np.ndarray, estimate: Sequence[float] | np.ndarray) -> float:
    """AP rank correlation of the ranking by ``estimate`` against the one by ``truth``.

    Systems sorted by ``estimate`` (best first); for each system at position ``i >= 2``,
    ``C(i)`` counts the systems above it that ``truth`` also puts above it:
    ``tau_AP = 2 / (N - 1) * sum_i C(i) / (i - 1) - 1`` (Yilmaz, Aslam & Robertson, "A new
    rank correlation coefficient for information retrieval", SIGIR 2008). Unlike
    Kendall's tau it weighs swaps near the top more. Ties in ``estimate`` are broken by
    position, ties in ``truth`` count as half.

    >>> tau_ap([4, 3, 2, 1], [4, 3, 2, 1]), tau_ap([4, 3, 2, 1], [1, 2, 3, 4])
    (1.0, -1.0)
    """
    t = np.asarray(truth, dtype=np.float64)
    e = np.asarray(estimate, dtype=np.float64)
    n = t.size
    if n < 2:
        return float("nan")
    order = np.argsort(-e, kind="stable")
    ts = t[order]
    total = 0.0
    for i in range(1, n):
        above = ts[:i]
        c = float((above > ts[i]).sum() + 0.5 * (above == ts[i]).sum())
        total += c / i
    return float(2.0 / (n - 1) * total - 1.0)
