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

__all__ = ["LOSS", "OKABE_ITO", "PALETTE", "TIE", "WIN", "delta_label"]

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
        ax.set_title(text, fontsize=TITLE_SIZE)


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
    from ..frames import _to_polars

    if isinstance(obj, Mapping):
        raise SearchEvalError(f"{arg}: expected a DataFrame, got a dict")
    return _to_polars(obj, arg)


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
    v = round(x, digits) + 0.0  # no "-0.00"
    return f"{v:+.{digits}f}"


def delta_label(delta: float, delta_pct: float | None, *, digits: int = 2, pct_digits: int = 0) -> str:
    """``"+0.13 (+20%)"``: absolute change, then relative change in percent.

    >>> delta_label(0.13, 20.0)
    '+0.13 (+20%)'
    >>> delta_label(-0.004, -1.23, digits=3, pct_digits=1)
    '-0.004 (-1.2%)'
    """
    text = _fmt_signed(delta, digits)
    if delta_pct is not None and math.isfinite(delta_pct):
        text += f" ({_fmt_signed(delta_pct, pct_digits)}%)"
    return text


def _is_comparison(obj: Any) -> bool:
    return hasattr(obj, "to_polars") and callable(obj.to_polars) and not isinstance(
        obj, pl.DataFrame | pl.LazyFrame
    )

