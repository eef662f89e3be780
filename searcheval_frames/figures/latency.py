"""Quality against latency: one point per run, its measure's mean over its median client
time per query, with a line out to the 95th percentile.

:class:`LatencyDisplay` computes the data (``from_frames``: a latency frame, as
``sef.retrieve`` records it, and a summary of ``sef.evaluate``) and draws it (``plot``);
:func:`latency_plot` is both in one call. Run names are in the legend, never beside the
points (they would collide when runs are close).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from ..errors import InvalidOptionError
from ._shared import (
    LABEL_SIZE,
    Display,
    as_frame,
    house_style,
    need_columns,
    run_colors,
    set_title,
)
from .style import display_names, fit_title, place_legend

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = ["LatencyDisplay", "latency_plot", "latency_table"]


def latency_table(latency: Any) -> pl.DataFrame:
    """Per run: ``queries, errors, p50, p95, p99`` (client seconds of the answered
    queries, linear interpolation) and ``server_p50`` (the engine's own, when reported).

    >>> import polars as pl
    >>> lat = pl.DataFrame({"run": ["a"] * 4, "seconds": [0.01, 0.02, 0.03, 0.04],
    ...                     "status": ["ok", "ok", "ok", "error"]})
    >>> [tuple(round(v, 6) if isinstance(v, float) else v for v in r)
    ...  for r in latency_table(lat).rows()]
    [('a', 4, 1, 0.02, 0.029, 0.0298, None)]
    """
    df = as_frame(latency, "latency")
    need_columns(df, ["run", "seconds"], "latency",
                 "pass RetrieveResult.latency or sef.systems.latency_of([...])")
    if "status" not in df.columns:
        df = df.with_columns(status=pl.lit("ok"))
    if "server_seconds" not in df.columns:
        df = df.with_columns(server_seconds=pl.lit(None, pl.Float64))
    ok = pl.col("status") == "ok"
    secs = pl.col("seconds").filter(ok)
    return df.group_by("run", maintain_order=True).agg(
        pl.len().alias("queries"), (~ok).sum().cast(pl.Int64).alias("errors"),
        secs.quantile(0.5, "linear").alias("p50"), secs.quantile(0.95, "linear").alias("p95"),
        secs.quantile(0.99, "linear").alias("p99"),
        pl.col("server_seconds").filter(ok).quantile(0.5, "linear").alias("server_p50"))


@dataclass
class LatencyDisplay(Display):
    """``data``: ``run, value, p50, p95, errors`` (seconds); ``measure``."""

    data: pl.DataFrame
    measure: str
    points_: list[Any] = field(default_factory=list)
    lines_: list[Any] = field(default_factory=list)

    @classmethod
    def from_frames(cls, latency: Any, summary: Any, measure: str | None = None) -> LatencyDisplay:
        """``latency``: one row per query (``run, seconds[, status]``); ``summary``:
        ``run, measure, value`` (``sef.evaluate``'s means); ``measure``: the quality
        axis (default the summary's first measure)."""
        lat = latency_table(latency)
        summ = as_frame(summary, "summary")
        need_columns(summ, ["run", "measure", "value"], "summary", "pass sef.evaluate(...)")
        measures = summ["measure"].unique(maintain_order=True).to_list()
        name = measures[0] if measure is None else measure
        if name not in measures:
            raise InvalidOptionError(f"latency_plot(measure={measure!r}): the summary has "
                                     f"{measures}; got {measure!r}. Example: "
                                     f"measure={measures[0]!r}")
        quality = summ.filter(pl.col("measure") == name).select("run", "value")
        data = lat.join(quality, on="run", how="inner").select(
            "run", "value", "p50", "p95", "errors")
        if data.height == 0:
            raise InvalidOptionError(
                "latency_plot: no run has both latency and a value; the latency's runs are "
                f"{lat['run'].to_list()[:5]}, the summary's {quality['run'].to_list()[:5]}")
        return cls(data, name)

    def plot(self, ax: Axes | None = None, *, title: str | None = None) -> LatencyDisplay:
        ax = self.start_plot(ax)
        runs = self.data["run"].to_list()
        colors = run_colors(runs, None)
        short = display_names(runs)
        scale, unit = _unit(self.data["p95"].drop_nulls().to_numpy())
        for row in self.data.iter_rows(named=True):
            if row["p50"] is None:
                continue
            c = colors[row["run"]]
            (line,) = ax.plot([row["p50"] * scale, row["p95"] * scale], [row["value"]] * 2,
                              color=c, linewidth=1.4, alpha=0.8)
            self.lines_.append(line)
            self.points_.append(ax.scatter([row["p50"] * scale], [row["value"]], color=c,
                                           s=36, zorder=3, edgecolors="white", linewidths=0.6))
        p95 = self.data["p95"].drop_nulls().to_numpy() * scale
        p50 = self.data["p50"].drop_nulls().to_numpy() * scale
        if p95.size and p95.max() / max(p50.min(), 1e-12) > 30:
            from matplotlib.ticker import FuncFormatter

            ax.set_xscale("log")
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        _ylim(ax, self.data["value"].drop_nulls().to_numpy())
        ax.set_xlabel(f"client time per query, {unit} (dot: median, line to p95)",
                      fontsize=LABEL_SIZE)
        ax.set_ylabel(self.measure, fontsize=LABEL_SIZE)
        house_style(ax)
        if len(runs) > 1:
            place_legend(ax, self.points_, [short[r] for r in runs])
        set_title(ax, title, f"{self.measure} against latency")
        fit_title(ax)
        return self


def _ylim(ax: Axes, values: np.ndarray, span: float = 0.1) -> None:
    """At least ``span`` of the measure in view, so a 0.002 gap does not fill the axes."""
    if values.size == 0:
        return
    lo, hi = float(values.min()), float(values.max())
    pad = max((span - (hi - lo)) / 2, 0.1 * (hi - lo))
    ax.set_ylim(lo - pad, hi + pad)


def _unit(seconds: np.ndarray) -> tuple[float, str]:
    """Milliseconds unless the slowest p95 is over 10 s."""
    return (1.0, "s") if seconds.size and seconds.max() > 10 else (1000.0, "ms")


def latency_plot(latency: Any, summary: Any, *, measure: str | None = None,
                 ax: Any = None, title: str | None = None) -> Any:
    """Quality against latency, one point per run; returns the Axes.

    Parameters
    ----------
    latency
        One row per query and run: ``run, seconds[, status]`` (``RetrieveResult.latency``
        or ``sef.systems.latency_of([...])``); failed queries are left out of the times.
    summary
        ``sef.evaluate(runs, qrels, measures)``: ``run, measure, value``.
    measure
        The quality axis (default the summary's first measure).

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import polars as pl
    >>> lat = pl.DataFrame({"run": ["a", "a", "b", "b"], "seconds": [0.01, 0.02, 0.2, 0.3]})
    >>> summ = pl.DataFrame({"run": ["a", "b"], "measure": "nDCG@10", "value": [0.6, 0.7]})
    >>> ax = latency_plot(lat, summ)
    >>> ax.get_ylabel(), len(ax.collections)
    ('nDCG@10', 2)
    """
    return LatencyDisplay.from_frames(latency, summary, measure).plot(ax=ax, title=title).ax_
