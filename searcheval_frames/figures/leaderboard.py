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

from ..errors import InvalidOptionError
from ..frames.display import run_display_names
from ._shared import get_axes as _axes
from ._shared import house_style as _style
from ._shared import set_title as _title
from .style import LABEL_SIZE, NOTE_SIZE, OKABE_ITO, TIE

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["leaderboard_plot", "leaderboard_plot_data"]


def _one(lb: Any) -> pl.DataFrame:
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


def leaderboard_plot_data(lb: Any) -> pl.DataFrame:
    """The frame :func:`leaderboard_plot` draws: best run on top (``y`` = 0 at the bottom).

    For a leaderboard by slice (``sef.leaderboard(..., by=)``) the slice columns come
    first, plus ``n_queries`` and ``small``, and the slices are stacked top to bottom
    in their order, one free row between them for the slice's heading.

    >>> import polars as pl, searcheval_frames as sef
    >>> pq = pl.DataFrame({"run": ["a"] * 4 + ["b"] * 4, "query_id": list("1234") * 2,
    ...                    "measure": "P@5", "value": [.2, .4, .2, .6, .6, .8, .6, .8]})
    >>> lb = sef.leaderboard(per_query=pq, measure="P@5", test="tukey_hsd", seed=0)
    >>> leaderboard_plot_data(lb).select("run", "y", "rank_text", "group").rows()
    [('b', 1, 'rank 1', 'a'), ('a', 0, 'rank 2', 'b')]
    """
    if hasattr(lb, "per_slice"):
        parts, base = [], 0
        for key, one in reversed(list(lb.per_slice.items())):  # bottom slice first
            d = _one(one)
            lits = [pl.lit(v, dtype=lb._frame.schema[c]).alias(c)
                    for c, v in zip(lb.slices, key, strict=True)]
            parts.append(d.with_columns(pl.col("y") + base).select(
                *lits, pl.all(), pl.lit(one.n_queries, dtype=pl.Int64).alias("n_queries"),
                pl.lit(one.n_queries < lb.min_queries).alias("small")))
            base += d.height + 1
        return pl.concat(parts[::-1])
    if not hasattr(lb, "_frame") or not hasattr(lb, "_pairs"):
        raise InvalidOptionError(
            f"leaderboard_plot: pass the result of sef.leaderboard(...); got {type(lb).__name__}"
        )
    return _one(lb)


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
        A :class:`~searcheval_frames.Leaderboard`, or a leaderboard by slice
        (``sef.leaderboard(..., queries=, by=)``): then one block per slice, stacked
        top to bottom under a heading with the slice, its query count and ⚠ when it
        has fewer than ``min_queries`` queries; letters and intervals are the slice's.
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
    >>> ax = sef.leaderboard_plot(sef.leaderboard(per_query=pq, measure="P@5", test="tukey_hsd"))
    >>> [t.get_text() for t in ax.get_yticklabels()]  # best first, drawn on top
    ['b', 'a']
    """
    data = leaderboard_plot_data(lb)
    sliced = hasattr(lb, "per_slice")
    k = int(data["y"].max()) + 1  # type: ignore[arg-type]
    ax = _axes(ax, (6.4, max(2.0, 0.45 * (k + sliced) + 1.2)))
    tested = [lb.reason is None] * data.height if not sliced else [
        not g.startswith("cannot") for g in data["group"].to_list()]
    colors = [OKABE_ITO["blue"] if ok and "a" in g else TIE  # top group
              for ok, g in zip(tested, data["group"].to_list(), strict=True)]
    for row, color in zip(data.iter_rows(named=True), colors, strict=True):
        y = row["y"]
        if row["ci_low"] is not None and not math.isnan(row["ci_low"]):
            ax.plot([row["ci_low"], row["ci_high"]], [y, y], color=color, linewidth=3,
                    solid_capstyle="butt", alpha=0.55)
        ax.plot([row["mean"]], [y], "o", color=color, markersize=6, zorder=3)
    shown = run_display_names(data["run"].unique(maintain_order=True).to_list())  # short, unique
    ax.set_yticks(data["y"].to_list(), [shown[r] for r in data["run"].to_list()])
    ax.set_ylim(-0.6, k - 0.4 + (0.6 if sliced else 0.0))
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
    if sliced:
        _headings(ax, lb, data)
        one = next(iter(lb.per_slice.values()))
        default = (f"{lb.measure} by {', '.join(lb.slices)}: "
                   f"{one.describe_method().split(' over ')[0]}")
    else:
        default = f"{lb.measure}: {lb.describe_method().split(' over ')[0]}"
    _title(ax, title, default)
    return ax


def _headings(ax: Any, lb: Any, data: pl.DataFrame) -> None:
    """The slice's name and size above its block of runs (⚠ when it is small)."""
    from ..analysis.leaderboard_slices import slice_label

    for key in lb.per_slice:
        block = data
        for c, v in zip(lb.slices, key, strict=True):
            block = block.filter(pl.col(c).eq_missing(v))
        top = int(block["y"].max())  # type: ignore[arg-type]
        n, small = block["n_queries"][0], bool(block["small"][0])
        ax.text(0.01, top + 0.75, f"{slice_label(lb.slices, key)} ({n} queries)"
                + ("  ⚠ small" if small else ""), fontsize=NOTE_SIZE, fontweight="bold",
                va="center", ha="left", color="#333333",
                transform=ax.get_yaxis_transform())  # x: axes fraction, y: data
