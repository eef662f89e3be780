"""Grades and the columns a label sheet, a pool or a document table is read from.

* :func:`normalize_grades` / :func:`grade_names`: the accepted labels (integers or names).
* ``_parse_label``: one cell or widget value → an integer label.
* ``_find_column`` / ``_id_column``: find a column by its recognised names.
* ``_pool_pairs``: the pool as a small canonical frame; ``_queries_table``,
  ``_docs_table``: query and document texts, read by :mod:`searcheval_frames.io.texts`
  (the one reader, shared with the report), for sheets and the widget.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from ..errors import MissingColumnError, SearchEvalError
from ..frames import ALIASES
from ..frames import find_column as _find_column
from ..frames import to_polars as _to_polars_frame
from ..io import texts

Grades = Sequence[int] | Mapping[str, int] | None

ASSESSOR_COLUMNS = ("assessor", "annotator", "rater", "judge", "labeler", "labeller", "user")


# --------------------------------------------------------------------------- grades
def normalize_grades(grades: Grades, arg: str = "grades") -> dict[str, int] | None:
    """``grades`` as {accepted text: grade}; ``None`` accepts any integer.

    A sequence of integers ``[0, 1, 2, 3]`` accepts those numbers; a mapping
    ``{"not relevant": 0, "relevant": 1}`` accepts the names (case-insensitive) and the
    numbers.
    """
    if grades is None:
        return None
    out: dict[str, int] = {}
    if isinstance(grades, Mapping):
        items = list(grades.items())
    elif isinstance(grades, str | bytes):
        raise SearchEvalError(f"{arg}={grades!r}: give a list of integers or a mapping name→int")
    else:
        items = [(str(g), g) for g in grades]
    if not items:
        raise SearchEvalError(f"{arg}: at least one grade is needed, e.g. grades=[0, 1, 2, 3]")
    for name, value in items:
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise SearchEvalError(
                f"{arg}: grade {name!r} has value {value!r}; grades must be integers "
                "(0 = not relevant, 1, 2, ... graded)"
            )
        out[str(name).strip().lower()] = int(value)
        out[str(int(value))] = int(value)
    return out


def grade_names(grades: Grades) -> list[tuple[int, str]]:
    """[(grade, display name)] in grade order, for sheets and the widget."""
    if grades is None:
        return [(0, "0"), (1, "1")]
    if isinstance(grades, Mapping):
        pairs = [(int(v), str(k)) for k, v in grades.items()]
    else:
        pairs = [(int(g), str(int(g))) for g in grades]
    seen: dict[int, str] = {}
    for v, n in pairs:
        seen.setdefault(v, n)
    return sorted(seen.items())


def _parse_label(value: Any, lookup: dict[str, int] | None) -> int | None:
    """A cell's label → int; None for empty; raises ValueError for unknown."""
    if value is None:
        return None
    if isinstance(value, float):
        if value != value:
            return None
        if value != int(value):
            raise ValueError(value)
        value = int(value)
    if isinstance(value, bool):
        raise ValueError(value)
    if isinstance(value, int | np.integer):
        if lookup is not None and str(int(value)) not in lookup:
            raise ValueError(value)
        return int(value)
    text = str(value).strip()
    if not text:
        return None
    key = text.lower()
    if lookup is not None:
        if key in lookup:
            return lookup[key]
        try:
            as_num = float(text)
        except ValueError:
            raise ValueError(value) from None
        if as_num == int(as_num) and str(int(as_num)) in lookup:
            return int(as_num)
        raise ValueError(value)
    as_num = float(text)  # ValueError for words
    if as_num != int(as_num):
        raise ValueError(value)
    return int(as_num)


# --------------------------------------------------------------------------- columns
def _id_column(df: pl.DataFrame, canon: str, arg: str) -> str:
    col = _find_column(df, ALIASES[canon])
    if col is None:
        raise MissingColumnError(
            f"{arg}: no {canon!r} column; the columns are {df.columns}. Recognised names: "
            f"{', '.join(ALIASES[canon])}."
        )
    return col


def _queries_table(queries: Any) -> pl.DataFrame:
    return texts.queries_table(queries)


def _docs_table(
    docs: Any, text_column: str | None, title_column: str | None, max_chars: int | None
) -> pl.DataFrame:
    df = texts.docs_table(docs, text_column, title_column)
    if max_chars is not None and "text" in df.columns:
        t = pl.col("text")
        df = df.with_columns(
            pl.when(t.str.len_chars() > max_chars)
            .then(t.str.slice(0, max_chars) + pl.lit("…"))
            .otherwise(t)
        )
    return df


def _pool_pairs(pool: Any, arg: str = "pool") -> pl.DataFrame:
    df = _to_polars_frame(pool, arg)
    qid = _id_column(df, "query_id", arg)
    did = _id_column(df, "doc_id", arg)
    return df.with_columns(
        pl.col(qid).cast(pl.String).alias("query_id"), pl.col(did).cast(pl.String).alias("doc_id")
    )
