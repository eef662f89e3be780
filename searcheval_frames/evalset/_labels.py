"""What the evalset modules share to read labels, pools and texts (private module).

* :func:`parse_label`: one cell or widget value → an integer label.
* :func:`pool_pairs`: the pool as a small frame with ``query_id``, ``doc_id`` strings.
* :func:`id_column`: the column holding a canonical id, by its recognised names.
* :func:`docs_texts`: the document texts of a sheet or the widget, read by
  :mod:`searcheval_frames.io.texts` (the one reader, shared with the report).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from ..errors import MissingColumnError
from ..frames import ALIASES, find_column, to_polars
from ..io import texts

__all__ = ["docs_texts", "id_column", "parse_label", "pool_pairs"]


def parse_label(value: Any, lookup: dict[str, int] | None) -> int | None:
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



def id_column(df: pl.DataFrame, canon: str, arg: str) -> str:
    """The column of ``df`` that holds ``canon`` (``query_id``, ``doc_id``), by its aliases."""
    col = find_column(df, ALIASES[canon])
    if col is None:
        raise MissingColumnError(
            f"{arg}: no {canon!r} column; the columns are {df.columns}. Recognised names: "
            f"{', '.join(ALIASES[canon])}."
        )
    return col


def pool_pairs(pool: Any, arg: str = "pool") -> pl.DataFrame:
    """The pool (any frame) with string ``query_id`` and ``doc_id`` columns added."""
    df = to_polars(pool, arg)
    qid = id_column(df, "query_id", arg)
    did = id_column(df, "doc_id", arg)
    return df.with_columns(
        pl.col(qid).cast(pl.String).alias("query_id"), pl.col(did).cast(pl.String).alias("doc_id")
    )


def docs_texts(
    docs: Any, text_column: str | None, title_column: str | None, max_chars: int | None
) -> pl.DataFrame:
    """:func:`searcheval_frames.io.texts.docs_table` with texts cut at ``max_chars``."""
    df = texts.docs_table(docs, text_column, title_column)
    if max_chars is not None and "text" in df.columns:
        df = df.with_columns(texts.clip_text("text", max_chars))
    return df
