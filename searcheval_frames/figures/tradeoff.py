"""The precision/recall trade-off over cut-offs k: P@k and R@k as k grows.

:class:`TradeoffDisplay` holds the curves (``from_run``: runs + qrels, computed by
:func:`~searcheval_frames.precision_recall_at_k`; ``from_curves``: a frame that
function returned) and draws them (``plot``); :func:`tradeoff_curve` is ``from_run`` +
``plot`` in one call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast

import numpy as np
import polars as pl

from .._deprecation import old_spelling
from ..errors import InvalidOptionError
from ..optional import require
from ._shared import (
    LABEL_SIZE,
    NOTE_SIZE,
    OKABE_ITO,
    TICK_SIZE,
    Display,
    as_frame,
    house_style,
    need_columns,
    run_colors,
    select_runs,
    set_title,
    warn_curve_frame,
)
from .checks import check_bool, check_bool_or_none, check_curve_options, check_optional_int
from .old_calls import OLD_CURVE
from .style import display_names, fit_title, place_legend

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = ["TradeoffDisplay", "tradeoff_curve"]

_F = "tradeoff_curve"


def _check_plot_options(mark_k: Any, logx: Any, legend: Any) -> None:
    check_optional_int(_F, "mark_k", mark_k, minimum=1, what="the cutoff marked",
                       example="mark_k=10")
    check_bool_or_none(_F, "logx", logx)
    check_bool(_F, "legend", legend)


@dataclass
class TradeoffDisplay(Display):
    """Mean precision@k and recall@k per run: the data of :func:`tradeoff_curve`.

    Make it with :meth:`from_run` (runs + qrels) or :meth:`from_curves` (a frame of
    :func:`~searcheval_frames.precision_recall_at_k`); :meth:`plot` draws it and keeps
    ``ax_``, ``figure_``, ``lines_`` (per run its precision line, then its recall line)
    and ``texts_`` (the values at the marked k).

    Attributes
    ----------
    curves
        ``run, k, precision, recall`` (means over queries).
    runs
        Runs drawn, in this order.
    color_order
        Every run of the data, in input order: run ``i`` of it gets colour ``i``.
    """

    curves: pl.DataFrame
    runs: list[str]
    color_order: list[str]
    lines_: list[Any] = field(default_factory=list, init=False, repr=False)
    texts_: list[Any] = field(default_factory=list, init=False, repr=False)

    @classmethod
    def from_run(
        cls,
        run: Any,
        qrels: Any,
        *,
        k: int | None = None,
        runs: Sequence[str] | None = None,
        relevance_level: int = 1,
        missing: Literal["zero", "skip"] = "zero",
        depth: int | None = None,
        judged_only: bool = False,
        compat: Literal["trec_eval-10", "trec_eval-9"] = "trec_eval-10",
        columns: Mapping[str, str] | None = None,
        progress: bool | None = None,
    ) -> TradeoffDisplay:
        """P@k and R@k of runs against qrels for k = 1..``k`` (options as for
        :func:`tradeoff_curve`)."""
        check_optional_int(_F, "k", k, minimum=1, what="the largest cutoff drawn",
                           example="k=50")
        check_curve_options(_F, relevance_level=relevance_level, missing=missing, depth=depth,
                            judged_only=judged_only, compat=compat)
        from .curves import precision_recall_at_k

        data = as_frame(precision_recall_at_k(
            run, qrels, k=k, relevance_level=relevance_level, missing=missing, depth=depth,
            judged_only=judged_only, compat=compat, columns=columns, progress=progress,
        ), "curve")
        return cls._make(data, runs)

    @classmethod
    def from_curves(cls, curves: Any, *, k: int | None = None,
                    runs: Sequence[str] | None = None) -> TradeoffDisplay:
        """Precomputed curves: the frame of :func:`~searcheval_frames.precision_recall_at_k`
        (``run, k, precision, recall``; per-query rows are averaged), up to ``k``."""
        check_optional_int(_F, "k", k, minimum=1, what="the largest cutoff drawn",
                           example="k=50")
        data = as_frame(curves, "curves")
        need_columns(data, ["run", "k", "precision", "recall"], "curves",
                     "Pass the frame of precision_recall_at_k(), or runs and qrels to "
                     "from_run().")
        if "query_id" in data.columns:
            data = data.group_by(["run", "k"], maintain_order=True).agg(
                pl.col("precision").mean(), pl.col("recall").mean()
            )
        if k is not None:
            data = data.filter(pl.col("k") <= k)
        return cls._make(data, runs)

    @classmethod
    def _make(cls, data: pl.DataFrame, runs: Sequence[str] | None) -> TradeoffDisplay:
        names = select_runs(data, runs, "the curves")
        return cls(data, names, data.get_column("run").unique(maintain_order=True).to_list())

    def plot(
        self,
        *,
        mark_k: int | None = 10,
        logx: bool | None = None,
        ax: Axes | None = None,
        title: str | None = None,
        colors: Mapping[str, str] | Sequence[str] | None = None,
        legend: bool = True,
    ) -> TradeoffDisplay:
        """Draw the curves (options as for :func:`tradeoff_curve`); returns ``self``."""
        _check_plot_options(mark_k, logx, legend)
        top = int(cast(Any, self.curves.get_column("k").max()) or 1)
        if mark_k is not None and not 1 <= int(mark_k) <= top:
            raise InvalidOptionError(
                f"mark_k={mark_k!r} is outside the cutoffs drawn (1..{top}); pick a k in "
                "that range or mark_k=None"
            )
        col = run_colors(self.color_order, colors)
        ax = self.start_plot(ax)
        house_style(ax)
        self.lines_, self.texts_ = [], []
        marks: list[tuple[float, str, str, int]] = []
        for name in self.runs:
            marks += self._draw_run(ax, name, col[name], mark_k)
        if logx if logx is not None else top > 100:  # (limits first: the notes measure
            ax.set_xscale("log")                      # the room they have on screen)
            ax.set_xlim(1, top)
        else:
            ax.set_xlim(0.5 if top < 20 else 0, top + (0.5 if top < 20 else 0))
            if top <= 20:
                ax.set_xticks(range(1, top + 1))
        ax.set_ylim(0.0, 1.02)
        room = self._mark(ax, mark_k, marks, top) if mark_k is not None else 0.0
        ax.set_ylim(0.0, max(1.02, room))
        if room > 1.02:  # the space above 1 holds only the value labels
            ax.set_yticks(np.linspace(0, 1, 6))
        ax.set_xlabel("k (number of results returned)", fontsize=LABEL_SIZE)
        ax.set_ylabel("Mean over queries", fontsize=LABEL_SIZE)
        set_title(ax, title, "More results: more recall, less precision")
        if legend:
            self._legend(ax, col)
        fit_title(ax)
        return self

    def _colours(self, color: str) -> tuple[str, str]:
        """(precision, recall) colours: blue and orange for one run, else the run's."""
        if len(self.runs) == 1:
            return OKABE_ITO["blue"], OKABE_ITO["orange"]
        return color, color

    def _draw_run(self, ax: Axes, name: str, color: str,
                  mark_k: int | None) -> list[tuple[float, str, str, int]]:
        """One run's P@k and R@k lines and its points at ``mark_k``; -> the value labels
        to write there (for up to three runs)."""
        cur = self.curves.filter(pl.col("run") == name).sort("k")
        ks = cur.get_column("k").to_numpy()
        p_col, r_col = self._colours(color)
        self.lines_ += ax.plot(ks, cur.get_column("precision").to_numpy(), color=p_col,
                               linestyle="-", linewidth=2.0, label=f"{name} P@k", zorder=3)
        self.lines_ += ax.plot(ks, cur.get_column("recall").to_numpy(), color=r_col,
                               linestyle="--", linewidth=2.0, label=f"{name} R@k", zorder=3)
        if mark_k is None:
            return []
        at = cur.filter(pl.col("k") == mark_k)
        if not at.height:
            return []
        p, r = at.get_column("precision").item(), at.get_column("recall").item()
        ax.scatter([mark_k, mark_k], [p, r], color=[p_col, r_col], s=28, zorder=4,
                   edgecolors="white", linewidths=0.8)
        if len(self.runs) > 3:
            return []
        return [(p, f"P@{mark_k} = {p:.2f}", p_col, 1), (r, f"R@{mark_k} = {r:.2f}", r_col, -1)]

    def _mark(self, ax: Axes, mark_k: int, marks: list[tuple[float, str, str, int]],
              top: int) -> float:
        """The dotted line at ``mark_k`` and the values there; -> the height they need.

        P@k falls to the right of the mark and R@k rises: P labels above the curves on
        the right, R labels above them on the left (where R is lower), each group stacked
        upwards from just above its highest point, so none sits on a curve."""
        from matplotlib.transforms import ScaledTranslation

        ax.axvline(mark_k, color="#555555", linestyle=":", linewidth=1.2, zorder=2)
        left = mark_k > (3 if top <= 100 else 10)
        ys = _stacked([m[0] for m in marks], [d if left else 1 for *_, d in marks])
        for (_, text, c, d), y in zip(marks, ys, strict=True):
            side = -1 if (left and d < 0) else 1
            shift = ax.transData + ScaledTranslation(side * 6 / 72, 0,
                                                     ax.figure.dpi_scale_trans)
            self.texts_.append(ax.text(
                mark_k, y, text, transform=shift, fontsize=NOTE_SIZE + 1, color=c,
                va="center", ha="left" if side > 0 else "right", zorder=5,
                bbox=dict(boxstyle="round,pad=0.15", facecolor="white", edgecolor="none",
                          alpha=0.8),
            ))
        self._fit_left_notes(ax, mark_k, marks)
        return max([*ys, *(t.get_position()[1] for t in self.texts_)], default=0.0) + 0.05

    def _fit_left_notes(self, ax: Axes, mark_k: int,
                        marks: list[tuple[float, str, str, int]]) -> None:
        """R@k notes left of the mark that do not fit between the axis and the mark (they
        would sit on the y tick labels) go right of the mark, under every rising R@k curve
        (below the lowest R@k at the mark) and above the P@k notes, stacked downwards; if
        that band is too narrow, above 1, where no curve goes."""
        from matplotlib.transforms import ScaledTranslation

        fig: Any = ax.figure
        if fig.get_layout_engine() is not None:  # measure the axes where they will be
            fig.get_layout_engine().execute(fig)
        renderer = fig.canvas.get_renderer()
        left_edge = ax.get_window_extent(renderer).x0
        span = ax.transData.inverted().transform([(0, 0), (0, 1)])
        per_px = abs(span[1][1] - span[0][1])  # data units per pixel
        pairs = list(zip(marks, self.texts_, strict=True))
        moved = [t for m, t in sorted(pairs, key=lambda mt: -mt[0][0])
                 if t.get_ha() == "right" and t.get_window_extent(renderer).x0 < left_edge]
        if not moved:
            return
        half = moved[0].get_window_extent(renderer).height / 2 * per_px
        floor = max((t.get_position()[1] + half for m, t in pairs if m[3] > 0), default=0.0)
        top = min(m[0] for m in marks if m[3] < 0) - 0.02 - half
        ys = [top - i * (2 * half + 0.01) for i in range(len(moved))]
        if ys[-1] - half < floor + 0.01:  # no room between the curves: above them all
            high = max(t.get_position()[1] for t in self.texts_)
            ys = [max(1.0, high) + 0.045 + i * 0.075 for i in range(len(moved))][::-1]
        shift = ax.transData + ScaledTranslation(6 / 72, 0, ax.figure.dpi_scale_trans)
        for t, y in zip(moved, ys, strict=True):
            t.set_ha("left")
            t.set_transform(shift)
            t.set_position((mark_k, y))

    def _legend(self, ax: Axes, col: Mapping[str, str]) -> None:
        if len(self.runs) == 1:
            ax.legend(loc="best", fontsize=TICK_SIZE, framealpha=0.85,
                      labels=["Precision@k", "Recall@k"], handles=ax.lines[:2])
            return
        Line2D = require("matplotlib.lines", "sef.tradeoff_curve").Line2D
        short = display_names(self.runs)
        handles = [Line2D([], [], color=col[n], linewidth=2.0, label=n) for n in self.runs]
        handles += [
            Line2D([], [], color="#555555", linestyle="-", label="precision@k"),
            Line2D([], [], color="#555555", linestyle="--", label="recall@k"),
        ]
        place_legend(ax, handles, [short[n] for n in self.runs] + ["precision@k", "recall@k"],
                     inside=5, size=TICK_SIZE)


