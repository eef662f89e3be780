"""Query blocks, 64-bit key hashes and duplicate checks over canonical frames.

A run whose rows of one query are contiguous (as in every TREC file) is described
by its ``Blocks``; the duplicate check and the presorted ranking use them so that
no 7M-row sort or join is needed.
"""

from __future__ import annotations

import functools
import operator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

import numpy as np
import polars as pl

#: The 64-bit hash of a document id kept in :attr:`Blocks.doc_hash`.
DOC_HASH = pl.col("doc_id").hash(seed=3)


def key_hash_expr(key: list[str]) -> pl.Expr:
    """The 64-bit hash of the ``key`` columns as one expression (equal keys hash equal):
    ``functools.reduce`` over expressions, not ``pl.reduce``, whose Python function would
    combine whole Series one pair at a time."""
    return functools.reduce(operator.xor, [pl.col(c).hash(seed=i + 1) for i, c in enumerate(key)])


def key_hash(df: pl.DataFrame, key: list[str]) -> pl.Series:
    """A 64-bit hash per row of the ``key`` columns (:func:`key_hash_expr`)."""
    return df.select(key_hash_expr(key).alias("_h")).to_series()


def is_constant(df: pl.DataFrame, col: str) -> bool:
    """Whether ``df[col]`` holds one value (no nulls) in every row: one cheap pass."""
    return bool(df.select((pl.col(col) == pl.col(col).first()).all()).item())


@dataclass(frozen=True)
class Blocks:
    """Where each (run, query) lives in a frame whose rows of a query are contiguous.

    Block ``i`` is rows ``starts[i]:ends[i]``; ``keys`` holds its ``run`` and
    ``query_id``. Files and most frames list a query's documents together, which
    lets duplicate checks and ranking work block by block instead of hashing
    or sorting the whole frame.
    """

    starts: np.ndarray
    ends: np.ndarray
    keys: pl.DataFrame
    #: rows that may hold one of the (query, doc) pairs the reader was asked to mark
    #: (:func:`searcheval_frames.evaluate` passes the qrels): every such row, the rows
    #: of those documents in other queries, and rarely a row whose document only shares
    #: a 64-bit hash with one (join on the ids to use them); None if not asked
    marked: np.ndarray | None = None
    #: whether scores never increase inside a block (None: not checked)
    sorted_scores: bool | None = None
    #: :data:`DOC_HASH` of every row, when validation computed it (:func:`run_checks`):
    #: the ranking finds the rows of judged documents by comparing 64-bit integers
    #: (a collision only adds a row its join on the ids drops); None otherwise
    doc_hash: pl.Series | None = None

    @property
    def lengths(self) -> np.ndarray:
        return self.ends - self.starts


def _run_starts(df: pl.DataFrame, col: str) -> np.ndarray:
    """First row of every run of equal values in ``df[col]``.

    Through an expression on the frame, not ``get_column``: a constant column
    (``pl.lit``) stays a scalar and costs nothing, where ``get_column`` would
    first build its seven million values.
    """
    lengths = df.select(pl.col(col).rle().struct.field("len")).to_series().to_numpy()
    return np.concatenate(([0], np.cumsum(lengths.astype(np.int64))[:-1]))


def query_blocks(df: pl.DataFrame, key: tuple[str, str] = ("run", "query_id")) -> Blocks | None:
    """The contiguous (run, query) blocks of ``df``, or None when a query is split.

    Exact (run-length encoding of the id strings, no hashing); costs one pass
    over the query ids, and one over the run names unless polars knows they are
    all equal.

    Examples
    --------
    >>> df = pl.DataFrame({"run": "r", "query_id": ["1", "1", "2"], "doc_id": ["a", "b", "a"]})
    >>> query_blocks(df).starts.tolist(), query_blocks(df).ends.tolist()
    ([0, 2], [2, 3])
    >>> query_blocks(df[[0, 2, 1]]) is None   # query 1 is split in two
    True
    """
    if df.height == 0:
        return None
    outer, inner = key
    const = outer not in df.columns or is_constant(df, outer)
    return _blocks(df, key, _run_starts(df, inner), const)


def _blocks(
    df: pl.DataFrame, key: tuple[str, str], starts: np.ndarray, outer_constant: bool
) -> Blocks | None:
    """The blocks from the starts of the inner key's runs (and of the outer key's)."""
    n = df.height
    outer = key[0]
    if not outer_constant:
        outer_starts = _run_starts(df, outer)
        if outer_starts.size > 1:
            starts = np.union1d(starts, outer_starts)
    idx = pl.Series(starts, dtype=pl.Int64)
    keys = df.select(pl.col(c).gather(idx) for c in key if c in df.columns)
    if keys.height > 1 and keys.is_duplicated().any():
        return None
    return Blocks(starts, np.append(starts[1:], n), keys)


