"""Figures for "how many queries do I need?" (matplotlib, imported only when drawing).

* :func:`power_curve`: queries needed against the difference ``Δ`` to detect, one
  line per run pair, with the current number of queries and each pair's smallest
  detectable ``Δ`` marked (data: :func:`~searcheval_frames.power`;
  :class:`PowerCurveDisplay`);
* :func:`stability_curve`: Kendall's τ between the ranking on random query subsets
  and on all queries against the subset size, with a quantile band (data:
  :func:`~searcheval_frames.stability`; :class:`StabilityCurveDisplay`).

Both take ``ax=`` (else a new 6.4 x 4 inch figure), return the Axes and use the
Okabe-Ito palette. The Displays' ``from_*`` compute the data, ``plot`` draws it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from .._deprecation import old_spelling
from ..analysis.calling import per_query_of
from ..analysis.power import power as _power
from ..analysis.stability import Stability, quantile_name
from ..analysis.stability import stability as _stability
from ..errors import InvalidOptionError
from ..frames import to_polars
from ..options import EVAL_RULES, check_choice, check_float, check_int
from ._shared import OKABE_ITO, Display, house_style, run_colors
from .old_calls import OLD_POWER_CURVE, OLD_STABILITY_CURVE
from .style import display_names, fit_text, fit_title, place_legend

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = ["PowerCurveDisplay", "StabilityCurveDisplay", "power_curve", "stability_curve"]


def _one_measure(df: pl.DataFrame, func: str) -> str:
    measures = df.get_column("measure").unique(maintain_order=True).to_list()
    if len(measures) != 1:
        raise InvalidOptionError(
            f"{func}: the data hold {len(measures)} measures {measures}; pass measure= to "
            "draw one, e.g. measure='nDCG@10'")
    return measures[0]


def _delta_grid(base: pl.DataFrame, n_points: int) -> list[float]:
    """``n_points`` Δ from a quarter of the smallest detectable Δ to twice the largest
    (or the largest observed ``|Δ|``)."""
    det = base.get_column("detectable_delta").abs()
    obs = base.get_column("observed_delta").abs()
    lo = float(det.min()) / 4.0  # type: ignore[arg-type]
    hi = max(2.0 * float(det.max()), float(obs.max()))  # type: ignore[arg-type]
    if not np.isfinite(lo) or not lo > 0:
        raise InvalidOptionError("power_curve: no pair has a finite detectable Δ "
                                 "(every pair's differences have sd 0); pass deltas=")
    return np.linspace(lo, hi, n_points).tolist()


@dataclass
class PowerCurveDisplay(Display):
    """Queries needed per ``Δ`` for each run pair: the data of :func:`power_curve`.

    :meth:`plot` keeps ``ax_``, ``figure_``, ``lines_`` (one per pair), ``points_``
    (each pair's detectable Δ now) and ``now_lines_`` (the current numbers of queries).

    Attributes
    ----------
    frame
        The rows of :func:`~searcheval_frames.power` for one measure and a grid of
        ``delta``: ``run, baseline, delta, n_needed, n_queries, n_observed,
        detectable_delta, test, alpha, target_power ...``.
    measure
        The measure drawn.
    """

    frame: pl.DataFrame
    measure: str
    lines_: list[Any] = field(default_factory=list, init=False, repr=False)
    points_: list[Any] = field(default_factory=list, init=False, repr=False)
    now_lines_: list[Any] = field(default_factory=list, init=False, repr=False)

    @classmethod
    def from_power(cls, frame: Any, *, measure: str | None = None) -> PowerCurveDisplay:
        """From the frame :func:`~searcheval_frames.power` returned for a list of ``delta``."""
        df = to_polars(frame, "data")
        if measure is not None:
            df = df.filter(pl.col("measure") == measure)
            if df.height == 0:
                raise InvalidOptionError(f"power_curve(measure={measure!r}): not in the data")
        return cls(df, _one_measure(df, "power_curve"))

    @classmethod
    def from_per_query(cls, data: Any, baseline: str | Sequence[str] | None = None,
                       measure: str | None = None, deltas: Sequence[float] | None = None, *,
                       alpha: float = 0.05, power: float = 0.8, n_points: int = 40,
                       **power_options: Any) -> PowerCurveDisplay:
        """:func:`~searcheval_frames.power` of a per-query frame or Comparison over a grid
        of ``Δ`` (``deltas``, or ``n_points`` around the detectable ones)."""
        n_points = check_int("power_curve", "n_points", n_points, minimum=2,
                             example="n_points=40")
        if deltas is None:
            base = to_polars(_power(per_query=data, baseline=baseline, measure=measure,
                                    alpha=alpha, power=power, **power_options), "power")
            _one_measure(base, "power_curve")
            grid = _delta_grid(base, n_points)
        else:
            grid = [check_float("power_curve", "deltas", d, minimum=0, open_min=True,
                                example="deltas=[0.01, 0.02, 0.05]") for d in deltas]
        df = to_polars(_power(per_query=data, baseline=baseline, measure=measure, delta=grid,
                              alpha=alpha, power=power, **power_options), "power")
        return cls(df, _one_measure(df, "power_curve"))

    def plot(self, *, ax: Axes | None = None, title: str | None = None,
             colors: Mapping[str, str] | Sequence[str] | None = None,
             legend: bool = True) -> PowerCurveDisplay:
        """Draw the curves (options as for :func:`power_curve`); returns ``self``."""
        df = self.frame
        pairs = df.select("run", "baseline").unique(maintain_order=True).rows()
        names = [f"{r} vs {b}" for r, b in pairs]
        col = run_colors(names, colors)
        short = display_names(list(dict.fromkeys(x for p in pairs for x in p)))
        bases = {b for _, b in pairs}
        ax = self.start_plot(ax)
        house_style(ax)
        self.lines_, self.points_, self.now_lines_ = [], [], []
        labels = [self._draw_pair(ax, name, r, b, col[name],
                                  short[r] if len(bases) == 1 else f"{short[r]} vs {short[b]}")
                  for name, (r, b) in zip(names, pairs, strict=True)]
        for n in sorted(set(df.get_column("n_observed").to_list())):
            self.now_lines_.append(ax.axhline(n, color=OKABE_ITO["black"], linestyle="--",
                                              linewidth=1.0, label=f"now: {n} queries",
                                              zorder=2))
            labels.append(f"now: {n} queries")
        ax.set_yscale("log")
        ax.set_xlabel(f"Δ {self.measure} to detect (absolute)", fontsize=10)
        ax.set_ylabel("queries needed", fontsize=10)
        first = df.row(0, named=True)
        test = {"t": "paired t-test"}.get(first["test"], f"{first['test']} test")
        default = (f"Queries needed for {first['target_power']:.0%} power "
                   f"({test}, α = {first['alpha']:g})")
        if len(bases) == 1:
            default += f" vs {short[next(iter(bases))]}"
        text = default if title is None else title
        if text:
            ax.set_title(fit_text(ax, text, 11), fontsize=11)
        if legend:
            place_legend(ax, [*self.lines_, *self.now_lines_], labels, inside=3, size=8)
        fit_title(ax)
        return self

    def _draw_pair(self, ax: Axes, name: str, r: str, b: str, color: str, label: str) -> str:
        """One pair's curve and its detectable Δ now (a point on the curve, its value in
        the legend: notes beside the points overprinted each other); -> its legend label."""
        part = (self.frame.filter((pl.col("run") == r) & (pl.col("baseline") == b))
                .with_columns(pl.col("delta").abs()).sort("delta"))
        cur = part.filter(pl.col("n_needed").is_not_null())
        (line,) = ax.plot(cur.get_column("delta").to_numpy(),
                          cur.get_column("n_needed").to_numpy(),
                          color=color, linewidth=2.0, label=name, zorder=3)
        self.lines_.append(line)
        now = part.filter(pl.col("n_queries") == pl.col("n_observed")).row(0, named=True)
        if np.isfinite(now["detectable_delta"]):
            self.points_.append(ax.scatter(
                [abs(now["detectable_delta"])], [now["n_observed"]], color=color, s=36,
                zorder=4, edgecolors="white", linewidths=0.8))
            label += f": Δ ≥ {abs(now['detectable_delta']):.3g}"
        return label


@old_spelling("power_curve", *OLD_POWER_CURVE)
def power_curve(
    runs: Any = None,
    qrels: Any = None,
    measure: str | None = None,
    *,
    per_query: Any = None,
    result: Any = None,
    baseline: str | Sequence[str] | None = None,
    deltas: Sequence[float] | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    n_points: int = 40,
    ax: Axes | None = None,
    title: str | None = None,
    colors: Mapping[str, str] | Sequence[str] | None = None,
    legend: bool = True,
    **power_options: Any,
) -> Axes:
    """Queries needed to detect each ``Δ`` at the target power, one line per run pair.

    Parameters
    ----------
    runs, qrels, measure
        The runs, evaluated against the qrels on ``measure`` (the figure shows one)
        first; then :func:`~searcheval_frames.power` is run over a grid of ``Δ``.
    per_query
        Instead of runs and qrels: a per-query frame or
        :class:`~searcheval_frames.Comparison`.
    result
        Instead of both: the frame :func:`~searcheval_frames.power` returned for a list
        of ``delta`` (drawn as it is).
    baseline
        As for :func:`~searcheval_frames.power`.
    deltas
        The ``Δ`` grid (absolute); default ``n_points`` values from a quarter of the
        smallest detectable ``Δ`` to twice the largest (or the largest observed ``|Δ|``).
    alpha, power, **power_options
        Passed to :func:`~searcheval_frames.power` (``test=``, ``method=``, ``sd=`` ...;
        with runs, also the evaluation's ``relevance_level=`` ...).
    ax, title, colors, legend
        Axes to draw into; title (``""`` for none); colours; legend.

    Returns
    -------
    matplotlib.axes.Axes
        ``PowerCurveDisplay.from_per_query(...)`` (or ``.from_power(frame)``)
        ``.plot(...).ax_``. ``ax.lines``: one curve per pair (label ``"run vs
        baseline"``), then one horizontal line per distinct current number of queries;
        the detectable ``Δ`` of each pair at the current size is a point
        (``ax.collections``) on its curve's colour. Log-scaled y axis.

    Examples
    --------
    >>> import polars as pl, searcheval_frames as sef
    >>> pq = pl.DataFrame({"run": ["a"] * 5 + ["b"] * 5, "query_id": list("12345") * 2,
    ...                    "measure": "P@5", "value": [.2, .4, .4, .6, .2, .4, .4, .8, .8, .2]})
    >>> ax = sef.power_curve(per_query=pq, baseline="a")
    >>> [line.get_label() for line in ax.lines]
    ['b vs a', 'now: 5 queries']
    """
    check_int("power_curve", "n_points", n_points, minimum=2, example="n_points=40")
    if result is not None:
        display = PowerCurveDisplay.from_power(result, measure=measure)
    else:
        evaluation = {k: power_options.pop(k) for k in list(power_options)
                      if k in EVAL_RULES and k not in ("missing", "per_query")}
        data, columns = per_query_of("power_curve", runs, qrels, measure, per_query,
                                     columns=power_options.pop("columns", None),
                                     missing=power_options.get("missing", "zero"),
                                     evaluate_options=evaluation)
        power_options["columns"] = columns
        display = PowerCurveDisplay.from_per_query(data, baseline, measure, deltas, alpha=alpha,
                                                   power=power, n_points=n_points,
                                                   **power_options)
    return display.plot(ax=ax, title=title, colors=colors, legend=legend).ax_


def _check_band(band: Any) -> tuple[float, float] | None:
    fn = "stability_curve"
    if band is None:
        return None
    if not isinstance(band, Sequence) or len(band) != 2:
        raise InvalidOptionError(
            f"stability_curve(band={band!r}): give two quantiles, e.g. band=(0.05, 0.95), "
            "or band=None")
    return (check_float(fn, "band", band[0], minimum=0, maximum=1, example="band=(0.05, 0.95)"),
            check_float(fn, "band", band[1], minimum=0, maximum=1, example="band=(0.05, 0.95)"))


def _check_stability_options(statistic: Any, band: Any, threshold: Any
                             ) -> tuple[str, tuple[float, float] | None, float | None]:
    fn = "stability_curve"
    statistic = check_choice(fn, "statistic", statistic, ("mean", "median"))
    if threshold is not None:
        threshold = check_float(fn, "threshold", threshold, minimum=-1, maximum=1,
                                example="threshold=0.9")
    return statistic, _check_band(band), threshold


@dataclass
class StabilityCurveDisplay(Display):
    """Kendall's τ to the full ranking per subset size: the data of
    :func:`stability_curve`.

    :meth:`plot` keeps ``ax_``, ``figure_``, ``lines_`` (one per measure), ``bands_``
    (one per measure, when a band is drawn) and ``threshold_`` (or None).

    Attributes
    ----------
    frame
        The ``summary`` of :func:`~searcheval_frames.stability`: ``measure, size,
        n_samples, tau_mean, tau_median`` and quantile columns ``tau_q05 ...``.
    """

    frame: pl.DataFrame
    lines_: list[Any] = field(default_factory=list, init=False, repr=False)
    bands_: list[Any] = field(default_factory=list, init=False, repr=False)
    threshold_: Any = field(default=None, init=False, repr=False)

    @classmethod
    def from_stability(cls, result: Any, *,
                       measure: str | Sequence[str] | None = None) -> StabilityCurveDisplay:
        """From a :class:`~searcheval_frames.analysis.stability.Stability` or its
        ``summary`` frame."""
        summary = result.summary if isinstance(result, Stability) else result
        df = to_polars(summary, "data")
        if measure is not None:
            keep = [measure] if isinstance(measure, str) else list(measure)
            df = df.filter(pl.col("measure").is_in(keep))
            if df.height == 0:
                raise InvalidOptionError(f"stability_curve(measure={measure!r}): not in the data")
        return cls(df)

    @classmethod
    def from_per_query(cls, data: Any, measure: str | Sequence[str] | None = None,
                       sizes: Sequence[int] | None = None, *, n_samples: int = 1000,
                       seed: int | None = 0,
                       band: tuple[float, float] | None = (0.05, 0.95)) -> StabilityCurveDisplay:
        """:func:`~searcheval_frames.stability` of a per-query frame or Comparison, with
        the quartiles and the ``band`` quantiles (default: 0.05 and 0.95)."""
        band = _check_band(band)
        qs = (0.05, 0.25, 0.75, 0.95) if band is None else tuple(sorted({0.25, 0.75, *band}))
        return cls(to_polars(_stability(per_query=data, measure=measure, sizes=sizes,
                                        n_samples=n_samples, seed=seed, quantiles=qs).summary,
                             "stability"))

    def plot(self, *, statistic: str = "mean",
             band: tuple[float, float] | None = (0.05, 0.95), threshold: float | None = 0.9,
             ax: Axes | None = None, title: str | None = None,
             colors: Mapping[str, str] | Sequence[str] | None = None,
             legend: bool = True) -> StabilityCurveDisplay:
        """Draw the curves (options as for :func:`stability_curve`); returns ``self``."""
        statistic, band, threshold = _check_stability_options(statistic, band, threshold)
        df = self.frame
        cols: tuple[str, str] | None = None
        if band is not None:
            cols = (quantile_name(band[0]), quantile_name(band[1]))
            if not set(cols) <= set(df.columns):
                raise InvalidOptionError(
                    f"stability_curve(band={band!r}): the data have no {cols} columns; "
                    "compute stability(..., quantiles=[...]) with those quantiles or pass "
                    "band=None")
        measures = df.get_column("measure").unique(maintain_order=True).to_list()
        col = run_colors(measures, colors)
        ax = self.start_plot(ax)
        house_style(ax)
        self.lines_, self.bands_, self.threshold_ = [], [], None
        for m in measures:
            part = df.filter(pl.col("measure") == m).sort("size")
            x = part.get_column("size").to_numpy()
            self.lines_ += ax.plot(x, part.get_column(f"tau_{statistic}").to_numpy(),
                                   color=col[m], linewidth=2.0, marker="o", markersize=3.5,
                                   label=m, zorder=3)
            if cols is not None:
                self.bands_.append(ax.fill_between(
                    x, part.get_column(cols[0]).to_numpy(), part.get_column(cols[1]).to_numpy(),
                    color=col[m], alpha=0.18, linewidth=0, zorder=2))
        if threshold is not None:
            self.threshold_ = ax.axhline(threshold, color=OKABE_ITO["black"], linestyle="--",
                                         linewidth=1.0, label=f"τ = {threshold:g}", zorder=1)
        low = float(df.get_column(cols[0] if cols else f"tau_{statistic}").min())  # type: ignore[arg-type]
        ax.set_ylim(min(0.0, low - 0.05), 1.02)
        ax.set_xlabel("queries in the subset", fontsize=10)
        ax.set_ylabel("Kendall's τ to the full ranking", fontsize=10)
        n_s = int(df.get_column("n_samples")[0])
        default = f"Ranking stability ({statistic} τ over {n_s:,} random subsets"
        default += f", {band[0]:.0%}–{band[1]:.0%} band)" if band else ")"
        text = default if title is None else title
        if text:
            ax.set_title(fit_text(ax, text, 11), fontsize=11)
        if legend:
            handles, labels = ax.get_legend_handles_labels()
            place_legend(ax, handles, labels, inside=5, size=8)
        fit_title(ax)
        return self


@old_spelling("stability_curve", *OLD_STABILITY_CURVE)
def stability_curve(
    runs: Any = None,
    qrels: Any = None,
    measure: str | Sequence[str] | None = None,
    *,
    per_query: Any = None,
    result: Any = None,
    sizes: Sequence[int] | None = None,
    statistic: str = "mean",
    band: tuple[float, float] | None = (0.05, 0.95),
    threshold: float | None = 0.9,
    n_samples: int = 1000,
    seed: int | None = 0,
    ax: Axes | None = None,
    title: str | None = None,
    colors: Mapping[str, str] | Sequence[str] | None = None,
    legend: bool = True,
    **evaluate_options: Any,
) -> Axes:
    """Kendall's τ to the full ranking against the number of queries, with a band.

    Parameters
    ----------
    runs, qrels, measure
        The runs, evaluated against the qrels on ``measure`` first
        (``**evaluate_options``: ``relevance_level=2`` ...); then
        :func:`~searcheval_frames.stability` is run with ``sizes``, ``n_samples``,
        ``seed``.
    per_query
        Instead of runs and qrels: a per-query frame or Comparison.
    result
        Instead of both: a :class:`Stability`, or its ``summary`` frame.
    statistic
        ``"mean"`` or ``"median"`` τ for the line.
    band
        Quantiles of τ shaded around the line (must be among the computed quantiles;
        defaults 0.05 and 0.95), or ``None``.
    threshold
        Draw a dashed reference line at this τ (0.9: Voorhees' "equivalent rankings"),
        or ``None``.
    ax, title, colors, legend
        As in the other figures.

    Returns
    -------
    matplotlib.axes.Axes
        ``StabilityCurveDisplay.from_per_query(...)`` (or ``.from_stability(result)``)
        ``.plot(...).ax_``. ``ax.lines``: one line per measure (label = measure), then
        the threshold line; one shaded band (``ax.collections``) per measure.

    Examples
    --------
    >>> import polars as pl, searcheval_frames as sef
    >>> pq = pl.DataFrame({"run": ["a"] * 6 + ["b"] * 6 + ["c"] * 6,
    ...                    "query_id": list("123456") * 3, "measure": "P@5",
    ...                    "value": [.2, .4, .4, .6, .2, .4, .4, .4, .8, .8, .2, .6,
    ...                              .6, .2, .8, .4, .4, .2]})
    >>> ax = sef.stability_curve(per_query=pq, n_samples=200)
    >>> [line.get_label() for line in ax.lines]
    ['P@5', 'τ = 0.9']
    """
    statistic, band, threshold = _check_stability_options(statistic, band, threshold)
    if result is not None:
        display = StabilityCurveDisplay.from_stability(result, measure=measure)
    else:
        data, _ = per_query_of("stability_curve", runs, qrels, measure, per_query,
                               evaluate_options=evaluate_options)
        display = StabilityCurveDisplay.from_per_query(data, measure, sizes, n_samples=n_samples,
                                                       seed=seed, band=band)
    return display.plot(statistic=statistic, band=band, threshold=threshold, ax=ax,
                        title=title, colors=colors, legend=legend).ax_
