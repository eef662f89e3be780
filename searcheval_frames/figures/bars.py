"""Bar charts of aggregate results: one group of bars per measure, one bar per run,
with the change against a baseline and its significance when given a comparison.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import polars as pl

from ..errors import EmptyInputError, SearchEvalError
from .checks import check_bool, check_choice, check_int
from .style import (
    FIGSIZE,
    LABEL_SIZE,
    NOTE_SIZE,
    _axes,
    _colors,
    _fig,
    _is_comparison,
    _need,
    _select_runs,
    _style,
    _title,
    _to_pl,
    delta_label,
    display_names,
    fit_title,
    place_legend,
)

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = ["MAX_HEIGHT", "benchmark_bars"]

#: Tallest figure (inches) benchmark_bars makes for many horizontal bars
MAX_HEIGHT = 9.0


def _label_chars(values: bool, deltas: bool, digits: int, pct_digits: int) -> int:
    """Characters of the widest label line over a bar (``0.65``, ``+0.13 (+20%) *``)."""
    return max(digits + 2 if values else 0,
               digits + 3 + 4 + pct_digits + (pct_digits > 0) + 4 if deltas else 0)


def _vertical_fits(n_b: int, n_m: int, labelled: bool, chars: int, legend: Sequence[str],
                   ax: Any) -> bool:
    """Whether labels over vertical bars fit between their neighbours' (measured on the
    axes' width less the y labels and a legend at the right)."""
    if not labelled:
        return n_b * n_m <= 16
    fig_w = _fig(ax).get_figwidth() if ax is not None else FIGSIZE[0]
    legend_w = (max((len(t) for t in legend), default=0) + 4) * 0.6 * (NOTE_SIZE + 1)
    axes_w = fig_w * 72 - 60 - (max(legend_w, 100) if legend else 0)
    pitch = axes_w / n_m * (0.8 / n_b if n_b > 1 else 1.0)
    return chars * 0.6 * (NOTE_SIZE + 1) <= pitch


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
        The aggregate output of :func:`~searcheval_frames.evaluate`
        (long ``run, measure, value``, pandas or polars), or a comparison from
        :func:`~searcheval_frames.compare` (the object or its frame:
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
    _F = "benchmark_bars"
    check_choice(_F, "orientation", orientation, ("auto", "vertical", "horizontal"),
                 example="orientation='horizontal'")
    for name, flag in (("value_labels", value_labels), ("deltas", deltas),
                       ("significance", significance), ("ci", ci), ("legend", legend)):
        check_bool(_F, name, flag)
    check_int(_F, "digits", digits, minimum=0, maximum=6, example="digits=3")
    check_int(_F, "pct_digits", pct_digits, minimum=0, maximum=6, example="pct_digits=1")
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
    dropped = False

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
    short = display_names(names)
    labelled = value_labels or (deltas and stats is not None)
    horizontal = orientation == "horizontal" or (
        orientation == "auto" and not _vertical_fits(
            n_b, len(meas), labelled, _label_chars(value_labels, deltas and stats is not None,
                                                   digits, pct_digits),
            [short[n] for n in names] if legend else [], ax))
    width = 0.8 / n_b
    height = min(max(FIGSIZE[1], 0.24 * n_b * len(meas) + 1.0), MAX_HEIGHT)
    ax = _axes(ax, (FIGSIZE[0], height) if horizontal else None)
    if horizontal and labelled:
        # a label needs a line of text per bar; when the bars are thinner the values and
        # deltas are left to the table (compare(...).frame, the report's tables)
        pitch = (_fig(ax).get_figheight() * 72 - 80) / max(n_b * len(meas), 1)
        if pitch < NOTE_SIZE * 1.2:
            value_labels, deltas, dropped = False, False, True
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
    default = (f"{short[names[1]]} vs {short[names[0]]}" if len(names) == 2 else
               f"{len(names)} systems" + (f" vs {short[base]}" if base in names else ""))
    _title(ax, title, default)
    if legend:
        handles, labels = ax.get_legend_handles_labels()
        note = []
        if has_sig and grid.get_column("significant").fill_null(False).any():
            note.append("* significant" + (f" (adjusted p ≤ {alpha:g})" if alpha else ""))
        if has_ci:
            note.append("error bar: CI of the difference")
        if dropped:
            note.append("values, Δ: see the table")
        labels = [short.get(lb, lb) for lb in labels]
        if note:
            from matplotlib.patches import Patch

            for text in note:
                handles.append(Patch(visible=False))
                labels.append(text)
        place_legend(ax, handles, labels, inside=0)
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
    fit_title(ax)
    return ax

