"""Δ per slice of the queries, with intervals: the figure of ``compare(by=...)``.

:func:`slice_forest_data` is the data (a frame); :func:`slice_forest` draws it as a
forest plot faceted by slice: one row per slice (and per run when several are
compared against the baseline), a dot at ``Δ = mean(run) - mean(baseline)`` over the
slice's queries, a line for its confidence interval, filled when the
family-corrected test is significant, the slice's query count on the right, and a
grey zone of ``± minimum detectable Δ`` (what the slice can tell apart from 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import polars as pl

from ..errors import InvalidOptionError, MissingColumnError
from ..frames.display import run_display_names
from ._shared import (
    LOSS,
    TIE,
    WIN,
    Display,
    as_frame,
    house_style,
    set_title,
)

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = ["SliceForestDisplay", "slice_forest", "slice_forest_data"]

_NEED = ("run", "baseline", "measure", "n_queries", "delta", "ci_low", "ci_high",
         "significant", "detectable_delta")


def slice_forest_data(comparison: Any, measure: str | None = None) -> pl.DataFrame:
    """The rows of :func:`slice_forest`: ``label, run, baseline, measure, n_queries, delta,
    ci_low, ci_high, significant, detectable_delta``, one per slice (and run), in the
    comparison's slice order.

    Parameters
    ----------
    comparison
        The result of ``compare(..., queries=, by=)`` or its frame.
    measure
        The measure to draw (default: the first).

    Examples
    --------
    >>> import polars as pl, searcheval_frames as sef
    >>> pq = pl.DataFrame({"run": ["a"] * 4 + ["b"] * 4, "query_id": ["1", "2", "3", "4"] * 2,
    ...                    "measure": "P@5", "value": [0.2, 0.4, 0.6, 0.6, 0.6, 0.8, 0.6, 0.4]})
    >>> q = pl.DataFrame({"query_id": ["1", "2", "3", "4"], "kind": ["x", "x", "y", "y"]})
    >>> s = sef.compare(per_query=pq, baseline="a", queries=q, by="kind", ci_method="t",
    ...                 min_queries=2)
    >>> slice_forest_data(s)["label"].to_list()
    ['kind=x', 'kind=y']
    """
    slices = list(getattr(comparison, "slices", []))
    frame = comparison.to_polars() if hasattr(comparison, "to_polars") else as_frame(
        comparison, "comparison")
    if not slices:
        slices = [c for c in frame.columns if c not in (*_NEED, "mean", "baseline_mean",
                  "delta_pct", "p_value", "p_adjusted", "wins", "ties", "losses",
                  "effect_size", "small")]
    missing = [c for c in _NEED if c not in frame.columns]
    if missing or not slices:
        raise MissingColumnError(
            "slice_forest: expected the result of compare(..., queries=, by=) (columns "
            f"{', '.join(_NEED)} and the slice columns); missing {missing or 'slice columns'}")
    measures = frame["measure"].unique(maintain_order=True).to_list()
    measure = measure or measures[0]
    if measure not in measures:
        raise InvalidOptionError(f"slice_forest(measure={measure!r}): not compared; "
                                 f"choose one of {measures}")
    label = pl.concat_str([pl.lit(f"{c}=") + pl.col(c).cast(pl.String).fill_null("(none)")
                           for c in slices], separator=", ")
    return frame.filter(pl.col("measure") == measure).select(label.alias("label"), *_NEED)


def slice_forest(
    comparison: Any,
    measure: str | None = None,
    *,
    ax: Axes | None = None,
    title: str | None = None,
    digits: int = 3,
) -> Axes:
    """Forest plot of Δ per slice: dot = Δ, line = CI, filled = significant (after the
    correction over the whole family of slice tests), n on the right, grey band =
    ± the slice's minimum detectable Δ at 80% power.

    Parameters
    ----------
    comparison
        The result of ``compare(..., queries=, by=)`` (or its frame).
    measure
        The measure to draw (default: the first).
    ax, title
        Axes to draw into (default: a new figure) and the title.
    digits
        Decimals of the Δ labels.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import polars as pl, searcheval_frames as sef
    >>> pq = pl.DataFrame({"run": ["a"] * 4 + ["b"] * 4, "query_id": ["1", "2", "3", "4"] * 2,
    ...                    "measure": "P@5", "value": [0.2, 0.4, 0.6, 0.6, 0.6, 0.8, 0.6, 0.4]})
    >>> q = pl.DataFrame({"query_id": ["1", "2", "3", "4"], "kind": ["x", "x", "y", "y"]})
    >>> s = sef.compare(per_query=pq, baseline="a", queries=q, by="kind", ci_method="t",
    ...                 min_queries=2)
    >>> ax = sef.slice_forest(s)
    >>> [t.get_text() for t in ax.get_yticklabels()]
    ['kind=x', 'kind=y']
    """
    return SliceForestDisplay.from_comparison(comparison, measure).plot(
        ax=ax, title=title, digits=digits).ax_


@dataclass
class SliceForestDisplay(Display):
    """Δ per slice with its interval: the data of :func:`slice_forest`.

    :meth:`plot` keeps ``ax_``, ``figure_``, ``intervals_`` (a line per row),
    ``points_`` (a dot per row at Δ, filled when significant).

    Attributes
    ----------
    frame
        The rows of :func:`slice_forest_data`, one per slice (and run).
    """

    frame: pl.DataFrame
    intervals_: list[Any] = field(default_factory=list, init=False, repr=False)
    points_: list[Any] = field(default_factory=list, init=False, repr=False)

    @classmethod
    def from_comparison(cls, comparison: Any, measure: str | None = None) -> SliceForestDisplay:
        """From ``compare(..., queries=, by=)`` (or its frame); ``measure``: default the
        first."""
        return cls(slice_forest_data(comparison, measure))

    def plot(self, *, ax: Axes | None = None, title: str | None = None,
             digits: int = 3) -> SliceForestDisplay:
        """Draw the forest (options as for :func:`slice_forest`); returns ``self``."""
        self.intervals_, self.points_ = [], []
        data = self.frame
        measure = str(data["measure"][0])
        several = data["run"].n_unique() > 1
        ax = self.start_plot(ax, (6.4, max(2.2, 0.45 * data.height + 1.4)))
        house_style(ax, grid="x")
        n = data.height
        for i, r in enumerate(data.iter_rows(named=True)):
            y = n - 1 - i
            mdd = r["detectable_delta"]
            if mdd is not None and math.isfinite(mdd):
                ax.fill_betweenx([y - 0.3, y + 0.3], -mdd, mdd, color=TIE, alpha=0.18, lw=0)
            colour = WIN if r["delta"] > 0 else LOSS if r["delta"] < 0 else TIE
            self.intervals_ += ax.plot([r["ci_low"], r["ci_high"]], [y, y], color=colour, lw=2)
            self.points_ += ax.plot([r["delta"]], [y], "o", ms=7, color=colour,
                                    mfc=colour if r["significant"] else "white", mew=1.8)
            ax.annotate(f"{r['delta']:+.{digits}f}  n={r['n_queries']}", (1.0, y),
                        xycoords=("axes fraction", "data"), xytext=(4, 0),
                        textcoords="offset points", va="center", fontsize=8)
        ax.axvline(0, color="#333333", lw=0.8)
        shown = run_display_names(sorted({*data["run"].to_list(), *data["baseline"].to_list()}))
        labels = [f"{lab} ({shown[run]})" if several else lab
                  for lab, run in zip(data["label"], data["run"], strict=True)]
        ax.set_yticks(range(n - 1, -1, -1), labels)
        ax.set_ylim(-0.7, n - 0.3)
        base = shown[data["baseline"][0]]
        run_name = shown[data["run"][0]] if not several else "run"
        ax.set_xlabel(f"Δ {measure} ({run_name} − {base}), CI; filled = significant;\n"
                      "grey = ± minimum detectable Δ (80% power)")
        set_title(ax, title, f"{measure} by slice: where does {run_name} beat {base}?")
        return self
