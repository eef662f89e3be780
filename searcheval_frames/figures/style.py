"""The house style of the figures, and the helpers every figure module shares.

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

The data behind :func:`pr_curve` and :func:`tradeoff_curve` come from
:func:`~searcheval_frames.pr_curve_data` and
:func:`~searcheval_frames.precision_recall_at_k`; pass those frames
instead of runs + qrels to draw precomputed curves.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from ..errors import MissingColumnError, SearchEvalError

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = ["LOSS", "OKABE_ITO", "PALETTE", "TIE", "WIN", "delta_label", "display_names",
           "fit_text", "fit_title", "place_legend"]

#: The Okabe-Ito colour-blind-safe palette (Okabe & Ito 2008).
OKABE_ITO: dict[str, str] = {
    "blue": "#0072B2",
    "orange": "#E69F00",
    "bluish_green": "#009E73",
    "vermillion": "#D55E00",
    "sky_blue": "#56B4E9",
    "reddish_purple": "#CC79A7",
    "black": "#000000",
    "yellow": "#F0E442",
}
#: Order in which runs get colours (yellow last: weak on white paper).
PALETTE: tuple[str, ...] = tuple(OKABE_ITO.values())
#: Line styles that tell runs apart once the eight colours are used up.
_DASHES = ("-", "--", "-.", ":")
WIN = OKABE_ITO["blue"]
LOSS = OKABE_ITO["vermillion"]
TIE = "#999999"
FIGSIZE = (6.4, 4.0)
TITLE_SIZE = 11
LABEL_SIZE = 10
TICK_SIZE = 9
NOTE_SIZE = 8


# --------------------------------------------------------------------------- basics
def _plt() -> Any:
    from ..optional import require

    return require("matplotlib.pyplot", "searcheval_frames figures")


def _axes(ax: Any, figsize: tuple[float, float] | None) -> Axes:
    if ax is not None:
        if not hasattr(ax, "plot") or not hasattr(ax, "figure"):
            raise SearchEvalError(f"ax= must be a matplotlib Axes, got {type(ax).__name__}")
        return ax
    plt = _plt()
    _, new = plt.subplots(figsize=figsize or FIGSIZE, layout="constrained")
    return new


def _style(ax: Axes, *, grid: Literal["both", "x", "y"] | None = "both") -> None:
    ax.spines[["top", "right"]].set_visible(False)
    if grid:
        ax.grid(True, axis=grid, alpha=0.3, linewidth=0.6)
    ax.set_axisbelow(True)
    ax.tick_params(labelsize=TICK_SIZE)


def _title(ax: Axes, title: str | None, default: str) -> None:
    text = default if title is None else title
    if text:
        ax.set_title(fit_text(ax, text, TITLE_SIZE), fontsize=TITLE_SIZE)


def _fig(ax: Axes) -> Any:
    """The figure of ``ax`` (typed loosely: matplotlib says Figure or SubFigure)."""
    return ax.figure


def fit_text(ax: Axes, text: str, size: float, *, lines: int = 2, share: float = 0.95) -> str:
    """``text`` wrapped to ``share`` of the figure's width at font ``size``, at most
    ``lines`` lines (the last one ends in an ellipsis when cut)."""
    import textwrap

    from ..frames.display import shorten

    width = max(int(_fig(ax).get_figwidth() * 72 * share / (0.56 * size)), 8)
    out: list[str] = []
    for para in str(text).split("\n"):
        out += textwrap.wrap(para, width, break_on_hyphens=False) or [""]
    if len(out) > lines:
        out = [*out[:lines - 1], shorten(" ".join(out[lines - 1:]), width)]
    return "\n".join(out)


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
    rows = max(int((_fig(ax).get_figheight() * 72 - 30) / (size * 1.75)), 1)
    ncols = -(-len(labels) // rows)
    return ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                     fontsize=size, frameon=False, ncols=ncols, borderaxespad=0.0,
                     handlelength=1.6, columnspacing=1.0)


def _colors(names: Sequence[str], colors: Mapping[str, str] | Sequence[str] | None) -> dict[str, str]:
    if colors is None:
        return {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(names)}
    if isinstance(colors, Mapping):
        out = {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(names)}
        out.update({str(k): v for k, v in colors.items()})
        return out
    colors = list(colors)
    if not colors:
        raise SearchEvalError("colors= is empty; pass a list of colours or a {run: colour} dict")
    return {n: colors[i % len(colors)] for i, n in enumerate(names)}


def _dash(i: int) -> str:
    return _DASHES[(i // len(PALETTE)) % len(_DASHES)]


def _to_pl(obj: Any, arg: str) -> pl.DataFrame:
    from ..frames import to_polars

    if isinstance(obj, Mapping):
        raise SearchEvalError(f"{arg}: expected a DataFrame, got a dict")
    return to_polars(obj, arg)


def _need(df: pl.DataFrame, cols: Sequence[str], arg: str, hint: str) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise MissingColumnError(
            f"{arg}: missing column(s) {missing}; the columns are {df.columns}. {hint}"
        )


def _select_runs(df: pl.DataFrame, runs: Sequence[str] | None, arg: str) -> list[str]:
    present = df.get_column("run").cast(pl.String).unique(maintain_order=True).to_list()
    if runs is None:
        return present
    wanted = [runs] if isinstance(runs, str) else [str(r) for r in runs]
    unknown = [r for r in wanted if r not in present]
    if unknown:
        raise SearchEvalError(f"runs=: {unknown} not in {arg}; the runs are {present}")
    return wanted


def _fmt_signed(x: float, digits: int) -> str:
    v = round(x, digits) + 0.0
    return f"{v:+.{digits}f}" if v else f"{0:.{digits}f}"  # zero is unsigned: no "-0.00"


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
    text = _fmt_signed(delta, digits)
    while delta_pct and round(delta_pct, pct_digits) == 0 and pct_digits < 2:
        pct_digits += 1  # "-0.003 (0%)" reads as no change
    if delta_pct is not None and math.isfinite(delta_pct):
        text += f" ({_fmt_signed(delta_pct, pct_digits)}%)"
    return text


def _is_comparison(obj: Any) -> bool:
    return hasattr(obj, "to_polars") and callable(obj.to_polars) and not isinstance(
        obj, pl.DataFrame | pl.LazyFrame
    )

