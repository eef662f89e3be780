"""Per-query figures: the per-query change of one run against a baseline, and the
distribution of a measure over queries per run.

Each is a Display (:class:`PerQueryDeltaDisplay`, :class:`MetricDistributionDisplay`):
``from_per_query`` takes the frame of ``evaluate(..., per_query=True)``,
``from_comparison`` a :func:`~searcheval_frames.compare` result (its paired per-query
scores); ``plot`` draws and keeps the artists. :func:`per_query_delta` and
:func:`metric_distribution` are both steps in one call.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import polars as pl

from .._deprecation import old_spelling, outside_stacklevel
from ..analysis.calling import per_query_of
from ..errors import EmptyInputError, InvalidOptionError, SearchEvalWarning
from ..frames.display import shorten
from ._shared import (
    LABEL_SIZE,
    LOSS,
    NOTE_SIZE,
    TICK_SIZE,
    TIE,
    WIN,
    Display,
    as_frame,
    figure_of,
    fmt_signed,
    house_style,
    is_comparison,
    need_columns,
    run_colors,
    select_runs,
    set_title,
)
from .checks import check_bool, check_bool_or_none, check_choice, check_int
from .old_calls import OLD_DELTA, OLD_DISTRIBUTION
from .style import display_names, fit_title

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = ["MetricDistributionDisplay", "PerQueryDeltaDisplay", "metric_distribution",
           "per_query_delta"]


_PQ = ("run", "query_id", "measure", "value")
#: per_query_delta draws one bar per query up to this many queries, filled areas beyond
BARS_UP_TO = 500
_TOL = 1e-9


def _per_query(obj: Any, columns: Mapping[str, str] | None, arg: str) -> pl.DataFrame:
    df = as_frame(obj, arg)
    if columns:
        df = df.rename({v: k for k, v in columns.items() if v in df.columns and k in _PQ})
    need_columns(df, list(_PQ), arg,
                 "Pass evaluate(..., per_query=True) (run, query_id, measure, value), or map "
                 "your columns with columns={'value': 'your_column'}.")
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
            raise InvalidOptionError(f"{what}={given!r} is not in {arg}; choose one of {choices}")
        return given
    if len(choices) != 1:
        raise InvalidOptionError(f"{arg} has several {what}s {choices}; pick one with {what}=...")
    return choices[0]


def _paired_deltas(sub: pl.DataFrame, other: str, base: str) -> pl.DataFrame:
    """``query_id, value, baseline_value, delta`` of one measure, sorted by Δ (largest
    first); a query missing from one run scores 0 there, with a warning."""
    a = sub.filter(pl.col("run") == other).select("query_id", pl.col("value"))
    b = sub.filter(pl.col("run") == base).select("query_id",
                                                 pl.col("value").alias("baseline_value"))
    both = a.join(b, on="query_id", how="full", coalesce=True)
    gaps = both.filter(pl.col("value").is_null() | pl.col("baseline_value").is_null())
    if gaps.height:
        ids = gaps.get_column("query_id").sort().to_list()
        warnings.warn(
            f"per_query_delta: {len(ids)} query id(s) are in only one of {other!r} and "
            f"{base!r}; the missing score counts 0 (as trec_eval -c): "
            f"{', '.join(repr(i) for i in ids[:5])}{' ...' if len(ids) > 5 else ''}",
            SearchEvalWarning,
            stacklevel=outside_stacklevel(),
        )
    return (
        both.with_columns(pl.col("value", "baseline_value").fill_null(0.0))
        .with_columns((pl.col("value") - pl.col("baseline_value")).alias("delta"))
        .sort(["delta", "query_id"], descending=[True, False])
    )


def _check_delta_options(annotate: Any, query_labels: Any) -> None:
    check_int("per_query_delta", "annotate", annotate, minimum=0,
              what="queries labelled at each end", example="annotate=5")
    check_bool_or_none("per_query_delta", "query_labels", query_labels)


def _check_distribution_options(kind: Any, show_means: Any, seed: Any) -> None:
    check_choice("metric_distribution", "kind", kind, ("box", "strip", "both"),
                 example="kind='box'")
    check_bool("metric_distribution", "show_means", show_means)
    check_int("metric_distribution", "seed", seed, minimum=0, example="seed=0")


@dataclass
class PerQueryDeltaDisplay(Display):
    """Per-query differences of one run against a baseline: the data of
    :func:`per_query_delta`.

    :meth:`plot` keeps ``ax_``, ``figure_``, ``bars_`` (one bar per query, or None past
    :data:`BARS_UP_TO` queries, when ``fills_`` holds the win and loss areas) and
    ``summary_`` (the "wins · ties · losses" text).

    Attributes
    ----------
    frame
        ``query_id, value, baseline_value, delta`` sorted by ``delta`` (largest first),
        then query id.
    run, baseline, measure
        What is compared.
    """

    frame: pl.DataFrame
    run: str
    baseline: str
    measure: str
    bars_: Any = field(default=None, init=False, repr=False)
    fills_: list[Any] = field(default_factory=list, init=False, repr=False)
    summary_: Any = field(default=None, init=False, repr=False)

    @classmethod
    def from_per_query(cls, per_query: Any, *, baseline: str | None = None,
                       run: str | None = None, measure: str | None = None,
                       columns: Mapping[str, str] | None = None) -> PerQueryDeltaDisplay:
        """From ``evaluate(..., per_query=True)`` (options as for :func:`per_query_delta`)."""
        df = _per_query(per_query, columns, "per_query")
        return cls._make(df, baseline, run, measure)

    @classmethod
    def from_comparison(cls, comparison: Any, *, baseline: str | None = None,
                        run: str | None = None, measure: str | None = None,
                        columns: Mapping[str, str] | None = None) -> PerQueryDeltaDisplay:
        """From a comparison's paired per-query scores (default baseline: its first)."""
        df = _per_query(comparison.per_query, columns, "per_query")
        if baseline is None and getattr(comparison, "baselines", None):
            baseline = comparison.baselines[0]
        return cls._make(df, baseline, run, measure)

    @classmethod
    def _make(cls, df: pl.DataFrame, baseline: str | None, run: str | None,
              measure: str | None) -> PerQueryDeltaDisplay:
        all_runs = df.get_column("run").unique(maintain_order=True).to_list()
        base = baseline if baseline is not None else all_runs[0]
        if base not in all_runs:
            raise InvalidOptionError(
                f"baseline={base!r} is not a run of per_query; runs: {all_runs}")
        other = _one([r for r in all_runs if r != base], run, "run", "per_query")
        meas = _one(df.get_column("measure").unique(maintain_order=True).to_list(), measure,
                    "measure", "per_query")
        frame = _paired_deltas(df.filter(pl.col("measure") == meas), other, base)
        return cls(frame, other, base, meas)

    def plot(self, *, annotate: int = 3, query_labels: bool | None = None,
             ax: Axes | None = None, title: str | None = None) -> PerQueryDeltaDisplay:
        """Draw the sorted differences (options as for :func:`per_query_delta`)."""
        _check_delta_options(annotate, query_labels)
        delta = self.frame.get_column("delta").to_numpy()
        qids = self.frame.get_column("query_id").to_list()
        ax = self.start_plot(ax)
        house_style(ax, grid="y")
        self._draw_deltas(ax, delta)
        ax.axhline(0.0, color="#333333", linewidth=0.8, zorder=4)
        wins, losses = int((delta > _TOL).sum()), int((delta < -_TOL).sum())
        span = float(np.abs(delta).max()) if len(delta) else 0.0
        span = span if span > 0 else 1.0
        ax.set_ylim(-span * 1.3, span * 1.3)
        ax.set_xlim(-0.7, len(delta) - 0.3)
        self.summary_ = ax.text(
            0.99, 0.98,
            f"wins {wins} · ties {len(delta) - wins - losses} · losses {losses}\n"
            f"mean Δ {fmt_signed(float(delta.mean()), 3)}",
            transform=ax.transAxes, ha="right", va="top", fontsize=NOTE_SIZE + 1,
            bbox=dict(boxstyle="round,pad=0.3", facecolor="white", edgecolor="#cccccc",
                      alpha=0.9),
            zorder=6,
        )
        if annotate:
            _name_extremes(ax, qids, delta, annotate, wins, losses)
        if query_labels if query_labels is not None else len(delta) <= 40:
            ax.set_xticks(np.arange(len(delta)), [shorten(q, 14) for q in qids], rotation=90,
                          fontsize=NOTE_SIZE - 1)
            ax.set_xlabel("query (sorted by Δ)", fontsize=LABEL_SIZE)
        else:
            ax.set_xticks([])
            ax.set_xlabel(f"{len(delta)} queries, sorted by Δ", fontsize=LABEL_SIZE)
        ax.set_ylabel(f"Δ {self.measure}", fontsize=LABEL_SIZE)
        short = display_names([self.baseline, self.run])
        set_title(ax, title,
                  f"{self.measure}: {short[self.run]} − {short[self.baseline]}, per query")
        fit_title(ax)
        return self

    def _draw_deltas(self, ax: Axes, delta: Any) -> None:
        """A bar per query (blue win, vermillion loss, grey tie); past BARS_UP_TO queries
        the win and loss areas (thousands of bars draw slowly and read as an area)."""
        self.bars_, self.fills_ = None, []
        if len(delta) <= BARS_UP_TO:
            colors = np.where(delta > _TOL, WIN, np.where(delta < -_TOL, LOSS, TIE))
            self.bars_ = ax.bar(np.arange(len(delta)), delta, width=0.8, color=list(colors),
                                zorder=3, label="_nolegend_")
            return
        edges = np.repeat(np.arange(len(delta) + 1) - 0.5, 2)[1:-1]
        steps = np.repeat(delta, 2)
        for keep, color in ((steps > _TOL, WIN), (steps < -_TOL, LOSS)):
            self.fills_.append(ax.fill_between(
                edges, 0.0, np.where(keep, steps, 0.0), color=color, linewidth=0, zorder=3,
                label="_nolegend_"))


