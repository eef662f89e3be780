"""The leaderboard figure: run means with comparison intervals, rank intervals, letters.

Data first, drawing apart (like scikit-learn's Displays): :func:`leaderboard_plot_data`
turns a :class:`~searcheval_frames.Leaderboard` into the frame that is drawn (one row
per run, best first: ``y, run, mean, ci_low, ci_high, rank_text, group``), and
:func:`leaderboard_plot` draws it on an Axes.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import polars as pl

from ..errors import SearchEvalError
from ..frames.display import run_display_names
from ._shared import get_axes as _axes
from ._shared import house_style as _style
from ._shared import set_title as _title
from .style import LABEL_SIZE, NOTE_SIZE, OKABE_ITO, TIE

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["leaderboard_plot", "leaderboard_plot_data"]


def leaderboard_plot_data(lb: Any) -> pl.DataFrame:
    """The frame :func:`leaderboard_plot` draws: best run on top (``y`` = 0 at the bottom).

    >>> import polars as pl, searcheval_frames as sef
    >>> pq = pl.DataFrame({"run": ["a"] * 4 + ["b"] * 4, "query_id": list("1234") * 2,
    ...                    "measure": "P@5", "value": [.2, .4, .2, .6, .6, .8, .6, .8]})
    >>> lb = sef.leaderboard(pq, measure="P@5", test="tukey_hsd", seed=0)
    >>> leaderboard_plot_data(lb).select("run", "y", "rank_text", "group").rows()
    [('b', 1, 'rank 1', 'a'), ('a', 0, 'rank 2', 'b')]
    """
    if not hasattr(lb, "_frame") or not hasattr(lb, "_pairs"):
        raise SearchEvalError(
            f"leaderboard_plot: pass the result of sef.leaderboard(...); got {type(lb).__name__}"
        )
    fr = lb._frame
    k = fr.height

    def rank_text(lo: Any, hi: Any) -> str:
        if lo is None:
            return "rank —"
        return f"rank {lo}" if lo == hi else f"rank {lo}–{hi}"

    return fr.with_columns(
        pl.Series("y", list(range(k - 1, -1, -1)), dtype=pl.Int64),
        pl.Series("rank_text", [rank_text(a, b) for a, b in
                                zip(fr["rank_low"].to_list(), fr["rank_high"].to_list(),
                                    strict=True)], dtype=pl.String),
    ).select("y", "run", "mean", "ci_low", "ci_high", "rank", "rank_text", "p_best", "group")


def leaderboard_plot(lb: Any, ax: Axes | None = None, *, title: str | None = None) -> Axes:
    """Draw a leaderboard: means with comparison intervals, rank intervals and letters.

    Runs are sorted best first (top). The horizontal bar is the run's comparison
    interval: for the Tukey tests two runs whose bars do not overlap differ
    significantly (bar = mean ± M/2, ``M`` the simultaneous margin of every
    difference). Right of each bar: the query-bootstrap rank interval and the group
    letters (runs sharing a letter are tied).

    Parameters
    ----------
    lb
        A :class:`~searcheval_frames.Leaderboard`.
    ax
        Axes to draw on (a new figure when None).
    title
        Title; default names the measure and the test.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import polars as pl, searcheval_frames as sef
    >>> pq = pl.DataFrame({"run": ["a"] * 4 + ["b"] * 4, "query_id": list("1234") * 2,
    ...                    "measure": "P@5", "value": [.2, .4, .2, .6, .6, .8, .6, .8]})
    >>> ax = sef.leaderboard_plot(sef.leaderboard(pq, measure="P@5", test="tukey_hsd"))
    >>> [t.get_text() for t in ax.get_yticklabels()]  # best first, drawn on top
    ['b', 'a']
    """
    data = leaderboard_plot_data(lb)
    k = data.height
    ax = _axes(ax, (6.4, max(2.0, 0.45 * k + 1.2)))
    colors = [OKABE_ITO["blue"] if lb.reason is None and "a" in g else TIE  # top group
              for g in data["group"].to_list()]
    for row, color in zip(data.iter_rows(named=True), colors, strict=True):
        y = row["y"]
        if row["ci_low"] is not None and not math.isnan(row["ci_low"]):
            ax.plot([row["ci_low"], row["ci_high"]], [y, y], color=color, linewidth=3,
                    solid_capstyle="butt", alpha=0.55)
        ax.plot([row["mean"]], [y], "o", color=color, markersize=6, zorder=3)
    shown = run_display_names(data["run"].to_list())  # long run names shortened, unique
    ax.set_yticks(data["y"].to_list(), [shown[r] for r in data["run"].to_list()])
    ax.set_ylim(-0.6, k - 0.4)
    lo = data["ci_low"].fill_nan(None).min()
    hi = data["ci_high"].fill_nan(None).max()
    lo = data["mean"].min() if lo is None else min(lo, data["mean"].min())  # type: ignore[type-var]
    hi = data["mean"].max() if hi is None else max(hi, data["mean"].max())  # type: ignore[type-var]
    span = float(hi) - float(lo) or 1.0  # type: ignore[arg-type]
    ax.set_xlim(float(lo) - 0.05 * span, float(hi) + 0.45 * span)  # type: ignore[arg-type]
    for row in data.iter_rows(named=True):
        ax.annotate(f"{row['rank_text']}   {row['group']}", (float(hi) + 0.05 * span,  # type: ignore[arg-type]
                                                              row["y"]),
                    va="center", fontsize=NOTE_SIZE, color="#333333", annotation_clip=False)
    ax.set_xlabel(f"mean {lb.measure} (bar: comparison interval; no overlap = significant)",
                  fontsize=LABEL_SIZE)
    _style(ax, grid="x")
    from matplotlib.ticker import MaxNLocator  # (matplotlib is loaded by _axes already)

    ax.xaxis.set_major_locator(MaxNLocator(nbins=4))  # room for the tick labels
    default = f"{lb.measure}: {lb.describe_method().split(' over ')[0]}"
    _title(ax, title, default)
    return ax
