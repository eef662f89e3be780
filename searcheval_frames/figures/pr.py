"""Precision-recall figures: the interpolated PR curve and the precision/recall
trade-off over cut-offs k.

The data come from :mod:`searcheval_frames.figures.curves`; matplotlib is imported
only when a figure is drawn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

import numpy as np
import polars as pl

from ..errors import SearchEvalError
from ..optional import require
from ._shared import (
    LABEL_SIZE,
    NOTE_SIZE,
    OKABE_ITO,
    TICK_SIZE,
    as_frame,
    dash,
    get_axes,
    house_style,
    need_columns,
    run_colors,
    select_runs,
    set_title,
)
from .checks import (
    check_bool,
    check_bool_or_none,
    check_curve_options,
    check_optional_int,
)
from .curves import recall_levels
from .style import display_names, fit_title, place_legend

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = ["pr_curve", "tradeoff_curve"]


def pr_curve(
    run: Any,
    qrels: Any = None,
    *,
    levels: Literal["11pt", "all"] | int | Sequence[float] = "11pt",
    per_query_lines: bool = False,
    runs: Sequence[str] | None = None,
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
        Or, with ``qrels=None``, a frame from
        :func:`~searcheval_frames.pr_curve_data` (``run, recall,
        precision``, with ``query_id`` for per-query curves).
    levels
        Recall levels (see :func:`~searcheval_frames.pr_curve_data`):
        ``"11pt"`` (default, = ``IPrec@0.0 ... 1.0``), ``"all"``, an int, a list.
    per_query_lines
        Also draw every query's curve as a faint line in the run's colour.
    runs
        Runs to draw, in this order (default: all, in input order).
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
        One line per run in ``ax.lines`` (label = run name); per-query lines are
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
    _F = "pr_curve"
    recall_levels(levels, _F)
    check_bool(_F, "per_query_lines", per_query_lines)
    check_curve_options(_F, relevance_level=relevance_level, missing=missing, depth=depth,
                        judged_only=judged_only, compat=compat, legend=legend)
    LineCollection = require("matplotlib.collections", "sef.pr_curve").LineCollection

    from .curves import pr_curve_data

    opts: dict[str, Any] = dict(
        relevance_level=relevance_level, missing=missing, depth=depth,
        judged_only=judged_only, compat=compat, columns=columns, progress=progress,
    )
    per_q: pl.DataFrame | None = None
    if qrels is None:
        data = as_frame(run, "run")
        need_columns(data, ["run", "recall", "precision"], "run",
              "Pass runs and qrels, or the frame of pr_curve_data().")
        if "query_id" in data.columns:
            per_q = data
            mean = _mean_curve(per_q)
        else:
            mean = data
            if per_query_lines:
                raise SearchEvalError(
                    "per_query_lines=True needs per-query curves: pass runs and qrels, or "
                    "pr_curve_data(..., per_query=True)"
                )
    else:
        mean = as_frame(pr_curve_data(run, qrels, levels=levels, **opts), "curve")
        if per_query_lines:
            per_q = as_frame(
                pr_curve_data(run, qrels, levels=levels, per_query=True, **opts),
                "curve",
            )
    names = select_runs(mean, runs, "the curves")
    col = run_colors(mean.get_column("run").unique(maintain_order=True).to_list(), colors)
    ax = get_axes(ax, None)
    house_style(ax)
    n_levels = mean.filter(pl.col("run") == names[0]).height
    for i, name in enumerate(names):
        if per_q is not None:
            segs = [
                np.column_stack([g.get_column("recall").to_numpy(), g.get_column("precision").to_numpy()])
                for _, g in per_q.filter(pl.col("run") == name).group_by(
                    "query_id", maintain_order=True
                )
            ]
            ax.add_collection(
                LineCollection(segs, colors=col[name], linewidths=0.7, alpha=0.15, zorder=1,
                               label="_nolegend_")
            )
        cur = mean.filter(pl.col("run") == name).sort("recall")
        ax.plot(
            cur.get_column("recall").to_numpy(),
            cur.get_column("precision").to_numpy(),
            color=col[name],
            linestyle=dash(i),
            linewidth=2.0,
            marker="o" if n_levels <= 21 else None,
            markersize=4,
            label=name,
            zorder=3,
        )
    ax.set_xlim(0.0, 1.0)
    ax.set_ylim(0.0, 1.02)
    ax.set_xlabel("Recall", fontsize=LABEL_SIZE)
    ax.set_ylabel("Interpolated precision", fontsize=LABEL_SIZE)
    if qrels is None:
        what = "11-point" if n_levels == 11 else ""
    elif isinstance(levels, str):
        what = {"11pt": "11-point", "all": "all recall levels"}.get(levels, "")
    else:
        what = f"{n_levels} recall levels"
    rel = f", relevant = label ≥ {relevance_level}" if relevance_level != 1 else ""
    set_title(ax, title, f"Interpolated precision–recall ({what}{rel})" if what else
           "Interpolated precision–recall")
    if legend:
        short = display_names(names)
        place_legend(ax, ax.lines[: len(names)], [short[n] for n in names], size=TICK_SIZE)
    fit_title(ax)
    return ax


def _mean_curve(per_q: pl.DataFrame) -> pl.DataFrame:
    """Mean over queries of per-query curves that share their recall levels."""
    counts = per_q.group_by("run").agg(pl.col("query_id").n_unique().alias("_nq"))
    per_level = per_q.group_by(["run", "recall"], maintain_order=True).agg(
        pl.col("precision").mean(), pl.len().alias("_n")
    ).join(counts, on="run")
    if per_level.filter(pl.col("_n") != pl.col("_nq")).height:
        raise SearchEvalError(
            "the per-query curves have different recall levels (levels='all'); their mean "
            "needs every query's curve at common levels. Pass runs and qrels, or curves from "
            "pr_curve_data(..., levels='11pt' or a list of levels, per_query=True)."
        )
    return per_level.select("run", "recall", "precision")


# --------------------------------------------------------------------------- trade-off
def tradeoff_curve(
    run: Any,
    qrels: Any = None,
    *,
    k: int | None = None,
    mark_k: int | None = 10,
    runs: Sequence[str] | None = None,
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
        Runs and labels, or (``qrels=None``) the frame of
        :func:`~searcheval_frames.precision_recall_at_k` (``run, k,
        precision, recall``).
    k
        Largest cutoff drawn (default: the deepest ranked list).
    mark_k
        Cutoff to mark with a vertical line and the values there (``None``: no mark).
    runs
        Runs to draw, in this order.
    logx
        Logarithmic k axis (default: when k goes beyond 100).
    relevance_level, missing, depth, judged_only, compat, columns
        As for :func:`~searcheval_frames.evaluate`.
    ax, title, colors, legend, progress
        As for :func:`pr_curve`.

    Returns
    -------
    matplotlib.axes.Axes
        Per run a solid precision line (label ``"<run> P@k"``) and a dashed
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
    _F = "tradeoff_curve"
    check_optional_int(_F, "k", k, minimum=1, what="the largest cutoff drawn", example="k=50")
    check_optional_int(_F, "mark_k", mark_k, minimum=1, what="the cutoff marked",
                       example="mark_k=10")
    check_bool_or_none(_F, "logx", logx)
    check_curve_options(_F, relevance_level=relevance_level, missing=missing, depth=depth,
                        judged_only=judged_only, compat=compat, legend=legend)
    Line2D = require("matplotlib.lines", "sef.tradeoff_curve").Line2D

    from .curves import precision_recall_at_k

    if qrels is None:
        data = as_frame(run, "run")
        need_columns(data, ["run", "k", "precision", "recall"], "run",
              "Pass runs and qrels, or the frame of precision_recall_at_k().")
        if "query_id" in data.columns:
            data = data.group_by(["run", "k"], maintain_order=True).agg(
                pl.col("precision").mean(), pl.col("recall").mean()
            )
        if k is not None:
            data = data.filter(pl.col("k") <= k)
    else:
        data = as_frame(
            precision_recall_at_k(
                run, qrels, k=k, relevance_level=relevance_level, missing=missing, depth=depth,
                judged_only=judged_only, compat=compat, columns=columns, progress=progress,
            ),
            "curve",
        )
    names = select_runs(data, runs, "the curves")
    col = run_colors(data.get_column("run").unique(maintain_order=True).to_list(), colors)
    top = int(cast(Any, data.get_column("k").max()) or 1)
    if mark_k is not None and (isinstance(mark_k, bool) or not 1 <= int(mark_k) <= top):
        raise SearchEvalError(
            f"mark_k={mark_k!r} is outside the cutoffs drawn (1..{top}); pick a k in that "
            "range or mark_k=None"
        )
    ax = get_axes(ax, None)
    house_style(ax)
    single = len(names) == 1
    marks: list[tuple[float, str, str, int]] = []
    room = 0.0
    for name in names:
        cur = data.filter(pl.col("run") == name).sort("k")
        ks = cur.get_column("k").to_numpy()
        p_col = OKABE_ITO["blue"] if single else col[name]
        r_col = OKABE_ITO["orange"] if single else col[name]
        ax.plot(ks, cur.get_column("precision").to_numpy(), color=p_col, linestyle="-",
                linewidth=2.0, label=f"{name} P@k", zorder=3)
        ax.plot(ks, cur.get_column("recall").to_numpy(), color=r_col, linestyle="--",
                linewidth=2.0, label=f"{name} R@k", zorder=3)
        if mark_k is not None:
            at = cur.filter(pl.col("k") == mark_k)
            if at.height:
                p, r = at.get_column("precision").item(), at.get_column("recall").item()
                ax.scatter([mark_k, mark_k], [p, r], color=[p_col, r_col], s=28, zorder=4,
                           edgecolors="white", linewidths=0.8)
                if len(names) <= 3:
                    marks += [(p, f"P@{mark_k} = {p:.2f}", p_col, 1),
                              (r, f"R@{mark_k} = {r:.2f}", r_col, -1)]
    if mark_k is not None:
        ax.axvline(mark_k, color="#555555", linestyle=":", linewidth=1.2, zorder=2)
        from matplotlib.transforms import ScaledTranslation

        # P@k falls to the right of the mark and R@k rises: P labels above the curves on
        # the right, R labels above them on the left (where R is lower), each group
        # stacked upwards from just above its highest point, so none sits on a curve
        left = mark_k > (3 if top <= 100 else 10)
        groups = [d if left else 1 for *_, d in marks]
        ys = _stacked([m[0] for m in marks], groups)
        room = max(ys, default=0.0) + 0.05
        for (_, text, c, d), y in zip(marks, ys, strict=True):
            side = -1 if (left and d < 0) else 1
            shift = ax.transData + ScaledTranslation(side * 6 / 72, 0,
                                                     ax.figure.dpi_scale_trans)
            ax.text(
                mark_k, y, text, transform=shift, fontsize=NOTE_SIZE + 1, color=c,
                va="center", ha="left" if side > 0 else "right", zorder=5,
                bbox=dict(boxstyle="round,pad=0.15", facecolor="white", edgecolor="none",
                          alpha=0.8),
            )
    if logx if logx is not None else top > 100:
        ax.set_xscale("log")
        ax.set_xlim(1, top)
    else:
        ax.set_xlim(0.5 if top < 20 else 0, top + (0.5 if top < 20 else 0))
        if top <= 20:
            ax.set_xticks(range(1, top + 1))
    ax.set_ylim(0.0, max(1.02, room))
    if room > 1.02:  # the space above 1 holds only the value labels
        ax.set_yticks(np.linspace(0, 1, 6))
    ax.set_xlabel("k (number of results returned)", fontsize=LABEL_SIZE)
    ax.set_ylabel("Mean over queries", fontsize=LABEL_SIZE)
    set_title(ax, title, "More results: more recall, less precision")
    if legend:
        if single:
            ax.legend(loc="best", fontsize=TICK_SIZE, framealpha=0.85,
                      labels=["Precision@k", "Recall@k"], handles=ax.lines[:2])
        else:
            short = display_names(names)
            handles = [Line2D([], [], color=col[n], linewidth=2.0, label=n) for n in names]
            handles += [
                Line2D([], [], color="#555555", linestyle="-", label="precision@k"),
                Line2D([], [], color="#555555", linestyle="--", label="recall@k"),
            ]
            place_legend(ax, handles, [short[n] for n in names] + ["precision@k", "recall@k"],
                         inside=5, size=TICK_SIZE)
    fit_title(ax)
    return ax


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


def _label_positions(values: list[float], gap: float = 0.075) -> list[float]:
    """y positions (data units, axis 0..1) for value labels: near their wanted positions
    ``values``, at least ``gap`` apart, inside [0.04, 0.95]."""
    order = sorted(range(len(values)), key=lambda i: -values[i])
    pos = [0.0] * len(values)
    prev = 0.95 + gap
    for i in order:  # top down
        pos[i] = min(values[i], prev - gap, 0.95)
        prev = pos[i]
    low = 0.04
    for i in reversed(order):  # bottom up: push back inside
        if pos[i] < low:
            pos[i] = low
        low = pos[i] + gap
    return pos

