"""Input hazards caught while a user's frame becomes canonical (issue #22).

Each function either passes the frame on or raises a
:class:`~searcheval_frames.errors.SearchEvalError` subclass that names the column, shows
a few offending rows and says how to fix it, where the input used to give a silent wrong
number or a raw pandas/polars exception:

* ``pandas_frame``: duplicate column names; an id both as the index name and a column;
* ``collect``: a ``LazyFrame`` whose plan fails when collected;
* ``ambiguous_columns``: two columns that both look like the same id (``qid`` and
  ``topic``) with different contents;
* ``padded_ids``: ids with leading or trailing whitespace (they match no label);
* ``float_ids``: integral float ids beyond 2**53 (they went through float64 and lost
  digits);
* ``nested_hint``: the fix for list- or struct-typed columns (e.g. read from Parquet).

>>> import polars as pl
>>> from searcheval_frames.frames.hazards import padded_ids
>>> padded_ids(pl.DataFrame({"doc_id": ["d1", "d2 "]}), ["doc_id"], "run")
Traceback (most recent call last):
...
searcheval_frames.errors.PaddedIdError: run: column 'doc_id' has 1 id(s) with leading or trailing whitespace:
    doc_id='d2 '
They would match no label (ids are compared exactly). Strip them first, e.g. df['doc_id'] = df['doc_id'].str.strip() (pandas) or pl.col('doc_id').str.strip_chars() (polars).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from ..errors import (
    AmbiguousColumnError,
    InvalidIdError,
    LazyPlanError,
    PaddedIdError,
    format_rows,
)

__all__ = [
    "FLOAT_EXACT",
    "PADDED",
    "ambiguous_columns",
    "collect",
    "float_ids",
    "nested_hint",
    "padded_ids",
    "pandas_frame",
]

#: The largest float64 below which every integer is exact (2**53).
FLOAT_EXACT = 2**53

#: An id with whitespace at either end.
PADDED = r"^\s|\s$"

#: Every character ``\s`` matches in polars' regex (Unicode White_Space): an id holding
#: none of them anywhere cannot be padded (one substring search, no regex per row).
WHITESPACE = ["\t", "\n", "\x0b", "\x0c", "\r", " ", "\x85", "\xa0", "\u1680",
              *(chr(c) for c in range(0x2000, 0x200B)), "\u2028", "\u2029", "\u202f",
              "\u205f", "\u3000"]


def pandas_frame(df: Any, arg: str) -> Any:
    """Refuse duplicate column names and an index name that is also a differing column."""
    dup = df.columns[df.columns.duplicated()].unique().tolist()
    if dup:
        raise AmbiguousColumnError(
            f"{arg}: the pandas frame has duplicate column names {dup}; which one is meant "
            "cannot be told. Rename or drop the copies, e.g. "
            "df = df.loc[:, ~df.columns.duplicated()] when they hold the same values."
        )
    both = [n for n in df.index.names if n is not None and n in df.columns]
    for name in both:
        index_values = df.index.get_level_values(name)
        if not (index_values.astype(str) == df[name].astype(str)).all():
            raise AmbiguousColumnError(
                f"{arg}: {name!r} is both the index name and a column, with different "
                f"values (e.g. index {index_values[0]!r} vs column {df[name].iloc[0]!r}). "
                "Keep one: df.reset_index(drop=True) drops the index, "
                f"df.drop(columns={name!r}).reset_index() keeps it."
            )
    if both:
        df = df.reset_index(level=both, drop=True)
    return df


def collect(lf: pl.LazyFrame, arg: str) -> pl.DataFrame:
    """Collect a LazyFrame; a plan that fails becomes a :class:`LazyPlanError`."""
    try:
        return lf.collect()
    except pl.exceptions.PolarsError as exc:
        raise plan_failed(exc, arg) from exc


def plan_failed(exc: Exception, arg: str) -> LazyPlanError:
    """The :class:`LazyPlanError` for a polars error raised by a LazyFrame's plan."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return LazyPlanError(
        f"{arg}: the LazyFrame's plan failed when it was collected "
        f"({type(exc).__name__}: {first}). The input is fine to pass lazily, but its "
        "plan must run: call .collect() on it yourself to see the full polars error, "
        "and fix the step it names (often a cast, a missing column or a file that moved)."
    )


