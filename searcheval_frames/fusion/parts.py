"""Cut a large fusion input into parts by query-id range (used by :func:`fuse`).

Every fusion value of a document depends only on the rows of its query: each
normalisation is per (run, query), the combination is one group-by over
(query, document), and BordaFuse's candidate counts are per query. So the long
frame of all runs is cut into ranges of query ids of about
:data:`searcheval_frames.core.partitioned.ROWS_PER_PART` rows each, as a
partitioned evaluation cuts a run, and each range is fused with the in-memory code.

Floating-point sums depend on the order of their terms, so every part must see
the rows of a query in the order the whole frame would: :func:`out_of_order`
decides once, on the whole frame, whether the rows are re-sorted into trec_eval
order (and each part then is, or is not), instead of each part deciding alone.
Divisions too: polars divides by a divisor it holds as one value (a per-query count
joined in when a part holds one query) as ``x * (1/d)``, an ulp off ``x / d`` at times,
so every normalisation divides with :func:`~searcheval_frames._exact.true_divide`,
one IEEE division per row whatever the layout.
"""

from __future__ import annotations

import itertools

import polars as pl

from ..core.partitioned import query_bounds
from ..core.partitioned import within as _within

__all__ = ["out_of_order", "query_ranges", "within"]


def _flags(df: pl.DataFrame, block: str) -> pl.DataFrame:
    """Per row: ``_new`` (starts a (block, query) run of rows) and ``_bad`` (follows a
    row of the same block and query without being after it in trec_eval order)."""
    prev_same = (pl.col(block) == pl.col(block).shift(1)) & (
        pl.col("query_id") == pl.col("query_id").shift(1)
    )
    in_order = (pl.col("score") < pl.col("score").shift(1)) | (
        (pl.col("score") == pl.col("score").shift(1))
        & (pl.col("doc_id") < pl.col("doc_id").shift(1))
    )
    return df.select(
        block, "query_id",
        (~prev_same.fill_null(False)).alias("_new"),
        (prev_same & ~in_order).fill_null(False).alias("_bad"),
    )


def out_of_order(df: pl.DataFrame, block: str, rows: int | None = None) -> bool:
    """True unless the rows of every (``block``, query) pair are together and in
    trec_eval order (score descending, ``doc_id`` descending).

    ``block`` is the run column (``"run"`` or its integer code ``"_r"``). With
    ``rows``, the frame is checked ``rows`` rows at a time (each slice with the row
    before it), so the check's temporary columns stay small.

    >>> f = pl.DataFrame({"run": ["a", "a", "b"], "query_id": "q", "doc_id": ["x", "y", "x"],
    ...                   "score": [2.0, 1.0, 1.0]})
    >>> out_of_order(f, "run"), out_of_order(f.reverse(), "run", rows=1)
    (False, True)
    """
    step = df.height if rows is None else max(rows, 1)
    starts = []
    for at in range(0, max(df.height, 1), max(step, 1)):
        lo = max(at - 1, 0)  # the row before the slice, for the comparison with it
        flags = _flags(df.slice(lo, at + step - lo), block)
        if at:
            flags = flags.slice(1)
        if flags.get_column("_bad").any():
            return True
        starts.append(flags.filter(pl.col("_new")).select(block, "query_id"))
    first = pl.concat(starts)
    return first.height > 1 and bool(first.is_duplicated().any())


def query_ranges(df: pl.DataFrame, rows: int) -> list[tuple[str | None, str | None]]:
    """``[lo, hi)`` ranges of sorted query ids (None: unbounded) of about ``rows`` rows.

    The sorted ids are cut by their cumulative row counts into
    ``ceil(height / rows)`` ranges, as :class:`~searcheval_frames.core.partitioned.RunScan`
    cuts a run; every range holds at least one query.

    >>> f = pl.DataFrame({"query_id": ["b", "a", "c", "c", "a", "b"]})
    >>> query_ranges(f, 2)
    [(None, 'b'), ('b', 'c'), ('c', None)]
    """
    # counted ``rows`` rows at a time: one group-by over all rows' ids would hold
    # their group indices at once (about as much memory as the frame)
    counts = [
        df.slice(at, rows).group_by("query_id").agg(pl.len().alias("_n"))
        for at in range(0, df.height, max(rows, 1))
    ]
    per_q = pl.concat(counts).group_by("query_id").agg(pl.col("_n").sum())
    return list(itertools.pairwise([None, *query_bounds(per_q, rows), None]))


def within(lo: str | None, hi: str | None) -> pl.Expr:
    """Rows whose ``query_id`` is in ``[lo, hi)``."""
    return _within(pl.col("query_id"), lo, hi)
