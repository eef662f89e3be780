"""The rows of a run whose (query, document) pair has a label: found by 64-bit hashes.

The ranking (:mod:`.ranking`) needs, for every judged retrieved document, its row in
the run and its label. Comparing id strings over every row of the run (an ``is_in``
of the document ids, then a join of the hits on two string keys) ran single-threaded
over all rows; hashing the (query, doc) pair of each row is one parallel pass, and the
join on a 64-bit integer key probes the qrels' hashes only. A row whose pair merely
shares a hash with a judged pair (a collision) is dropped by comparing its ids with
the label's, so the result is exactly that of the join on the ids.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from ..frames.blocks import DOC_HASH, key_hash_expr

__all__ = ["FEW_LABELS", "PAIR_HASH", "judged_hits", "judged_rows"]

#: The 64-bit hash of a row's (query, doc) pair (equal pairs hash equal).
PAIR_HASH = key_hash_expr(["query_id", "doc_id"])

_KEY, _Q, _D = "_sef_pair", "_sef_q", "_sef_d"

#: Fewer labels than one per ``FEW_LABELS`` rows: the judged rows are found by an ``is_in``
#: of the run's doc ids (a small set; no 8 bytes a row of hashes in memory), else by the
#: pair hashes of :func:`judged_hits` (a large set: a parallel join).
FEW_LABELS = 100


def judged_rows(run: pl.DataFrame, qrels: pl.DataFrame, keys: list[str],
                marked: np.ndarray | None = None, doc_hash: pl.Series | None = None
                ) -> pl.DataFrame:
    """:func:`judged_hits`, by the cheapest way the caller's knowledge allows.

    ``marked``: rows the reader found may hold a judged pair (a superset); ``doc_hash``:
    the documents' 64-bit hashes from validation. Either is a pre-filter, then the few
    rows it keeps are joined on the ids; without them, few labels pre-filter by an
    ``is_in`` of the doc ids and many go through :func:`judged_hits`. The same rows
    and columns every way (the order of rows may differ).
    """
    if marked is not None:
        cand = pl.Series("_p", marked, dtype=pl.Int64)
    elif doc_hash is not None and qrels.height * 8 < run.height:  # integers, not strings
        judged = qrels.select(DOC_HASH.unique().implode()).to_series()
        cand = doc_hash.to_frame("_h").select(
            pl.arg_where(pl.col("_h").is_in(judged)).cast(pl.Int64).alias("_p")).to_series()
    elif qrels.height * FEW_LABELS < run.height:
        judged = qrels.get_column("doc_id").unique().implode()
        cand = run.select(
            pl.arg_where(pl.col("doc_id").is_in(judged)).cast(pl.Int64).alias("_p")).to_series()
    else:
        return judged_hits(run, qrels, keys)
    hits = run.select(*keys, "doc_id")[cand].with_columns(cand)
    return hits.join(qrels, on=["query_id", "doc_id"], how="inner")


def judged_hits(run: pl.DataFrame, qrels: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """The rows of ``run`` whose (query_id, doc_id) is in ``qrels``, in row order.

    Columns: ``keys`` and ``doc_id`` of the run, then ``_p`` (the row, Int64), then
    every other column of ``qrels`` (its label). Equal to joining the run's rows, with
    their row numbers, with ``qrels`` on the two ids (an inner join keeping the run's
    order), whatever the hashes of other pairs.

    Examples
    --------
    >>> import polars as pl
    >>> run = pl.DataFrame({"run": "r", "query_id": "q", "doc_id": ["a", "b", "c"]})
    >>> qrels = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["c", "a"],
    ...                       "relevance": [2, 1]})
    >>> judged_hits(run, qrels, ["run", "query_id"]).rows()
    [('r', 'q', 'a', 0, 1), ('r', 'q', 'c', 2, 2)]
    """
    labels = [c for c in qrels.columns if c not in ("query_id", "doc_id")]
    theirs = qrels.select(PAIR_HASH.alias(_KEY), pl.col("query_id").alias(_Q),
                          pl.col("doc_id").alias(_D), *labels)
    found = (run.select(PAIR_HASH.alias(_KEY)).with_row_index("_p")
             .join(theirs, on=_KEY, how="inner", maintain_order="left"))
    rows = found.get_column("_p").cast(pl.Int64)
    hits = run.select(*keys, "doc_id")[rows]
    same = ((hits.get_column("query_id") == found.get_column(_Q))
            & (hits.get_column("doc_id") == found.get_column(_D)))
    out = hits.with_columns(rows, *(found.get_column(c) for c in labels))
    return out if bool(same.all()) else out.filter(same)