def ambiguous_columns(
    df: pl.DataFrame,
    found: Mapping[str, str],
    aliases: Mapping[str, Sequence[str]],
    given: Mapping[str, str],
    arg: str,
) -> None:
    """Raise when another column also looks like a canonical column and differs from it.

    Not checked when the canonical name itself is a column (``query_id``: the caller
    named it) or when ``columns=`` (``given``) chose the column.
    """
    taken = set(found.values())
    for canon, col in found.items():
        if canon in given or col == canon:
            continue
        names = set(aliases[canon])
        others = [c for c in df.columns if c.lower() in names and c not in taken]
        for other in others:
            differ = df.filter(pl.col(col).cast(pl.String) != pl.col(other).cast(pl.String))
            if differ.height:
                raise AmbiguousColumnError(
                    f"{arg}: columns {col!r} and {other!r} both look like the {canon} and "
                    f"differ in {differ.height} row(s):\n"
                    f"{format_rows(differ.select(col, other))}\n"
                    f"Say which one it is, e.g. columns={{{canon!r}: {col!r}}} "
                    f"(or {{{canon!r}: {other!r}}}), or drop the other column."
                )


def padded_ids(df: pl.DataFrame, cols: Sequence[str], arg: str,
               user: Mapping[str, str] | None = None) -> None:
    """Raise when a string id column holds ids with whitespace at either end."""
    for c in cols:
        if df.schema[c] != pl.String:
            continue
        # ids with whitespace anywhere (aho-corasick, about twice as fast as the regex),
        # then the regex on those only: the same rows, in the same order
        bad = df.filter(pl.col(c).str.contains_any(WHITESPACE)).filter(
            pl.col(c).str.contains(PADDED))
        if bad.height:
            name = (user or {}).get(c, c)
            raise PaddedIdError(
                f"{arg}: column {name!r} has {bad.height} id(s) with leading or trailing "
                f"whitespace:\n{format_rows(bad.select(c))}\nThey would match no label "
                "(ids are compared exactly). Strip them first, e.g. "
                f"df[{name!r}] = df[{name!r}].str.strip() (pandas) or "
                f"pl.col({name!r}).str.strip_chars() (polars)."
            )


def float_ids(df: pl.DataFrame, col: str, arg: str, user_col: str) -> None:
    """Raise when integral float ids are too large for float64 to hold them exactly."""
    bad = df.filter(pl.col(col).abs() >= FLOAT_EXACT)
    if bad.height:
        raise InvalidIdError(
            f"{arg}: column {user_col!r} holds float ids of 2**53 or more:\n"
            f"{format_rows(bad.select(col))}\nThey went through float64 (pandas makes an "
            "integer column float when a value is missing) and lost their last digits, so "
            "neighbouring ids became equal. Read the ids as strings, e.g. "
            f"pd.read_csv(..., dtype={{{user_col!r}: str}}), or as Int64."
        )


def nested_hint(dtype: Any, user_col: str) -> str:
    """The fix for a list- or struct-typed column (Parquet keeps them), or ''."""
    if isinstance(dtype, pl.List | pl.Array):
        return (f" The column holds lists (one per row; Parquet keeps them): make one row "
                f"per element with df.explode({user_col!r}), or take one element with "
                f"pl.col({user_col!r}).list.first().")
    if isinstance(dtype, pl.Struct):
        return (f" The column holds structs: pick the field with "
                f"pl.col({user_col!r}).struct.field('...').")
    return ""
