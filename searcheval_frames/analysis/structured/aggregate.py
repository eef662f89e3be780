"""Aggregates of per-dataset system means: macro mean, mean rank, Borda count (numpy).

``M`` holds per-dataset means, datasets x systems (any leading axes, e.g. bootstrap
samples): ``(..., D, S)``.

* ``"macro"``: ``(1/D) Σ_d M_ds`` (higher is better);
* ``"mean_rank"``: ``(1/D) Σ_d rank_d(s)``, rank 1 the best mean of dataset ``d``, ties
  sharing their average rank (lower is better);
* ``"borda"``: ``Σ_d (#{t : M_dt < M_ds} + ½ #{t ≠ s : M_dt = M_ds})``, the points a
  system gets for every system it beats on a dataset, half a point per tie (higher is
  better; with every system on every dataset it equals ``D·(S − mean rank)``, so it
  orders systems as the mean rank does, on another scale).

>>> M = np.array([[0.5, 0.7, 0.6], [0.4, 0.3, 0.4]])
>>> aggregate(M, "macro").round(3).tolist(), aggregate(M, "mean_rank").tolist()
([0.45, 0.5, 0.5], [2.25, 2.0, 1.75])
>>> aggregate(M, "borda").tolist()
[1.5, 2.0, 2.5]
"""

from __future__ import annotations

import numpy as np

__all__ = ["AGGREGATES", "aggregate", "higher_is_better", "ranks"]

#: Accepted ``aggregate=`` values.
AGGREGATES = ("macro", "mean_rank", "borda")


def ranks(M: np.ndarray) -> np.ndarray:
    """Average ranks along the last axis, 1 = the largest value, ties averaged."""
    a = M[..., :, None]
    b = M[..., None, :]
    above = (b > a).sum(axis=-1)
    tied = (b == a).sum(axis=-1) - 1
    return 1.0 + above + 0.5 * tied


def aggregate(M: np.ndarray, how: str) -> np.ndarray:
    """``(..., D, S) -> (..., S)``: the aggregate ``how`` over the datasets axis."""
    if how == "macro":
        return M.mean(axis=-2)
    r = ranks(M)
    if how == "mean_rank":
        return r.mean(axis=-2)
    return (M.shape[-1] - r).sum(axis=-2)


def higher_is_better(how: str) -> bool:
    """Whether a larger aggregate is better (False for the mean rank)."""
    return how != "mean_rank"