@old_spelling("per_query_delta", *OLD_DELTA)
def per_query_delta(
    runs: Any = None,
    qrels: Any = None,
    measure: str | None = None,
    *,
    per_query: Any = None,
    baseline: str | None = None,
    run: str | None = None,
    annotate: int = 3,
    query_labels: bool | None = None,
    columns: Mapping[str, str] | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    **evaluate_options: Any,
) -> Axes:
    """Per-query differences against a baseline, sorted: wins above, losses below.

    Parameters
    ----------
    runs, qrels, measure
        The runs, evaluated against the qrels on ``measure`` first
        (``**evaluate_options``: ``relevance_level=2`` ...); with ``per_query=``, the
        measure to draw (default: the only one in the frame).
    per_query
        Instead of runs and qrels: ``evaluate(..., per_query=True)`` (``run, query_id,
        measure, value``) or a comparison from :func:`~searcheval_frames.compare` (its
        paired per-query scores are used).
    baseline
        Reference run (default: the comparison's baseline, or the first run).
    run
        Run compared to the baseline (default: the only other run).
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
        ``PerQueryDeltaDisplay.from_per_query(...).plot(...).ax_``: one bar per query in ``ax.containers[0]`` (blue = win, vermillion =
        loss, grey = tie), a summary "wins / ties / losses" in ``ax.texts``.
        A query missing from one of the two runs scores 0 there (warned).

    Examples
    --------
    >>> import polars as pl, searcheval_frames as sef
    >>> pq = pl.DataFrame({"run": ["a"] * 3 + ["b"] * 3, "query_id": ["1", "2", "3"] * 2,
    ...                    "measure": "AP", "value": [0.2, 0.5, 0.4, 0.6, 0.3, 0.4]})
    >>> ax = sef.per_query_delta(per_query=pq, baseline="a")
    >>> [float(round(b.get_height(), 2)) for b in ax.containers[0]]
    [0.4, 0.0, -0.2]
    """
    _check_delta_options(annotate, query_labels)  # first: before any work on the data
    per_query, columns = per_query_of("per_query_delta", runs, qrels, measure, per_query,
                                      columns=columns, evaluate_options=evaluate_options)
    make = (PerQueryDeltaDisplay.from_comparison if is_comparison(per_query)
            and hasattr(per_query, "per_query") else PerQueryDeltaDisplay.from_per_query)
    display = make(per_query, baseline=baseline, run=run, measure=measure, columns=columns)
    return display.plot(annotate=annotate, query_labels=query_labels, ax=ax, title=title).ax_


