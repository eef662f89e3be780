"""One calling convention for everything that reads runs and qrels (issue #31).

Every public function of the analysis, the figures and the evaluation set is called
``f(runs, qrels, measures, *, ...)`` (runs first, qrels second, positionally, as
:func:`~searcheval_frames.evaluate`); values already evaluated come only through the
keyword ``per_query=``. This module holds what those functions share:

* :func:`per_query_of`: the per-query values a function works on, from ``per_query=``
  or by evaluating ``runs`` against ``qrels`` on ``measures`` (one rule, one message);
* :func:`looks_per_query`: is an object per-query values (a frame with a ``measure``
  column and no document column, a ``{run: frame}`` dict of those, a ``Comparison``)?
* the old spellings (a first argument holding per-query values, ``runs=`` naming the
  runs to draw): :func:`per_query_first` tells such a call from a new one, and
  :func:`renamed` translates it, for :func:`searcheval_frames._deprecation.old_spelling`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import InvalidOptionError
from ..frames import ALIASES

__all__ = ["compare_is_old", "compare_translate", "data_translate", "leaderboard_is_old",
           "leaderboard_translate", "looks_per_query", "names_list", "old_compare",
           "old_leaderboard", "per_query_first", "per_query_of", "renamed"]

_MEASURE_COLUMNS = ("measure", "metric", "measure_name", "metric_name")


def looks_per_query(obj: Any, columns: Mapping[str, str] | None = None) -> bool:
    """Per-query values (``run, query_id, measure, value``): a frame with a measure column
    and no document column, a dict ``{run: such frame}``, or a comparison result.

    >>> import polars as pl
    >>> looks_per_query(pl.DataFrame({"run": ["a"], "query_id": ["1"], "measure": ["P@5"],
    ...                               "value": [0.2]}))
    True
    >>> looks_per_query(pl.DataFrame({"query_id": ["1"], "doc_id": ["d"], "score": [1.0]}))
    False
    """
    if hasattr(obj, "per_query") and hasattr(obj, "baselines"):  # a Comparison
        return True
    if isinstance(obj, Mapping):
        values = list(obj.values())
        return bool(values) and all(not isinstance(v, Mapping) and looks_per_query(v, columns)
                                    for v in values)
    names = getattr(obj, "columns", None)
    if names is None:
        schema = getattr(obj, "schema", None)  # pyarrow tables, polars LazyFrames
        names = getattr(schema, "names", None) or (list(schema) if schema is not None else None)
    if names is None:
        return False
    lower = {str(c).lower() for c in names}
    wanted = {(columns or {}).get("measure", "measure").lower(), *_MEASURE_COLUMNS}
    doc = {(columns or {}).get("doc_id", "doc_id").lower(), *ALIASES["doc_id"]}
    return bool(lower & wanted) and not lower & doc


def names_list(value: Any) -> bool:
    """A run name or a list of run names (what an old ``runs=`` or baseline held)."""
    if isinstance(value, str):
        return True
    return (isinstance(value, Sequence) and not isinstance(value, bytes)
            and all(isinstance(v, str) for v in value))


def per_query_first(*, runs_names: bool = False) -> Callable[[tuple, dict], bool]:
    """``is_old`` of a function whose first parameter held per-query values: a call whose
    first positional argument is per-query values; ``runs_names``: also a ``runs=``
    holding run names (the old selection of runs to draw)."""

    def is_old(args: tuple, kwargs: dict) -> bool:
        if runs_names and names_list(kwargs.get("runs")):
            return True
        return bool(args) and "per_query" not in kwargs and looks_per_query(
            args[0], kwargs.get("columns"))

    return is_old


def renamed(mapping: Mapping[str, str]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """``translate`` of an old spelling whose parameters were only renamed (``mapping``:
    old name -> new name; names not in it keep theirs)."""

    def translate(old: dict[str, Any]) -> dict[str, Any]:
        return {mapping.get(k, k): v for k, v in old.items()}

    return translate


def per_query_of(func: str, runs: Any, qrels: Any, measures: Any, per_query: Any, *,
                 missing: str = "zero", columns: Mapping[str, str] | None = None,
                 evaluate_options: Mapping[str, Any] | None = None
                 ) -> tuple[Any, Mapping[str, str] | None]:
    """The per-query values ``func`` works on, and the ``columns`` that name their
    columns: ``per_query`` as given (with ``columns``), or ``runs`` evaluated against
    ``qrels`` on ``measures`` (``evaluate(..., per_query=True)``; ``columns`` named the
    runs' columns, so ``None``).

    Exactly one of the two inputs; runs need qrels and measures. Evaluation options
    (``relevance_level=2`` ...) apply only to runs.
    """
    example = f"{func}(runs, qrels, 'nDCG@10') or {func}(per_query=pq)"
    if per_query is not None:
        if runs is not None or qrels is not None:
            raise InvalidOptionError(
                f"{func}: per_query= holds values already evaluated, so runs and qrels "
                f"have no use; pass one or the other. Example: {example}")
        if evaluate_options:
            raise InvalidOptionError(
                f"{func}: {sorted(evaluate_options)} are options of the evaluation, which "
                "per_query= values have already had; pass them with runs and qrels")
        return per_query, columns
    if runs is None or qrels is None or measures is None:
        missing_part = "runs" if runs is None else "qrels" if qrels is None else "measures"
        raise InvalidOptionError(
            f"{func}: no {missing_part} given; pass runs, qrels and the measure(s) to "
            f"evaluate, or values already evaluated as per_query=. Example: {example}")
    from ..core.evaluate import evaluate

    wanted = [measures] if isinstance(measures, str) else list(measures)
    values = evaluate(runs, qrels, wanted, per_query=True, columns=columns,
                      # (with "error", absent queries stay absent, for the pairing to report)
                      missing="zero" if missing == "zero" else "skip",
                      **dict(evaluate_options or {}))
    return values, None


# --------------------------------------------------------------------------- compare's old spelling
def old_compare(data: Any = None, baseline: Any = None, *, runs: Any = None, qrels: Any = None,
                per_query: Any = None, measures: Any = None) -> None:
    """The signature of ``compare`` before issue #31 (its first argument meant runs with
    ``qrels=``, else per-query values; the second was the baseline)."""


def compare_is_old(args: tuple, kwargs: dict) -> bool:
    """``compare(pq)``, ``compare(pq, 'bm25')``, ``compare(runs, 'bm25', qrels=q, ...)``,
    ``compare(data=...)``: calls the new ``compare(runs, qrels, measures)`` cannot mean."""
    if "data" in kwargs or (len(args) >= 2 and "qrels" in kwargs):
        return True
    if not args or "per_query" in kwargs:
        return False
    if len(args) == 1:
        return "qrels" not in kwargs and "runs" not in kwargs
    return (len(args) == 2 and looks_per_query(args[0], kwargs.get("columns"))
            and (args[1] is None or names_list(args[1])))


def data_translate(data: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """``translate`` of an old spelling whose parameter ``data`` held runs when qrels were
    given, else per-query values: that argument goes to ``runs`` or ``per_query``."""

    def translate(old: dict[str, Any]) -> dict[str, Any]:
        new = dict(old)
        value = new.pop(data, None)
        key = "runs" if new.get("qrels") is not None else "per_query"
        if new.get(key) is None:
            new[key] = value
        return new

    return translate


compare_translate = data_translate("data")


# --------------------------------------------------------------------------- leaderboard's
def old_leaderboard(per_query: Any = None, qrels: Any = None, *, measure: Any = None,
                    runs: Any = None) -> None:
    """The signature of ``leaderboard`` before issue #31 (its first argument meant runs
    when qrels were given, else per-query values)."""


def leaderboard_is_old(args: tuple, kwargs: dict) -> bool:
    """``leaderboard(pq, measure=...)``, ``leaderboard(None, qrels, runs=...)``."""
    if not args or "per_query" in kwargs:
        return False
    if "runs" in kwargs or (len(args) == 1 and "qrels" not in kwargs):
        return True
    return looks_per_query(args[0], kwargs.get("columns"))


leaderboard_translate = data_translate("per_query")
