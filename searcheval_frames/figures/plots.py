"""Figures for notebooks and reports (matplotlib, optional: ``pip install searcheval_frames[plots]``).

Every helper

* takes pandas or polars input (runs + qrels, or the frames of
  :func:`~searcheval_frames.evaluate.evaluate`, :mod:`~searcheval_frames.curves`
  and :func:`~searcheval_frames.compare.compare`);
* draws into ``ax=`` when given, else into a new report-sized figure
  (6.4 x 4 inches, constrained layout), and returns the
  :class:`matplotlib.axes.Axes` (``ax.figure`` is the figure) for further tweaks;
* uses the colour-blind-safe Okabe-Ito palette (:data:`OKABE_ITO`), the same
  colour for a run across all plots of one call (pass ``colors=`` to fix them
  across calls), and font sizes readable at report size.

:func:`save_figure` writes PNG / SVG / PDF at a chosen DPI with a tight bounding
box and no timestamps (files are reproducible).

The data behind :func:`pr_curve` and :func:`tradeoff_curve` come from
:func:`~searcheval_frames.curves.pr_curve_data` and
:func:`~searcheval_frames.curves.precision_recall_at_k`; pass those frames
instead of runs + qrels to draw precomputed curves.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

import numpy as np
import polars as pl

from ..errors import EmptyInputError, MissingColumnError, SearchEvalError, SearchEvalWarning

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "OKABE_ITO",
    "PALETTE",
    "benchmark_bars",
    "metric_distribution",
    "per_query_delta",
    "pr_curve",
    "save_figure",
    "tradeoff_curve",
]

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
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "searcheval_frames plots need matplotlib: pip install 'searcheval_frames[plots]' "
            "(or pip install matplotlib)"
        ) from exc
    return plt


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


# --------------------------------------------------------------------------- PR curve
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
        Runs and relevance labels (as for :func:`~searcheval_frames.evaluate.evaluate`).
        Or, with ``qrels=None``, a frame from
        :func:`~searcheval_frames.curves.pr_curve_data` (``run, recall,
        precision``, with ``query_id`` for per-query curves).
    levels
        Recall levels (see :func:`~searcheval_frames.curves.pr_curve_data`):
        ``"11pt"`` (default, = ``IPrec@0.0 ... 1.0``), ``"all"``, an int, a list.
    per_query_lines
        Also draw every query's curve as a faint line in the run's colour.
    runs
        Runs to draw, in this order (default: all, in input order).
    relevance_level, missing, depth, judged_only, compat, columns
        As for :func:`~searcheval_frames.evaluate.evaluate`.
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
    from matplotlib.collections import LineCollection

    from .curves import pr_curve_data

    opts: dict[str, Any] = dict(
        relevance_level=relevance_level, missing=missing, depth=depth,
        judged_only=judged_only, compat=compat, columns=columns, progress=progress,
    )
    per_q: pl.DataFrame | None = None
    if qrels is None:
        data = _to_pl(run, "run")
        _need(data, ["run", "recall", "precision"], "run",
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
        mean = _to_pl(pr_curve_data(run, qrels, levels=levels, **opts), "curve")
        if per_query_lines:
            per_q = _to_pl(
                pr_curve_data(run, qrels, levels=levels, per_query=True, **opts),
                "curve",
            )
    names = _select_runs(mean, runs, "the curves")
    col = _colors(mean.get_column("run").unique(maintain_order=True).to_list(), colors)
    ax = _axes(ax, None)
    _style(ax)
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
            linestyle=_dash(i),
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
    _title(ax, title, f"Interpolated precision–recall ({what}{rel})" if what else
           "Interpolated precision–recall")
    if legend:
        ax.legend(loc="best", fontsize=TICK_SIZE, framealpha=0.85)
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
        :func:`~searcheval_frames.curves.precision_recall_at_k` (``run, k,
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
        As for :func:`~searcheval_frames.evaluate.evaluate`.
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
    from matplotlib.lines import Line2D

    from .curves import precision_recall_at_k

    if qrels is None:
        data = _to_pl(run, "run")
        _need(data, ["run", "k", "precision", "recall"], "run",
              "Pass runs and qrels, or the frame of precision_recall_at_k().")
        if "query_id" in data.columns:
            data = data.group_by(["run", "k"], maintain_order=True).agg(
                pl.col("precision").mean(), pl.col("recall").mean()
            )
        if k is not None:
            data = data.filter(pl.col("k") <= k)
    else:
        data = _to_pl(
            precision_recall_at_k(
                run, qrels, k=k, relevance_level=relevance_level, missing=missing, depth=depth,
                judged_only=judged_only, compat=compat, columns=columns, progress=progress,
            ),
            "curve",
        )
    names = _select_runs(data, runs, "the curves")
    col = _colors(data.get_column("run").unique(maintain_order=True).to_list(), colors)
    top = int(cast(Any, data.get_column("k").max()) or 1)
    if mark_k is not None and (isinstance(mark_k, bool) or not 1 <= int(mark_k) <= top):
        raise SearchEvalError(
            f"mark_k={mark_k!r} is outside the cutoffs drawn (1..{top}); pick a k in that "
            "range or mark_k=None"
        )
    ax = _axes(ax, None)
    _style(ax)
    single = len(names) == 1
    marks: list[tuple[float, str, str]] = []
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
                    marks += [(p, f"P@{mark_k} = {p:.2f}", p_col), (r, f"R@{mark_k} = {r:.2f}", r_col)]
    if mark_k is not None:
        ax.axvline(mark_k, color="#555555", linestyle=":", linewidth=1.2, zorder=2)
        from matplotlib.transforms import ScaledTranslation

        shift = ax.transData + ScaledTranslation(6 / 72, 0, ax.figure.dpi_scale_trans)
        for (_, text, c), y in zip(marks, _label_positions([m[0] for m in marks]), strict=True):
            ax.text(
                mark_k, y, text, transform=shift, fontsize=NOTE_SIZE + 1, color=c,
                va="center", ha="left", zorder=5,
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
    ax.set_ylim(0.0, 1.02)
    ax.set_xlabel("k (number of results returned)", fontsize=LABEL_SIZE)
    ax.set_ylabel("Mean over queries", fontsize=LABEL_SIZE)
    _title(ax, title, "More results: more recall, less precision")
    if legend:
        if single:
            ax.legend(loc="best", fontsize=TICK_SIZE, framealpha=0.85,
                      labels=["Precision@k", "Recall@k"], handles=ax.lines[:2])
        else:
            handles = [Line2D([], [], color=col[n], linewidth=2.0, label=n) for n in names]
            handles += [
                Line2D([], [], color="#555555", linestyle="-", label="precision@k"),
                Line2D([], [], color="#555555", linestyle="--", label="recall@k"),
            ]
            ax.legend(handles=handles, loc="best", fontsize=TICK_SIZE, framealpha=0.85)
    return ax


def _label_positions(values: list[float], gap: float = 0.075) -> list[float]:
    """y positions (data units, axis 0..1) for value labels: near their values, at least
    ``gap`` apart, inside [0.04, 0.95]."""
    order = sorted(range(len(values)), key=lambda i: -values[i])
    pos = [0.0] * len(values)
    prev = 0.95 + gap
    for i in order:  # top down
        pos[i] = min(values[i] + 0.045, prev - gap, 0.95)
        prev = pos[i]
    low = 0.04
    for i in reversed(order):  # bottom up: push back inside
        if pos[i] < low:
            pos[i] = low
        low = pos[i] + gap
    return pos


# --------------------------------------------------------------------------- bars
def _bars_input(
    results: Any, baseline: str | None
) -> tuple[pl.DataFrame, pl.DataFrame | None, str | None, float | None]:
    """-> (values ``run, measure, value``, stats per non-baseline run or None, baseline, alpha)."""
    alpha = None
    if _is_comparison(results):
        frame = results.to_polars()
        alpha = getattr(results, "alpha", None)
        means = getattr(results, "means", None)
        baselines = list(getattr(results, "baselines", None) or [])
    else:
        frame = _to_pl(results, "results")
        means, baselines = None, []
    if {"baseline", "baseline_mean", "delta"} <= set(frame.columns):
        _need(frame, ["run", "measure", "mean"], "results", "Pass compare(...) or its frame.")
        if not baselines:
            baselines = frame.get_column("baseline").unique(maintain_order=True).to_list()
        base = baseline if baseline is not None else baselines[0]
        stats = frame.filter(pl.col("baseline") == base)
        if stats.height == 0:
            raise SearchEvalError(
                f"baseline={base!r} is not a baseline of the comparison; its baselines are "
                f"{frame.get_column('baseline').unique(maintain_order=True).to_list()}"
            )
        if means is not None:
            means = _to_pl(means, "comparison.means")
            values = means.select("run", "measure", pl.col("mean").alias("value"))
        else:
            values = pl.concat([
                stats.select(pl.col("baseline").alias("run"), "measure",
                             pl.col("baseline_mean").alias("value")).unique(
                    subset=["run", "measure"], maintain_order=True),
                stats.select("run", "measure", pl.col("mean").alias("value")),
            ])
        keep = [c for c in ("run", "measure", "delta", "delta_pct", "ci_low", "ci_high",
                            "baseline_mean", "significant") if c in stats.columns]
        return values, stats.select(keep), base, alpha
    if "query_id" in frame.columns:
        raise SearchEvalError(
            "results: this looks like per-query output (it has a query_id column); pass the "
            "aggregate of evaluate() (per_query=False) or compare(...) for CIs and significance"
        )
    _need(frame, ["run", "measure", "value"], "results",
          "Pass the aggregate output of evaluate() (run, measure, value) or compare(...).")
    values = frame.select(pl.col("run").cast(pl.String), pl.col("measure").cast(pl.String),
                          pl.col("value").cast(pl.Float64))
    return values, None, baseline, alpha


def benchmark_bars(
    results: Any,
    *,
    baseline: str | None = None,
    measures: Sequence[str] | None = None,
    runs: Sequence[str] | None = None,
    orientation: Literal["auto", "vertical", "horizontal"] = "auto",
    value_labels: bool = True,
    deltas: bool = True,
    significance: bool = True,
    ci: bool = True,
    digits: int = 2,
    pct_digits: int = 0,
    ax: Axes | None = None,
    title: str | None = None,
    colors: Mapping[str, str] | Sequence[str] | None = None,
    legend: bool = True,
) -> Axes:
    """Grouped bars per measure (before/after, or many systems) with deltas.

    Parameters
    ----------
    results
        The aggregate output of :func:`~searcheval_frames.evaluate.evaluate`
        (long ``run, measure, value``, pandas or polars), or a comparison from
        :func:`~searcheval_frames.compare.compare` (the object or its frame:
        ``run, baseline, measure, mean, baseline_mean, delta, delta_pct, ci_low,
        ci_high, significant ...``), which adds CI error bars and significance.
    baseline
        Run the deltas refer to (default: the comparison's first baseline, or
        the first run of an evaluate() frame).
    measures, runs
        Measures (groups) and runs (bars) to draw, in this order.
    orientation
        ``"vertical"`` (bars up, measures along x), ``"horizontal"``, or
        ``"auto"``: vertical for up to 12 bars.
    value_labels, deltas
        Write each bar's value, and under it the change against the baseline,
        ``"+0.13 (+20%)"`` (absolute, then relative to the baseline).
    significance, ci
        With a comparison: mark significant changes with ``*`` (adjusted p <=
        alpha), and draw the confidence interval of the difference as an error
        bar placed at ``baseline + [ci_low, ci_high]`` on the run's bar (it
        crosses the baseline's level exactly when the interval contains 0).
    digits, pct_digits
        Decimals of values and absolute deltas, and of the relative delta.
    ax, title, colors, legend
        As for :func:`pr_curve`.

    Returns
    -------
    matplotlib.axes.Axes
        One :class:`~matplotlib.container.BarContainer` per run in
        ``ax.containers`` (label = run name); labels in ``ax.texts``.

    Examples
    --------
    >>> import polars as pl, searcheval_frames as sef
    >>> res = pl.DataFrame({"run": ["before", "after"], "measure": "P@5",
    ...                     "value": [0.65, 0.78]})
    >>> ax = sef.benchmark_bars(res)
    >>> [t.get_text() for t in ax.texts]
    ['0.65', '0.78\\n+0.13 (+20%)']
    """
    values, stats, base, alpha = _bars_input(results, baseline)
    if values.height == 0:
        raise EmptyInputError("results: nothing to draw (no rows)")
    names = _select_runs(values, runs, "results")
    all_measures = values.get_column("measure").unique(maintain_order=True).to_list()
    if measures is None:
        meas = all_measures
    else:
        meas = [measures] if isinstance(measures, str) else [str(m) for m in measures]
        unknown = [m for m in meas if m not in all_measures]
        if unknown:
            raise SearchEvalError(f"measures=: {unknown} not in results; they are {all_measures}")
    if stats is None and deltas and len(names) > 1:
        base = base if base is not None else names[0]
        if base not in names:
            raise SearchEvalError(f"baseline={base!r} is not one of the runs {names}")
        bv = values.filter(pl.col("run") == base).select(
            "measure", pl.col("value").alias("baseline_mean"))
        stats = (
            values.filter(pl.col("run") != base)
            .join(bv, on="measure", how="inner")
            .select(
                "run", "measure", "baseline_mean",
                (pl.col("value") - pl.col("baseline_mean")).alias("delta"),
                pl.when(pl.col("baseline_mean") != 0)
                .then((pl.col("value") - pl.col("baseline_mean")) / pl.col("baseline_mean") * 100)
                .otherwise(None)
                .alias("delta_pct"),
            )
        )
    if base is not None and base in names:  # baseline first
        names = [base] + [n for n in names if n != base]
    col = _colors(names, colors)

    grid = pl.DataFrame({"measure": meas}).with_row_index("_g").join(
        pl.DataFrame({"run": names}).with_row_index("_b"), how="cross"
    ).join(values, on=["run", "measure"], how="left")
    if stats is not None:
        grid = grid.join(stats, on=["run", "measure"], how="left")
    grid = grid.sort(["_b", "_g"])
    if orientation not in ("auto", "vertical", "horizontal"):
        raise SearchEvalError(
            f"orientation={orientation!r}: use 'auto', 'vertical' or 'horizontal'"
        )
    n_b = len(names)
    labelled = value_labels or (deltas and stats is not None)
    # vertical while the labels fit over their bars: before/after, or unlabelled bars
    horizontal = orientation == "horizontal" or (
        orientation == "auto"
        and not (n_b == 1 or (n_b == 2 and len(meas) <= 6) or (not labelled and n_b * len(meas) <= 16))
    )
    width = 0.8 / n_b
    ax = _axes(ax, (FIGSIZE[0], max(FIGSIZE[1], 0.24 * n_b * len(meas) + 1.0)) if horizontal
               else None)
    _style(ax, grid="x" if horizontal else "y")
    has_ci = ci and stats is not None and {"ci_low", "ci_high"} <= set(grid.columns)
    has_sig = significance and stats is not None and "significant" in grid.columns
    anchors: list[float] = []
    lines_needed = 1
    for b, name in enumerate(names):
        sub = grid.filter(pl.col("run") == name)
        pos = np.arange(len(meas)) + (b - (n_b - 1) / 2) * width
        if horizontal:
            pos = -pos  # first measure and first run on top
        vals = sub.get_column("value").to_numpy().astype(float)
        heights = np.nan_to_num(vals, nan=0.0)
        kw: dict[str, Any] = dict(
            color=col[name], label=name, edgecolor="white", linewidth=0.6, zorder=3
        )
        if horizontal:
            ax.barh(pos, heights, height=width * 0.95, **kw)
        else:
            ax.bar(pos, heights, width=width * 0.95, **kw)
        tops = heights.copy()
        if has_ci and name != base:
            lo = (sub.get_column("baseline_mean") + sub.get_column("ci_low")).to_numpy()
            hi = (sub.get_column("baseline_mean") + sub.get_column("ci_high")).to_numpy()
            ok = np.isfinite(lo) & np.isfinite(hi)
            if ok.any():
                mid, half = (lo + hi) / 2, (hi - lo) / 2
                err: dict[str, Any] = dict(
                    fmt="none", ecolor="#333333", elinewidth=1.0, capsize=2.5, zorder=4
                )
                if horizontal:
                    ax.errorbar(mid[ok], pos[ok], xerr=half[ok], **err)
                else:
                    ax.errorbar(pos[ok], mid[ok], yerr=half[ok], **err)
                tops = np.where(ok, np.fmax(tops, np.nan_to_num(hi, nan=0.0)), tops)
        for j in range(len(meas)):
            if not np.isfinite(vals[j]):
                continue
            parts = [f"{vals[j]:.{digits}f}"] if value_labels else []
            if deltas and stats is not None and name != base:
                d = sub.get_column("delta")[j]
                if d is not None and math.isfinite(d):
                    pct = sub.get_column("delta_pct")[j] if "delta_pct" in sub.columns else None
                    text = delta_label(d, pct, digits=digits, pct_digits=pct_digits)
                    if has_sig and sub.get_column("significant")[j]:
                        text += " *"
                    parts.append(text)
            if not parts:
                continue
            anchors.append(tops[j])
            if horizontal:
                ax.annotate("  ".join(parts), (tops[j], pos[j]), xytext=(3, 0),
                            textcoords="offset points", va="center", ha="left",
                            fontsize=NOTE_SIZE, zorder=5)
                lines_needed = max(lines_needed, len("  ".join(parts)))
            else:
                ax.annotate("\n".join(parts), (pos[j], tops[j]), xytext=(0, 2),
                            textcoords="offset points", va="bottom", ha="center",
                            fontsize=NOTE_SIZE if n_b > 2 else NOTE_SIZE + 1, zorder=5,
                            linespacing=1.1)
                lines_needed = max(lines_needed, len(parts))
    top = max([v for v in anchors if math.isfinite(v)] + [float(np.nanmax(
        grid.get_column("value").fill_null(0.0).to_numpy()))] + [0.0])
    top = top if top > 0 else 1.0
    shown = grid.get_column("value").drop_nulls()
    unit = shown.len() > 0 and shown.min() >= 0 and shown.max() <= 1 and top > 0.6  # type: ignore[operator]
    if horizontal:
        ax.set_yticks(-np.arange(len(meas)), meas)
        ax.set_xlabel("Mean over queries", fontsize=LABEL_SIZE)
        ax.set_xlim(0, top)
    else:
        ax.set_xticks(np.arange(len(meas)), meas)
        ax.set_ylabel("Mean over queries", fontsize=LABEL_SIZE)
        ax.set_ylim(0, top)
    default = (f"{names[1]} vs {names[0]}" if len(names) == 2 else
               f"{len(names)} systems" + (f" vs {base}" if base in names else ""))
    _title(ax, title, default)
    if legend:
        handles, labels = ax.get_legend_handles_labels()
        note = []
        if has_sig and grid.get_column("significant").fill_null(False).any():
            note.append("* significant" + (f" (adjusted p ≤ {alpha:g})" if alpha else ""))
        if has_ci:
            note.append("error bar: CI of the difference")
        if note:
            from matplotlib.patches import Patch

            for text in note:
                handles.append(Patch(visible=False))
                labels.append(text)
        ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                  fontsize=NOTE_SIZE + 1, frameon=False, ncols=1)
    # room for the labels: measured on the laid-out axes (the legend takes width)
    fig: Any = ax.figure
    engine = fig.get_layout_engine()
    if engine is not None:
        engine.execute(fig)
    w_in, h_in = fig.get_size_inches()
    box = ax.get_position()
    if horizontal:
        axes_pt = max(w_in * box.width * 72, 1.0)
        need = (lines_needed * 0.58 * NOTE_SIZE + 10) / axes_pt if anchors else 0.05
        ax.set_xlim(0, top / max(1 - need, 0.3))
        if unit:
            ax.set_xticks(np.linspace(0, 1, 6))
    else:
        axes_pt = max(h_in * box.height * 72, 1.0)
        need = (lines_needed * 1.25 * (NOTE_SIZE + 1) + 6) / axes_pt if anchors else 0.05
        ax.set_ylim(0, top / max(1 - need, 0.3))
        if unit:
            ax.set_yticks(np.linspace(0, 1, 6))
    return ax


# --------------------------------------------------------------------------- per query
_PQ = ("run", "query_id", "measure", "value")


def _per_query(obj: Any, columns: Mapping[str, str] | None, arg: str) -> pl.DataFrame:
    if _is_comparison(obj) and hasattr(obj, "per_query"):
        df = _to_pl(obj.per_query, arg)
    else:
        df = _to_pl(obj, arg)
    if columns:
        df = df.rename({v: k for k, v in columns.items() if v in df.columns and k in _PQ})
    _need(df, list(_PQ), arg,
          "Pass evaluate(..., per_query=True) (run, query_id, measure, value), or map your "
          "columns with columns={'value': 'your_column'}.")
    df = df.select(
        pl.col("run").cast(pl.String), pl.col("query_id").cast(pl.String),
        pl.col("measure").cast(pl.String), pl.col("value").cast(pl.Float64),
    )
    if df.height == 0:
        raise EmptyInputError(f"{arg}: the frame has no rows")
    return df


def _one(choices: list[str], given: str | None, what: str, arg: str) -> str:
    if given is not None:
        if given not in choices:
            raise SearchEvalError(f"{what}={given!r} is not in {arg}; choose one of {choices}")
        return given
    if len(choices) != 1:
        raise SearchEvalError(f"{arg} has several {what}s {choices}; pick one with {what}=...")
    return choices[0]


def per_query_delta(
    per_query: Any,
    *,
    baseline: str | None = None,
    run: str | None = None,
    measure: str | None = None,
    annotate: int = 3,
    query_labels: bool | None = None,
    columns: Mapping[str, str] | None = None,
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """Per-query differences against a baseline, sorted: wins above, losses below.

    Parameters
    ----------
    per_query
        ``evaluate(..., per_query=True)`` (``run, query_id, measure, value``) or a
        comparison from :func:`~searcheval_frames.compare.compare` (its paired
        per-query scores are used).
    baseline
        Reference run (default: the comparison's baseline, or the first run).
    run
        Run compared to the baseline (default: the only other run).
    measure
        Measure (default: the only one in the frame).
    annotate
        Label the ``annotate`` biggest wins and losses with their query id.
    query_labels
        Query ids on the x axis (default: when there are at most 40 queries).
    columns
        Map ``run``, ``query_id``, ``measure``, ``value`` to your column names.
    ax, title
        As for :func:`pr_curve`.

    Returns
    -------
    matplotlib.axes.Axes
        One bar per query in ``ax.containers[0]`` (blue = win, vermillion =
        loss, grey = tie), a summary "wins / ties / losses" in ``ax.texts``.
        A query missing from one of the two runs scores 0 there (warned).

    Examples
    --------
    >>> import polars as pl, searcheval_frames as sef
    >>> pq = pl.DataFrame({"run": ["a"] * 3 + ["b"] * 3, "query_id": ["1", "2", "3"] * 2,
    ...                    "measure": "AP", "value": [0.2, 0.5, 0.4, 0.6, 0.3, 0.4]})
    >>> ax = sef.per_query_delta(pq, baseline="a")
    >>> [float(round(b.get_height(), 2)) for b in ax.containers[0]]
    [0.4, 0.0, -0.2]
    """
    df = _per_query(per_query, columns, "per_query")
    all_runs = df.get_column("run").unique(maintain_order=True).to_list()
    if baseline is None and _is_comparison(per_query) and getattr(per_query, "baselines", None):
        baseline = per_query.baselines[0]
    base = baseline if baseline is not None else all_runs[0]
    if base not in all_runs:
        raise SearchEvalError(f"baseline={base!r} is not a run of per_query; runs: {all_runs}")
    other = _one([r for r in all_runs if r != base], run, "run", "per_query")
    meas = _one(df.get_column("measure").unique(maintain_order=True).to_list(), measure,
                "measure", "per_query")
    sub = df.filter(pl.col("measure") == meas)
    a = sub.filter(pl.col("run") == other).select("query_id", pl.col("value").alias("_x"))
    b = sub.filter(pl.col("run") == base).select("query_id", pl.col("value").alias("_y"))
    both = a.join(b, on="query_id", how="full", coalesce=True)
    gaps = both.filter(pl.col("_x").is_null() | pl.col("_y").is_null())
    if gaps.height:
        ids = gaps.get_column("query_id").sort().to_list()
        warnings.warn(
            f"per_query_delta: {len(ids)} query id(s) are in only one of {other!r} and "
            f"{base!r}; the missing score counts 0 (as trec_eval -c): "
            f"{', '.join(repr(i) for i in ids[:5])}{' ...' if len(ids) > 5 else ''}",
            SearchEvalWarning,
            stacklevel=2,
        )
    d = (
        both.with_columns(pl.col("_x", "_y").fill_null(0.0))
        .with_columns((pl.col("_x") - pl.col("_y")).alias("delta"))
        .sort(["delta", "query_id"], descending=[True, False])
    )
    delta = d.get_column("delta").to_numpy()
    qids = d.get_column("query_id").to_list()
    tol = 1e-9
    colors = np.where(delta > tol, WIN, np.where(delta < -tol, LOSS, TIE))
    ax = _axes(ax, None)
    _style(ax, grid="y")
    x = np.arange(len(delta))
    ax.bar(x, delta, width=0.8, color=list(colors), zorder=3, label="_nolegend_")
    ax.axhline(0.0, color="#333333", linewidth=0.8, zorder=4)
    wins, losses = int((delta > tol).sum()), int((delta < -tol).sum())
    ties = len(delta) - wins - losses
    mean = float(delta.mean())
    span = float(np.abs(delta).max()) if len(delta) else 0.0
    span = span if span > 0 else 1.0
    ax.set_ylim(-span * 1.3, span * 1.3)
    ax.set_xlim(-0.7, len(delta) - 0.3)
    ax.text(
        0.99, 0.98,
        f"wins {wins} · ties {ties} · losses {losses}\nmean Δ {_fmt_signed(mean, 3)}",
        transform=ax.transAxes, ha="right", va="top", fontsize=NOTE_SIZE + 1,
        bbox=dict(boxstyle="round,pad=0.3", facecolor="white", edgecolor="#cccccc", alpha=0.9),
        zorder=6,
    )
    if annotate:
        idx = [i for i in range(min(annotate, wins))] + [
            len(delta) - 1 - i for i in range(min(annotate, losses))
        ]
        for i in idx:
            up = delta[i] > 0
            ax.annotate(qids[i], (x[i], delta[i]), xytext=(0, 3 if up else -3),
                        textcoords="offset points", ha="center", va="bottom" if up else "top",
                        fontsize=NOTE_SIZE - 1, rotation=90, zorder=5)
    show = query_labels if query_labels is not None else len(delta) <= 40
    if show:
        ax.set_xticks(x, qids, rotation=90, fontsize=NOTE_SIZE - 1)
        ax.set_xlabel("query (sorted by Δ)", fontsize=LABEL_SIZE)
    else:
        ax.set_xticks([])
        ax.set_xlabel(f"{len(delta)} queries, sorted by Δ", fontsize=LABEL_SIZE)
    ax.set_ylabel(f"Δ {meas}", fontsize=LABEL_SIZE)
    _title(ax, title, f"{meas}: {other} − {base}, per query")
    return ax


# --------------------------------------------------------------------------- distribution
def metric_distribution(
    per_query: Any,
    *,
    measure: str | None = None,
    runs: Sequence[str] | None = None,
    kind: Literal["box", "strip", "both"] = "both",
    show_means: bool = True,
    seed: int = 0,
    columns: Mapping[str, str] | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    colors: Mapping[str, str] | Sequence[str] | None = None,
) -> Axes:
    """Per-query distribution of one measure for each run (box, strip, or both).

    Parameters
    ----------
    per_query
        ``evaluate(..., per_query=True)`` or a comparison (its per-query scores).
    measure
        Measure to draw (default: the only one in the frame).
    runs
        Runs to draw, in this order.
    kind
        ``"box"`` (median, quartiles, whiskers at 1.5 IQR), ``"strip"`` (one
        jittered dot per query) or ``"both"`` (default).
    show_means
        Mark the mean (the number tables report) with a white diamond.
    seed
        Seed of the horizontal jitter of the strip (drawings are reproducible).
    columns, ax, title, colors
        As for :func:`per_query_delta` and :func:`pr_curve`.

    Returns
    -------
    matplotlib.axes.Axes
        x tick labels are the runs; strips are one ``PathCollection`` per run
        (label = run name), means one more (label ``"mean"``).

    Examples
    --------
    >>> import polars as pl, searcheval_frames as sef
    >>> pq = pl.DataFrame({"run": ["a"] * 3 + ["b"] * 3, "query_id": ["1", "2", "3"] * 2,
    ...                    "measure": "AP", "value": [0.2, 0.5, 0.4, 0.6, 0.3, 0.4]})
    >>> ax = sef.metric_distribution(pq)
    >>> [t.get_text() for t in ax.get_xticklabels()]
    ['a', 'b']
    """
    if kind not in ("box", "strip", "both"):
        raise SearchEvalError(f"kind={kind!r}: use 'box', 'strip' or 'both'")
    df = _per_query(per_query, columns, "per_query")
    meas = _one(df.get_column("measure").unique(maintain_order=True).to_list(), measure,
                "measure", "per_query")
    sub = df.filter(pl.col("measure") == meas)
    names = _select_runs(sub, runs, "per_query")
    col = _colors(sub.get_column("run").unique(maintain_order=True).to_list(), colors)
    data = [sub.filter(pl.col("run") == n).get_column("value").to_numpy() for n in names]
    ax = _axes(ax, None)
    _style(ax, grid="y")
    pos = np.arange(1, len(names) + 1)
    if kind in ("box", "both"):
        box = ax.boxplot(
            data, positions=pos, widths=0.55, patch_artist=True, showfliers=kind == "box",
            medianprops=dict(color="#222222", linewidth=1.5),
            whiskerprops=dict(color="#555555"), capprops=dict(color="#555555"),
            flierprops=dict(marker="o", markersize=3, markerfacecolor="#777777",
                            markeredgecolor="none"),
            zorder=2,
        )
        for patch, n in zip(box["boxes"], names, strict=True):
            patch.set_facecolor(col[n])
            patch.set_alpha(0.35 if kind == "both" else 0.7)
            patch.set_edgecolor("#444444")
    if kind in ("strip", "both"):
        rng = np.random.default_rng(seed)
        for p, n, vals in zip(pos, names, data, strict=True):
            jitter = rng.uniform(-0.17, 0.17, size=len(vals))
            ax.scatter(p + jitter, vals, s=12, color=col[n], alpha=0.75, edgecolors="none",
                       zorder=3, label=n)
    if show_means:
        ax.scatter(pos, [float(v.mean()) if len(v) else np.nan for v in data], marker="D",
                   s=30, color="white", edgecolors="#111111", linewidths=1.0, zorder=5,
                   label="mean")
    ax.set_xticks(pos, names, rotation=30 if max(len(n) for n in names) > 10 else 0,
                  ha="right" if max(len(n) for n in names) > 10 else "center")
    values = sub.get_column("value")
    if values.min() >= 0 and values.max() <= 1:  # type: ignore[operator]
        ax.set_ylim(-0.03, 1.03)
    ax.set_xlim(0.4, len(names) + 0.6)
    ax.set_ylabel(meas, fontsize=LABEL_SIZE)
    n_q = sub.get_column("query_id").n_unique()
    _title(ax, title, f"{meas} per query ({n_q} queries)")
    return ax


# --------------------------------------------------------------------------- saving
_FORMATS = ("png", "svg", "pdf")
_METADATA: dict[str, dict[str, Any]] = {
    "png": {"Software": None},
    "svg": {"Date": None},
    "pdf": {"CreationDate": None, "ModDate": None},
}


def _figure_of(obj: Any) -> Figure:
    for attr in ("savefig",):
        if hasattr(obj, attr):
            return obj
    for attr in ("figure", "fig"):
        fig = getattr(obj, attr, None)
        if fig is not None and hasattr(fig, "savefig"):
            return fig
    if isinstance(obj, np.ndarray) and obj.size and hasattr(obj.flat[0], "figure"):
        return obj.flat[0].figure
    raise SearchEvalError(
        f"save_figure: expected a matplotlib Figure or Axes, got {type(obj).__name__}"
    )


def save_figure(
    fig: Any,
    path: str | Path,
    *,
    formats: Sequence[str] | None = None,
    dpi: int = 200,
    transparent: bool = False,
    tight: bool = True,
) -> list[Path]:
    """Write a figure as PNG, SVG and/or PDF, ready for a report.

    Parameters
    ----------
    fig
        A Figure, or an Axes returned by the plotting helpers.
    path
        File name; its suffix (``.png``, ``.svg``, ``.pdf``) is the format.
        Parent folders are created.
    formats
        Write several formats: ``path`` with each suffix, e.g.
        ``save_figure(ax, "figs/pr", formats=["png", "pdf"])``.
    dpi
        Resolution of PNGs (vector formats embed no pixels).
    transparent
        Transparent background.
    tight
        Crop to the drawn content (``bbox_inches="tight"``).

    Returns
    -------
    list of Path
        The files written. They contain no creation date, so the same figure
        gives the same bytes (PNG, SVG) every time.

    Examples
    --------
    >>> import tempfile, polars as pl, searcheval_frames as sef
    >>> res = pl.DataFrame({"run": ["a", "b"], "measure": "P@5", "value": [0.6, 0.7]})
    >>> out = sef.save_figure(sef.benchmark_bars(res), tempfile.mkdtemp() + "/bars.svg")
    >>> out[0].suffix
    '.svg'
    """
    import matplotlib as mpl

    figure = _figure_of(fig)
    path = Path(path)
    if formats is None:
        fmt = path.suffix.lower().lstrip(".")
        if fmt not in _FORMATS:
            raise SearchEvalError(
                f"save_figure: cannot tell the format of {str(path)!r}; end the name in "
                f".png, .svg or .pdf, or pass formats=['png', 'pdf']"
            )
        targets = [(path, fmt)]
    else:
        fmts = [formats] if isinstance(formats, str) else list(formats)
        bad = [f for f in fmts if f.lower().lstrip(".") not in _FORMATS]
        if bad or not fmts:
            raise SearchEvalError(f"save_figure: formats={fmts!r}; use any of {list(_FORMATS)}")
        stem = path.with_suffix("") if path.suffix.lower().lstrip(".") in _FORMATS else path
        targets = [
            (stem.with_name(stem.name + "." + f.lower().lstrip(".")), f.lower().lstrip("."))
            for f in fmts
        ]
    if isinstance(dpi, bool) or not isinstance(dpi, int | float) or dpi <= 0:
        raise SearchEvalError(f"save_figure: dpi={dpi!r}; use a positive number such as 200")
    written = []
    with mpl.rc_context({"svg.hashsalt": "searcheval_frames", "pdf.fonttype": 42}):
        for target, fmt in targets:
            target.parent.mkdir(parents=True, exist_ok=True)
            figure.savefig(
                target, format=fmt, dpi=dpi, transparent=transparent,
                bbox_inches="tight" if tight else None, pad_inches=0.05,
                metadata=_METADATA[fmt],
            )
            written.append(target)
    return written