def _name_extremes(ax: Any, qids: list[str], delta: Any, n: int, wins: int,
                   losses: int) -> None:
    """The ``n`` biggest wins and losses named in two notes, wins in the empty lower left
    (bars there go up), losses in the empty upper right under the summary: one label per
    bar overprinted its neighbours once bars were closer than a line of text."""
    for rows, loc, head in (
        ([i for i in range(min(n, wins))], (0.01, 0.02), "biggest wins"),
        ([len(delta) - 1 - i for i in range(min(n, losses))], (0.99, 0.98), "biggest losses"),
    ):
        if not rows:
            continue
        lines = [f"{shorten(qids[i], 26)}  {fmt_signed(float(delta[i]), 2)}" for i in rows]
        left = loc[0] < 0.5
        ax.annotate("\n".join([head, *lines]), loc, xycoords="axes fraction",
                    xytext=(0, 0) if left else (0, -4.2 * (NOTE_SIZE + 1)),
                    textcoords="offset points",
                    ha="left" if left else "right", va="bottom" if left else "top",
                    fontsize=NOTE_SIZE - 1, color=WIN if left else LOSS, zorder=6,
                    linespacing=1.15, bbox=dict(boxstyle="round,pad=0.25", facecolor="white",
                                                edgecolor="none", alpha=0.85))


