"""Chunk-level RAG runs: map chunk ids to documents and collapse them (``sef.collapse``).

A RAG retriever ranks *chunks* (passages of documents); relevance may be judged per
chunk or per document. :func:`collapse` turns a chunk-level run (or qrels) into a
document-level one:

* ``doc_of`` maps a chunk id to its document: a separator (``"#"`` reads
  ``"doc7#3"`` as document ``"doc7"``: everything before the *last* separator), a
  function ``chunk_id -> doc_id``, or a mapping (a dict, or a frame with
  ``chunk_id`` and ``doc_id`` columns);
* identical chunks (one chunk id retrieved twice for a query, which makes chunk
  recall exceed 1) collapse to one row keeping the higher score, also with
  ``to="chunk"`` (no mapping);
* ``how="max"``: a document's score is its best chunk's score;
  ``how="first"``: documents keep the order of their first chunk in trec_eval order
  (score descending, chunk id descending), and the score becomes ``n - i`` for the
  ``i``-th document (0-based) of a query's ``n``, so that ties between documents do
  not reorder them;
* qrels (a frame with a relevance column) collapse with the largest label of a
  document's chunks (a document holding a relevant chunk is relevant).

A frame whose ids are at both levels (some chunk ids, some document ids, as seen by
the separator or the mapping) raises :class:`~searcheval_frames.errors.IdMismatchError`
naming a few rows of each: evaluate chunks against chunk labels, or collapse both.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

import polars as pl

from ..errors import DuplicateRowsError, IdMismatchError, MissingColumnError
from ..options import check_choice, option_error
from .canonical import ALIASES, find_column, qrels_frame, run_frame
from .kinds import input_kind, to_native, to_polars

__all__ = ["collapse"]

DocOf = str | Callable[[str], str] | Mapping[str, str] | Any


def _mapping(doc_of: Any) -> pl.DataFrame | None:
    """``chunk_id, _doc`` from a dict or a frame (None for a separator or function)."""
    frame_like = hasattr(doc_of, "columns") or isinstance(doc_of, Mapping)
    if isinstance(doc_of, str) or not frame_like:
        return None  # a separator, a function, or no mapping at all (refused by the caller)
    if isinstance(doc_of, Mapping):
        return pl.DataFrame({"chunk_id": [str(k) for k in doc_of],
                             "_doc": [str(v) for v in doc_of.values()]})
    df = to_polars(doc_of, "doc_of")
    if "chunk_id" not in df.columns or "doc_id" not in df.columns:
        raise MissingColumnError(
            f"collapse(doc_of=...): a mapping frame needs chunk_id and doc_id columns "
            f"(it has {', '.join(df.columns)}); rename them, or pass a separator such as "
            "doc_of='#' or a function")
    df = df.select(pl.col("chunk_id").cast(pl.String), pl.col("doc_id").cast(pl.String)
                   .alias("_doc"))
    dup = df.filter(pl.col("chunk_id").is_duplicated() & pl.struct(df.columns).is_unique())
    if dup.height:
        raise DuplicateRowsError(f"collapse(doc_of=...): chunk {dup['chunk_id'][0]!r} maps "
                                 "to two documents; a chunk belongs to one document")
    return df.unique()


def _with_doc(df: pl.DataFrame, doc_of: Any, what: str) -> pl.DataFrame:
    """``df`` plus ``_doc`` (its document) and ``_chunk`` (is the id a chunk id?)."""
    ids = pl.col("doc_id")
    if isinstance(doc_of, str):
        if not doc_of:
            raise option_error("collapse", "doc_of", doc_of, "must not be empty: give the "
                               "separator between document id and chunk number", "doc_of='#'")
        out = df.with_columns(ids.str.contains(doc_of, literal=True).alias("_chunk"))
        head = ids.str.reverse().str.splitn(doc_of[::-1], 2).struct.field("field_1").str.reverse()
        out = out.with_columns(pl.when(pl.col("_chunk")).then(head).otherwise(ids).alias("_doc"))
    elif (mapping := _mapping(doc_of)) is not None:
        out = df.join(mapping, left_on="doc_id", right_on="chunk_id", how="left")
        unknown = out.filter(pl.col("_doc").is_null() & ~ids.is_in(mapping["_doc"].implode()))
        if unknown.height:
            raise IdMismatchError(
                f"collapse: {unknown.height} {what} rows have an id that is neither a chunk "
                f"nor a document of doc_of, e.g. {unknown['doc_id'].head(3).to_list()}; "
                "add them to the mapping")
        out = out.with_columns(pl.col("_doc").is_not_null().alias("_chunk"),
                               pl.col("_doc").fill_null(ids))
    elif callable(doc_of):
        uniq = df.select(ids.unique())["doc_id"]
        try:
            mapped = [str(doc_of(x)) for x in uniq.to_list()]
        except Exception as exc:
            raise option_error("collapse", "doc_of", doc_of, f"the function failed on a "
                               f"{what} id ({type(exc).__name__}: {exc})",
                               "doc_of=lambda chunk: chunk.split('#')[0]") from exc
        table = pl.DataFrame({"doc_id": uniq, "_doc": mapped}, schema={"doc_id": pl.String,
                                                                      "_doc": pl.String})
        out = df.join(table, on="doc_id", how="left").with_columns(pl.lit(True).alias("_chunk"))
    else:
        raise option_error("collapse", "doc_of", doc_of, "must be a separator, a function "
                           "chunk_id -> doc_id, or a dict / frame of chunk_id -> doc_id",
                           "doc_of='#'")
    _check_levels(out, what)
    return out


def _check_levels(df: pl.DataFrame, what: str) -> None:
    chunks, docs = df.filter(pl.col("_chunk")), df.filter(~pl.col("_chunk"))
    if chunks.height and docs.height:
        cols = [c for c in ("query_id", "doc_id") if c in df.columns]
        raise IdMismatchError(
            f"collapse: the {what} mixes levels: {chunks.height} row(s) have chunk ids (e.g. "
            f"{chunks.select(cols).head(2).rows()}) and {docs.height} document ids (e.g. "
            f"{docs.select(cols).head(2).rows()}). Label and retrieve at one level: "
            "collapse both the run and the qrels to documents, or keep both at chunks")


def collapse(
    frame: Any,
    to: Literal["doc", "chunk"] = "doc",
    how: Literal["max", "first"] = "max",
    doc_of: DocOf = "#",
    *,
    qrels: Any = None,
    columns: Mapping[str, str] | None = None,
) -> Any:
    """Collapse a chunk-level run or qrels to documents (or identical chunks to one).

    Parameters
    ----------
    frame
        A run (``query_id, doc_id, score``, optional ``run``) whose ``doc_id`` holds
        chunk ids, or qrels (with a relevance column); any frame kind.
    to
        ``"doc"``: one row per (run, query, document); ``"chunk"``: only collapse
        identical chunks.
    how
        Runs: ``"max"`` (a document scores its best chunk) or ``"first"`` (documents in
        the order of their first chunk). Qrels always take the largest label.
    doc_of
        Chunk id -> document id: a separator (default ``"#"``, the last one splits), a
        function, a dict, or a frame with ``chunk_id`` and ``doc_id`` columns.
    qrels
        The run's qrels, at chunk or document level (found from ``doc_id`` and
        ``doc_of``): chunk labels are collapsed with the run, document labels kept;
        returns ``(run, qrels)`` at one level, so they cannot silently miss each other.
        ``to="chunk"`` with document-level qrels is an error.
    columns
        Your column names, as for :func:`~searcheval_frames.evaluate`.

    Returns
    -------
    DataFrame or (DataFrame, DataFrame)
        The canonical run (``run, query_id, doc_id, score``) or qrels, at document
        level, in the caller's frame kind; with ``qrels=``, the run and the qrels.

    Notes
    -----
    With ``how="max"`` a document's score is :math:`s(d) = \\max_{c \\in d} s(c)`;
    ranked in trec_eval order this is the order of each document's first chunk up to
    ties between documents. Formula of a collapsed label:
    :math:`\\ell(d) = \\max_{c \\in d} \\ell(c)` (the document-level judgment of
    passage-level relevance, as in the TREC Deep Learning document task: Craswell et
    al., "Overview of the TREC 2019 Deep Learning Track", 2020).

    Examples
    --------
    >>> import polars as pl
    >>> import searcheval_frames as sef
    >>> run = pl.DataFrame({"query_id": "q1", "doc_id": ["a#1", "b#4", "a#2", "a#1"],
    ...                     "score": [0.9, 0.8, 0.7, 0.6]})
    >>> sef.collapse(run, doc_of="#").select("doc_id", "score").rows()
    [('a', 0.9), ('b', 0.8)]
    >>> sef.collapse(run, to="chunk").get_column("doc_id").to_list()
    ['a#1', 'b#4', 'a#2']
    """
    check_choice("collapse", "to", to, ("doc", "chunk"), example="to='doc'")
    check_choice("collapse", "how", how, ("max", "first"), example="how='max'")
    kind = input_kind(frame)
    probe = to_polars(frame, "frame") if not isinstance(frame, Mapping) else None
    is_qrels = probe is not None and find_column(
        probe.rename({v: k for k, v in (columns or {}).items() if v in probe.columns}),
        ALIASES["relevance"]) is not None
    if is_qrels:
        df = qrels_frame(frame, columns=columns, validate=False)
        out = _collapse_qrels(df, to, doc_of)
        return to_native(qrels_frame(out), kind)
    df = run_frame(frame, columns=columns, validate=False)
    out = to_native(run_frame(_collapse_run(df, to, how, doc_of)), kind)
    if qrels is None:
        return out
    return out, to_native(_qrels_level(qrels, to, doc_of, columns), input_kind(qrels))


def _qrels_level(qrels: Any, to: str, doc_of: Any, columns: Any) -> pl.DataFrame:
    """The run's qrels at the level of the collapsed run (or an error saying why not)."""
    df = qrels_frame(qrels, columns=columns, validate=False)
    chunk_level = bool(_with_doc(df, doc_of, "qrels")["_chunk"].any())
    if to == "chunk" and not chunk_level:
        raise IdMismatchError(
            "collapse(to='chunk', qrels=...): the qrels are at document level (no id is a "
            "chunk id of doc_of) but the run keeps chunks, so no chunk could match a label; "
            "use to='doc'")
    if to == "doc" and chunk_level:
        return qrels_frame(_collapse_qrels(df, "doc", doc_of))
    return qrels_frame(df)


