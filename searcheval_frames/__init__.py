"""searcheval_frames: search-quality evaluation on long-format dataframes.

>>> import searcheval_frames as sef
>>> run = {"q1": {"d1": 3.0, "d2": 2.0}}
>>> qrels = {"q1": {"d2": 1}}
>>> sef.evaluate(run, qrels, ["P@1", "RR"])["value"].to_list()
[0.0, 0.5]
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from .core.evaluate import evaluate
from .core.results import pivot
from .errors import (
    DuplicateRowsError,
    EmptyInputError,
    FileFormatError,
    IdMismatchError,
    InvalidOptionError,
    InvalidRelevanceError,
    InvalidScoreError,
    MissingColumnError,
    SearchEvalError,
    UnknownMeasureError,
)
from .frames import qrels_frame, run_frame
from .measures import Measure, list_measures, parse_measure
from .options import keywords_checked
from .version import __version__

# Public name -> module that defines it. Imported on first use so that
# `import searcheval_frames` stays light (matplotlib, scipy, widgets load only
# when their helpers are used).
_LAZY: dict[str, str] = {
    # comparisons (their tables and statistics load on first use)
    "compare": "analysis.compare",
    "Comparison": "analysis.compare",
    "leaderboard": "analysis.leaderboard",
    "Leaderboard": "analysis.leaderboard",
    "SlicedLeaderboard": "analysis.leaderboard_slices",
    "leaderboard_plot": "figures.leaderboard",
    "leaderboard_plot_data": "figures.leaderboard",
    # files
    "read_run": "io",
    "read_qrels": "io",
    "write_run": "io",
    "write_qrels": "io",
    "read_queries": "io",
    "write_queries": "io",
    # curves and plots
    "precision_recall_at_k": "figures",
    "pr_curve_data": "figures",
    "pr_curve": "figures",
    "tradeoff_curve": "figures",
    "benchmark_bars": "figures",
    "per_query_delta": "figures",
    "metric_distribution": "figures",
    "save_figure": "figures",
    # the figures' Displays: from_* computes the data, .plot() draws (issue #19)
    "BenchmarkBarsDisplay": "figures",
    "MetricDistributionDisplay": "figures",
    "PerQueryDeltaDisplay": "figures",
    "PRCurveDisplay": "figures",
    "TradeoffDisplay": "figures",
    "PowerCurveDisplay": "figures.power_plots",
    "StabilityCurveDisplay": "figures.power_plots",
    "SliceForestDisplay": "figures.slices",
    # building an evaluation set
    "pool": "evalset",
    "coverage": "evalset",
    "holes": "evalset",
    "metric_bounds": "evalset",
    "export_label_sheet": "evalset",
    "import_label_sheet": "evalset",
    "LabelStore": "evalset",
    "merge_labels": "evalset",
    "agreement": "evalset",
    "label_widget": "evalset",
    # how many queries; can the table be trusted
    "power": "analysis.power",
    "discriminative_power": "analysis.stability",
    "stability": "analysis.stability",
    "power_curve": "figures.power_plots",
    "stability_curve": "figures.power_plots",
    # fusion (hybrid search)
    "fuse": "fusion",
    "optimize_fusion": "fusion",
    # query-level error analysis and the report
    "query_diff": "analysis.querydiff",
    "side_by_side": "analysis.side_by_side",
    "report": "reporting",
    "Report": "reporting",  # what sef.report() returns (analysis.tables.Report is Table, deprecated)
    # explain the data before any number (issue #22)
    "check": "analysis.check",
    "Findings": "analysis.findings",
    # evaluation at scale: the modules sef.spark and sef.dask
    "spark": "scale",
    "dask": "scale",
    # your own measures, slices of the queries, chunk-level runs (issue 24)
    "measure": "measures.custom",
    "true_divide": "_exact",
    "unregister_measure": "measures.custom",
    "collapse": "frames.collapse",
    "slice_forest": "figures.slices",
    "slice_forest_data": "figures.slices",
    # automatic relevance judges (issue 23): the module sef.judges and its main functions
    "judges": "evalset",
    "judge": "evalset.judges",
    "judge_agreement": "evalset.judges",
    "fill_holes": "evalset.judges",
    # JupyterLab: one display setup, optional extras, the default label journal
    "notebook_setup": "notebook",
    "MissingDependencyError": "optional",
    "extra_available": "optional",
    "extra_note": "optional",
    "default_journal": "evalset.store",
}

__all__ = [
    "DuplicateRowsError",
    "EmptyInputError",
    "FileFormatError",
    "IdMismatchError",
    "InvalidOptionError",
    "InvalidRelevanceError",
    "InvalidScoreError",
    "MissingColumnError",
    "SearchEvalError",
    "UnknownMeasureError",
    "__version__",
    "evaluate",
    "list_measures",
    "Measure",
    "parse_measure",
    "pivot",
    "qrels_frame",
    "run_frame",
    *sorted(_LAZY),
]


#: A public function taking ``**options`` that it passes on -> (module, function) whose
#: parameters those options may name (checked by ``keywords_checked`` with the rest).
_PASSES_ON: dict[str, tuple[str, str]] = {
    "evaluate_options": ("core.evaluate", "evaluate"),
    "power_options": ("analysis.power", "power"),
    "compare_options": ("analysis.compare", "compare"),
}


def _passed_on(fn: Any) -> list[str] | None:
    """The keyword names ``fn``'s ``**options`` may hold (those of the function it passes
    them to, and so on down); ``None`` when ``fn`` takes no ``**options`` we know."""
    params = inspect.signature(fn).parameters.values()
    var = [p.name for p in params if p.kind is p.VAR_KEYWORD]
    target = _PASSES_ON.get(var[0]) if var else None
    if target is None:
        return None
    inner = getattr(importlib.import_module(f".{target[0]}", __name__), target[1])
    names = [p.name for p in inspect.signature(inner).parameters.values()
             if p.kind is p.KEYWORD_ONLY]
    return names + (_passed_on(inner) or [])


def _checked(value: Any) -> Any:
    """A public function refusing unknown keywords with the closest name (one mechanism:
    ``options.keywords_checked``); classes and modules as they are."""
    if not inspect.isfunction(value):
        return value
    has_var = any(p.kind is p.VAR_KEYWORD for p in inspect.signature(value).parameters.values())
    if not has_var:
        return keywords_checked(value)
    return keywords_checked(value, also=lambda: _passed_on(value) or [])


evaluate = _checked(evaluate)
pivot = _checked(pivot)
list_measures = _checked(list_measures)
parse_measure = _checked(parse_measure)
qrels_frame = _checked(qrels_frame)
run_frame = _checked(run_frame)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'searcheval_frames' has no attribute {name!r}")
    value = _checked(getattr(importlib.import_module(f".{module}", __name__), name))
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))

