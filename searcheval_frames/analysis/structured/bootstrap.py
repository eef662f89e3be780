"""Resampling with structure: the hierarchical and the two-stage bootstrap (numpy).

* :func:`replicate_deltas`: the hierarchical bootstrap of a system's Δ against the
  baseline when each has several replicates (seeds): draw the queries with replacement
  (one draw shared by both systems: the comparison stays paired), then, within each
  system independently, draw its replicates with replacement; Δ* is the mean over the
  drawn (replicate, query) cells of the system minus that of the baseline
  (Davison & Hinkley 1997, sec. 3.8, "multistage sampling"; resampling at every
  level, their strategy 2). One sample costs ``O(R·Q)`` as a weighted sum:
  ``mean* = c·V·w / (R·Q)`` with ``c`` the replicate counts and ``w`` the query counts.
* :func:`dataset_means`: the two-stage bootstrap over datasets: draw ``D`` datasets
  with replacement, then within each drawn dataset its queries with replacement (a
  dataset drawn twice gets two query draws); returns each drawn dataset's system means.

Each level draws from its own child generator (``rng.spawn``), so the samples do not
depend on how the work is cut into batches (``tests/test_structured.py`` checks both
against a slow loop over the samples with the same seed).

>>> import numpy as np
>>> V = np.array([[0.5, 0.7, 0.2], [0.6, 0.8, 0.1]]); B = np.array([[0.4, 0.6, 0.2]])
>>> d = replicate_deltas(V, B, 2000, np.random.default_rng(0))
>>> d.shape, round(float(d.mean()), 2)
((2000,), 0.08)
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "bootstrap_p",
    "counts",
    "dataset_means",
    "percentile_interval",
    "replicate_deltas",
    "sd_or_nan",
]

_CELLS = 2_000_000  # sample x cell elements per batch


def counts(draws: np.ndarray, n: int) -> np.ndarray:
    """How often each of ``n`` items is drawn in each row of ``draws`` (rows x n)."""
    m = draws.shape[0]
    flat = (draws + (np.arange(m) * n)[:, None]).ravel()
    return np.bincount(flat, minlength=m * n).reshape(m, n).astype(np.float64)


def _batches(total: int, width: int) -> list[tuple[int, int]]:
    step = max(1, _CELLS // max(width, 1))
    return [(b0, min(total, b0 + step)) for b0 in range(0, total, step)]


def replicate_deltas(system: np.ndarray, baseline: np.ndarray, n_resamples: int,
                     rng: np.random.Generator) -> np.ndarray:
    """Δ* of the hierarchical bootstrap (see the module doc): ``system`` and
    ``baseline`` are replicates x queries matrices over the same queries."""
    (rs, n), (rb, _) = system.shape, baseline.shape
    g_q, g_s, g_b = rng.spawn(3)
    out = np.empty(n_resamples)
    for b0, b1 in _batches(n_resamples, n + rs + rb):
        m = b1 - b0
        w = counts(g_q.integers(0, n, (m, n)), n)
        cs = counts(g_s.integers(0, rs, (m, rs)), rs)
        cb = counts(g_b.integers(0, rb, (m, rb)), rb)
        out[b0:b1] = (np.einsum("br,rq,bq->b", cs, system, w) / (rs * n)
                      - np.einsum("br,rq,bq->b", cb, baseline, w) / (rb * n))
    return out


def replicate_means(matrices: list[np.ndarray], n_resamples: int,
                    rng: np.random.Generator) -> np.ndarray:
    """``(B, S)`` system means in each hierarchical sample: one query draw shared by all
    systems, then each system's replicates drawn from its own generator;
    ``matrices[s]`` is system ``s``'s replicates x queries matrix (same queries)."""
    n = matrices[0].shape[1]
    g_q, *g_sys = rng.spawn(1 + len(matrices))
    out = np.empty((n_resamples, len(matrices)))
    width = n + max(m.shape[0] for m in matrices)
    for b0, b1 in _batches(n_resamples, width):
        w = counts(g_q.integers(0, n, (b1 - b0, n)), n)
        for s, (V, g) in enumerate(zip(matrices, g_sys, strict=True)):
            r = V.shape[0]
            c = counts(g.integers(0, r, (b1 - b0, r)), r)
            out[b0:b1, s] = np.einsum("br,rq,bq->b", c, V, w) / (r * n)
    return out


def dataset_means(matrices: list[np.ndarray], n_resamples: int,
                  rng: np.random.Generator) -> np.ndarray:
    """``(B, D, S)`` system means of each drawn dataset in each two-stage sample;
    ``matrices[d]`` is dataset ``d``'s queries x systems matrix (same systems)."""
    n_sets = len(matrices)
    n_sys = matrices[0].shape[1]
    g_sets, *g_queries = rng.spawn(1 + n_sets)
    picked = g_sets.integers(0, n_sets, (n_resamples, n_sets))
    out = np.empty((n_resamples, n_sets, n_sys))
    flat = out.reshape(-1, n_sys)
    for d, X in enumerate(matrices):
        slots = np.flatnonzero(picked.ravel() == d)
        q = X.shape[0]
        for s0, s1 in _batches(slots.size, q):
            w = counts(g_queries[d].integers(0, q, (s1 - s0, q)), q)
            flat[slots[s0:s1]] = w @ X / q
    return out


def percentile_interval(samples: np.ndarray, ci: float, axis: int = 0) -> tuple[np.ndarray,
                                                                                np.ndarray]:
    """The percentile interval ``[q_{(1−ci)/2}, q_{(1+ci)/2}]`` of bootstrap samples."""
    tail = (1.0 - ci) / 2.0
    return (np.quantile(samples, tail, axis=axis), np.quantile(samples, 1.0 - tail, axis=axis))


def bootstrap_p(samples: np.ndarray, axis: int = 0) -> np.ndarray:
    """Two-sided bootstrap p-value of "Δ = 0": ``min(1, 2·min(#{Δ* ≤ 0}+1,
    #{Δ* ≥ 0}+1)/(B+1))`` (the percentile interval at ``1 − p`` just reaches 0).

    >>> float(bootstrap_p(np.array([0.1, 0.2, -0.1, 0.3])))
    0.8
    """
    b = samples.shape[axis]
    low = (samples <= 0).sum(axis=axis) + 1.0
    high = (samples >= 0).sum(axis=axis) + 1.0
    return np.minimum(1.0, 2.0 * np.minimum(low, high) / (b + 1.0))


def sd_or_nan(x: np.ndarray) -> float:
    """Sample standard deviation (ddof=1), NaN for fewer than two values."""
    return float(np.std(x, ddof=1)) if x.size > 1 else math.nan
