"""Who is who on the page: which run is the "before" (a name, a unique part of one, or,
warned, the first run), the runs' display names and the tables under them, what counts
as relevant (the note beside the headline), and the ``columns=`` option's check."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from .._deprecation import outside_stacklevel
from ..errors import SearchEvalWarning
from ..frames.display import resolve_name, run_display_names

__all__ = ["choose_baseline", "names_note", "relevance_note", "run_names", "table"]


def check_columns(func: str, columns: Any) -> dict[str, str] | None:
    """``columns=``: None or a ``{canonical name: your column}`` mapping of strings."""
    from ..errors import InvalidOptionError
    from ..frames import ALIASES

    if columns is None:
        return None
    example = "Example: columns={'query_id': 'question', 'doc_id': 'url'}"
    if not isinstance(columns, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in columns.items()):
        raise InvalidOptionError(
            f"{func}(columns={columns!r}): must be a dict of canonical name -> your column "
            f"name; got {columns!r}. {example}")
    unknown = sorted(set(columns) - set(ALIASES))
    if unknown:
        raise InvalidOptionError(
            f"{func}(columns={columns!r}): the keys must be canonical names "
            f"{sorted(ALIASES)}; got {unknown}. {example}")
    return dict(columns)


def run_names(data: Any) -> dict[str, str]:
    """The runs' display names on the page (shortest unique, common prefix removed)."""
    return run_display_names(list(data.runs), width=28)


def table(data: Any, layout: str, columns: Sequence[str]) -> Any:
    """The comparison's table with the runs under their display names."""
    t = data.comparison.table(layout, columns=list(columns), digits=data.digits)
    names = run_names(data)
    return t.renamed(names) if any(k != v for k, v in names.items()) else t


def names_note(data: Any) -> str:
    """``Runs: bm25 = run.dl19-passage.bm25; …`` when the page shortens run names."""
    pairs = [f"{v} = {k}" for k, v in run_names(data).items() if k != v]
    return ("Runs are shown by shorter names: " + "; ".join(pairs) + ".") if pairs else ""


def relevance_note(data: Any) -> str:
    """What counts as relevant, said beside the headline: ``relevant = label ≥ 2 (P, R,
    RR, AP); nDCG gain = label``, with the labels the qrels hold."""
    cov = getattr(data, "labels", None)
    level = getattr(data, "relevance_level", 1)
    graded = [m for m in data.measures if m.lower().startswith("ndcg")]
    text = f"Relevant = label ≥ {level}"
    if cov:
        text += f" (labels here: {', '.join(str(v) for v in cov)})"
    if graded:
        text += "; nDCG gain = label (graded, every label > 0 counts)"
    return text + "."


def choose_baseline(given: str | None, names: Sequence[str], func: str = "report", *,
                    what: str = "baseline") -> str:
    """``given`` resolved among ``names`` (exact, else the one name containing it); with
    no ``given``, the first name and a :class:`SearchEvalWarning` that says so.

    >>> choose_baseline("bm25", ["run.dl19.splade", "run.dl19.bm25"])
    'run.dl19.bm25'
    """
    names = [str(n) for n in names]
    if given is None:
        if len(names) > 1:
            warnings.warn(
                f"{func}: no {what}= given; using {names[0]!r}, the first run in the input's "
                f"order (the others: {', '.join(repr(n) for n in names[1:4])}"
                f"{' ...' if len(names) > 4 else ''}). Pass {what}={names[0]!r} to keep it, "
                "or the name of the run the others should be compared with.",
                SearchEvalWarning, stacklevel=outside_stacklevel())
        return names[0]
    return resolve_name(given, names, what=what, func=func)
