"""Query and document tables: the one reader of ``queries=`` and ``docs=`` arguments.

The report, the query-level analysis and the label sheets / widget all take the texts
of queries and documents as a dict, a dataframe (any kind) or a file, and all read them
here, with one list of recognised column names each (the union of what they accepted
before), so a table one of them accepts, all of them accept.

* :func:`queries_table` -> ``query_id, query``
* :func:`docs_table` -> ``doc_id`` plus ``title`` and/or ``text`` (as found)

Column names are matched case-insensitively, first name of each list first.

>>> queries_table({"q1": "bm25 tuning"}).rows()
[('q1', 'bm25 tuning')]
>>> import polars as pl
>>> docs_table(pl.DataFrame({"document_id": ["d1"], "doc_title": ["BM25"]})).rows()
[('d1', 'BM25')]
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from ..errors import FileFormatError, MissingColumnError
from ..frames import ALIASES, find_column
from ..frames.kinds import to_polars
from ._common import QUERY_ID_ALIASES, QUERY_TEXT_ALIASES

__all__ = [
    "DOC_ID_COLUMNS",
    "DOC_TEXT_COLUMNS",
    "DOC_TITLE_COLUMNS",
    "QUERY_ID_COLUMNS",
    "QUERY_TEXT_COLUMNS",
    "clip_text",
    "docs_table",
    "queries_table",
    "read_docs",
]


def _union(*lists: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(n for names in lists for n in names))


#: the names query files are read by (:mod:`searcheval_frames.io._common`), then
#: ``query`` (a frame of ``query, text`` has its id in ``query``)
QUERY_ID_COLUMNS = _union(QUERY_ID_ALIASES, ("query",))
QUERY_TEXT_COLUMNS = _union(("query", "text", "query_text", "question", "title"), QUERY_TEXT_ALIASES)
#: ``doc`` and ``document`` last: in document tables they are often the text
DOC_ID_COLUMNS = _union([n for n in ALIASES["doc_id"] if n not in ("doc", "document")],
                        ("id", "_id", "doc", "document"))
DOC_TITLE_COLUMNS = ("title", "doc_title", "headline", "name")
DOC_TEXT_COLUMNS = ("text", "body", "contents", "content", "passage", "doc_text", "abstract",
                    "document")


def _missing(arg: str, what: str, df: pl.DataFrame, names: Sequence[str], fix: str) -> MissingColumnError:
    return MissingColumnError(
        f"{arg}: no {what} column; the columns are {df.columns}. Recognised names: "
        f"{', '.join(names)}. {fix}"
    )


def queries_table(queries: Any, arg: str = "queries") -> pl.DataFrame:
    """``query_id, query`` (strings, one row per query id, first wins) from a dict
    ``{query_id: text}``, a dataframe of any kind or a query file (see
    :func:`~searcheval_frames.io.read_queries`)."""
    if isinstance(queries, Mapping):
        return pl.DataFrame(
            {"query_id": [str(k) for k in queries], "query": [str(v) for v in queries.values()]},
            schema={"query_id": pl.String, "query": pl.String},
        )
    if isinstance(queries, str | os.PathLike):
        from .queries import read_queries

        return read_queries(queries).select("query_id", "query")
    df = to_polars(queries, arg)
    fix = "Pass a frame with query_id and query, a dict {query_id: text} or a query file."
    qid = find_column(df, QUERY_ID_COLUMNS)
    if qid is None:
        raise _missing(arg, "query id", df, QUERY_ID_COLUMNS, fix)
    text = find_column(df, QUERY_TEXT_COLUMNS, exclude=[qid])
    if text is None:
        raise _missing(arg, "query text", df, QUERY_TEXT_COLUMNS, fix)
    return df.select(
        pl.col(qid).cast(pl.String).alias("query_id"), pl.col(text).cast(pl.String).alias("query")
    ).unique("query_id", keep="first", maintain_order=True)


def read_docs(path: str | os.PathLike[str], arg: str = "docs") -> pl.DataFrame:
    """A document table from a JSON Lines, CSV, TSV or Parquet file (all columns)."""
    path = Path(path)
    name = path.name.lower()
    if not path.is_file():
        raise FileFormatError(f"{arg}={str(path)!r}: no such file; pass a JSON Lines, CSV, TSV "
                              "or Parquet document table")
    if name.endswith((".jsonl", ".ndjson", ".jsonl.gz", ".ndjson.gz")):
        return pl.read_ndjson(path)
    if name.endswith(".parquet"):
        return pl.read_parquet(path)
    if name.endswith((".tsv", ".tsv.gz")):
        return pl.read_csv(path, separator="\t", quote_char=None, infer_schema=False)
    if name.endswith((".csv", ".csv.gz")):
        return pl.read_csv(path, infer_schema=False)
    raise FileFormatError(
        f"{arg}={str(path)!r}: cannot tell the format; use a .jsonl, .csv, .tsv or .parquet file"
    )


def docs_table(
    docs: Any,
    text_column: str | None = None,
    title_column: str | None = None,
    arg: str = "docs",
    doc_id_column: str | None = None,
) -> pl.DataFrame:
    """``doc_id`` plus ``title`` and/or ``text`` (whichever the table has; strings, one
    row per document, first wins) from a dict ``{doc_id: text}``, a dataframe of any
    kind or a document file (:func:`read_docs`).

    ``text_column`` / ``title_column`` name the columns when the recognised names
    (:data:`DOC_TEXT_COLUMNS`, :data:`DOC_TITLE_COLUMNS`) do not find them;
    ``doc_id_column`` names the caller's document id column (used when the table has
    it and no ``doc_id`` column).
    """
    if isinstance(docs, Mapping):
        df = pl.DataFrame({"doc_id": [str(k) for k in docs], "text": [str(v) for v in docs.values()]},
                          schema={"doc_id": pl.String, "text": pl.String})
    else:
        df = read_docs(docs, arg) if isinstance(docs, str | os.PathLike) else to_polars(docs, arg)
    for name, col in (("text_column", text_column), ("title_column", title_column)):
        if col is not None and col not in df.columns:
            raise MissingColumnError(f"{name}={col!r}: {arg} has no such column; it has {df.columns}")
    if doc_id_column is not None and doc_id_column in df.columns and "doc_id" not in df.columns:
        did: str | None = doc_id_column
    else:
        did = find_column(df, DOC_ID_COLUMNS, exclude=[c for c in (text_column, title_column) if c])
    if did is None:
        raise _missing(arg, "document id", df, DOC_ID_COLUMNS, "Name it doc_id.")
    text = text_column or find_column(df, DOC_TEXT_COLUMNS, exclude=[did, title_column or ""])
    title = title_column or find_column(df, DOC_TITLE_COLUMNS, exclude=[did, text or ""])
    if text is None and title is None:
        raise _missing(arg, "text or title", df, DOC_TEXT_COLUMNS + DOC_TITLE_COLUMNS,
                       "Pass text_column='...' where the function takes it.")
    cols = [pl.col(did).cast(pl.String).alias("doc_id")]
    cols += [pl.col(c).cast(pl.String).alias(a) for c, a in ((title, "title"), (text, "text")) if c]
    return df.select(cols).unique("doc_id", keep="first", maintain_order=True)


def clip_text(column: str, max_chars: int, keep: int | None = None) -> pl.Expr:
    """``column`` cut to its first ``keep`` characters (default ``max_chars``) plus "…"
    where it is longer than ``max_chars``; shorter texts (and nulls) unchanged.

    >>> pl.DataFrame({"t": ["short", "a long text"]}).select(clip_text("t", 6, keep=5))["t"].to_list()
    ['short', 'a lon…']
    """
    t = pl.col(column)
    cut = t.str.slice(0, max_chars if keep is None else keep) + pl.lit("…")
    return pl.when(t.str.len_chars() > max_chars).then(cut).otherwise(t).alias(column)
