"""Sweeps of a search system's knobs (layer 5, after evalset: it runs systems through
``sef.retrieve``, evaluates them, and fills holes with ``sef.fill_holes``).

* ``points``: the grid's points and their run names;
* ``run``: :func:`sweep` and :class:`SweepResult`;
* its figure, :class:`SweepDisplay` (a measure against a knob, holes shown), lives in
  ``figures/sweep.py``.
"""

from __future__ import annotations

from ..figures.sweep import SweepDisplay, sweep_plot
from .points import grid_points
from .run import SweepResult, sweep

__all__ = ["SweepDisplay", "SweepResult", "grid_points", "sweep", "sweep_plot"]
