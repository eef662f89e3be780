"""Bar charts of aggregate results: one group of bars per measure, one bar per run,
with the change against a baseline and its significance when given a comparison.

:class:`BenchmarkBarsDisplay` holds the data (``from_evaluation`` for the aggregate of
:func:`~searcheval_frames.evaluate`, ``from_comparison`` for
:func:`~searcheval_frames.compare`, whose Δ, intervals and significance are drawn as
computed there) and draws them (``plot``); :func:`benchmark_bars` is both in one call.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import polars as pl

from .._deprecation import old_spelling
from ..errors import EmptyInputError, InvalidOptionError
from ._bars_layout import MAX_HEIGHT, BarsLook
from ._shared import (
    FIGSIZE,
    LABEL_SIZE,
    NOTE_SIZE,
    Display,
    as_frame,
    check_ax,
    house_style,
    is_comparison,
    need_columns,
    run_colors,
    select_runs,
    set_title,
)
from .checks import check_bool, check_choice, check_int
from .old_calls import OLD_BARS
from .style import display_names, fit_title, place_legend

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = ["MAX_HEIGHT", "BenchmarkBarsDisplay", "benchmark_bars"]

_STATS = ("delta", "delta_pct", "ci_low", "ci_high", "baseline_mean", "significant")


def _comparison_input(
    results: Any, baseline: str | None
) -> tuple[pl.DataFrame, pl.DataFrame, str, float | None]:
    """A comparison (object or frame) -> (values ``run, measure, value``, its rows against
    ``baseline``: Δ, CI and significance as compare computed them, baseline, alpha)."""
    alpha, means, baselines = None, None, []
    if is_comparison(results):
        frame = results.to_polars()
        alpha = getattr(results, "alpha", None)
        means = getattr(results, "means", None)
        baselines = list(getattr(results, "baselines", None) or [])
    else:
        frame = as_frame(results, "results")
    need_columns(frame, ["run", "baseline", "measure", "mean", "baseline_mean", "delta"],
                 "results", "Pass compare(...) or its frame.")
    if not baselines:
        baselines = frame.get_column("baseline").unique(maintain_order=True).to_list()
    base = baseline if baseline is not None else baselines[0]
    stats = frame.filter(pl.col("baseline") == base)
    if stats.height == 0:
        raise InvalidOptionError(
            f"baseline={base!r} is not a baseline of the comparison; its baselines are "
            f"{frame.get_column('baseline').unique(maintain_order=True).to_list()}"
        )
    if means is not None:
        values = as_frame(means, "comparison.means").select(
            "run", "measure", pl.col("mean").alias("value"))
    else:
        values = pl.concat([
            stats.select(pl.col("baseline").alias("run"), "measure",
                         pl.col("baseline_mean").alias("value")).unique(
                subset=["run", "measure"], maintain_order=True),
            stats.select("run", "measure", pl.col("mean").alias("value")),
        ])
    keep = [c for c in ("run", "measure", *_STATS) if c in stats.columns]
    return values, stats.select(keep), base, alpha


def _evaluation_input(results: Any) -> pl.DataFrame:
    """The aggregate of evaluate() -> ``run, measure, value`` (per-query output refused)."""
    frame = as_frame(results, "results")
    if "query_id" in frame.columns:
        raise InvalidOptionError(
            "results: this looks like per-query output (it has a query_id column); pass the "
            "aggregate of evaluate() (per_query=False) or compare(...) for CIs and significance"
        )
    need_columns(frame, ["run", "measure", "value"], "results",
                 "Pass the aggregate output of evaluate() (run, measure, value) or compare(...).")
    return frame.select(pl.col("run").cast(pl.String), pl.col("measure").cast(pl.String),
                        pl.col("value").cast(pl.Float64))


def _mean_deltas(values: pl.DataFrame, base: str) -> pl.DataFrame:
    """Δ of each run's mean against ``base``'s, absolute and in percent: for means
    without their queries (an evaluate() aggregate); a comparison brings its own."""
    bv = values.filter(pl.col("run") == base).select(
        "measure", pl.col("value").alias("baseline_mean"))
    delta = pl.col("value") - pl.col("baseline_mean")
    return values.filter(pl.col("run") != base).join(bv, on="measure", how="inner").select(
        "run", "measure", "baseline_mean", delta.alias("delta"),
        pl.when(pl.col("baseline_mean") != 0).then(delta / pl.col("baseline_mean") * 100)
        .otherwise(None).alias("delta_pct"),
    )


def _pick_measures(values: pl.DataFrame, measures: Sequence[str] | None) -> list[str]:
    present = values.get_column("measure").unique(maintain_order=True).to_list()
    if measures is None:
        return present
    wanted = [measures] if isinstance(measures, str) else [str(m) for m in measures]
    unknown = [m for m in wanted if m not in present]
    if unknown:
        raise InvalidOptionError(f"measures=: {unknown} not in results; they are {present}")
    return wanted


def _check_bars_options(orientation: Any, value_labels: Any, deltas: Any, significance: Any,
                        ci: Any, digits: Any, pct_digits: Any, legend: Any) -> None:
    _F = "benchmark_bars"
    check_choice(_F, "orientation", orientation, ("auto", "vertical", "horizontal"),
                 example="orientation='horizontal'")
    for name, flag in (("value_labels", value_labels), ("deltas", deltas),
                       ("significance", significance), ("ci", ci), ("legend", legend)):
        check_bool(_F, name, flag)
    check_int(_F, "digits", digits, minimum=0, maximum=6, example="digits=3")
    check_int(_F, "pct_digits", pct_digits, minimum=0, maximum=6, example="pct_digits=1")


@dataclass
class BenchmarkBarsDisplay(Display):
    """The bars of :func:`benchmark_bars`: one row of ``frame`` per bar.

    Make it with :meth:`from_evaluation` or :meth:`from_comparison`; :meth:`plot` draws
    it and keeps ``ax_``, ``figure_``, ``bars_`` (one BarContainer per run),
    ``errorbars_`` and ``texts_`` (the labels over the bars).

    Attributes
    ----------
    frame
        ``run, measure, value`` and, with a baseline, ``baseline_mean, delta,
        delta_pct`` (and from a comparison ``ci_low, ci_high, significant``), in
        drawing order: run by run (baseline first), measure by measure; ``value`` is
        null where a run has no value for a measure.
    runs, measures
        Bars and groups, in drawing order.
    baseline
        The run the deltas refer to (None: no deltas).
    alpha
        The comparison's level (for the legend's note on significance).

    Examples
    --------
    >>> import polars as pl, searcheval_frames as sef
    >>> res = pl.DataFrame({"run": ["before", "after"], "measure": "P@5",
    ...                     "value": [0.65, 0.78]})
    >>> d = sef.BenchmarkBarsDisplay.from_evaluation(res)
    >>> d.baseline, [round(x, 2) for x in d.frame["delta"].drop_nulls()]
    ('before', [0.13])
    >>> [float(round(b.get_height(), 2)) for b in d.plot().bars_[1]]
    [0.78]
    """

    frame: pl.DataFrame
    runs: list[str]
    measures: list[str]
    baseline: str | None = None
    alpha: float | None = None
    #: the baseline was not named: the first run (title and deltas only when drawn)
    implicit_baseline: bool = False
    bars_: list[Any] = field(default_factory=list, init=False, repr=False)
    errorbars_: list[Any] = field(default_factory=list, init=False, repr=False)
    texts_: list[Any] = field(default_factory=list, init=False, repr=False)

    @classmethod
    def from_evaluation(cls, results: Any, *, baseline: str | None = None,
                        measures: Sequence[str] | None = None,
                        runs: Sequence[str] | None = None) -> BenchmarkBarsDisplay:
        """From the aggregate of :func:`~searcheval_frames.evaluate` (``run, measure,
        value``): Δ against ``baseline`` (default: the first run) from the means."""
        values = _evaluation_input(results)
        return cls._build(values, None, baseline, None, measures, runs)

    @classmethod
    def from_comparison(cls, comparison: Any, *, baseline: str | None = None,
                        measures: Sequence[str] | None = None,
                        runs: Sequence[str] | None = None) -> BenchmarkBarsDisplay:
        """From :func:`~searcheval_frames.compare` (the object or its frame): its Δ,
        intervals and significance against ``baseline`` (default: its first)."""
        values, stats, base, alpha = _comparison_input(comparison, baseline)
        return cls._build(values, stats, base, alpha, measures, runs)

    @classmethod
    def _build(cls, values: pl.DataFrame, stats: pl.DataFrame | None, base: str | None,
               alpha: float | None, measures: Sequence[str] | None,
               runs: Sequence[str] | None) -> BenchmarkBarsDisplay:
        if values.height == 0:
            raise EmptyInputError("results: nothing to draw (no rows)")
        names = select_runs(values, runs, "results")
        meas = _pick_measures(values, measures)
        implicit = False
        if stats is None and len(names) > 1:
            implicit = base is None
            base = base if base is not None else names[0]
            if base not in names:
                raise InvalidOptionError(f"baseline={base!r} is not one of the runs {names}")
            stats = _mean_deltas(values, base)
        if base is not None and base in names:  # baseline first
            names = [base] + [n for n in names if n != base]
        grid = pl.DataFrame({"measure": meas}).with_row_index("_g").join(
            pl.DataFrame({"run": names}).with_row_index("_b"), how="cross"
        ).join(values, on=["run", "measure"], how="left")
        if stats is not None:
            grid = grid.join(stats, on=["run", "measure"], how="left")
        frame = grid.sort(["_b", "_g"]).select("run", "measure", "value",
                                               *[c for c in _STATS if c in grid.columns])
        return cls(frame, names, meas, base, alpha, implicit)

    def plot(
        self,
        *,
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
    ) -> BenchmarkBarsDisplay:
        """Draw the bars (options as for :func:`benchmark_bars`); returns ``self``."""
        _check_bars_options(orientation, value_labels, deltas, significance, ci, digits,
                            pct_digits, legend)
        check_ax(ax)  # the layout measures the figure of ``ax`` before drawing into it
        base = None if self.implicit_baseline and not deltas else self.baseline
        look = BarsLook.make(list(self.frame.columns), self.runs, len(self.measures), base,
                             orientation, value_labels, deltas, significance, ci, digits,
                             pct_digits, ax, legend)
        ax = self.start_plot(ax, (FIGSIZE[0], look.height) if look.horizontal else None)
        look.drop_crowded_labels(ax, len(self.runs) * len(self.measures))
        house_style(ax, grid="x" if look.horizontal else "y")
        col = run_colors(self.runs, colors)
        self.bars_, self.errorbars_, self.texts_ = [], [], []
        anchors: list[float] = []
        for b, name in enumerate(self.runs):
            anchors += self._draw_run(ax, look, b, name, col[name])
        top = max([v for v in anchors if math.isfinite(v)] + [float(np.nanmax(
            self.frame.get_column("value").fill_null(0.0).to_numpy()))] + [0.0])
        top = top if top > 0 else 1.0
        self._axis_labels(ax, look, top)
        set_title(ax, title, self._default_title(look.base))
        if legend:
            self._legend(ax, look)
        self._room_for_labels(ax, look, top, bool(anchors))
        fit_title(ax)
        return self

    def _default_title(self, base: str | None) -> str:
        names, short = self.runs, display_names(self.runs)
        if len(names) == 2:
            return f"{short[names[1]]} vs {short[names[0]]}"
        return f"{len(names)} systems" + (f" vs {short[base]}" if base in names else "")

    def _draw_run(self, ax: Axes, look: BarsLook, b: int, name: str, color: str) -> list[float]:
        """One run's bars, its CI error bars and labels; -> where each label sits."""
        n_m, n_b = len(self.measures), len(self.runs)
        sub = self.frame.filter(pl.col("run") == name)
        pos = np.arange(n_m) + (b - (n_b - 1) / 2) * look.width
        if look.horizontal:
            pos = -pos  # first measure and first run on top
        vals = sub.get_column("value").to_numpy().astype(float)
        heights = np.nan_to_num(vals, nan=0.0)
        kw: dict[str, Any] = dict(color=color, label=name, edgecolor="white", linewidth=0.6,
                                  zorder=3)
        if look.horizontal:
            self.bars_.append(ax.barh(pos, heights, height=look.width * 0.95, **kw))
        else:
            self.bars_.append(ax.bar(pos, heights, width=look.width * 0.95, **kw))
        tops = heights.copy()
        if look.has_ci and name != look.base:
            tops = self._error_bars(ax, look, sub, pos, tops)
        anchors = []
        for j in range(n_m):
            text = look.label(sub, j, vals[j], name) if np.isfinite(vals[j]) else ""
            if not text:
                continue
            anchors.append(tops[j])
            if look.horizontal:
                self.texts_.append(ax.annotate(
                    text, (tops[j], pos[j]), xytext=(3, 0), textcoords="offset points",
                    va="center", ha="left", fontsize=NOTE_SIZE, zorder=5))
                look.lines_needed = max(look.lines_needed, len(text))
            else:
                self.texts_.append(ax.annotate(
                    text, (pos[j], tops[j]), xytext=(0, 2), textcoords="offset points",
                    va="bottom", ha="center", fontsize=NOTE_SIZE if n_b > 2 else NOTE_SIZE + 1,
                    zorder=5, linespacing=1.1))
                look.lines_needed = max(look.lines_needed, text.count("\n") + 1)
        return anchors

    def _error_bars(self, ax: Axes, look: BarsLook, sub: pl.DataFrame, pos: Any,
                    tops: Any) -> Any:
        """The CI of the difference at ``baseline + [ci_low, ci_high]``; -> new tops."""
        lo = (sub.get_column("baseline_mean") + sub.get_column("ci_low")).to_numpy()
        hi = (sub.get_column("baseline_mean") + sub.get_column("ci_high")).to_numpy()
        ok = np.isfinite(lo) & np.isfinite(hi)
        if not ok.any():
            return tops
        mid, half = (lo + hi) / 2, (hi - lo) / 2
        err: dict[str, Any] = dict(fmt="none", ecolor="#333333", elinewidth=1.0, capsize=2.5,
                                   zorder=4)
        if look.horizontal:
            self.errorbars_.append(ax.errorbar(mid[ok], pos[ok], xerr=half[ok], **err))
        else:
            self.errorbars_.append(ax.errorbar(pos[ok], mid[ok], yerr=half[ok], **err))
        return np.where(ok, np.fmax(tops, np.nan_to_num(hi, nan=0.0)), tops)

    def _axis_labels(self, ax: Axes, look: BarsLook, top: float) -> None:
        ticks = np.arange(len(self.measures))
        if look.horizontal:
            ax.set_yticks(-ticks, self.measures)
            ax.set_xlabel("Mean over queries", fontsize=LABEL_SIZE)
            ax.set_xlim(0, top)
        else:
            ax.set_xticks(ticks, self.measures)
            ax.set_ylabel("Mean over queries", fontsize=LABEL_SIZE)
            ax.set_ylim(0, top)

    def _legend(self, ax: Axes, look: BarsLook) -> None:
        handles, labels = ax.get_legend_handles_labels()
        note = []
        if look.has_sig and self.frame.get_column("significant").fill_null(False).any():
            alpha = self.alpha
            note.append("* significant" + (f" (adjusted p ≤ {alpha:g})" if alpha else ""))
        if look.has_ci:
            note.append("error bar: CI of the difference")
        if look.dropped:
            note.append("values, Δ: see the table")
        short = display_names(self.runs)
        labels = [short.get(lb, lb) for lb in labels]
        if note:
            from matplotlib.patches import Patch

            for text in note:
                handles.append(Patch(visible=False))
                labels.append(text)
        place_legend(ax, handles, labels, inside=0)

    def _room_for_labels(self, ax: Axes, look: BarsLook, top: float, labelled: bool) -> None:
        """Axis limits leaving room for the labels, measured on the laid-out axes (the
        legend takes width); ticks at tenths of 0..1 for scores in [0, 1]."""
        fig: Any = ax.figure
        engine = fig.get_layout_engine()
        if engine is not None:
            engine.execute(fig)
        w_in, h_in = fig.get_size_inches()
        box = ax.get_position()
        shown = self.frame.get_column("value").drop_nulls()
        unit = shown.len() > 0 and shown.min() >= 0 and shown.max() <= 1 and top > 0.6  # type: ignore[operator]
        if look.horizontal:
            axes_pt = max(w_in * box.width * 72, 1.0)
            need = (look.lines_needed * 0.58 * NOTE_SIZE + 10) / axes_pt if labelled else 0.05
            ax.set_xlim(0, top / max(1 - need, 0.3))
            if unit:
                ax.set_xticks(np.linspace(0, 1, 6))
        else:
            axes_pt = max(h_in * box.height * 72, 1.0)
            need = (look.lines_needed * 1.25 * (NOTE_SIZE + 1) + 6) / axes_pt if labelled else 0.05
            ax.set_ylim(0, top / max(1 - need, 0.3))
            if unit:
                ax.set_yticks(np.linspace(0, 1, 6))


@old_spelling("benchmark_bars", *OLD_BARS)
def benchmark_bars(
    results: Any,
    *,
    baseline: str | None = None,
    measures: Sequence[str] | None = None,
    show_runs: Sequence[str] | None = None,
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
    measures, show_runs
        Measures (groups) and runs (bars, their names) to draw, in this order.
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
    _check_bars_options(orientation, value_labels, deltas, significance, ci, digits, pct_digits,
                        legend)  # first: before any work on the data
    if not is_comparison(results):
        results = as_frame(results, "results")
    compared = is_comparison(results) or {"baseline", "baseline_mean", "delta"} <= set(
        results.columns)
    make = BenchmarkBarsDisplay.from_comparison if compared else BenchmarkBarsDisplay.from_evaluation
    return make(results, baseline=baseline, measures=measures, runs=show_runs).plot(
        orientation=orientation, value_labels=value_labels, deltas=deltas,
        significance=significance, ci=ci, digits=digits, pct_digits=pct_digits, ax=ax,
        title=title, colors=colors, legend=legend).ax_
