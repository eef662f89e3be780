"""The sampling designs of :func:`~searcheval_frames.sample_queries`, as numpy on counts.

* :func:`pps_inclusion`: inclusion probabilities proportional to size for a sample of
  ``n`` without replacement, :math:`\\pi_i = \\min(1, m\\, c_i / \\sum_{j \\in R} c_j)`
  with the certainty units (:math:`\\pi_i = 1`) taken out first and ``m`` the draws
  left for the rest ``R`` (repeated until no unit of ``R`` reaches 1), so
  :math:`\\sum_i \\pi_i = n`.
* :func:`systematic_pps`: the randomised systematic πps design (Goodman & Kish 1950;
  Hartley & Rao 1962): the units in a random order, their :math:`\\pi_i` laid end to end
  on :math:`[0, n)`, one random start :math:`u \\in [0, 1)` and the units hit by
  :math:`u, u + 1, \\ldots`. For every order each unit is hit with probability exactly
  :math:`\\pi_i` (its segment has length :math:`\\pi_i \\le 1`), so the inclusion
  probabilities are exactly the :math:`\\pi_i` and the sample has exactly ``n`` units.
  (Brewer & Hanif, *Sampling with Unequal Probabilities*, 1983, procedure 2.)
* :func:`allocate`: the stratum sample sizes, ``equal`` (:math:`n/H`) or
  ``proportional`` (:math:`n N_h / N`), rounded by largest remainder, capped at
  :math:`N_h` with the surplus given to the other strata by the same rule.

>>> import numpy as np
>>> pps_inclusion(np.array([100, 10, 5, 5]), 2).tolist()
[1.0, 0.5, 0.25, 0.25]
>>> allocate([10, 30, 60], 20, "proportional")
[2, 6, 12]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["allocate", "pps_inclusion", "systematic_pps"]


def pps_inclusion(counts: np.ndarray, n: int) -> np.ndarray:
    """Inclusion probabilities proportional to ``counts`` for ``n`` draws, capped at 1.

    Units with count 0 get 0; ``n`` must not exceed the number of positive counts.
    """
    c = np.asarray(counts, dtype=np.float64)
    pi = np.zeros(c.size)
    certain = np.zeros(c.size, dtype=bool)
    positive = c > 0
    while True:
        rest = positive & ~certain
        m = n - int(certain.sum())
        total = c[rest].sum()
        if m <= 0 or total <= 0:
            break
        p = m * c[rest] / total
        hit = p >= 1.0
        if not hit.any():
            pi[rest] = p
            break
        certain[np.flatnonzero(rest)[hit]] = True
    pi[certain] = 1.0
    return pi


def systematic_pps(pi: np.ndarray, order: np.ndarray, u: float) -> np.ndarray:
    """Indices of the units selected by systematic πps with the units in ``order`` and
    the start ``u`` in [0, 1); units with :math:`\\pi_i = 1` are always selected.

    ``order`` is a permutation of the indices of the units with :math:`0 < \\pi_i < 1`.
    """
    pi = np.asarray(pi, dtype=np.float64)
    certain = np.flatnonzero(pi >= 1.0)
    if order.size == 0:
        return np.sort(certain)
    cum = np.cumsum(pi[order])
    m = round(cum[-1])
    points = u + np.arange(m)
    hit = np.searchsorted(cum, points, side="right")
    hit = np.minimum(hit, order.size - 1)  # (a last sum a rounding error below m)
    return np.sort(np.concatenate([certain, order[hit]]))


def allocate(sizes: Sequence[int], n: int, allocation: str) -> list[int]:
    """Sample size per stratum: ``n`` split equally or in proportion to ``sizes``,
    rounded by largest remainder (ties: the earlier stratum), never above a stratum's
    size. ``n`` must not exceed ``sum(sizes)``."""
    sizes = [int(s) for s in sizes]
    out = [0] * len(sizes)
    open_ = [i for i, s in enumerate(sizes) if s > 0]
    left = n
    while left > 0 and open_:
        base = [1.0 if allocation == "equal" else float(sizes[i]) for i in open_]
        total = sum(base)
        want = [left * b / total for b in base]
        take = [int(np.floor(w)) for w in want]
        rest = left - sum(take)
        by_rem = sorted(range(len(open_)), key=lambda k: (-(want[k] - take[k]), k))
        for k in by_rem[:rest]:
            take[k] += 1
        capped = False
        for k, i in enumerate(open_):
            room = sizes[i] - out[i]
            if take[k] >= room:
                take[k], capped = room, True
        for k, i in enumerate(open_):
            out[i] += take[k]
        left = n - sum(out)
        open_ = [i for i in open_ if out[i] < sizes[i]]
        if not capped:
            break
    return out
