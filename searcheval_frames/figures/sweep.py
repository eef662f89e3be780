"""The sweep's figure: a measure against one knob, a line per setting of the others, with
the points whose top k is short of labels drawn hollow (and, on a new figure, the
labelled share in a panel below).

:class:`SweepDisplay` computes the data (``from_sweep``) and draws it (``plot``), as the
Displays of :mod:`searcheval_frames.figures` do.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from ..options import option_error
from ._shared import (
    FIGSIZE,
    LABEL_SIZE,
    NOTE_SIZE,
    TICK_SIZE,
    Display,
    house_style,
    pyplot,
    run_colors,
    set_title,
)
from .style import display_names, fit_title, place_legend

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = ["SweepDisplay", "point_name", "sweep_plot"]


def point_name(point: Mapping[str, Any]) -> str:
    """``"k1=1.2 b=0.75"``: a grid point as a run name (the sweep names its runs so)."""
    return " ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in point.items())


@dataclass
class SweepDisplay(Display):
    """A sweep's data as drawn: ``data`` has ``series, x, x_label, value, labelled,
    flagged`` (one row per point); ``measure``, ``knob``, ``k``, ``min_judged``."""

    data: pl.DataFrame
    measure: str
    knob: str
    k: int
    min_judged: float
    numeric: bool = True
    lines_: list[Any] = field(default_factory=list)
    hollow_: Any = None
    labelled_ax_: Any = None

    @classmethod
    def from_sweep(cls, result: Any, measure: str | None = None, *,
                   x: str | None = None) -> SweepDisplay:
        """The data of :meth:`SweepResult.plot`: ``measure`` (default the first; the
        training mean with ``train_queries``) against the knob ``x`` (default the
        first knob with more than one value)."""
        if not hasattr(result, "table") or not hasattr(result, "params"):
            raise option_error("SweepDisplay.from_sweep", "result", type(result).__name__,
                               "must be what sef.sweep returns", "sef.sweep(...).plot()")
        name = result.measures[0] if measure is None else _canon(measure)
        if name not in result.measures:
            raise option_error("SweepDisplay.from_sweep", "measure", measure,
                               f"must be one of the sweep's measures {result.measures}",
                               f"measure={result.measures[0]!r}")
        t = result.table
        varying = [p for p in result.params if t[p].n_unique() > 1] or result.params
        knob = varying[0] if x is None else x
        if knob not in result.params:
            raise option_error("SweepDisplay.from_sweep", "x", x,
                               f"must be one of the knobs {result.params}", f"x={varying[0]!r}")
        others = [p for p in result.params if p != knob]
        col = f"{name} (train)" if result.train else name
        numeric = t[knob].dtype.is_numeric()
        series = [point_name({p: row[p] for p in others}) or name
                  for row in t.iter_rows(named=True)]
        xs = t[knob].cast(pl.Float64) if numeric else \
            t[knob].cast(pl.String).rank("dense").cast(pl.Float64) - 1
        data = pl.DataFrame({"series": series, "x": xs, "x_label": t[knob].cast(pl.String),
                             "value": t[col], "labelled": t["labelled"],
                             "flagged": t["below_min_judged"]})
        return cls(data, col, knob, result.k, result.min_judged, numeric)

    def plot(self, ax: Axes | None = None, *, title: str | None = None,
             labelled: bool | None = None) -> SweepDisplay:
        """Draw; ``labelled`` (default: on a new figure) adds the labelled-share panel."""
        show_labelled = ax is None if labelled is None else labelled
        if ax is None and show_labelled:
            _, (ax, low) = pyplot().subplots(
                2, 1, sharex=True, figsize=(FIGSIZE[0], FIGSIZE[1] * 1.25),
                height_ratios=[3, 1.2], layout="constrained")
        else:
            low = None
        ax = self.start_plot(ax)
        names = list(dict.fromkeys(self.data["series"].to_list()))
        colors = run_colors(names, None)
        self.lines_ = [self._series(ax, self.data.filter(pl.col("series") == s), colors[s])
                       for s in names]
        self._legend(ax, names)
        ax.set_ylabel(self.measure, fontsize=LABEL_SIZE)
        house_style(ax)
        set_title(ax, title, f"Sweep of {self.knob}: {self.measure}")
        if low is not None:
            self._labelled(low, names, colors)
        else:
            self._xaxis(ax)
        fit_title(ax)
        return self

    def _series(self, ax: Axes, d: pl.DataFrame, color: str) -> Any:
        d = d.sort("x")
        x, y = d["x"].to_numpy(), d["value"].to_numpy()
        (line,) = ax.plot(x, y, color=color, marker="o", markersize=5, linewidth=1.6)
        bad = d["flagged"].to_numpy()
        if bad.any():  # hollow: short of labels, the score is a lower bound
            self.hollow_ = ax.scatter(x[bad], y[bad], s=46, facecolors="white",
                                      edgecolors=color, linewidths=1.6, zorder=3)
        return line

    def _legend(self, ax: Axes, names: list[str]) -> None:
        short = display_names(names)  # at most 24 characters, still unique
        handles, labels = list(self.lines_), [short[n] for n in names]
        if len(names) == 1:
            handles, labels = [], []
        if self.hollow_ is not None:  # a neutral hollow marker, whatever the series
            from matplotlib.lines import Line2D

            handles.append(Line2D([], [], marker="o", linestyle="none", markersize=6,
                                  markerfacecolor="white", markeredgecolor="0.35",
                                  markeredgewidth=1.6))
            labels.append(f"< {self.min_judged:.0%} of top-{self.k} labelled")
        if handles:
            place_legend(ax, handles, labels)

    def _xaxis(self, ax: Axes) -> None:
        ax.set_xlabel(self.knob, fontsize=LABEL_SIZE)
        if not self.numeric:
            ticks = self.data.unique("x").sort("x")
            ax.set_xticks(ticks["x"].to_list(), ticks["x_label"].to_list(), fontsize=TICK_SIZE)

    def _labelled(self, low: Axes, names: list[str], colors: dict[str, str]) -> None:
        self.labelled_ax_ = low
        for s in names:
            d = self.data.filter(pl.col("series") == s).sort("x")
            low.plot(d["x"].to_numpy(), d["labelled"].to_numpy(), color=colors[s],
                     marker=".", linewidth=1.0)
        low.axhline(self.min_judged, color="0.4", linestyle=":", linewidth=1.0)
        lo = float(np.nanmin(self.data["labelled"].to_numpy(), initial=1.0))
        low.set_ylim(max(min(lo, self.min_judged) - 0.05, 0.0), 1.02)
        low.set_ylabel(f"labelled\ntop-{self.k}", fontsize=NOTE_SIZE)
        low.tick_params(labelsize=TICK_SIZE)
        house_style(low)
        self._xaxis(low)


def _canon(measure: str) -> str:
    from ..measures import parse_measures

    return parse_measures([measure])[0].name


def sweep_plot(result: Any, measure: str | None = None, *, x: str | None = None,
               ax: Any = None, title: str | None = None) -> Any:
    """Draw a sweep (``SweepDisplay.from_sweep(...).plot(...)``); returns the Axes.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import searcheval_frames as sef
    >>> base = sef.systems.bm25({"d1": "hnsw graph", "d2": "hnsw hnsw", "d3": "ivf"})
    >>> res = sef.sweep(lambda b: base.with_params(b=b), {"b": [0.0, 0.5, 1.0]},
    ...                 queries={"q1": "hnsw"}, qrels={"q1": {"d1": 1, "d2": 0}}, measures="RR",
    ...                 k=2, cache=False)
    >>> ax = sweep_plot(res)
    >>> ax.get_ylabel(), len(ax.lines), ax.figure.axes[1].get_xlabel()
    ('RR', 1, 'b')
    """
    return SweepDisplay.from_sweep(result, measure, x=x).plot(ax=ax, title=title).ax_
