"""How query texts are compared: one normalisation and one tokenisation for the query set.

:func:`normalize_expr` is what "the same query" means when a log is counted and when
test queries are audited: Unicode NFKC (full-width letters, ligatures and non-breaking
spaces become their plain forms), lower case, runs of whitespace as one space, no space
at either end. :func:`tokens_expr` splits a normalised text into word tokens (``\\w+``,
Unicode-aware). ``normalize=`` of the public functions takes ``True`` (this), ``False``
(texts compared as typed) or a function ``str -> str`` (applied once per distinct text).

>>> import polars as pl
>>> df = pl.DataFrame({"q": ["  HNSW\\u00a0vs  IVF ", "ｈｎｓｗ vs ivf"]})
>>> df.select(normalize_expr("q", True))["q"].to_list()
['hnsw vs ivf', 'hnsw vs ivf']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl

from ...options import option_error

__all__ = ["Normalize", "check_normalize", "normalize_expr", "normalize_frame", "tokens_expr"]

Normalize = bool | Callable[[str], str]


def check_normalize(func: str, normalize: Any) -> Normalize:
    """``normalize`` if it is ``True``, ``False`` or a function, else an option error."""
    if isinstance(normalize, bool) or callable(normalize):
        return normalize
    raise option_error(func, "normalize", normalize,
                       "must be True (NFKC, lower case, one space), False or a function str -> str",
                       "normalize=str.casefold")


def normalize_expr(column: str, normalize: Normalize) -> pl.Expr:
    """The column's texts normalised (``True``), as given (``False``) or by a function."""
    col = pl.col(column)
    if normalize is False:
        return col
    if normalize is True:
        return (col.str.normalize("NFKC").str.to_lowercase()
                .str.replace_all(r"\s+", " ").str.strip_chars())
    fn = normalize
    return col.map_elements(lambda s: str(fn(s)), return_dtype=pl.String, skip_nulls=True)


def normalize_frame(df: pl.DataFrame, column: str, normalize: Normalize,
                    alias: str) -> pl.DataFrame:
    """``df`` with ``alias``: ``column`` normalised, computed once per distinct text (a
    function is called once per distinct text, not once per row)."""
    distinct = df.select(pl.col(column).unique())
    distinct = distinct.with_columns(normalize_expr(column, normalize).alias(alias))
    return df.join(distinct, on=column, how="left", nulls_equal=True, maintain_order="left")


def tokens_expr(column: str) -> pl.Expr:
    """Word tokens (``\\w+``) of an already normalised text column, as a list column."""
    return pl.col(column).str.extract_all(r"\w+")
