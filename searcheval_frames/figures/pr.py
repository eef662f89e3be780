"""The interpolated precision-recall figure: precision against recall, runs overlaid.

:class:`PRCurveDisplay` holds the curves (``from_run``: runs + qrels, computed by
:func:`~searcheval_frames.pr_curve_data`; ``from_curves``: a frame that function
returned) and draws them (``plot``); :func:`pr_curve` is ``from_run`` + ``plot`` in one
call. The data come from :mod:`searcheval_frames.figures.curves`; matplotlib is
imported only when a figure is drawn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import polars as pl

from .._deprecation import old_spelling
from ..errors import InvalidOptionError
from ..optional import require
from ._shared import (
    LABEL_SIZE,
    TICK_SIZE,
    Display,
    as_frame,
    dash,
    house_style,
    need_columns,
    run_colors,
    select_runs,
    set_title,
    warn_curve_frame,
)
from .checks import check_bool, check_bool_or_none, check_curve_options
from .curves import recall_levels
from .old_calls import OLD_CURVE
from .style import display_names, fit_title, place_legend

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = ["PRCurveDisplay", "pr_curve"]

_F = "pr_curve"


def _check_plot_options(per_query_lines: Any, legend: Any) -> None:
    check_bool_or_none(_F, "per_query_lines", per_query_lines)
    check_bool(_F, "legend", legend)


@dataclass
class PRCurveDisplay(Display):
    """Interpolated precision-recall curves, one per run: the data of :func:`pr_curve`.

    Make it with :meth:`from_run` (runs + qrels) or :meth:`from_curves` (a frame of
    :func:`~searcheval_frames.pr_curve_data`); :meth:`plot` draws it and keeps
    ``ax_``, ``figure_``, ``lines_`` (one Line2D per run, the mean curve) and
    ``query_lines_`` (one LineCollection per run, when per-query lines are drawn).

    Attributes
    ----------
    curves
        The mean curve per run: ``run, recall, precision``.
    per_query
        The per-query curves (``run, query_id, recall, precision``), or None.
    runs
        Runs drawn, in this order.
    color_order
        Every run of the data, in input order: run ``i`` of it gets colour ``i``.
    levels_text
        How the recall levels read in the title (``"11-point"``, ...; ``""``: unsaid).
    relevance_level
        The label from which a document counts as relevant (said in the title if not 1).

    Examples
    --------
    >>> import searcheval_frames as sef
    >>> run = {"q1": {"A": 0.9, "X": 0.8, "B": 0.7}}
    >>> qrels = {"q1": {"A": 1, "B": 1, "X": 0}}
    >>> d = sef.PRCurveDisplay.from_curves(sef.pr_curve_data(run, qrels)).plot()
    >>> [line.get_label() for line in d.lines_], d.curves.height
    (['run'], 11)
    """

    curves: pl.DataFrame
    per_query: pl.DataFrame | None
    runs: list[str]
    color_order: list[str]
    levels_text: str = ""
    relevance_level: int = 1
    lines_: list[Any] = field(default_factory=list, init=False, repr=False)
    query_lines_: list[Any] = field(default_factory=list, init=False, repr=False)

    @classmethod
    def from_run(
        cls,
        run: Any,
        qrels: Any,
        *,
        levels: Literal["11pt", "all"] | int | Sequence[float] = "11pt",
        per_query: bool = False,
        runs: Sequence[str] | None = None,
        relevance_level: int = 1,
        missing: Literal["zero", "skip"] = "zero",
        depth: int | None = None,
        judged_only: bool = False,
        compat: Literal["trec_eval-10", "trec_eval-9"] = "trec_eval-10",
        columns: Mapping[str, str] | None = None,
        progress: bool | None = None,
    ) -> PRCurveDisplay:
        """Curves of runs against qrels (options as for :func:`pr_curve`);
        ``per_query=True`` also keeps every query's curve (for ``per_query_lines``)."""
        recall_levels(levels, _F)
        check_bool(_F, "per_query", per_query)
        check_curve_options(_F, relevance_level=relevance_level, missing=missing, depth=depth,
                            judged_only=judged_only, compat=compat)
        from .curves import pr_curve_data

        opts: dict[str, Any] = dict(
            levels=levels, relevance_level=relevance_level, missing=missing, depth=depth,
            judged_only=judged_only, compat=compat, columns=columns, progress=progress,
        )
        mean = as_frame(pr_curve_data(run, qrels, **opts), "curve")
        per_q = as_frame(pr_curve_data(run, qrels, per_query=True, **opts),
                         "curve") if per_query else None
        n_levels = _n_levels(mean)
        if isinstance(levels, str):
            what = {"11pt": "11-point", "all": "all recall levels"}.get(levels, "")
        else:
            what = f"{n_levels} recall levels"
        return cls._make(mean, per_q, runs, what, relevance_level)

    @classmethod
    def from_curves(cls, curves: Any, *, runs: Sequence[str] | None = None) -> PRCurveDisplay:
        """Precomputed curves: the frame of :func:`~searcheval_frames.pr_curve_data`
        (``run, recall, precision``; with ``query_id``, per-query curves, whose mean
        over queries is drawn and which ``plot`` draws faintly too)."""
        data = as_frame(curves, "curves")
        need_columns(data, ["run", "recall", "precision"], "curves",
                     "Pass the frame of pr_curve_data(), or runs and qrels to from_run().")
        per_q = data if "query_id" in data.columns else None
        mean = _mean_curve(data) if per_q is not None else data
        return cls._make(mean, per_q, runs, None, 1)

    @classmethod
    def _make(cls, mean: pl.DataFrame, per_q: pl.DataFrame | None, runs: Sequence[str] | None,
              what: str | None, relevance_level: int) -> PRCurveDisplay:
        names = select_runs(mean, runs, "the curves")
        if what is None:  # precomputed curves: only 11 levels are recognised
            what = "11-point" if mean.filter(pl.col("run") == names[0]).height == 11 else ""
        order = mean.get_column("run").unique(maintain_order=True).to_list()
        return cls(mean, per_q, names, order, what, relevance_level)

    def plot(
        self,
        *,
        per_query_lines: bool | None = None,
        ax: Axes | None = None,
        title: str | None = None,
        colors: Mapping[str, str] | Sequence[str] | None = None,
        legend: bool = True,
    ) -> PRCurveDisplay:
        """Draw the curves; returns ``self``.

        ``per_query_lines``: every query's curve as a faint line in its run's colour
        (default: when the display holds per-query curves). Other options as for
        :func:`pr_curve`.
        """
        _check_plot_options(per_query_lines, legend)
        if per_query_lines and self.per_query is None:
            raise InvalidOptionError(
                "per_query_lines=True needs per-query curves: pass runs and qrels, or "
                "pr_curve_data(..., per_query=True)"
            )
        LineCollection = require("matplotlib.collections", "sef.pr_curve").LineCollection
        col = run_colors(self.color_order, colors)
        ax = self.start_plot(ax)
        house_style(ax)
        n_levels = self.curves.filter(pl.col("run") == self.runs[0]).height
        self.lines_, self.query_lines_ = [], []
        for i, name in enumerate(self.runs):
            if self.per_query is not None and per_query_lines is not False:
                segs = [
                    np.column_stack([g.get_column("recall").to_numpy(),
                                     g.get_column("precision").to_numpy()])
                    for _, g in self.per_query.filter(pl.col("run") == name).group_by(
                        "query_id", maintain_order=True)
                ]
                self.query_lines_.append(ax.add_collection(LineCollection(
                    segs, colors=col[name], linewidths=0.7, alpha=0.15, zorder=1,
                    label="_nolegend_")))
            cur = self.curves.filter(pl.col("run") == name).sort("recall")
            (line,) = ax.plot(
                cur.get_column("recall").to_numpy(), cur.get_column("precision").to_numpy(),
                color=col[name], linestyle=dash(i), linewidth=2.0,
                marker="o" if n_levels <= 21 else None, markersize=4, label=name, zorder=3,
            )
            self.lines_.append(line)
        ax.set_xlim(0.0, 1.0)
        ax.set_ylim(0.0, 1.02)
        ax.set_xlabel("Recall", fontsize=LABEL_SIZE)
        ax.set_ylabel("Interpolated precision", fontsize=LABEL_SIZE)
        what = self.levels_text
        rel = f", relevant = label ≥ {self.relevance_level}" if self.relevance_level != 1 else ""
        set_title(ax, title, f"Interpolated precision–recall ({what}{rel})" if what else
                  "Interpolated precision–recall")
        if legend:
            short = display_names(self.runs)
            place_legend(ax, self.lines_, [short[n] for n in self.runs], size=TICK_SIZE)
        fit_title(ax)
        return self


