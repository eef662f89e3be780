"""Building an evaluation set (layer 5): pools, label sheets, the label store, merging
assessors, agreement, the labelling widget.

Modules, low to high (each imports only those before it):

* ``pooling``: :func:`pool`, :func:`coverage`, :func:`holes`, :func:`metric_bounds`.
* ``grades``: accepted grades, label parsing, the column finders shared below.
* ``sheets``: :func:`export_label_sheet`, :func:`import_label_sheet`.
* ``policies``: how conflicting labels are settled (``majority``, ``max``, ...).
* ``store``: :class:`LabelStore`, the append-only journal.
* ``merge``: :func:`merge_labels`.
* ``agreement``: :func:`agreement`, Cohen's and Fleiss' kappa.
* ``widget``: :func:`label_widget` (anywidget is imported only when it is used).
* ``judges``: automatic judges (:func:`~.judges.judge`, calibration, filling holes).
"""

from typing import Any

from .agreement import Agreement, agreement, cohen_kappa, confusion_matrix, fleiss_kappa
from .merge import MergeResult, merge_labels
from .pooling import coverage, holes, metric_bounds, pool
from .sheets import export_label_sheet, import_label_sheet
from .store import LabelStore

__all__ = [
    "Agreement",
    "LabelStore",
    "MergeResult",
    "agreement",
    "cohen_kappa",
    "confusion_matrix",
    "coverage",
    "export_label_sheet",
    "fleiss_kappa",
    "holes",
    "import_label_sheet",
    "judges",
    "label_widget",
    "merge_labels",
    "metric_bounds",
    "pool",
]


def __getattr__(name: str) -> Any:
    if name == "judges":  # the automatic judges load on first use
        import importlib

        return importlib.import_module(f"{__name__}.judges")
    if name == "label_widget":
        from .widget import label_widget

        return label_widget
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
