"""Exceptions raised by searcheval_frames.

Every error is a :class:`SearchEvalError`, itself a :class:`ValueError`, so
``except ValueError`` keeps working for callers who do not care about the
details. Messages name the argument and column, show up to three offending
rows and say how to fix the problem.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AmbiguousColumnError",
    "DatasetError",
    "DuplicateRowsError",
    "EmptyInputError",
    "FileAccessError",
    "FileFormatError",
    "IdMismatchError",
    "InsufficientDataError",
    "InvalidIdError",
    "InvalidOptionError",
    "InvalidRelevanceError",
    "InvalidScoreError",
    "LabelConflictError",
    "LazyPlanError",
    "MeasureDefinitionError",
    "MeasureParameterError",
    "MissingColumnError",
    "PaddedIdError",
    "PluginError",
    "SearchEvalError",
    "SearchEvalWarning",
    "UnknownMeasureError",
    "UnknownOptionError",
    "UnsupportedInputError",
    "UnwritableValueError",
    "format_rows",
]


class SearchEvalError(ValueError):
    """Base class of every error raised for bad input or bad arguments."""


class MissingColumnError(SearchEvalError):
    """A required column is absent (after alias resolution)."""


class DuplicateRowsError(SearchEvalError):
    """The same (run, query, document) appears more than once."""


class InvalidScoreError(SearchEvalError):
    """Scores that are null, NaN, infinite or not numeric."""


class InvalidRelevanceError(SearchEvalError):
    """Relevance labels that are null or not integers."""


class EmptyInputError(SearchEvalError):
    """A run or qrels frame without rows."""


class IdMismatchError(SearchEvalError):
    """Query ids of the run and of the qrels have nothing in common."""


class UnknownMeasureError(SearchEvalError):
    """A measure name that does not parse; the message suggests the closest."""


class InvalidOptionError(SearchEvalError):
    """An option of a public function has a wrong type, range or value."""


class FileFormatError(SearchEvalError):
    """A malformed line in a file: carries the path, line number and text."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line_no: int | None = None,
        line: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.path = path
        self.line_no = line_no
        self.line = line
        self.hint = hint
        where = ""
        if path is not None:
            where = f"{path}"
            if line_no is not None:
                where += f":{line_no}"
            where += ": "
        text = f"{where}{message}"
        if line is not None:
            text += f"\n    line {line_no}: {line!r}"
        if hint:
            text += f"\n  hint: {hint}"
        super().__init__(text)


def format_rows(frame: Any, n: int = 3) -> str:
    """Render up to ``n`` rows of a polars frame as indented text for messages."""
    import polars as pl

    if not isinstance(frame, pl.DataFrame):
        frame = pl.DataFrame(frame)
    total = frame.height
    head = frame.head(n)
    lines = []
    cols = head.columns
    for row in head.iter_rows():
        lines.append("    " + ", ".join(f"{c}={v!r}" for c, v in zip(cols, row, strict=True)))
    if total > n:
        lines.append(f"    ... and {total - n} more")
    return "\n".join(lines)


class SearchEvalWarning(UserWarning):
    """Something was dropped or filled in, and the caller should know which rows."""


# --- round 3 of "no silent wrong number" (issue #22) -------------------------------
class AmbiguousColumnError(SearchEvalError):
    """Two columns both name the same canonical column (``qid`` and ``topic``) and differ."""


class PaddedIdError(IdMismatchError):
    """Ids with leading or trailing whitespace, which would match no label."""


class LazyPlanError(SearchEvalError):
    """A polars LazyFrame whose plan failed when it was collected."""


class FileAccessError(SearchEvalError):
    """A file that cannot be opened or written (permission denied, a folder, ...)."""

    def __init__(self, message: str, *, path: str | None = None) -> None:
        self.path = path
        super().__init__(message)


class UnknownOptionError(InvalidOptionError, TypeError):
    """A keyword argument no function of the call accepts: an :class:`InvalidOptionError`
    naming the closest valid name (also a ``TypeError``, as Python's own error for an
    unexpected keyword argument)."""


# --- issue #19: each error names its cause -----------------------------------------
class MeasureParameterError(UnknownMeasureError):
    """A known measure given a cutoff or parameters it cannot take, or that conflict.

    ``P@2.5``, ``RBP(rel=2,gain=exp)``, ``INST(min_rel=2,max_rel=2)``.
    """


class InvalidIdError(SearchEvalError):
    """Ids that cannot be ids: missing, non-integral floats, floats past 2**53, lists.

    Ids are text or integers; anything else would match no label.
    """


class UnsupportedInputError(SearchEvalError):
    """An object that is no frame this package reads, or a dict of the wrong shape."""


class UnwritableValueError(SearchEvalError):
    """A value the file format cannot hold: whitespace in a TREC field, a TAB in TSV."""


class DatasetError(SearchEvalError):
    """An ``irds:`` dataset that cannot be read: no ir_datasets, an unknown id, no qrels."""


class MeasureDefinitionError(UnknownMeasureError, InvalidOptionError):
    """A custom measure declared wrongly (``sef.measure(...)``: its name, cutoff, params)."""


class InsufficientDataError(SearchEvalError):
    """Too few runs, queries or assessors for the computation (two runs to compare, ...)."""


class LabelConflictError(SearchEvalError):
    """Assessors gave one document different labels and the merge policy cannot settle it."""


class PluginError(SearchEvalError):
    """A measure plugin (a ``--plugin`` file or an entry point) that fails to load."""
