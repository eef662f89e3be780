"""Shared input helpers of the query-level analysis (runs, qrels, query and document texts).

Private to :mod:`searcheval_frames.analysis` and the report: paths are read with the
project's readers, frames go through the canonical validators, and query / document
tables are read by :mod:`searcheval_frames.io.texts` (the one reader, shared with the
label sheets) and reduced to ``query_id, query`` and ``doc_id, title``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from ..frames import is_path, qrels_frame, run_frame
from ..io import texts

__all__ = ["docs_table", "qrels_pl", "queries_table", "runs_pl"]

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
    return None if queries is None else texts.queries_table(queries)


def docs_table(docs: Any, columns: Mapping[str, str] | None = None) -> pl.DataFrame | None:
    """``doc_id, title`` (the title, else the start of the text) for display; the doc id
    column may be named by ``columns={"doc_id": ...}``."""
    if docs is None:
        return None
    df = texts.docs_table(docs, doc_id_column=(columns or {}).get("doc_id"))
    title = "title" if "title" in df.columns else "text"
    return df.select("doc_id", texts.clip_text(title, TITLE_CHARS, keep=TITLE_CHARS - 1)
                     .alias("title"))
