"""Remember frames that are already canonical and checked, so they are not checked twice.

``sef.read_run`` validates a file line by line while it reads it and learns the
run's query blocks on the way; the frame it returns is then passed to
``sef.evaluate``, which would check it all over again (finite scores, duplicates,
blocks: a third of the time of a 7M-row evaluation). The reader records the frame
here; :func:`frames.canonical.run_frame_blocks` looks it up and skips the repeated work.

Keyed by the frame object (polars frames are immutable, so the same object
means the same content) and held weakly: an entry disappears with its frame, and
a frame derived from it (filtered, sliced, renamed) is a new object, checked anew.
"""

from __future__ import annotations

import weakref
from dataclasses import replace
from typing import Any

import polars as pl

from .blocks import Blocks

__all__ = ["checked_blocks", "mark_checked"]

_CHECKED: dict[int, tuple[weakref.ref[pl.DataFrame], Blocks | None]] = {}
_CANONICAL = {"run": pl.String, "query_id": pl.String, "doc_id": pl.String, "score": pl.Float64}


def _forget(key: int) -> None:
    _CHECKED.pop(key, None)


def mark_checked(df: Any, blocks: Blocks | None = None) -> Any:
    """Record that ``df`` is a canonical, validated run (with its blocks); return ``df``.

    Anything other than a polars frame with the canonical run columns and types
    is returned unrecorded.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"run": "r", "query_id": "1", "doc_id": ["a", "b"],
    ...                    "score": [2.0, 1.0]})
    >>> mark_checked(df) is df, checked_blocks(df)
    (True, (True, None))
    """
    if not isinstance(df, pl.DataFrame):
        return df
    schema = df.schema
    if any(schema.get(c) != t for c, t in _CANONICAL.items()) or not set(schema) <= {
        *_CANONICAL, "rank"
    } or ("rank" in schema and schema["rank"] != pl.Int64):
        return df
    if blocks is not None and blocks.doc_hash is not None:  # (8 bytes a row: not kept)
        blocks = replace(blocks, doc_hash=None)
    key = id(df)
    _CHECKED[key] = (weakref.ref(df), blocks)
    weakref.finalize(df, _forget, key)
    return df


def checked_blocks(df: Any) -> tuple[bool, Blocks | None]:
    """``(True, blocks)`` when ``df`` itself was recorded by :func:`mark_checked`."""
    entry = _CHECKED.get(id(df))
    if entry is None or entry[0]() is not df:
        return False, None
    return True, entry[1]