#: A score that is missing, NaN or infinite (a run must have none).
BAD_SCORE = pl.col("score").is_null() | ~pl.col("score").is_finite()


def run_checks(
    df: pl.DataFrame, key: tuple[str, str, str] = ("run", "query_id", "doc_id")
) -> tuple[bool, Blocks | None, pl.Series]:
    """One fused pass over a canonical run: ``(bad_score, blocks, key_hash)``.

    ``bad_score``: a score is missing, NaN or infinite; ``blocks``: as
    :func:`query_blocks` for ``key[:2]``; ``key_hash``: as :func:`key_hash` of the
    three key columns, except that a constant ``key[0]`` (one run) is left out of it,
    and both ``key[0]`` and ``key[1]`` are when the blocks are all of one length (several
    runs too): then :func:`has_repeats` with these blocks looks for a repeat inside each
    block only, where the run and the query are one (hashing their ids too was two
    thirds of this pass).
    The expressions run in parallel in one ``select`` instead of four passes.

    Examples
    --------
    >>> df = pl.DataFrame({"run": "r", "query_id": ["1", "1", "2"], "doc_id": ["a", "b", "a"],
    ...                    "score": [2.0, 1.0, 3.0]})
    >>> bad, blocks, h = run_checks(df)
    >>> bad, blocks.starts.tolist(), h.len()
    (False, [0, 2], 3)
    """
    outer, inner, doc = key
    exprs = [
        BAD_SCORE.any().alias("bad"),
        pl.col(doc).hash(seed=3).implode().alias("h"),  # (DOC_HASH when doc is "doc_id")
    ]
    if outer in df.columns:
        exprs.append((pl.col(outer) == pl.col(outer).first()).all().alias("const"))
    row, lengths = _with_run_lengths(df, inner, exprs)
    const = outer not in df.columns or bool(row.get_column("const")[0])
    h = row.get_column("h")[0].alias("_h")
    bad = bool(row.get_column("bad")[0]) or df.height == 0
    blocks = None if bad else _blocks(df, (outer, inner), np.concatenate(
        ([0], np.cumsum(lengths)[:-1])), const)
    equal = blocks is not None and bool((blocks.lengths == blocks.lengths[0]).all())
    if not const and not equal:
        return bad, blocks, key_hash(df, list(key))
    if const and blocks is not None and doc == "doc_id":
        blocks = replace(blocks, doc_hash=h)
    if not equal:
        h = df.select((pl.col(inner).hash(seed=2) ^ h).alias("_h")).to_series()
    return bad, blocks, h


#: Frames of at least this many rows have the run lengths of :func:`_with_run_lengths`
#: found in two halves at once.
PARALLEL_ROWS = 1_000_000


def _with_run_lengths(
    df: pl.DataFrame, col: str, exprs: list[pl.Expr]
) -> tuple[pl.DataFrame, np.ndarray]:
    """``df.select(exprs)`` and the lengths of the runs of equal values in ``df[col]``.

    polars finds run lengths in one thread: on a big frame, the first half's are found
    in a second thread while this one does the second half's and ``exprs`` (polars
    releases the GIL); a run across the middle is then joined (7M query ids: 0.058 ->
    0.043 s of wall time on two cores, the same CPU seconds).
    """
    def lengths(part: pl.DataFrame) -> np.ndarray:
        return part.select(pl.col(col).rle().struct.field("len")).to_series().to_numpy()

    n = df.height
    if n < max(PARALLEL_ROWS, 2):
        return df.select(exprs), lengths(df).astype(np.int64)
    m = n // 2
    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(lengths, df.slice(0, m))
        second = lengths(df.slice(m))
        row = df.select(exprs)
        parts = [first.result().astype(np.int64), second.astype(np.int64)]
    ids = df.get_column(col)
    if ids[m - 1] == ids[m]:  # one run across the middle
        parts = [parts[0][:-1], np.concatenate(([parts[0][-1] + parts[1][0]], parts[1][1:]))]
    return row, np.concatenate(parts)