# --------------------------------------------------------------------------- distribution
@dataclass
class MetricDistributionDisplay(Display):
    """One measure's per-query values per run: the data of :func:`metric_distribution`.

    :meth:`plot` keeps ``ax_``, ``figure_``, ``boxes_`` (matplotlib's boxplot dict, or
    None), ``strips_`` (one PathCollection per run) and ``means_`` (or None).

    Attributes
    ----------
    frame
        ``run, query_id, value`` of ``measure``.
    measure
        The measure drawn.
    runs
        Runs drawn, in this order.
    color_order
        Every run of the data, in input order: run ``i`` of it gets colour ``i``.
    """

    frame: pl.DataFrame
    measure: str
    runs: list[str]
    color_order: list[str]
    boxes_: Any = field(default=None, init=False, repr=False)
    strips_: list[Any] = field(default_factory=list, init=False, repr=False)
    means_: Any = field(default=None, init=False, repr=False)

    @classmethod
    def from_per_query(cls, per_query: Any, *, measure: str | None = None,
                       runs: Sequence[str] | None = None,
                       columns: Mapping[str, str] | None = None) -> MetricDistributionDisplay:
        """From ``evaluate(..., per_query=True)`` (options as for
        :func:`metric_distribution`)."""
        df = _per_query(per_query, columns, "per_query")
        meas = _one(df.get_column("measure").unique(maintain_order=True).to_list(), measure,
                    "measure", "per_query")
        sub = df.filter(pl.col("measure") == meas).select("run", "query_id", "value")
        names = select_runs(sub, runs, "per_query")
        return cls(sub, meas, names, sub.get_column("run").unique(maintain_order=True).to_list())

    @classmethod
    def from_comparison(cls, comparison: Any, *, measure: str | None = None,
                        runs: Sequence[str] | None = None,
                        columns: Mapping[str, str] | None = None) -> MetricDistributionDisplay:
        """From a comparison's per-query scores."""
        return cls.from_per_query(comparison.per_query, measure=measure, runs=runs,
                                  columns=columns)

    def plot(self, *, kind: Literal["box", "strip", "both"] = "both", show_means: bool = True,
             seed: int = 0, ax: Axes | None = None, title: str | None = None,
             colors: Mapping[str, str] | Sequence[str] | None = None,
             ) -> MetricDistributionDisplay:
        """Draw boxes and/or strips (options as for :func:`metric_distribution`)."""
        _check_distribution_options(kind, show_means, seed)
        names = self.runs
        col = run_colors(self.color_order, colors)
        data = [self.frame.filter(pl.col("run") == n).get_column("value").to_numpy()
                for n in names]
        ax = self.start_plot(ax)
        house_style(ax, grid="y")
        pos = np.arange(1, len(names) + 1)
        self.boxes_, self.strips_, self.means_ = None, [], None
        if kind in ("box", "both"):
            self.boxes_ = _boxes(ax, data, pos, kind, [col[n] for n in names])
        if kind in ("strip", "both"):
            rng = np.random.default_rng(seed)
            for p, n, vals in zip(pos, names, data, strict=True):
                jitter = rng.uniform(-0.17, 0.17, size=len(vals))
                self.strips_.append(ax.scatter(p + jitter, vals, s=12, color=col[n], alpha=0.75,
                                               edgecolors="none", zorder=3, label=n))
        if show_means:
            self.means_ = ax.scatter(
                pos, [float(v.mean()) if len(v) else np.nan for v in data], marker="D", s=30,
                color="white", edgecolors="#111111", linewidths=1.0, zorder=5, label="mean")
        short = display_names(names)
        ticks = [short[n] for n in names]
        # names longer than the space between boxes stand upright (a slanted label's box
        # still spans its neighbours')
        room = figure_of(ax).get_figwidth() * 72 * 0.8 / max(len(names), 1)
        upright = max(len(t) for t in ticks) * 0.6 * TICK_SIZE > room
        ax.set_xticks(pos, ticks, rotation=90 if upright else 0, ha="center")
        values = self.frame.get_column("value")
        if values.min() >= 0 and values.max() <= 1:  # type: ignore[operator]
            ax.set_ylim(-0.03, 1.03)
        ax.set_xlim(0.4, len(names) + 0.6)
        ax.set_ylabel(self.measure, fontsize=LABEL_SIZE)
        n_q = self.frame.get_column("query_id").n_unique()
        set_title(ax, title, f"{self.measure} per query ({n_q} queries)")
        fit_title(ax)
        return self


