"""When paired data cannot be tested (issue #26): one rule for every test and interval.

Below :data:`MIN_QUERIES` queries, with every difference zero, or with every difference
equal, a p-value or an interval would only look certain (a t-test on ``[1, 1]`` gives
``p = 0`` and the "interval" ``[1, 1]``). Such comparisons get NaN and a ``reason``.

>>> import numpy as np
>>> degenerate_reason(np.array([1.0, 1.0])), degenerate_reason(np.array([0.1, 0.3, 0.2]))
('too few queries', None)
"""

from __future__ import annotations

import numpy as np

__all__ = ["MIN_QUERIES", "degenerate_reason"]

#: Fewest queries a paired test is run on; below it p and the interval are NaN.
MIN_QUERIES = 3


def degenerate_reason(d: np.ndarray) -> str | None:
    """Why the differences ``d`` cannot be tested, or None: ``"too few queries"`` (fewer
    than :data:`MIN_QUERIES`), ``"all ties"`` (every difference 0), ``"no spread"``
    (every difference the same non-zero value).

    >>> degenerate_reason(np.array([0.0, 0.0, 0.0])), degenerate_reason(np.array([1.0] * 4))
    ('all ties', 'no spread')
    """
    d = np.asarray(d, dtype=np.float64)
    if d.size < MIN_QUERIES:
        return "too few queries"
    top = float(np.max(np.abs(d)))
    if top <= 1e-12:
        return "all ties"
    if float(np.ptp(d)) <= 1e-12 * max(1.0, top):
        return "no spread"
    return None
