"""The grid of a sweep: its points and their run names."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ..figures.sweep import point_name
from ..options import option_error

__all__ = ["MAX_POINTS", "grid_points", "point_name"]

MAX_POINTS = 10_000


def grid_points(grid: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """Every combination of the grid's values, the first knob varying slowest.

    >>> grid_points({"k1": [0.9, 1.2], "b": [0.4]})
    [{'k1': 0.9, 'b': 0.4}, {'k1': 1.2, 'b': 0.4}]
    """
    func = "sweep"
    example = "grid={'k1': [0.9, 1.2], 'b': [0.4, 0.75]}"
    if not isinstance(grid, Mapping) or not grid:
        raise option_error(func, "grid", grid, "must be a dict of knob -> values", example)
    for key, values in grid.items():
        if not isinstance(key, str) or isinstance(values, str | bytes) or \
                not isinstance(values, Iterable):
            raise option_error(func, "grid", grid, f"{key!r} must map to a list of values",
                               example)
    lists = {k: list(v) for k, v in grid.items()}
    empty = [k for k, v in lists.items() if not v]
    if empty:
        raise option_error(func, "grid", grid, f"{empty[0]!r} has no values", example)
    n = int(np.prod([len(v) for v in lists.values()]))
    if n > MAX_POINTS:
        raise option_error(func, "grid", f"<{n:,} points>", f"must have at most "
                           f"{MAX_POINTS:,} points", example)
    return [dict(zip(lists, combo, strict=True)) for combo in itertools.product(*lists.values())]
