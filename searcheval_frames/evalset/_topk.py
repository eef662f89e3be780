"""Which rows of a run rank within the top ``depth`` of their query, without ranking it
(private module: coverage and the metric bounds of :mod:`.pooling`).

A row is in a block's top ``depth`` (trec_eval order: score descending, ties by doc_id
descending) when its score is above the block's ``depth``-th highest score, or equal to
it and among the largest doc ids of the rows that share that score. One partition per
block finds the threshold; only the rows tied at a threshold that too many rows share
are ordered by doc_id. No sort of the frame, no loop over queries.

>>> import polars as pl
>>> from searcheval_frames.frames import query_blocks
>>> run = pl.DataFrame({"run": "r", "query_id": "q", "doc_id": ["a", "b", "c"],
...                     "score": [1.0, 2.0, 1.0]})
>>> top_mask(run, query_blocks(run), 2).tolist()   # b, then c before a (tie)
[False, True, True]
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from ..frames import Blocks, checked_blocks, query_blocks

__all__ = ["FILL_FREE", "TOP_ONLY", "blocks_of", "evaluate_ranked", "evaluation_groups",
           "judged_in_top", "reads_top", "top_mask", "top_only"]


def blocks_of(run: pl.DataFrame) -> Blocks | None:
    """The run's (run, query) blocks: those recorded with the checked frame, else found."""
    return checked_blocks(run)[1] or query_blocks(run)


def evaluate_ranked(rows: pl.DataFrame, labels: pl.DataFrame, measures: list[Any],
                    **options: Any) -> pl.DataFrame:
    """:func:`~searcheval_frames.core.evaluate.evaluate_frames` of the rows of a checked,
    ranked run (sorted by run, query and rank, as
    :func:`~searcheval_frames.core.ranking.ranked_rows` returns them, maybe cut at a depth)
    against canonical labels: the metric bounds' scenarios, whose labels are the validated
    qrels plus the holes (unjudged documents, none labelled twice), are evaluated without
    reading or checking their frames again. The blocks come from the ranks (a block starts
    where the rank is 1, its scores do not increase): no pass over the id strings."""
    from ..core.evaluate import evaluate_frames

    rank = rows.get_column("rank").to_numpy()
    starts = np.flatnonzero(rank == 1)
    keys = rows.select(pl.col("run", "query_id").gather(starts))
    blocks = Blocks(starts, np.append(starts[1:], rank.size), keys, sorted_scores=True)
    return evaluate_frames(rows.drop("rank"), labels, measures, blocks=blocks, **options)


def _per_block(values: np.ndarray, blocks: Blocks, width: int | None) -> np.ndarray:
    """Per block, the sum of ``values`` (bools or ints) over its rows."""
    if width is not None:
        return values.reshape(-1, width).sum(axis=1, dtype=np.int64)
    return np.add.reduceat(values.astype(np.int64), blocks.starts)


def top_mask(run: pl.DataFrame, blocks: Blocks, depth: int) -> np.ndarray:
    """Per row of ``run`` (a canonical, checked run whose blocks are ``blocks``): whether
    it ranks within the top ``depth`` of its (run, query) in trec_eval's order."""
    lengths = blocks.lengths
    if run.height == 0 or int(lengths.max()) <= depth:
        return np.ones(run.height, dtype=bool)
    score = run.get_column("score").to_numpy()
    width = int(lengths[0]) if (lengths == lengths[0]).all() else None
    if width is not None:  # blocks of one length: a partition per row of a 2-D view
        grid = score.reshape(lengths.size, width)
        kth = np.partition(grid, width - depth, axis=1)[:, width - depth]
        above, at = (grid > kth[:, None]).ravel(), (grid == kth[:, None]).ravel()
    else:
        block = np.repeat(np.arange(lengths.size), lengths)
        kth = (pl.DataFrame({"_b": block, "_s": score})
               .group_by("_b").agg(pl.col("_s").top_k(depth).min())
               .sort("_b").get_column("_s").to_numpy())[block]
        above, at = score > kth, score == kth
    slots = depth - _per_block(above, blocks, width)  # places left for the rows at kth
    keep = above | at
    crowded = _per_block(at, blocks, width) > slots
    if crowded.any():  # more rows share the threshold than places: by doc_id descending
        block = np.repeat(np.arange(lengths.size), lengths)
        rows = np.flatnonzero(at & crowded[block])
        nth = pl.DataFrame({"_b": block[rows], "_d": run.get_column("doc_id").gather(rows)}
                           ).select(pl.col("_d").rank("ordinal", descending=True).over("_b")
                                    ).to_series().to_numpy()
        keep[rows] = nth <= slots[block[rows]]
    return keep