def _boxes(ax: Axes, data: list[Any], pos: Any, kind: str, colours: list[str]) -> Any:
    """Box plots (median, quartiles, whiskers at 1.5 IQR) filled in the runs' colours."""
    box = ax.boxplot(
        data, positions=pos, widths=0.55, patch_artist=True, showfliers=kind == "box",
        medianprops=dict(color="#222222", linewidth=1.5),
        whiskerprops=dict(color="#555555"), capprops=dict(color="#555555"),
        flierprops=dict(marker="o", markersize=3, markerfacecolor="#777777",
                        markeredgecolor="none"),
        zorder=2,
    )
    for patch, c in zip(box["boxes"], colours, strict=True):
        patch.set_facecolor(c)
        patch.set_alpha(0.35 if kind == "both" else 0.7)
        patch.set_edgecolor("#444444")
    return box


@old_spelling("metric_distribution", *OLD_DISTRIBUTION)
def metric_distribution(
    runs: Any = None,
    qrels: Any = None,
    measure: str | None = None,
    *,
    per_query: Any = None,
    show_runs: Sequence[str] | None = None,
    kind: Literal["box", "strip", "both"] = "both",
    show_means: bool = True,
    seed: int = 0,
    columns: Mapping[str, str] | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    colors: Mapping[str, str] | Sequence[str] | None = None,
    **evaluate_options: Any,
) -> Axes:
    """Per-query distribution of one measure for each run (box, strip, or both).

    Parameters
    ----------
    runs, qrels, measure
        The runs, evaluated against the qrels on ``measure`` first
        (``**evaluate_options``: ``relevance_level=2`` ...); with ``per_query=``, the
        measure to draw (default: the only one in the frame).
    per_query
        Instead of runs and qrels: ``evaluate(..., per_query=True)`` or a comparison
        (its per-query scores).
    show_runs
        Runs to draw (their names), in this order.
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
        ``MetricDistributionDisplay.from_per_query(...).plot(...).ax_``: x tick labels are the runs; strips are one ``PathCollection`` per run
        (label = run name), means one more (label ``"mean"``).

    Examples
    --------
    >>> import polars as pl, searcheval_frames as sef
    >>> pq = pl.DataFrame({"run": ["a"] * 3 + ["b"] * 3, "query_id": ["1", "2", "3"] * 2,
    ...                    "measure": "AP", "value": [0.2, 0.5, 0.4, 0.6, 0.3, 0.4]})
    >>> ax = sef.metric_distribution(per_query=pq)
    >>> [t.get_text() for t in ax.get_xticklabels()]
    ['a', 'b']
    """
    _check_distribution_options(kind, show_means, seed)  # first: before any work on the data
    per_query, columns = per_query_of("metric_distribution", runs, qrels, measure, per_query,
                                      columns=columns, evaluate_options=evaluate_options)
    make = (MetricDistributionDisplay.from_comparison if is_comparison(per_query)
            and hasattr(per_query, "per_query") else MetricDistributionDisplay.from_per_query)
    display = make(per_query, measure=measure, runs=show_runs, columns=columns)
    return display.plot(kind=kind, show_means=show_means, seed=seed, ax=ax, title=title,
                        colors=colors).ax_
