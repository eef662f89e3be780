"""Rank documents once, in trec_eval's order, and keep only what measures need.

Every measure trec_eval defines depends on the ranked list only through

* the ranks of the *judged* retrieved documents (documents in the qrels), and
* the number of retrieved documents per query.

So this module returns exactly that: one row per judged retrieved document
with its rank and label, plus ``num_ret`` per (run, query). Ranks follow
trec_eval: score descending, ties broken by ``doc_id`` descending in byte
order; the run's own rank column is ignored. ``depth`` (trec_eval ``-M``)
keeps the top ``depth`` documents, and ``judged_only`` (``-J``) then removes
documents without a label >= 0 and ranks the rest again.

Three strategies compute the ranks and give identical results (property tests
compare them on random runs with ties, in tests/test_ranking.py):

``"sort"``
    sort the whole run by (run, query, score desc, doc desc) and number the rows;
``"count"``
    for each judged document count the documents of its query that come
    before it. Linear in (judged documents x documents per query), so much
    faster when few documents are judged (the usual case: a 1000-deep run with
    a handful of labels per query).

``"presorted"``
    for runs that list each query's documents together, best score first (as
    TREC run files and most frames do): a document's rank is its position in
    the block of its query, corrected for tied scores (documents with the same
    score are ordered by ``doc_id`` descending). Checking that the frame is laid
    out so costs one pass over the query ids and one over the scores; nothing
    is joined or sorted. When the frame is not laid out so, the other
    strategies are used.

``"auto"`` tries ``"presorted"``, then picks ``"count"`` when that product is
small and ``"sort"`` otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Literal

import numpy as np
import polars as pl

from ..frames import Blocks, query_blocks, score_increases
from ._judged import judged_rows

__all__ = ["RankedJudged", "rank_judged", "ranked_rows"]

KEYS = ["run", "query_id"]
Strategy = Literal["auto", "sort", "count", "presorted"]


class RankedJudged:
    """The ranked, judged frame and the per-query retrieved counts.

    Attributes
    ----------
    judged
        ``run, query_id, doc_id, relevance, rank``, sorted by run, query and rank.
    num_ret
        ``run, query_id, num_ret`` for every (run, query) in the run.
    """

    def __init__(self, judged: pl.DataFrame, num_ret: pl.DataFrame) -> None:
        self.judged = judged
        self.num_ret = num_ret


def _scores(run: pl.LazyFrame, compat: str) -> pl.LazyFrame:
    if compat == "trec_eval-9":
        # trec_eval 9 / pytrec_eval order by single-precision scores
        return run.with_columns(pl.col("score").cast(pl.Float32).cast(pl.Float64))
    return run


def _rank_joined(
    run: pl.DataFrame, qrels: pl.DataFrame, compat: str, strategy: str
) -> tuple[pl.LazyFrame, pl.DataFrame]:
    """Ranks of judged documents by sorting or counting ("sort", "count", or the
    cheaper of the two for "auto"/"presorted")."""
    run_lf = _scores(run.lazy().select("run", "query_id", "doc_id", "score"), compat)
    qrels_lf = qrels.lazy()
    counts_lf = run_lf.group_by(KEYS).agg(pl.len().cast(pl.Int64).alias("n"))
    # cheap single-column pre-filter before the two-key join (most documents are unjudged)
    judged_docs = qrels.get_column("doc_id").unique().implode()
    hits_lf = run_lf.filter(pl.col("doc_id").is_in(judged_docs)).join(
        qrels_lf, on=["query_id", "doc_id"], how="inner"
    )
    counts, hits = pl.collect_all([counts_lf, hits_lf])

    if strategy in ("auto", "presorted"):
        per_q = hits.group_by(KEYS).agg(pl.len().alias("j")).join(counts, on=KEYS)
        work = per_q.select((pl.col("j") * pl.col("n")).sum()).item() or 0
        strategy = "count" if work <= 4 * max(run.height, 1) else "sort"

    judged: pl.LazyFrame
    if strategy == "sort":
        judged = (
            run_lf.sort(["run", "query_id", "score", "doc_id"], descending=[False, False, True, True])
            .with_columns(pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over(KEYS).alias("rank"))
            .join(qrels_lf, on=["query_id", "doc_id"], how="inner")
            .select(*KEYS, "doc_id", "relevance", "rank")
        )
    else:
        mine = hits.lazy().select(
            *KEYS, pl.col("doc_id").alias("_d"), pl.col("score").alias("_s"), "relevance"
        )
        # one run: join on the query alone (cheaper than the two-string key)
        keys = ["query_id"] if counts.get_column("run").n_unique() == 1 else KEYS
        before = (
            mine.select(*KEYS, "_d", "_s")
            .join(run_lf.select(*keys, "doc_id", "score"), on=keys, how="inner")
            .filter(pl.col("score") >= pl.col("_s"))
            .group_by([*KEYS, "_d"])
            # among documents scoring at least as high: higher scores, and equal scores
            # with a larger doc id (the judged document itself counts neither way)
            .agg(((pl.col("score") > pl.col("_s")) | (pl.col("doc_id") > pl.col("_d")))
                 .sum().alias("_above"))
        )
        judged = mine.join(before, on=[*KEYS, "_d"], how="left").select(
            *KEYS,
            pl.col("_d").alias("doc_id"),
            "relevance",
            (pl.col("_above").fill_null(0).cast(pl.Int64) + 1).alias("rank"),
        )
    return judged, counts.select(*KEYS, pl.col("n").alias("num_ret"))


#: The linear tie-group pass replaces the binary search when at least one row in
#: ``LINEAR_SHARE`` is judged (the two give the same groups; tests force each).
LINEAR_SHARE = 32


def _block_ids(blocks: Blocks) -> np.ndarray:
    """The block of every row (blocks cover the frame in order)."""
    return np.repeat(np.arange(blocks.starts.size), blocks.lengths)


def _descending(score: pl.Series, blocks: Blocks) -> bool:
    """Whether scores never increase inside a block (they may at a block's first row)."""
    return bool(np.isin(score_increases(score), blocks.starts).all())


def _key_order(blocks: Blocks) -> np.ndarray:
    """The blocks in (run, query) order (their indices)."""
    return blocks.keys.with_row_index("_b").sort(KEYS).get_column("_b").to_numpy()


def _layout(block: np.ndarray, score: np.ndarray | pl.Series) -> np.ndarray:
    """The row order that lays a frame out by block, best score first (ties in any order)."""
    fast = _padded_layout(block, score)
    if fast is not None:
        return fast
    return pl.DataFrame({"_b": block, "_s": score}).select(
        pl.arg_sort_by(["_b", "_s"], descending=[False, True])).to_series().to_numpy()


#: The padded sort of :func:`_padded_layout` is used while the padding adds at most this
#: share of cells to the rows (blocks of similar lengths, as runs cut at one depth).
PAD_SHARE = 0.25


def _padded_layout(block: np.ndarray, score: np.ndarray | pl.Series) -> np.ndarray | None:
    """:func:`_layout` for contiguous blocks of similar lengths: every block is a row of a
    2-D array (padded), sorted row by row (short sorts instead of one sort of the frame
    by two keys); the padding cells are dropped by their index, whatever their value.
    None when the blocks are not contiguous and ordered, or their lengths differ much."""
    n = block.size
    if n == 0 or (n > 1 and bool((block[1:] < block[:-1]).any())):
        return None
    lengths = np.bincount(block)
    width, nb = int(lengths.max()), lengths.size
    if nb * width > (1 + PAD_SHARE) * n + 1024:
        return None
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    s = score.to_numpy() if isinstance(score, pl.Series) else np.asarray(score)
    if nb * width == n:  # all blocks of one length (a run cut at one depth): no padding
        # (ties in any order: their ranks are set by doc_id; ~3x faster than kind="stable")
        col = np.argsort(-s.reshape(nb, width), axis=1)
        return (col + starts[:, None]).ravel()
    grid = np.full(nb * width, np.inf)
    grid[block * width + (np.arange(n) - starts[block])] = -s
    col = np.argsort(grid.reshape(nb, width), axis=1)  # (padding: dropped by its index)
    keep = col < lengths[:, None]
    return (col + starts[:, None])[keep]


def _group_starts(scores: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per row of a laid-out frame: whether it starts a tie group (equal scores inside
    one block), i.e. its score differs from the previous row's or it starts a block."""
    brk = np.ones(scores.size, dtype=bool)
    brk[1:] = scores[1:] != scores[:-1]
    brk[starts] = True
    return brk


def _first_true(lo: np.ndarray, hi: np.ndarray,
                test: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """Vectorised binary search: per element, the first i in [lo, hi) with test(i) True.

    ``test`` must be monotone (False ... False True ... True) on each range;
    returns ``hi`` where it is never True. Costs log2(range) small numpy steps.
    """
    lo, hi = lo.copy(), hi.copy()
    while True:
        act = np.flatnonzero(lo < hi)
        if act.size == 0:
            return lo
        mid = (lo[act] + hi[act]) // 2
        ok = test(mid, act)
        hi[act[ok]] = mid[ok]
        lo[act[~ok]] = mid[~ok] + 1


def _tie_groups(p: np.ndarray, a: np.ndarray, b: np.ndarray, s: Callable[[np.ndarray], np.ndarray],
                starts: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``[lo, hi)``: the tie group (equal scores inside one block) of each judged row ``p``
    of a laid-out frame (block ``[a, b)``, scores non-increasing, read by ``s``). A row
    whose neighbours in its block score differently is its own group; only the others are
    searched: by one pass over all scores when many, else by binary search."""
    sp = s(p)
    tie = ((p > a) & (s(np.maximum(p - 1, 0)) == sp)) | (
        (p + 1 < b) & (s(np.minimum(p + 1, max(n - 1, 0))) == sp))
    lo, hi = p.copy(), p + 1
    t = np.flatnonzero(tie)
    if t.size == 0:
        return lo, hi
    if t.size * LINEAR_SHARE >= n:  # many tied judged rows: one pass over all scores
        brk = _group_starts(s(np.arange(n)), starts)
        group_starts = np.flatnonzero(brk)
        g = (np.cumsum(brk[: int(p[t].max()) + 1]) - 1)[p[t]]
        lo[t], hi[t] = group_starts[g], np.append(group_starts[1:], n)[g]
    else:  # few: binary search in their blocks
        pt, st = p[t], sp[t]
        lo[t] = _first_true(a[t], pt, lambda m, i: s(m) <= st[i])
        hi[t] = _first_true(pt + 1, b[t], lambda m, i: s(m) < st[i])
    return lo, hi


def _rank_presorted(
    run: pl.DataFrame, qrels: pl.DataFrame, compat: str, blocks: Blocks | None = None,
    perm: np.ndarray | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame] | None:
    """Ranks when each query's rows are contiguous and sorted by score; else None.

    A judged document at row ``p`` of its block ``[a, b)`` has every row of the
    block before its tie group above it (scores are non-increasing), plus the
    documents of its tie group with a larger ``doc_id``. The tie group's ends are
    found by binary search; only tied rows are compared by ``doc_id``.

    ``perm``: the rows of ``run`` in laid-out order (:func:`_layout`; ``blocks`` are
    then those of ``run``, which the layout keeps in place): the ranks are those of
    the laid-out frame, found without building it (only scores are gathered).
    """
    blocks = blocks or query_blocks(run)
    if blocks is None:
        return None
    starts, ends = blocks.starts, blocks.ends
    # scores must not increase inside a block (they may at a block's first row);
    # sorted float64 scores stay sorted as float32 (trec_eval-9), so one check serves
    score = run.get_column("score")
    if perm is None and (blocks.sorted_scores is False or (
        blocks.sorted_scores is None and not _descending(score, blocks)
    )):
        return None
    raw = score.to_numpy()  # (in the run's order: laid-out rows are read through perm)

    def s(rows: np.ndarray) -> np.ndarray:
        out = raw[rows if perm is None else perm[rows]]
        return out.astype(np.float32).astype(np.float64) if compat == "trec_eval-9" else out

    hits = judged_rows(run, qrels, KEYS, blocks.marked, blocks.doc_hash)
    p = hits.get_column("_p").to_numpy()
    if perm is not None:  # rows of run -> rows of the laid-out frame
        at = np.empty(perm.size, np.int64)
        at[perm] = np.arange(perm.size)
        p = at[p]
    blk = np.searchsorted(starts, p, side="right") - 1
    a = starts[blk]
    lo, hi = _tie_groups(p, a, ends[blk], s, starts, run.height)
    above = lo - a
    tied = np.flatnonzero(hi - lo > 1)
    if tied.size:
        size = (hi - lo)[tied]
        owner = np.repeat(tied, size)
        rows = np.repeat(lo[tied] - np.cumsum(size) + size, size) + np.arange(size.sum())
        extra = (
            pl.DataFrame({
                "_h": owner,
                "_d": run.get_column("doc_id").gather(rows if perm is None else perm[rows]),
                "_mine": hits.get_column("doc_id").gather(owner),
            })
            .group_by("_h")
            .agg((pl.col("_d") > pl.col("_mine")).sum().alias("_n"))
        )
        np.add.at(above, extra.get_column("_h").to_numpy(), extra.get_column("_n").to_numpy())
    # sorted by run, query and rank as rank_judged promises: by one integer key (the block's
    # place in (run, query) order, then rank), not by the id strings nor a two-key lexsort
    place = np.empty(blocks.starts.size, np.int64)
    place[_key_order(blocks)] = np.arange(blocks.starts.size)
    order = np.argsort(place[blk] * int(blocks.lengths.max()) + above, kind="stable")
    judged = hits.select(*KEYS, "doc_id", "relevance",
                         pl.Series("rank", above + 1, dtype=pl.Int64))[order]
    num_ret = blocks.keys.select(*KEYS, pl.Series("num_ret", blocks.lengths, dtype=pl.Int64))
    return judged, num_ret


def _laid_out(run: pl.DataFrame, blocks: Blocks | None) -> tuple[pl.DataFrame, Blocks | None]:
    """A copy of ``run`` with each (run, query) together and best score first (ties in any
    order), and its blocks. Contiguous queries are sorted by (block, score) integers and
    floats only; otherwise by the id strings."""
    blocks = blocks or query_blocks(run)
    if blocks is None:
        laid = run.sort(["run", "query_id", "score"], descending=[False, False, True])
        return laid, query_blocks(laid)
    laid = run[_layout(_block_ids(blocks), run.get_column("score"))]
    return laid, Blocks(blocks.starts, blocks.ends, blocks.keys, sorted_scores=True)


def rank_judged(
    run: pl.DataFrame,
    qrels: pl.DataFrame,
    *,
    depth: int | None = None,
    judged_only: bool = False,
    compat: str = "trec_eval-10",
    strategy: Strategy = "auto",
    blocks: Blocks | None = None,
) -> RankedJudged:
    """Rank each query's documents and keep the judged ones.

    Parameters
    ----------
    run, qrels
        Canonical frames (see :mod:`searcheval_frames.frames`).
    depth
        Keep only the top ``depth`` documents per query (trec_eval ``-M``).
    judged_only
        Drop documents without a label >= 0 before ranking measures (``-J``).
    compat
        ``"trec_eval-9"`` orders by float32 scores like trec_eval 9/pytrec_eval.
    strategy
        ``"auto"``, ``"presorted"``, ``"count"`` or ``"sort"`` (see the module
        docstring); all give the same result.
    blocks
        The run's (run, query) blocks (:func:`~searcheval_frames.frames.query_blocks`)
        when the caller knows them already, e.g. from reading the file.

    Examples
    --------
    >>> import polars as pl
    >>> run = pl.DataFrame({"run": "r", "query_id": "q", "doc_id": ["a", "b", "c"],
    ...                     "score": [1.0, 2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [1]})
    >>> rank_judged(run, qrels).judged["rank"].to_list()   # b, then c before a (tie)
    [3]
    """
    if strategy not in ("auto", "sort", "count", "presorted"):
        raise ValueError(
            f"strategy must be 'auto', 'sort', 'count' or 'presorted', not {strategy!r}"
        )
    found = None
    if strategy in ("auto", "presorted"):
        blocks = blocks or query_blocks(run)
        found = _rank_presorted(run, qrels, compat, blocks) if blocks is not None else None
        if found is None and strategy == "auto" and blocks is not None:
            perm = _padded_layout(_block_ids(blocks), run.get_column("score"))
            if perm is not None:
                # blocks of similar lengths, scores out of order: rank as if laid out by
                # (block, score), sorting each block's scores only (no sort by the ids)
                found = _rank_presorted(run, qrels, compat,
                                        replace(blocks, sorted_scores=True), perm=perm)
        if found is None and strategy == "auto" and qrels.height * 8 >= run.height:
            # many labels (every row judged, say): sorting each query's rows by score
            # and ranking the sorted copy beats counting or sorting by four keys
            laid, laid_blocks = _laid_out(run, blocks)
            found = _rank_presorted(laid, qrels, compat, laid_blocks)
    if found is not None:  # (already in order)
        judged, num_ret = found[0].lazy(), found[1]
    else:
        judged, num_ret = _rank_joined(run, qrels, compat, strategy)
        judged = judged.sort([*KEYS, "rank"])
    if depth is not None:
        judged = judged.filter(pl.col("rank") <= depth)
        num_ret = num_ret.with_columns(pl.min_horizontal("num_ret", pl.lit(depth)).alias("num_ret"))
    judged_df = judged.collect()
    if judged_only:
        judged_df = judged_df.filter(pl.col("relevance") >= 0).with_columns(
            pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over(KEYS).alias("rank")
        )
        kept = judged_df.group_by(KEYS).agg(pl.len().cast(pl.Int64).alias("_k"))
        num_ret = num_ret.join(kept, on=KEYS, how="left").select(
            *KEYS, pl.col("_k").fill_null(0).alias("num_ret")
        )
    return RankedJudged(judged_df, num_ret)


def _top_candidates(run: pl.DataFrame, blocks: Blocks, depth: int) -> tuple[pl.DataFrame, Blocks]:
    """The rows that can rank within ``depth``: those scoring at least their block's
    ``depth``-th highest score (a row below it has ``depth`` rows above it). Every row
    that ranks above a kept row is kept too, so ranks within the kept rows are the
    ranks in the whole block. One linear pass (a per-block top-k), no sort."""
    block = _block_ids(blocks)
    score = run.get_column("score")
    lengths = blocks.lengths
    if lengths.size and (lengths == lengths[0]).all():  # one length: a partition per row
        grid = score.to_numpy().reshape(lengths.size, int(lengths[0]))
        kth = -np.partition(-grid, depth - 1, axis=1)[:, depth - 1]
    else:
        kth = (pl.DataFrame({"_b": block, "_s": score})
               .group_by("_b").agg(pl.col("_s").top_k(depth).min())
               .sort("_b").get_column("_s").to_numpy())
    keep = score.to_numpy() >= kth[block]
    lengths = np.add.reduceat(keep.astype(np.int64), blocks.starts)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    return run.filter(pl.Series(keep)), Blocks(starts, starts + lengths, blocks.keys)


def ranked_rows(run: pl.DataFrame, depth: int | None = None) -> pl.DataFrame:
    """Every row of a canonical run with its ``rank`` in trec_eval's order, sorted by
    run, query and rank (only ranks up to ``depth`` when given).

    Equal to sorting by (run, query, score desc, doc_id desc) and numbering, without the
    four-key string sort: rows are laid out by (block, score) (nothing moves when the run
    is already so), every tie group is found in one pass over the scores, only tied rows
    are ordered by ``doc_id``, and the ``depth`` cut comes before the final reordering.
    Any input ``rank`` column is replaced.

    Examples
    --------
    >>> run = pl.DataFrame({"run": "r", "query_id": "q", "doc_id": ["a", "b", "c"],
    ...                     "score": [1.0, 2.0, 1.0]})
    >>> ranked_rows(run).select("doc_id", "rank").rows()   # b, then c before a (tie)
    [('b', 1), ('c', 2), ('a', 3)]
    """
    run = run.drop("rank", strict=False)
    blocks = query_blocks(run)
    if blocks is None or run.height == 0:  # a query split over the frame: by the strings
        out = run.sort(["run", "query_id", "score", "doc_id"],
                       descending=[False, False, True, True]).with_columns(
            pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over(KEYS).alias("rank"))
        return out if depth is None else out.filter(pl.col("rank") <= depth)
    laid_out = _descending(run.get_column("score"), blocks)
    if not laid_out and depth is not None and depth < int(blocks.lengths.max()):
        # (a sort is needed: of the few rows that can make the cut only)
        run, blocks = _top_candidates(run, blocks, depth)
    n, starts = run.height, blocks.starts
    block = _block_ids(blocks)
    score = run.get_column("score").to_numpy()
    perm = None  # laid-out row -> row of run (None: the run is laid out already)
    if not laid_out:
        perm = _layout(block, score)
        score = score[perm]
    idx = np.arange(n)
    brk = _group_starts(score, starts)
    row_start = starts[block]
    rank = idx - row_start + 1
    tied = np.flatnonzero(~(brk & np.append(brk[1:], True)))  # rows of groups of two or more
    if tied.size:  # within a tie group: doc_id descending (byte order)
        lo = np.maximum.accumulate(np.where(brk, idx, 0))[tied]
        docs = run.get_column("doc_id").gather(tied if perm is None else perm[tied])
        nth = pl.DataFrame({"_g": lo, "_d": docs}).select(
            pl.col("_d").rank("ordinal", descending=True).over("_g")).to_series().to_numpy()
        rank[tied] = lo - row_start[tied] + nth.astype(np.int64)
    # rows in rank order within each block (ranks are a permutation of the block's places),
    # blocks in (run, query) order
    by_rank = np.empty(n, np.int64)
    by_rank[row_start + rank - 1] = idx
    place = _key_order(blocks)
    lengths = blocks.lengths[place]
    if depth is not None:
        lengths = np.minimum(lengths, depth)
    first = np.repeat(starts[place] - np.cumsum(lengths) + lengths, lengths)
    order = by_rank[first + np.arange(first.size)]
    rows = order if perm is None else perm[order]
    return run[rows].with_columns(pl.Series("rank", rank[order], dtype=pl.Int64))
