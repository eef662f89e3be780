"""The house style of the figures: palette, sizes, run names, legends and titles that fit.

Figures for notebooks and reports (matplotlib, optional: ``pip install searcheval_frames[plots]``).

Every helper

* takes pandas or polars input (runs + qrels, or the frames of
  :func:`~searcheval_frames.evaluate`, :mod:`~searcheval_frames.figures.curves`
  and :func:`~searcheval_frames.compare`);
* draws into ``ax=`` when given, else into a new report-sized figure
  (6.4 x 4 inches, constrained layout), and returns the
  :class:`matplotlib.axes.Axes` (``ax.figure`` is the figure) for further tweaks;
* uses the colour-blind-safe Okabe-Ito palette (:data:`OKABE_ITO`), the same
  colour for a run across all plots of one call (pass ``colors=`` to fix them
  across calls), and font sizes readable at report size.

:func:`save_figure` writes PNG / SVG / PDF at a chosen DPI with a tight bounding
box and no timestamps (files are reproducible).

Each figure is a Display (``sef.PRCurveDisplay``, ``sef.BenchmarkBarsDisplay`` ...):
its ``from_*`` constructors compute the data, ``plot`` draws it and keeps the artists.
Precomputed curves (:func:`~searcheval_frames.pr_curve_data`,
:func:`~searcheval_frames.precision_recall_at_k`) are drawn with
``PRCurveDisplay.from_curves(frame).plot()`` and ``TradeoffDisplay.from_curves(frame)``.
The helpers the figure modules share live in ``figures/_shared.py``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ._shared import DASHES as DASHES
from ._shared import FIGSIZE as FIGSIZE
from ._shared import LABEL_SIZE as LABEL_SIZE
from ._shared import LOSS as LOSS
from ._shared import NOTE_SIZE as NOTE_SIZE
from ._shared import OKABE_ITO as OKABE_ITO
from ._shared import PALETTE as PALETTE
from ._shared import TICK_SIZE as TICK_SIZE
from ._shared import TIE as TIE
from ._shared import TITLE_SIZE as TITLE_SIZE
from ._shared import WIN as WIN
from ._shared import figure_of, fmt_signed
from ._shared import fit_text as fit_text

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = ["LOSS", "OKABE_ITO", "PALETTE", "TIE", "WIN", "delta_label", "display_names",
           "fit_text", "fit_title", "place_legend"]


def fit_title(ax: Axes) -> None:
    """Re-wrap the title once the layout is known, when it is wider than the figure
    (a legend beside the axes moves a centred title left, out of the figure)."""
    title = ax.title
    text = title.get_text()
    if not text:
        return
    fig: Any = ax.figure
    engine = fig.get_layout_engine()
    for _ in range(3):
        if engine is not None:
            engine.execute(fig)
        box = title.get_window_extent(fig.canvas.get_renderer())
        if box.x0 >= 0 and box.x1 <= fig.bbox.width:
            return
        centre = (box.x0 + box.x1) / 2  # the title stays centred over the axes
        room = 2 * min(centre, fig.bbox.width - centre) * 0.95 / fig.bbox.width
        text = fit_text(ax, text.replace("\n", " "), float(title.get_fontsize()),
                        share=max(room, 0.3), lines=3)
        title.set_text(text)


def display_names(names: Sequence[str]) -> dict[str, str]:
    """Run names as figures show them: shortest unique, at most 24 characters
    (:func:`searcheval_frames.frames.display.run_display_names`)."""
    from ..frames.display import run_display_names

    return run_display_names([str(n) for n in names], width=24)


def place_legend(ax: Axes, handles: Sequence[Any], labels: Sequence[str], *,
                 inside: int = 4, size: float = NOTE_SIZE + 1) -> Any:
    """A legend inside the axes for up to ``inside`` short entries, else to the right of
    the axes in as many columns as the figure's height needs."""
    longest = max((len(lb) for lb in labels), default=0)
    if len(labels) <= inside and longest <= 28:
        return ax.legend(handles, labels, loc="best", fontsize=size, framealpha=0.85)
    size = min(size, NOTE_SIZE)
    rows = max(int((figure_of(ax).get_figheight() * 72 - 30) / (size * 1.75)), 1)
    ncols = -(-len(labels) // rows)
    return ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                     fontsize=size, frameon=False, ncols=ncols, borderaxespad=0.0,
                     handlelength=1.6, columnspacing=1.0)


def delta_label(delta: float, delta_pct: float | None, *, digits: int = 2, pct_digits: int = 0) -> str:
    """``"+0.13 (+20%)"``: absolute change, then relative change in percent.

    >>> delta_label(0.13, 20.0)
    '+0.13 (+20%)'
    >>> delta_label(-0.004, -1.23, digits=3, pct_digits=1)
    '-0.004 (-1.2%)'
    >>> delta_label(-0.004, -1.5)  # a change that rounds to 0.00 gets a digit more
    '-0.004 (-2%)'
    """
    while delta and round(delta, digits) == 0 and digits < 4:
        digits += 1  # "+0.00 (-2%)" would contradict itself
    text = fmt_signed(delta, digits)
    while delta_pct and round(delta_pct, pct_digits) == 0 and pct_digits < 2:
        pct_digits += 1  # "-0.003 (0%)" reads as no change
    if delta_pct is not None and math.isfinite(delta_pct):
        text += f" ({fmt_signed(delta_pct, pct_digits)}%)"
    return text