def judged_in_top(run: pl.DataFrame, qrels: pl.DataFrame, depth: int, blocks: Blocks
                  ) -> pl.DataFrame:
    """``run, query_id, retrieved, judged`` per block: the rows in its top ``depth``, and
    those of them whose (query, doc) has a label in ``qrels`` (any label), in block order."""
    keep = top_mask(run, blocks, depth)
    lengths = blocks.lengths
    width = int(lengths[0]) if (lengths == lengths[0]).all() else None
    kept = _per_block(keep, blocks, width)  # >= 1 a block: no block is empty
    top = run.select("query_id", "doc_id")
    top = top.filter(pl.Series(keep)) if kept.sum() < run.height else top
    labelled = qrels.select(pl.struct("query_id", "doc_id")).to_series().implode()
    judged = top.select(pl.struct("query_id", "doc_id").is_in(labelled)).to_series().to_numpy()
    # the kept rows of a block are together, in block order
    starts = np.concatenate(([0], np.cumsum(kept)[:-1]))
    return blocks.keys.with_columns(
        pl.Series("retrieved", kept, dtype=pl.Int64),
        pl.Series("judged", np.add.reduceat(judged.astype(np.int64), starts), dtype=pl.Int64))


#: Families whose value at a rank cutoff k reads the top k rows only (with the labels
#: and min(retrieved, k)): evaluated on a run cut at k, they give the same number
#: (tests/test_pooling_topk.py checks each). Not ERR: its value at k changes.
TOP_ONLY = frozenset({"P", "R", "Success", "RR", "AP", "nDCG", "DCG", "Hits", "Judged",
                      "Unjudged", "F1", "RelP"})


def top_only(measure: Any) -> bool:
    """Whether ``measure`` has a rank cutoff k and a value that reads the top k only."""
    cut = measure.cutoff
    return (measure.family in TOP_ONLY and isinstance(cut, int)
            and not isinstance(cut, bool))


def reads_top(measures: list[Any], depth: int | None) -> bool:
    """Whether every measure reads its top k only, with k <= ``depth``: evaluated on the
    run cut at ``depth``, they give the numbers of the whole run."""
    return depth is not None and all(top_only(m) and m.cutoff <= depth for m in measures)


#: Families whose value at a cutoff k reads the labels of the top k only (not the number
#: of relevant documents, not the ideal ranking): holes filled below k leave it unchanged.
FILL_FREE = frozenset({"P", "Success", "Hits", "RR", "Judged"})


def evaluation_groups(by_depth: dict[int | None, list[Any]]) -> dict[int | None, list[Any]]:
    """The metric bounds' evaluations: ``by_depth`` (fill depth -> measures) with each
    measure of :data:`FILL_FREE` evaluated in the deepest group instead of its own
    (the same value, one evaluation fewer). Groups left empty are dropped."""
    deepest = None if None in by_depth else max(d for d in by_depth if d is not None)
    out: dict[int | None, list[Any]] = {}
    for d, ms in by_depth.items():
        for m in ms:
            free = m.family in FILL_FREE and top_only(m)
            out.setdefault(deepest if free else d, []).append(m)
    return out