def score_increases(score: pl.Series, prev: float | None = None) -> np.ndarray:
    """Rows whose score is higher than the previous row's (chunk by chunk, no copy).

    ``prev``: the score of the row before the first one, when there is one (the
    previous batch of a file read in batches).
    """
    parts: list[np.ndarray] = []
    offset = 0
    for chunk in score.get_chunks():
        c = chunk.to_numpy()
        if c.size == 0:
            continue
        if prev is not None and c[0] > prev:
            parts.append(np.array([offset]))
        parts.append(np.flatnonzero(c[1:] > c[:-1]) + (offset + 1))
        offset, prev = offset + c.size, c[-1]
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


def repeats_in_blocks(values: np.ndarray, lengths: np.ndarray | None = None) -> bool:
    """Whether a value repeats; with block ``lengths`` all equal, within each block only.

    Runs of a fixed depth (1000 per query, say) have equal blocks: sorting each
    block on its own (a 2-D sort along rows) is about twice as fast as one sort.
    Any repeat within a block is also one of the whole, so this never misses one
    the caller looks for (repeats across blocks are hash collisions, not duplicates).
    64-bit values are first sorted by their low 32 bits (:func:`repeated_blocks`: a
    32-bit sort is ~2.5x faster); only the blocks where those repeat are sorted whole.
    """
    if values.size < 2:
        return False
    if lengths is not None and lengths.size > 1 and (lengths == lengths[0]).all():
        grid = values.reshape(lengths.size, int(lengths[0]))
        if values.dtype == np.uint64:  # the blocks whose low 32 bits repeat, then those only
            grid = grid[repeated_blocks(values.astype(np.uint32), lengths)]
        v = np.sort(grid, axis=1)
        return bool((v[:, 1:] == v[:, :-1]).any())
    v = np.sort(values)
    return bool((v[1:] == v[:-1]).any())


def repeated_blocks(values: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The blocks (indices into ``lengths``) in which a value repeats.

    ``values``: 32-bit values (hashes of a block's documents, say), the blocks' one after
    the other. A repeat is only a candidate for the caller's exact check: 32-bit hashes of
    a thousand distinct documents collide in about one block in 9,000. Blocks of one length
    are sorted as the rows of a 2-D array (32-bit sorts: ~2.5x faster than the 64-bit
    ones); other blocks in one sort of (block, value) pairs packed in 64 bits.
    """
    if lengths.size == 0:
        return np.zeros(0, np.int64)
    if (lengths == lengths[0]).all():
        v = np.sort(values.reshape(lengths.size, int(lengths[0])), axis=1)
        same = v[:, 1:] == v[:, :-1]
        return np.flatnonzero(same.any(axis=1)) if same.any() else np.zeros(0, np.int64)
    block = np.repeat(np.arange(lengths.size, dtype=np.uint64), lengths)
    v = np.sort((block << np.uint64(32)) | values.astype(np.uint64))
    return np.unique(v[1:][v[1:] == v[:-1]] >> np.uint64(32)).astype(np.int64)


def has_repeats(values: pl.Series, blocks: Blocks | None = None) -> bool:
    """Whether a numeric series holds a value twice (sorting beats hashing 7M hashes).

    With ``blocks`` (a value can only repeat inside a block, e.g. hashes of
    (query, doc) keys), the two halves split at a block boundary are checked in
    two threads (numpy releases the GIL while it sorts), block by block when the
    blocks are all of one length (then a value may also repeat across blocks, as the
    document hashes of :func:`run_checks` do: only a repeat inside a block counts).
    """
    arr = values.to_numpy()
    if blocks is None or arr.size < 1_000_000 or blocks.starts.size < 2:
        return repeats_in_blocks(arr, None if blocks is None else blocks.lengths)
    k = min(int(np.searchsorted(blocks.starts, arr.size // 2)), blocks.starts.size - 1)
    mid = int(blocks.starts[k])
    lengths = blocks.lengths
    halves = ((arr[:mid], lengths[:k]), (arr[mid:], lengths[k:]))
    with ThreadPoolExecutor(2) as pool:
        return any(pool.map(lambda part: repeats_in_blocks(*part), halves))


def duplicate_rows(
    df: pl.DataFrame, key: list[str], blocks: Blocks | None = None, h: pl.Series | None = None
) -> pl.DataFrame:
    """Rows whose key occurs more than once.

    A 64-bit hash of the key finds candidate rows in one cheap pass; only rows
    whose hash repeats are compared exactly, so a hash collision never raises.
    ``blocks``: the frame's (run, query) blocks, when ``key`` starts with them;
    ``h``: the key's hash when the caller has it (:func:`run_checks`).
    """
    h = key_hash(df, key) if h is None else h
    if not has_repeats(h, blocks):
        return df.clear()
    cand = df.filter(h.is_duplicated())
    return cand.filter(pl.struct(key).is_duplicated())
