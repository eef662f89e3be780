"""The pairs a judge sees: ``query_id, doc_id, query, text`` from pairs + query / doc tables."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from ...analysis._inputs import queries_table
from ...errors import IdMismatchError, InvalidOptionError, MissingColumnError, format_rows
from ...frames import find_column
from ...io.texts import docs_table

__all__ = ["as_polars", "docs_texts", "judge_pairs"]

_DOC_ID = ("doc_id", "docid", "docno", "pid", "id", "_id")
_QUERY_ID = ("query_id", "qid", "topic")


def as_polars(obj: Any, arg: str) -> pl.DataFrame:
    """A polars frame from polars, pandas, pyarrow or a dict of columns."""
    if isinstance(obj, pl.DataFrame):
        return obj
    if isinstance(obj, pl.LazyFrame):
        return obj.collect()
    if isinstance(obj, Mapping):
        return pl.DataFrame(dict(obj))
    try:
        out = pl.from_pandas(obj) if hasattr(obj, "iloc") else pl.from_arrow(obj)
    except (TypeError, ValueError) as exc:
        raise InvalidOptionError(
            f"{arg}: expected a dataframe (pandas, polars, pyarrow); got {type(obj).__name__}"
        ) from exc
    if not isinstance(out, pl.DataFrame):  # pragma: no cover - a pyarrow array
        raise InvalidOptionError(f"{arg}: expected a table, got {type(obj).__name__}")
    return out


def docs_texts(docs: Any) -> pl.DataFrame:
    """``doc_id, text`` (title and text joined by a blank line when both exist), read by
    the package's one reader of document tables (:func:`searcheval_frames.io.texts.docs_table`)."""
    df = docs_table(docs.collect() if isinstance(docs, pl.LazyFrame) else docs)
    parts = [pl.col(c).fill_null("") for c in ("title", "text") if c in df.columns]
    body = parts[0] if len(parts) == 1 else pl.concat_str(parts, separator="\n\n")
    return df.select("doc_id", body.str.strip_chars().alias("text")).unique("doc_id",
                                                                           keep="first")


def judge_pairs(pairs: Any, queries: Any = None, docs: Any = None) -> pl.DataFrame:
    """Unique ``query_id, doc_id, query, text`` for the judge, texts checked present."""
    df = as_polars(pairs, "pairs")
    qid, did = find_column(df, _QUERY_ID), find_column(df, _DOC_ID, exclude=[""])
    if qid is None or did is None:
        raise MissingColumnError(
            f"pairs: need query_id and doc_id columns (e.g. from sef.pool); the columns are "
            f"{df.columns}"
        )
    out = df.select(pl.col(qid).cast(pl.String).alias("query_id"),
                    pl.col(did).cast(pl.String).alias("doc_id"),
                    *[pl.col(c).cast(pl.String) for c in ("query", "text")
                      if c in df.columns and c not in (qid, did)])
    out = out.unique(["query_id", "doc_id"], keep="first", maintain_order=True)
    if queries is not None:
        qt = queries_table(queries)
        assert qt is not None
        out = out.drop("query", strict=False).join(qt, on="query_id", how="left")
    if docs is not None:
        out = out.drop("text", strict=False).join(docs_texts(docs), on="doc_id", how="left")
    for col, arg in (("query", "queries"), ("text", "docs")):
        if col not in out.columns:
            raise MissingColumnError(
                f"pairs: no {col!r} column and no {arg}= given; pass {arg}= (a frame, a dict "
                f"or a file) or put the texts on the pairs as 'query' and 'text'"
            )
        miss = out.filter(pl.col(col).is_null())
        if miss.height:
            raise IdMismatchError(
                f"{arg}: no {col} for {miss.height} pair(s) (a judge needs both texts):\n"
                f"{format_rows(miss.select('query_id', 'doc_id'))}\nAdd them to {arg}= or drop "
                "those pairs."
            )
    return out.select("query_id", "doc_id", "query", "text")
