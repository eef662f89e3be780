"""Building an evaluation set: pooling, labels, sheets, agreement, the widget (layer 5).

anywidget is imported only when ``label_widget`` is used.
"""

from typing import Any

from .labels import LabelStore, agreement, export_label_sheet, import_label_sheet, merge_labels
from .pooling import coverage, holes, metric_bounds, pool

__all__ = [
    "LabelStore",
    "agreement",
    "coverage",
    "export_label_sheet",
    "holes",
    "import_label_sheet",
    "label_widget",
    "merge_labels",
    "metric_bounds",
    "pool",
]


def __getattr__(name: str) -> Any:
    if name == "label_widget":
        from .widget import label_widget

        return label_widget
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
