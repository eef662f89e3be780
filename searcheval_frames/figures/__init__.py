"""Curves as frames and matplotlib helpers (layer 5).

matplotlib is imported only when a figure is drawn.
"""

from .curves import pr_curve_data, precision_recall_at_k
from .plots import (
    benchmark_bars,
    metric_distribution,
    per_query_delta,
    pr_curve,
    save_figure,
    tradeoff_curve,
)

__all__ = [
    "benchmark_bars",
    "metric_distribution",
    "per_query_delta",
    "pr_curve",
    "pr_curve_data",
    "precision_recall_at_k",
    "save_figure",
    "tradeoff_curve",
]
