"""The figures' calling conventions before issue #31, kept for a while with a warning.

Each figure that draws per-query values is ``f(runs, qrels, measure, *, per_query=...)``
now, and the runs to draw are ``show_runs=`` (``runs`` is always the runs themselves).
The stubs below are the old signatures; :func:`searcheval_frames._deprecation.old_spelling`
binds an old call to them and shows the call to write instead.
"""

from __future__ import annotations

from typing import Any

from ..analysis.calling import looks_per_query, names_list, per_query_first, renamed

__all__ = ["OLD_BARS", "OLD_CURVE", "OLD_DELTA", "OLD_DISTRIBUTION", "OLD_POWER_CURVE",
           "OLD_STABILITY_CURVE", "SHOW_RUNS", "curve_result_first", "runs_named",
           "to_result"]

#: ``runs=`` (the runs to draw) is ``show_runs=`` now.
SHOW_RUNS = renamed({"runs": "show_runs"})


def runs_named(args: tuple, kwargs: dict) -> bool:
    """An old call: ``runs=`` holds run names (the runs to draw), not runs."""
    return names_list(kwargs.get("runs"))


def old_per_query_delta(per_query: Any) -> None:
    """``per_query_delta(per_query, *, baseline, run, measure, ...)``."""


def old_metric_distribution(per_query: Any = None, *, runs: Any = None) -> None:
    """``metric_distribution(per_query, *, measure, runs, ...)``."""


def old_benchmark_bars(results: Any, *, runs: Any = None) -> None:
    """``benchmark_bars(results, *, baseline, measures, runs, ...)``."""


def old_curve(run: Any, qrels: Any = None, *, runs: Any = None) -> None:
    """``pr_curve`` / ``tradeoff_curve(run, qrels, *, runs, ...)``."""


def old_power_curve(data: Any, baseline: Any = None, measure: Any = None, deltas: Any = None
                    ) -> None:
    """``power_curve(data, baseline, measure, deltas, *, ...)``."""


def old_stability_curve(data: Any, measure: Any = None, sizes: Any = None) -> None:
    """``stability_curve(data, measure, sizes, *, ...)``."""


def _is_result(obj: Any) -> bool:
    """A result of ``sef.power`` (its frame) or of ``sef.stability`` (or its summary)."""
    if hasattr(obj, "summary") and hasattr(obj, "swaps"):
        return True
    names = {str(c) for c in getattr(obj, "columns", [])}
    return bool(names & {"n_needed", "tau_mean"})


def curve_result_first(args: tuple, kwargs: dict) -> bool:
    """An old call of ``power_curve`` / ``stability_curve``: the first argument (or
    ``data=``) holds per-query values or a result."""
    if "data" in kwargs:
        return True
    return bool(args) and "per_query" not in kwargs and (
        looks_per_query(args[0]) or _is_result(args[0]))


def to_result(old: dict[str, Any]) -> dict[str, Any]:
    """``data`` of an old curve call as ``result=`` (a computed result) or ``per_query=``."""
    new = dict(old)
    data = new.pop("data", None)
    new["result" if _is_result(data) else "per_query"] = data
    return new


#: ``old_spelling(name, *OLD_...)``: each figure's old signature, how to tell an old call,
#: and how to translate it.
OLD_DELTA = (old_per_query_delta, per_query_first(), renamed({}))
OLD_DISTRIBUTION = (old_metric_distribution, per_query_first(runs_names=True), SHOW_RUNS)
OLD_BARS = (old_benchmark_bars, runs_named, SHOW_RUNS)
OLD_CURVE = (old_curve, runs_named, SHOW_RUNS)
OLD_POWER_CURVE = (old_power_curve, curve_result_first, to_result)
OLD_STABILITY_CURVE = (old_stability_curve, curve_result_first, to_result)
