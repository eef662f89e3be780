"""What every figure module shares: sizes, the palette, the axes and input helpers, and
the :class:`Display` base (private module, public names; the public face is ``style``).

A figure is a Display: its ``from_*`` constructors compute the data (a polars frame
and a few fields), and ``plot(ax=...)`` draws it and keeps what it drew (``ax_``,
``figure_`` and the figure's artists) on the object, as scikit-learn's Displays do.
"""

from __future__ import annotations

import textwrap
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from .._deprecation import outside_stacklevel
from ..errors import InvalidOptionError, MissingColumnError

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

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
DASHES = ("-", "--", "-.", ":")
WIN = OKABE_ITO["blue"]
LOSS = OKABE_ITO["vermillion"]
TIE = "#999999"
FIGSIZE = (6.4, 4.0)
TITLE_SIZE = 11
LABEL_SIZE = 10
TICK_SIZE = 9
NOTE_SIZE = 8


class Display:
    """Data behind one figure; each subclass's ``plot`` draws it.

    After ``plot``: ``ax_`` (the Axes drawn into) and ``figure_`` (its figure).
    """

    ax_: Any = None
    figure_: Any = None

    def start_plot(self, ax: Any, figsize: tuple[float, float] | None = None) -> Axes:
        """The Axes to draw into (``ax`` or a new figure), kept as ``ax_``/``figure_``."""
        self.ax_ = get_axes(ax, figsize)
        self.figure_ = self.ax_.figure
        return self.ax_


# --------------------------------------------------------------------------- axes
def pyplot() -> Any:
    """matplotlib.pyplot, imported on first use (one error naming the extra if absent)."""
    from ..optional import require

    return require("matplotlib.pyplot", "searcheval_frames figures")


def get_axes(ax: Any, figsize: tuple[float, float] | None) -> Axes:
    """``ax`` when given (checked), else the Axes of a new report-sized figure."""
    if ax is not None:
        return check_ax(ax)
    _, new = pyplot().subplots(figsize=figsize or FIGSIZE, layout="constrained")
    return new


def check_ax(ax: Any) -> Any:
    """``ax`` if it is None or a matplotlib Axes (else an InvalidOptionError)."""
    if ax is not None and (not hasattr(ax, "plot") or not hasattr(ax, "figure")):
        raise InvalidOptionError(f"ax= must be a matplotlib Axes, got {type(ax).__name__}")
    return ax


def house_style(ax: Axes, *, grid: Literal["both", "x", "y"] | None = "both") -> None:
    """No top/right spines, a light grid behind the data, readable tick labels."""
    ax.spines[["top", "right"]].set_visible(False)
    if grid:
        ax.grid(True, axis=grid, alpha=0.3, linewidth=0.6)
    ax.set_axisbelow(True)
    ax.tick_params(labelsize=TICK_SIZE)


def set_title(ax: Axes, title: str | None, default: str) -> None:
    """``title`` (``None``: ``default``; ``""``: none), wrapped to the figure's width."""
    text = default if title is None else title
    if text:
        ax.set_title(fit_text(ax, text, TITLE_SIZE), fontsize=TITLE_SIZE)


def figure_of(ax: Axes) -> Any:
    """The figure of ``ax`` (typed loosely: matplotlib says Figure or SubFigure)."""
    return ax.figure


def fit_text(ax: Axes, text: str, size: float, *, lines: int = 2, share: float = 0.95) -> str:
    """``text`` wrapped to ``share`` of the figure's width at font ``size``, at most
    ``lines`` lines (the last one ends in an ellipsis when cut)."""
    from ..frames.display import shorten

    width = max(int(figure_of(ax).get_figwidth() * 72 * share / (0.56 * size)), 8)
    out: list[str] = []
    for para in str(text).split("\n"):
        out += textwrap.wrap(para, width, break_on_hyphens=False) or [""]
    if len(out) > lines:
        out = [*out[:lines - 1], shorten(" ".join(out[lines - 1:]), width)]
    return "\n".join(out)


def run_colors(names: Sequence[str],
               colors: Mapping[str, str] | Sequence[str] | None) -> dict[str, str]:
    """A colour per name: the palette in order, ``colors`` (list or dict) first."""
    if colors is None:
        return {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(names)}
    if isinstance(colors, Mapping):
        out = {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(names)}
        out.update({str(k): v for k, v in colors.items()})
        return out
    colors = list(colors)
    if not colors:
        raise InvalidOptionError(
            "colors= is empty; pass a list of colours or a {run: colour} dict")
    return {n: colors[i % len(colors)] for i, n in enumerate(names)}


def dash(i: int) -> str:
    """The line style of the ``i``-th run (a new one each time the colours run out)."""
    return DASHES[(i // len(PALETTE)) % len(DASHES)]


def fmt_signed(x: float, digits: int) -> str:
    """``x`` with its sign; zero is unsigned (no ``"-0.00"``)."""
    v = round(x, digits) + 0.0
    return f"{v:+.{digits}f}" if v else f"{0:.{digits}f}"


# --------------------------------------------------------------------------- inputs
def as_frame(obj: Any, arg: str) -> pl.DataFrame:
    """Any dataframe as a polars frame; a dict is refused (it is not a frame here)."""
    from ..frames import to_polars

    if isinstance(obj, Mapping):
        raise InvalidOptionError(f"{arg}: expected a DataFrame, got a dict")
    return to_polars(obj, arg)


def need_columns(df: pl.DataFrame, cols: Sequence[str], arg: str, hint: str) -> None:
    """Refuse ``df`` when one of ``cols`` is missing, naming them and ``hint``."""
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise MissingColumnError(
            f"{arg}: missing column(s) {missing}; the columns are {df.columns}. {hint}"
        )


def select_runs(df: pl.DataFrame, runs: Sequence[str] | None, arg: str) -> list[str]:
    """``runs`` (checked against the frame's runs, in that order), else all of them."""
    present = df.get_column("run").cast(pl.String).unique(maintain_order=True).to_list()
    if runs is None:
        return present
    wanted = [runs] if isinstance(runs, str) else [str(r) for r in runs]
    unknown = [r for r in wanted if r not in present]
    if unknown:
        raise InvalidOptionError(f"runs=: {unknown} not in {arg}; the runs are {present}")
    return wanted


def warn_curve_frame(old: str, new: str) -> None:
    """The deprecation of a curve frame passed where runs go (``qrels=None``)."""
    warnings.warn(
        f"{old} with qrels=None is deprecated and will be removed in 0.3: one argument "
        f"meant runs or curves. Draw precomputed curves with sef.{new}",
        FutureWarning, stacklevel=outside_stacklevel())


def is_comparison(obj: Any) -> bool:
    """Whether ``obj`` is a result object (a Comparison), not a frame."""
    return hasattr(obj, "to_polars") and callable(obj.to_polars) and not isinstance(
        obj, pl.DataFrame | pl.LazyFrame
    )


__all__ = ["DASHES", "FIGSIZE", "LABEL_SIZE", "LOSS", "NOTE_SIZE", "OKABE_ITO", "PALETTE",
           "TICK_SIZE", "TIE", "TITLE_SIZE", "WIN", "Display", "as_frame", "check_ax", "dash", "figure_of", "fit_text", "fmt_signed", "get_axes", "house_style",
           "is_comparison", "need_columns", "pyplot", "run_colors", "select_runs",
           "set_title", "warn_curve_frame"]