def _n_levels(mean: pl.DataFrame) -> int:
    """Recall levels of the first run's curve."""
    first = mean.get_column("run")[0] if mean.height else None
    return mean.filter(pl.col("run") == first).height


@old_spelling("pr_curve", *OLD_CURVE)
def pr_curve(
    run: Any,
    qrels: Any = None,
    *,
    levels: Literal["11pt", "all"] | int | Sequence[float] = "11pt",
    per_query_lines: bool = False,
    show_runs: Sequence[str] | None = None,
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
    """Interpolated precision vs recall, several runs overlaid.

    Parameters
    ----------
    run, qrels
        Runs and relevance labels (as for :func:`~searcheval_frames.evaluate`).
        A frame of :func:`~searcheval_frames.pr_curve_data` with ``qrels=None``
        still works but is deprecated (removed in 0.3): draw precomputed curves
        with ``PRCurveDisplay.from_curves(frame).plot()``.
    levels
        Recall levels (see :func:`~searcheval_frames.pr_curve_data`):
        ``"11pt"`` (default, = ``IPrec@0.0 ... 1.0``), ``"all"``, an int, a list.
    per_query_lines
        Also draw every query's curve as a faint line in the run's colour.
    show_runs
        Runs to draw (their names), in this order (default: all, in input order).
    relevance_level, missing, depth, judged_only, compat, columns
        As for :func:`~searcheval_frames.evaluate`.
    ax, title, colors, legend
        Axes to draw into; title (``""`` for none); colours as a list or
        ``{run: colour}``; show the legend.
    progress
        Progress bar while computing on large inputs (tqdm, when installed).

    Returns
    -------
    matplotlib.axes.Axes
        ``PRCurveDisplay.from_run(run, qrels, ...).plot(...).ax_``: one line per run in ``ax.lines`` (label = run name); per-query lines are
        one :class:`~matplotlib.collections.LineCollection` per run.

    Examples
    --------
    >>> import searcheval_frames as sef
    >>> run = {"q1": {"A": 0.9, "X": 0.8, "B": 0.7}}
    >>> qrels = {"q1": {"A": 1, "B": 1, "X": 0}}
    >>> ax = sef.pr_curve(run, qrels)
    >>> [line.get_label() for line in ax.lines]
    ['run']
    """
    check_bool(_F, "per_query_lines", per_query_lines)
    check_bool(_F, "legend", legend)  # first: before any work on the data
    if qrels is None:
        warn_curve_frame("pr_curve(curves)", "PRCurveDisplay.from_curves(curves).plot()")
        check_curve_options(_F, relevance_level=relevance_level, missing=missing, depth=depth,
                            judged_only=judged_only, compat=compat)
        recall_levels(levels, _F)
        display = PRCurveDisplay.from_curves(run, runs=show_runs)
        return display.plot(per_query_lines=True if per_query_lines else None, ax=ax,
                            title=title, colors=colors, legend=legend).ax_
    display = PRCurveDisplay.from_run(
        run, qrels, levels=levels, per_query=per_query_lines, runs=show_runs,
        relevance_level=relevance_level, missing=missing, depth=depth,
        judged_only=judged_only, compat=compat, columns=columns, progress=progress)
    return display.plot(per_query_lines=per_query_lines, ax=ax, title=title, colors=colors,
                        legend=legend).ax_


def _mean_curve(per_q: pl.DataFrame) -> pl.DataFrame:
    """Mean over queries of per-query curves that share their recall levels."""
    counts = per_q.group_by("run").agg(pl.col("query_id").n_unique().alias("_nq"))
    per_level = per_q.group_by(["run", "recall"], maintain_order=True).agg(
        pl.col("precision").mean(), pl.len().alias("_n")
    ).join(counts, on="run")
    if per_level.filter(pl.col("_n") != pl.col("_nq")).height:
        raise InvalidOptionError(
            "the per-query curves have different recall levels (levels='all'); their mean "
            "needs every query's curve at common levels. Pass runs and qrels, or curves from "
            "pr_curve_data(..., levels='11pt' or a list of levels, per_query=True)."
        )
    return per_level.select("run", "recall", "precision")
