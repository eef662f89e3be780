"""Curves as frames and the figures drawn from them (layer 5).

Modules: ``curves`` (precision-recall data as frames), ``style`` (palette, sizes and the
helpers the figures share; ``_shared`` holds them), ``pr`` (:func:`pr_curve`), ``tradeoff``
(:func:`tradeoff_curve`), ``bars`` (:func:`benchmark_bars`), ``distributions`` (:func:`per_query_delta`,
:func:`metric_distribution`) and ``export`` (:func:`save_figure`).

matplotlib is imported only when a figure is drawn.
"""

from .bars import BenchmarkBarsDisplay, benchmark_bars
from .curves import pr_curve_data, precision_recall_at_k
from .distributions import (
    MetricDistributionDisplay,
    PerQueryDeltaDisplay,
    metric_distribution,
    per_query_delta,
)
from .export import save_figure
from .latency import LatencyDisplay, latency_plot, latency_table
from .pr import PRCurveDisplay, pr_curve
from .tradeoff import TradeoffDisplay, tradeoff_curve

__all__ = [
    "BenchmarkBarsDisplay",
    "LatencyDisplay",
    "MetricDistributionDisplay",
    "PRCurveDisplay",
    "PerQueryDeltaDisplay",
    "TradeoffDisplay",
    "benchmark_bars",
    "latency_plot",
    "latency_table",
    "metric_distribution",
    "per_query_delta",
    "pr_curve",
    "pr_curve_data",
    "precision_recall_at_k",
    "save_figure",
    "tradeoff_curve",
]
