"""searcheval_frames: search-quality evaluation on long-format dataframes.

>>> import searcheval_frames as sef
>>> run = {"q1": {"d1": 3.0, "d2": 2.0}}
>>> qrels = {"q1": {"d2": 1}}
>>> sef.evaluate(run, qrels, ["P@1", "RR"])["value"].to_list()
[0.0, 0.5]
"""

from __future__ import annotations

import importlib
from typing import Any

from .compare import Comparison, compare
from .errors import (
    DuplicateRowsError,
    EmptyInputError,
    FileFormatError,
    IdMismatchError,
    InvalidRelevanceError,
    InvalidScoreError,
    MissingColumnError,
    SearchEvalError,
    UnknownMeasureError,
)
from .evaluate import evaluate, pivot
from .frames import qrels_frame, run_frame
from .measures import Measure, list_measures, parse_measure

__version__ = "0.1.0"

# Public name -> module that defines it. Imported on first use so that
# `import searcheval_frames` stays light (matplotlib, scipy, widgets load only
# when their helpers are used).
_LAZY: dict[str, str] = {
    # files
    "read_run": "io",
    "read_qrels": "io",
    "write_run": "io",
    "write_qrels": "io",
    "read_queries": "io",
    "write_queries": "io",
    # curves and plots
    "precision_recall_at_k": "curves",
    "pr_curve_data": "curves",
    "pr_curve": "plots",
    "tradeoff_curve": "plots",
    "benchmark_bars": "plots",
    "per_query_delta": "plots",
    "metric_distribution": "plots",
    "save_figure": "plots",
    # building an evaluation set
    "pool": "pooling",
    "coverage": "pooling",
    "holes": "pooling",
    "metric_bounds": "pooling",
    "export_label_sheet": "labels",
    "import_label_sheet": "labels",
    "LabelStore": "labels",
    "merge_labels": "labels",
    "agreement": "labels",
    "label_widget": "widget",
}

__all__ = [
    "DuplicateRowsError",
    "EmptyInputError",
    "FileFormatError",
    "IdMismatchError",
    "InvalidRelevanceError",
    "InvalidScoreError",
    "MissingColumnError",
    "SearchEvalError",
    "UnknownMeasureError",
    "Comparison",
    "__version__",
    "compare",
    "evaluate",
    "list_measures",
    "Measure",
    "parse_measure",
    "pivot",
    "qrels_frame",
    "run_frame",
    *sorted(_LAZY),
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'searcheval_frames' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))