def _collapse_qrels(df: pl.DataFrame, to: str, doc_of: Any) -> pl.DataFrame:
    order = df.columns
    keys = [c for c in order if c not in ("doc_id", "relevance")]  # query_id (, subtopic)
    if to == "doc":
        df = _with_doc(df, doc_of, "qrels").with_columns(pl.col("_doc").alias("doc_id"))
    return (df.group_by(*keys, "doc_id", maintain_order=True)
            .agg(pl.col("relevance").max()).select(order))


def _collapse_run(df: pl.DataFrame, to: str, how: str, doc_of: Any) -> pl.DataFrame:
    # trec_eval order within a query: score descending, chunk id descending
    df = df.sort(["run", "query_id", "score", "doc_id"], descending=[False, False, True, True],
                 maintain_order=True)
    if to == "doc":
        df = _with_doc(df, doc_of, "run").with_columns(pl.col("_doc").alias("doc_id"))
    first = df.group_by("run", "query_id", "doc_id", maintain_order=True).agg(
        pl.col("score").first())  # the best chunk: first in trec_eval order
    if how == "first":
        first = first.with_columns(
            (pl.len().over("run", "query_id") - pl.int_range(pl.len()).over("run", "query_id"))
            .cast(pl.Float64).alias("score"))
    return first.select("run", "query_id", "doc_id", "score")
