"""Figures of structured comparisons (issue #35): seeds, datasets, variance components.

* :class:`ReplicateStripDisplay` (:func:`replicate_strip`): per system a thick line at
  its mean over seeds and each seed's mean as a dot beside it: how far one seed is
  from another next to how far the systems are apart (a line, not a bar: a bar needs a
  zero baseline, and on that scale the seeds' spread would not show);
* :class:`DatasetForestDisplay` (:func:`dataset_forest`): Δ against the baseline per
  dataset with its (Holm-matched) interval, filled when "reliably" different, and the
  aggregate over datasets at the bottom (the macro mean's two-stage bootstrap, or the
  mixed model's Δ for the rank aggregates, whose units differ);
* :class:`VarianceComponentsDisplay` (:func:`variance_plot`): the share of each
  variance component as a horizontal bar.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from ..errors import InvalidOptionError
from ._shared import (
    LABEL_SIZE,
    LOSS,
    PALETTE,
    TIE,
    WIN,
    Display,
    fit_text,
    house_style,
    set_title,
)
from .style import display_names, fit_title

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = ["DatasetForestDisplay", "ReplicateStripDisplay", "VarianceComponentsDisplay",
           "dataset_forest", "replicate_strip", "variance_plot"]


def _ticks(n: int) -> Any:
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(n)


def _measure(frame: pl.DataFrame, measure: str | None, func: str) -> str:
    measures = frame["measure"].unique(maintain_order=True).to_list()
    if measure is None:
        return str(measures[0])
    if measure not in measures:
        raise InvalidOptionError(f"{func}(measure={measure!r}): not in the result; choose "
                                 f"one of {measures}. Example: measure={measures[0]!r}")
    return measure


def _table(result: Any, name: str, func: str) -> pl.DataFrame:
    if not hasattr(result, "to_polars"):
        raise InvalidOptionError(f"{func}(result={type(result).__name__}): pass the result of "
                                 "sef.compare_replicates / compare_datasets / "
                                 "variance_components")
    return result.to_polars(name)


# --------------------------------------------------------------------------- replicates
@dataclass
class ReplicateStripDisplay(Display):
    """Each system's mean over seeds (a line) and each seed's mean (dots).

    Attributes
    ----------
    frame
        ``run, replicate, mean`` of one measure, runs in the comparison's order.
    """

    frame: pl.DataFrame
    measure: str
    bars_: list[Any] = field(default_factory=list, init=False, repr=False)
    dots_: list[Any] = field(default_factory=list, init=False, repr=False)

    @classmethod
    def from_comparison(cls, result: Any, measure: str | None = None) -> ReplicateStripDisplay:
        """From :func:`~searcheval_frames.compare_replicates`'s result."""
        reps = _table(result, "replicates", "replicate_strip")
        m = _measure(reps, measure, "replicate_strip")
        return cls(reps.filter(pl.col("measure") == m).select("run", "replicate", "mean"), m)

    def plot(self, *, ax: Axes | None = None, title: str | None = None) -> ReplicateStripDisplay:
        """Draw a row per system: the mean line and the seed dots; returns ``self``."""
        runs = self.frame["run"].unique(maintain_order=True).to_list()
        ax = self.start_plot(ax, (6.4, max(2.4, 0.4 * len(runs) + 1.6)))
        house_style(ax, grid="x")
        names = display_names(runs)
        self.bars_, self.dots_ = [], []
        n = len(runs)
        for i, run in enumerate(runs):
            y = n - 1 - i
            vals = self.frame.filter(pl.col("run") == run)["mean"].to_numpy()
            colour = PALETTE[i % len(PALETTE)]
            # the mean over seeds as a short thick line: a bar would need a zero baseline,
            # and on that scale the seeds' spread would not show
            self.bars_.append(ax.vlines(vals.mean(), y - 0.3, y + 0.3, color=colour, lw=4,
                                        alpha=0.6))
            offsets = np.linspace(-0.15, 0.15, vals.size) if vals.size > 1 else np.zeros(1)
            self.dots_ += ax.plot(vals, y + offsets, "o", color=colour, ms=5, mec="black",
                                  mew=0.5)
        ax.set_yticks(range(n - 1, -1, -1), [names[r] for r in runs])
        ax.set_ylim(-0.7, n - 0.3)
        ax.xaxis.set_major_locator(_ticks(4))
        ax.set_xlabel(fit_text(ax, f"mean {self.measure} (line: over seeds; dots: each seed)",
                               LABEL_SIZE))
        set_title(ax, title, f"{self.measure}: systems and their seeds")
        fit_title(ax)
        return self


