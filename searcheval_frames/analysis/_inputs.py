"""Shared input helpers of the query-level analysis (runs, qrels, query and document texts).

Private to :mod:`searcheval_frames.analysis` and the report: paths are read with the
project's readers, frames go through the canonical validators, and query / document
tables are reduced to ``query_id, query`` and ``doc_id, title``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from ..errors import FileFormatError, MissingColumnError
from ..frames import _to_polars as _frame
from ..frames import find_column as _find
from ..frames import is_path, qrels_frame, run_frame

__all__ = ["docs_table", "qrels_pl", "queries_table", "runs_pl"]

_QUERY_TEXT = ("query", "text", "title", "question", "query_text")
_DOC_ID = ("doc_id", "docid", "docno", "pid", "id", "_id", "url")
_QUERY_ID = ("query_id", "qid", "topic", "query", "id", "_id")
_DOC_TITLE = ("title", "headline", "name")
_DOC_TEXT = ("text", "body", "contents", "content", "passage", "abstract")
TITLE_CHARS = 90


def runs_pl(runs: Any, arg: str = "runs", columns: Mapping[str, str] | None = None
            ) -> pl.DataFrame:
    """Canonical run frame (``run, query_id, doc_id, score``) from frames or file paths;
    ``columns`` maps canonical names to the caller's (entries the frame lacks are skipped,
    so one mapping serves runs and qrels)."""
    if is_path(runs):
        from ..io import read_run

        runs = read_run(runs)
    return run_frame(runs, arg=arg, columns=_present(runs, columns)).select(
        "run", "query_id", "doc_id", "score")


def qrels_pl(qrels: Any, columns: Mapping[str, str] | None = None) -> pl.DataFrame:
    """Canonical qrels frame (``query_id, doc_id, relevance``) from a frame or a path."""
    if is_path(qrels):
        from ..io import read_qrels

        qrels = read_qrels(qrels)
    return qrels_frame(qrels, columns=_present(qrels, columns)).select(
        "query_id", "doc_id", "relevance")


def _present(frame: Any, columns: Mapping[str, str] | None) -> Mapping[str, str] | None:
    if not columns or isinstance(frame, Mapping) or not hasattr(frame, "columns"):
        return columns
    have = set(frame.columns)
    return {k: v for k, v in columns.items() if v in have} or None


def queries_table(queries: Any) -> pl.DataFrame | None:
    """``query_id, query`` from a dict, a frame or a query file (``None`` passes through)."""
    if queries is None:
        return None
    if isinstance(queries, Mapping):
        return pl.DataFrame(
            {"query_id": [str(k) for k in queries], "query": [str(v) for v in queries.values()]},
            schema={"query_id": pl.String, "query": pl.String},
        )
    if isinstance(queries, str | Path):
        from ..io import read_queries

        return read_queries(queries).select("query_id", "query")
    df = _frame(queries, "queries")
    qid = _find(df, _QUERY_ID)
    text = _find(df, _QUERY_TEXT, exclude=(qid or "",))
    if qid is None or text is None:
        raise MissingColumnError(
            f"queries: need a query id and a query text column; the columns are {df.columns}. "
            "Pass a frame with query_id and query, a dict {query_id: text} or a query file."
        )
    return df.select(
        pl.col(qid).cast(pl.String).alias("query_id"), pl.col(text).cast(pl.String).alias("query")
    ).unique("query_id", keep="first", maintain_order=True)


def _read_docs(path: Path) -> pl.DataFrame:
    name = path.name.lower()
    if not path.is_file():
        raise FileFormatError(f"docs={str(path)!r}: no such file; pass a JSON Lines, CSV, TSV or "
                              "Parquet document table")
    if name.endswith((".jsonl", ".ndjson", ".jsonl.gz", ".ndjson.gz")):
        return pl.read_ndjson(path)
    if name.endswith(".parquet"):
        return pl.read_parquet(path)
    if name.endswith((".tsv", ".tsv.gz")):
        return pl.read_csv(path, separator="\t", quote_char=None, infer_schema=False)
    if name.endswith((".csv", ".csv.gz")):
        return pl.read_csv(path, infer_schema=False)
    raise FileFormatError(
        f"docs={str(path)!r}: cannot tell the format; use a .jsonl, .csv, .tsv or .parquet file"
    )


def docs_table(docs: Any, columns: Mapping[str, str] | None = None) -> pl.DataFrame | None:
    """``doc_id, title`` (the title, else the start of the text) for display; the doc id
    column may be named by ``columns={"doc_id": ...}``."""
    if docs is None:
        return None
    if isinstance(docs, Mapping):
        df = pl.DataFrame(
            {"doc_id": [str(k) for k in docs], "title": [str(v) for v in docs.values()]},
            schema={"doc_id": pl.String, "title": pl.String},
        )
    else:
        df = _read_docs(Path(docs)) if isinstance(docs, str | Path) else _frame(docs, "docs")
    did = (columns or {}).get("doc_id")
    did = did if did in df.columns else _find(df, _DOC_ID)
    if did is None:
        raise MissingColumnError(
            f"docs: no document id column; the columns are {df.columns}. Recognised names: "
            f"{', '.join(_DOC_ID)}."
        )
    title = _find(df, _DOC_TITLE, exclude=(did,)) or _find(df, _DOC_TEXT, exclude=(did,))
    if title is None:
        raise MissingColumnError(
            f"docs: no title or text column; the columns are {df.columns}. Recognised names: "
            f"{', '.join(_DOC_TITLE + _DOC_TEXT)}."
        )
    t = pl.col(title).cast(pl.String)
    t = pl.when(t.str.len_chars() > TITLE_CHARS).then(
        t.str.slice(0, TITLE_CHARS - 1) + pl.lit("…")
    ).otherwise(t)
    return df.select(pl.col(did).cast(pl.String).alias("doc_id"), t.alias("title")).unique(
        "doc_id", keep="first", maintain_order=True
    )