@old_spelling("tradeoff_curve", *OLD_CURVE)
def tradeoff_curve(
    run: Any,
    qrels: Any = None,
    *,
    k: int | None = None,
    mark_k: int | None = 10,
    show_runs: Sequence[str] | None = None,
    logx: bool | None = None,
    relevance_level: int = 1,
    missing: Literal["zero", "skip"] = "zero",
    depth: int | None = None,
    judged_only: bool = False,
    compat: Literal["trec_eval-10", "trec_eval-9"] = "trec_eval-10",
    columns: Mapping[str, str] | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    colors: Mapping[str, str] | Sequence[str] | None = None,
    legend: bool = True,
    progress: bool | None = None,
) -> Axes:
    """Precision@k and recall@k as k grows: more results, more recall, less precision.

    Parameters
    ----------
    run, qrels
        Runs and labels. The frame of
        :func:`~searcheval_frames.precision_recall_at_k` with ``qrels=None`` still
        works but is deprecated (removed in 0.3): draw precomputed curves with
        ``TradeoffDisplay.from_curves(frame).plot()``.
    k
        Largest cutoff drawn (default: the deepest ranked list).
    mark_k
        Cutoff to mark with a vertical line and the values there (``None``: no mark).
    show_runs
        Runs to draw (their names), in this order.
    logx
        Logarithmic k axis (default: when k goes beyond 100).
    relevance_level, missing, depth, judged_only, compat, columns
        As for :func:`~searcheval_frames.evaluate`.
    ax, title, colors, legend, progress
        As for :func:`pr_curve`.

    Returns
    -------
    matplotlib.axes.Axes
        ``TradeoffDisplay.from_run(run, qrels, ...).plot(...).ax_``. Per run a solid precision line (label ``"<run> P@k"``) and a dashed
        recall line (``"<run> R@k"``); the mark is a dotted vertical line with
        markers and, for up to three runs, the values as text.

    Examples
    --------
    >>> import searcheval_frames as sef
    >>> run = {"q": {d: 1.0 - i / 10 for i, d in enumerate("ABXYZ")}}
    >>> ax = sef.tradeoff_curve(run, {"q": {"A": 1, "B": 1, "C": 1}}, mark_k=3)
    >>> [t.get_text() for t in ax.texts]
    ['P@3 = 0.67', 'R@3 = 0.67']
    """
    _check_plot_options(mark_k, logx, legend)  # first: before any work on the data
    if qrels is None:
        warn_curve_frame("tradeoff_curve(curves)", "TradeoffDisplay.from_curves(curves).plot()")
        check_curve_options(_F, relevance_level=relevance_level, missing=missing, depth=depth,
                            judged_only=judged_only, compat=compat)
        display = TradeoffDisplay.from_curves(run, k=k, runs=show_runs)
    else:
        display = TradeoffDisplay.from_run(
            run, qrels, k=k, runs=show_runs, relevance_level=relevance_level, missing=missing,
            depth=depth, judged_only=judged_only, compat=compat, columns=columns,
            progress=progress)
    return display.plot(mark_k=mark_k, logx=logx, ax=ax, title=title, colors=colors,
                        legend=legend).ax_


def _stacked(values: list[float], groups: list[int], gap: float = 0.075) -> list[float]:
    """y positions for the values at the mark: each group of labels stacks upwards from
    just above its highest value, ``gap`` apart (above 1 when needed: the caller extends
    the axis there, where no curve goes)."""
    pos = list(values)
    for g in set(groups):
        idx = sorted((i for i, x in enumerate(groups) if x == g), key=lambda i: values[i])
        for n, i in enumerate(idx):
            pos[i] = values[idx[-1]] + 0.045 + n * gap
    return pos