def replicate_strip(result: Any, measure: str | None = None, *, ax: Axes | None = None,
                    title: str | None = None) -> Axes:
    """Each system's mean over seeds (a thick line) with each seed's mean as a dot.

    Examples
    --------
    >>> import numpy as np, polars as pl, searcheval_frames as sef
    >>> rows = [{"run": s, "seed": str(r), "query_id": f"q{q}", "measure": "P@5",
    ...          "value": 0.1 * q + 0.05 * r + (0.1 if s == "b" else 0.0)}
    ...         for s in ("a", "b") for r in range(3) for q in range(5)]
    >>> res = sef.compare_replicates(per_query=pl.DataFrame(rows), baseline="a",
    ...                              replicate="seed", method="bootstrap", n_resamples=200)
    >>> ax = sef.replicate_strip(res)
    >>> len(ax.get_lines()), [t.get_text() for t in ax.get_yticklabels()]
    (2, ['a', 'b'])
    """
    return ReplicateStripDisplay.from_comparison(result, measure).plot(ax=ax, title=title).ax_


# --------------------------------------------------------------------------- datasets
@dataclass
class DatasetForestDisplay(Display):
    """Δ per dataset with its interval, and the aggregate row at the bottom.

    Attributes
    ----------
    frame
        ``label, run, delta, ci_low, ci_high, reliable, n_queries``, datasets first,
        the aggregate last (``n_queries`` null there).
    """

    frame: pl.DataFrame
    measure: str
    baseline: str
    intervals_: list[Any] = field(default_factory=list, init=False, repr=False)
    points_: list[Any] = field(default_factory=list, init=False, repr=False)

    @classmethod
    def from_comparison(cls, result: Any, measure: str | None = None) -> DatasetForestDisplay:
        """From :func:`~searcheval_frames.compare_datasets`'s result."""
        per = _table(result, "frame", "dataset_forest")
        m = _measure(per, measure, "dataset_forest")
        dataset = per.columns[0]
        rows = per.filter(pl.col("measure") == m).select(
            pl.col(dataset).cast(pl.String).alias("label"), "run", "delta", "ci_low",
            "ci_high", pl.col("verdict").str.starts_with("reliably").alias("reliable"),
            pl.col("n_queries").cast(pl.Int64))
        how = result.info.get("aggregate", "macro")
        tail = result.to_polars("aggregate") if how == "macro" else (
            result.to_polars("mixed") if "mixed" in result._tables else None)
        if tail is not None:
            label = "macro mean (bootstrap)" if how == "macro" else "all (mixed model)"
            rows = pl.concat([rows, tail.filter(pl.col("measure") == m,
                                                pl.col("run") != pl.col("baseline")).select(
                pl.lit(label).alias("label"), "run", "delta", "ci_low", "ci_high",
                pl.col("verdict").str.starts_with("reliably").alias("reliable"),
                pl.lit(None, pl.Int64).alias("n_queries"))])
        return cls(rows, m, str(per["baseline"][0]))

    def plot(self, *, ax: Axes | None = None, title: str | None = None,
             digits: int = 3) -> DatasetForestDisplay:
        """Draw the forest; returns ``self``."""
        data = self.frame
        n = data.height
        several = data["run"].n_unique() > 1
        ax = self.start_plot(ax, (6.4, max(2.4, 0.42 * n + 1.6)))
        house_style(ax, grid="x")
        self.intervals_, self.points_ = [], []
        shown = display_names(sorted({*data["run"].to_list(), self.baseline}))
        for i, r in enumerate(data.iter_rows(named=True)):
            y = n - 1 - i
            colour = WIN if r["delta"] > 0 else LOSS if r["delta"] < 0 else TIE
            self.intervals_ += ax.plot([r["ci_low"], r["ci_high"]], [y, y], color=colour, lw=2)
            marker = "D" if r["n_queries"] is None else "o"
            self.points_ += ax.plot([r["delta"]], [y], marker, ms=7, color=colour,
                                    mfc=colour if r["reliable"] else "white", mew=1.8)
            note = f"{r['delta']:+.{digits}f}" + (f"  n={r['n_queries']}"
                                                   if r["n_queries"] is not None else "")
            ax.annotate(note, (1.0, y), xycoords=("axes fraction", "data"), xytext=(4, 0),
                        textcoords="offset points", va="center", fontsize=8)
        tail = int(data["n_queries"].is_null().sum())  # the aggregate rows, at the bottom
        if 0 < tail < n:
            ax.axhline(tail - 0.5, color="#bbbbbb", lw=0.8)
        ax.axvline(0, color="#333333", lw=0.8)
        labels = [f"{lab} ({shown[run]})" if several else lab
                  for lab, run in zip(data["label"], data["run"], strict=True)]
        ax.set_yticks(range(n - 1, -1, -1), labels)
        ax.set_ylim(-0.7, n - 0.3)
        run_name = shown[data["run"][0]] if not several else "run"
        ax.xaxis.set_major_locator(_ticks(4))
        ax.set_xlabel(fit_text(ax, f"Δ {self.measure} ({run_name} − {shown[self.baseline]}), "
                               "interval; filled = reliably different", LABEL_SIZE,
                               share=0.6))
        set_title(ax, title, f"{self.measure} per dataset, and over all of them")
        fit_title(ax)
        return self


def dataset_forest(result: Any, measure: str | None = None, *, ax: Axes | None = None,
                   title: str | None = None, digits: int = 3) -> Axes:
    """Forest plot of Δ per dataset with the aggregate at the bottom.

    Examples
    --------
    >>> import numpy as np, polars as pl, searcheval_frames as sef
    >>> rng = np.random.default_rng(0)
    >>> rows = [{"run": s, "ds": f"d{d}", "query_id": f"q{q}", "measure": "P@5",
    ...          "value": float(rng.uniform()) + (0.1 if s == "b" else 0.0)}
    ...         for d in range(5) for s in ("a", "b") for q in range(10)]
    >>> res = sef.compare_datasets(per_query=pl.DataFrame(rows), baseline="a", dataset="ds",
    ...                            n_resamples=200, mixed=False)
    >>> ax = sef.dataset_forest(res)
    >>> [t.get_text() for t in ax.get_yticklabels()][::5]
    ['d0', 'macro mean (bootstrap)']
    """
    return DatasetForestDisplay.from_comparison(result, measure).plot(
        ax=ax, title=title, digits=digits).ax_


# --------------------------------------------------------------------------- variance
@dataclass
class VarianceComponentsDisplay(Display):
    """The share of each variance component (one measure).

    Attributes
    ----------
    frame
        ``term, share``, largest first.
    """

    frame: pl.DataFrame
    measure: str
    bars_: list[Any] = field(default_factory=list, init=False, repr=False)

    @classmethod
    def from_components(cls, result: Any, measure: str | None = None,
                        ) -> VarianceComponentsDisplay:
        """From :func:`~searcheval_frames.variance_components`' result."""
        f = _table(result, "frame", "variance_plot")
        m = _measure(f, measure, "variance_plot")
        rows = f.filter(pl.col("measure") == m, pl.col("share").is_not_nan())
        return cls(rows.select("term", "share").sort("share", descending=True), m)

    def plot(self, *, ax: Axes | None = None, title: str | None = None,
             ) -> VarianceComponentsDisplay:
        """Draw the bars; returns ``self``."""
        n = self.frame.height
        ax = self.start_plot(ax, (6.4, max(2.2, 0.38 * n + 1.4)))
        house_style(ax, grid="x")
        shares = self.frame["share"].to_numpy()
        ys = np.arange(n)[::-1]
        self.bars_ = list(ax.barh(ys, shares, color=PALETTE[0], alpha=0.8))
        for y, s in zip(ys, shares, strict=True):
            ax.annotate("<1%" if 0 < s < 0.005 else f"{s:.0%}", (s, y), xytext=(3, 0), textcoords="offset points",
                        va="center", fontsize=8)
        ax.set_yticks(ys, self.frame["term"].to_list())
        ax.set_xlim(0, min(1.0, float(shares.max()) * 1.25 + 0.05))
        ax.set_xlabel(f"share of the variance of {self.measure}")
        set_title(ax, title, f"{self.measure}: where the variance comes from")
        fit_title(ax)
        return self


def variance_plot(result: Any, measure: str | None = None, *, ax: Axes | None = None,
                  title: str | None = None) -> Axes:
    """Horizontal bars of each variance component's share.

    Examples
    --------
    >>> import polars as pl, searcheval_frames as sef
    >>> pq = pl.DataFrame({"run": ["a", "a", "b", "b"] * 2, "query_id": ["1", "2"] * 4,
    ...                    "seed": ["0"] * 4 + ["1"] * 4, "measure": "P@5",
    ...                    "value": [0.2, 0.6, 0.4, 0.8, 0.3, 0.7, 0.4, 0.8]})
    >>> ax = sef.variance_plot(sef.variance_components(per_query=pq,
    ...                                                factors=["query", "system"]))
    >>> [t.get_text() for t in ax.get_yticklabels()][0]
    'query'
    """
    return VarianceComponentsDisplay.from_components(result, measure).plot(
        ax=ax, title=title).ax_
