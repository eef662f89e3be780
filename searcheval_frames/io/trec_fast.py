"""The fast TREC run readers: polars in one shot or in checked batches, pyarrow for gzip.

Each returns None (or raises :class:`_NotClean`) when the file needs the exact
reader of :mod:`.trec`, which reports the malformed lines.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import polars as pl

from .. import frames
from ..frames.blocks import DOC_HASH
from ._common import first_data_line, head_text

_RUN_NAMES = ["query_id", "iter", "doc_id", "rank", "score", "tag"]


def fast_trec_run(
    path: Path, rank: bool = True, mark: pl.DataFrame | None = None
) -> tuple[pl.DataFrame, frames.Blocks | None] | None:
    """Multi-threaded parse of a clean single-separator run file; None when not clean."""
    head = head_text(path, 1 << 16)
    sep = "\t" if "\t" in head else " "
    if head == "PAR1":
        return None
    try:
        with open(path, "rb") as fh:
            gz = fh.read(2) == b"\x1f\x8b"
    except OSError:
        return None
    if not gz:  # plain text: polars' reader (pyarrow is not even imported)
        parsed = _polars_trec_run(path, sep, rank, head, mark)
        if parsed is None:
            return None
        if parsed[1]:
            return parsed[0], parsed[2]
        return _clean_fast_run(parsed[0])
    import pyarrow as pa
    import pyarrow.csv as pacsv

    types = {n: pa.string() for n in _RUN_NAMES}
    types["rank"] = pa.int64()
    types["score"] = pa.float64()
    try:
        # decompressed in memory first: pyarrow ends a line at a lone CR too, where the
        # exact reader (and trec_eval) see whitespace inside the line
        buf = pa.input_stream(str(path), compression="gzip").read_buffer()
        data = np.frombuffer(buf, dtype=np.uint8)
        cr = np.flatnonzero(data == 13)
        if cr.size and (cr[-1] + 1 == data.size or (data[cr + 1] != 10).any()):
            return None
        table = pacsv.read_csv(
            pa.BufferReader(buf),
            read_options=pacsv.ReadOptions(column_names=_RUN_NAMES, block_size=1 << 24),
            parse_options=pacsv.ParseOptions(delimiter=sep, quote_char=False,
                                              ignore_empty_lines=True),
            convert_options=pacsv.ConvertOptions(
                column_types=types, include_columns=["query_id", "iter", "doc_id", "rank",
                                                     "score", "tag"]
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError, OSError):
        return None
    frame = pl.from_arrow(table, rechunk=False)
    assert isinstance(frame, pl.DataFrame)
    return _clean_fast_run(frame)


def _first_tag(head: str) -> str | None:
    """The run tag of the first result line when it is a plain 6-field line."""
    line = first_data_line(head)
    fields = line.split(" ") if line is not None else []
    if len(fields) != 6 or not all(fields) or re.search(r"\s", fields[5]):
        return None
    return fields[5]


def _polars_trec_run(
    path: Path, sep: str, rank: bool = True, head: str = "", mark: pl.DataFrame | None = None
) -> tuple[pl.DataFrame, bool, frames.Blocks | None] | None:
    """Polars' multi-threaded CSV reader straight into polars strings (no arrow copy).

    Returns the frame, whether it is checked already (one run tag, finite scores,
    no comment, no duplicate) and its blocks when known.
    For a space-separated file whose first line has a plain tag, the tag column
    is not built at all: one boolean per line, computed while parsing, says that
    the line has that tag, a finite score and no comment mark; the file is read
    in batches and each batch is checked while polars parses the next one (see
    :func:`_stream_checked_run`). Whether the file holds any whitespace but single
    spaces (:func:`_only_spaces`, one pass over its bytes) is found in a second
    thread meanwhile; only when it does, the batches are read again with every id
    checked for whitespace. Only when some line is not like that, the file is
    parsed again with its tags (several runs in one file, or the exact reader).
    """
    # a seventh column: text after the tag (or a second result on the line, issue #22)
    # sends the file to the exact reader; polars' batched reader drops fields past the last
    schema = ({n: pl.String for n in _RUN_NAMES} | {"rank": pl.Int64, "score": pl.Float64}
              | {"_extra": pl.String})
    cols = ["query_id", "doc_id", *(["rank"] if rank else []), "score"]
    tag0 = _first_tag(head) if sep == " " else None
    judged = (mark.select(_DOC_HASH).to_series().unique().implode()
              if mark is not None else None)
    try:
        lf = pl.scan_csv(path, separator=sep, has_header=False, schema=schema, quote_char=None,
                         missing_columns="insert")  # (_extra: null on 6-field lines)
        plain = None
        if tag0 is not None and hasattr(lf, "collect_batches"):
            with ThreadPoolExecutor(1) as pool:
                spaces = pool.submit(_only_spaces, path)  # (while polars parses)
                try:
                    done = _stream_checked_run(_checked(lf, cols, tag0, True, judged), cols,
                                               tag0)
                    failed = None
                except _NotClean as exc:
                    done, failed = None, exc
                plain = spaces.result()
            if plain is None:  # two spaces together: the exact reader
                raise _NotClean
            if not plain:  # ids may hold other whitespace: check each of them
                done = _stream_checked_run(_checked(lf, cols, tag0, False, judged), cols, tag0)
            elif failed is not None:
                raise failed
            if done is not None:
                return done[0], True, done[1]
        if plain is None:
            plain = sep == " " and _only_spaces(path)
            if plain is None:  # two spaces together: the exact reader
                raise _NotClean
        return (lf.select(*cols, "tag", "_extra", *([] if plain else ["iter"])).collect(),
                False, None)
    except (pl.exceptions.PolarsError, OSError, UnicodeDecodeError, _NotClean):
        return None


def _checked(
    lf: pl.LazyFrame, cols: list[str], tag0: str, plain: bool, judged: pl.Series | None
) -> pl.LazyFrame:
    """The parsed columns with the per-line checks, computed while parsing: ``_ok`` (tag,
    no seventh field, finite score; no whitespace in an id unless ``plain``), ``_ws`` (an id holds
    whitespace), ``_h`` (the low 32 bits of the document's hash) and ``_m`` (the document may
    be judged: its 64-bit hash is one of the judged documents').
    """
    # (a comment line's query id starts with "#": it is one of the blocks' query ids,
    # which :meth:`_BatchBlocks.finish` tests, not every line)
    ok = (pl.col("tag") == tag0) & pl.col("_extra").is_null() & pl.col("score").is_finite()
    check = [ok.fill_null(False).alias("_ok")]
    if not plain:  # ids with other whitespace: the exact reader splits them
        check = [(ok & ~_SPACE_IN_IDS).fill_null(False).alias("_ok"),
                 _SPACE_IN_IDS.fill_null(False).alias("_ws")]
    mark = [] if judged is None else [_DOC_HASH.is_in(judged).alias("_m")]
    return lf.select(*cols, *check, _DOC_HASH.cast(pl.UInt32, wrap_numerical=True).alias("_h"),
                     *mark)


#: Lines per batch: batches of 1M lines held 30-60 MB more at the peak (7M lines) for the
#: same CPU seconds; smaller ones overlap the checks with the parse as well.
BATCH_ROWS = 1 << 18
#: Whitespace inside a query or document id: the line has other separators than single
#: spaces (the exact reader splits it differently).
_SPACE_IN_IDS = pl.any_horizontal(pl.col(c).str.contains(r"\s") for c in ("query_id", "iter",
                                                                        "doc_id"))
#: Bytes of whitespace other than the space and the LF line end (ASCII files only).
_OTHER_SPACE = (b"\t", b"\r", b"\x0b", b"\x0c")


#: Bytes read at a time by :func:`_only_spaces`: a chunk that stays in the core's cache
#: while the five tests read it (with 16 MiB chunks each test read memory again: 0.08 s
#: of CPU for 7M lines instead of 0.04)
SCAN_CHUNK = 1 << 20


def _only_spaces(path: Path) -> bool | None:
    """Whether the file is ASCII whose only whitespace is spaces and LF line ends: its ids
    then cannot hold whitespace. (``isascii`` and ``in`` on chunks read into one reused
    buffer; a non-ASCII file gets the per-id checks, even when it has no odd whitespace.)

    ``None`` when two spaces stand together anywhere: split on single spaces, the line
    has an empty field, which polars reads as null, so text after a run tag that follows
    two spaces (``bm25  1 Q0 d9 ...``: a second result on the line) would pass as a
    missing seventh column and be dropped; such a file goes to the exact reader."""
    buf = bytearray(SCAN_CHUNK)
    plain, last = True, 0
    try:
        with open(path, "rb", buffering=0) as fh:
            while n := fh.readinto(buf):
                chunk = buf if n == SCAN_CHUNK else buf[:n]
                if b"  " in chunk or (last == 32 and chunk[0] == 32):
                    return None
                last = chunk[-1]
                if plain and (not chunk.isascii() or any(b in chunk for b in _OTHER_SPACE)):
                    plain = False
    except OSError:
        return False
    return plain


_DOC_HASH = DOC_HASH  # (a query's block holds one query: its documents' hash)


class _NotClean(Exception):
    """The file needs the exact reader (a comment, a bad score, a missing field or a
    possible duplicate), which reports the lines."""


def _stream_checked_run(
    lf: pl.LazyFrame, cols: list[str], tag0: str
) -> tuple[pl.DataFrame, frames.Blocks | None] | None:
    """Read a one-tag run in batches, checking each while polars parses the next.

    Per batch: the line check (``_ok``), then :meth:`_BatchBlocks.add`: the query
    blocks (run-length encoding of the query ids, merged across batch edges), the
    duplicate check (32-bit hashes of the documents sorted block by block, segment by
    segment: a block holds one query, and a document can only repeat inside its query's
    block; a block where a hash repeats is checked by its document ids at the end) and,
    when ``lf`` has the ``_m`` column (see :func:`_checked`), the rows whose document may
    be judged (the caller joins on the ids, so a row of a document judged for another
    query, or a hash collision, only adds a row it drops). None when a line has another
    tag (the caller reads the tags); raises :class:`_NotClean` for a comment, a bad score,
    a missing field or a duplicate (the exact reader then reports the lines). When a
    query's lines turn out not to be together, the duplicate check is redone over the
    whole frame.
    """
    state = _BatchBlocks("_m" in lf.collect_schema())
    try:  # (collect_batches is recent in polars and marked unstable)
        batches = lf.collect_batches(chunk_size=BATCH_ROWS, maintain_order=True)
    except TypeError:
        return None
    for b in batches:
        if b.height == 0:
            continue
        if not b.get_column("_ok").all() or any(b.get_column(c).null_count() for c in cols):
            bad = b.filter(~pl.col("_ok"))
            if bad.select(pl.any_horizontal(
                    pl.col("query_id").str.starts_with("#").any(),
                    ~pl.col("score").is_finite().all(),
                    pl.any_horizontal(pl.col(cols).is_null()).any(),
                    pl.col("^_ws$").any())).item():
                # comment, bad score, missing field or whitespace other than the single
                # spaces between fields: the exact reader
                raise _NotClean
            return None  # another run tag: read the tags
        state.add(b)
    return state.finish(tag0) if state.parts else None


class _BatchBlocks:
    """What :func:`_stream_checked_run` keeps between batches: the frame's parts, its
    query blocks so far (``lens``, ``vals``), the rows of the last, unfinished block
    (their hashes in ``carry``, its first row ``carry_at``), the marked rows, the rows
    whose score goes up and the blocks where a document hash repeats (``suspects``: row
    ranges that :meth:`finish` checks by the document ids)."""

    def __init__(self, judged: bool) -> None:
        self.judged = judged
        self.parts: list[pl.DataFrame] = []
        self.lens: list[np.ndarray] = []
        self.vals: list[pl.Series] = []
        self.marked: list[np.ndarray] = []
        self.ups: list[np.ndarray] = []
        self.suspects: list[np.ndarray] = []
        self.carry = np.zeros(0, np.uint32)
        self.carry_at = 0
        self.offset = 0
        self.last_score: float | None = None

    def _repeats(self, h: np.ndarray, lengths: np.ndarray, at: int) -> None:
        """Note the blocks (``lengths``, their rows' hashes ``h``, first row ``at``) in which a
        hash repeats, as ``[start, end)`` row ranges."""
        bad = frames.repeated_blocks(h, lengths)
        if bad.size:
            ends = np.cumsum(lengths) + at
            self.suspects.append(np.stack((ends[bad] - lengths[bad], ends[bad]), axis=1))

    def add(self, b: pl.DataFrame) -> None:
        """Take one checked batch."""
        n, offset = b.height, self.offset
        h = b.get_column("_h").to_numpy()
        if self.judged:
            self.marked.append(b.get_column("_m").arg_true().to_numpy().astype(np.int64)
                               + offset)
        b = b.drop("_ok", "_ws", "_h", "_m", strict=False)
        runs = b.select(pl.col("query_id").rle()).to_series()
        bl = runs.struct.field("len").to_numpy().astype(np.int64)
        bv = runs.struct.field("value")
        score = b.get_column("score")
        self.ups.append(frames.score_increases(score, self.last_score) + offset)
        self.last_score = score[-1]
        last_start = n - int(bl[-1])
        inner = bl[:-1]  # lengths of the batch's blocks before its last one
        cont = bool(self.vals) and self.vals[-1][-1] == bv[0]
        if cont:  # the batch goes on with the previous batch's last query
            self.lens[-1][-1] += bl[0]
            bl, bv = bl[1:], bv[1:]
        carry, at = self.carry, self.carry_at
        if not cont:  # the carried block ended with the previous batch
            self._repeats(carry, np.array([carry.size]), at)
            carry, at = carry[:0], offset
        if last_start == 0:  # one query only in this batch: all of it is carried
            self.carry, self.carry_at = np.concatenate((carry, h)), at
        else:  # the carried rows and this batch's first block are one block
            seg_lens = np.concatenate(([carry.size + inner[0]], inner[1:]))
            self._repeats(np.concatenate((carry, h[:last_start])), seg_lens, at)
            self.carry, self.carry_at = h[last_start:], offset + last_start
        if bl.size:
            self.lens.append(bl.copy())
            self.vals.append(bv)
        self.parts.append(b)
        self.offset = offset + n

    def finish(self, tag0: str) -> tuple[pl.DataFrame, frames.Blocks | None]:
        """The run frame and its blocks (None when a query's lines are not together);
        raises :class:`_NotClean` for a comment line or a document twice in a block."""
        vals = pl.concat(self.vals)
        if vals.str.starts_with("#").any():
            raise _NotClean  # (a comment line)
        df = pl.concat(self.parts, how="vertical", rechunk=False).with_columns(
            pl.lit(tag0, pl.String).alias("tag"))
        self._repeats(self.carry, np.array([self.carry.size]), self.carry_at)
        for a, e in np.concatenate([np.zeros((0, 2), np.int64), *self.suspects]):
            # (a block holds one query: a document twice in it is a duplicate)
            if df.get_column("doc_id").slice(a, e - a).is_duplicated().any():
                raise _NotClean
        lengths = np.concatenate(self.lens)
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        keys = pl.DataFrame({"tag": pl.Series([tag0] * lengths.size, dtype=pl.String),
                             "query_id": vals})
        if keys.get_column("query_id").is_duplicated().any():
            # a query's lines are not together: blocks do not hold, check the whole frame
            if frames.has_repeats(frames.key_hash(df, ["query_id", "doc_id"])):
                raise _NotClean
            return df, None
        mk = np.concatenate(self.marked) if self.judged else None
        up = np.concatenate(self.ups)
        return df, frames.Blocks(starts, starts + lengths, keys, mk,
                                 bool(np.isin(up, starts).all()))


def _clean_fast_run(df: pl.DataFrame) -> tuple[pl.DataFrame, frames.Blocks | None] | None:
    """The fast parse when it is trustworthy, None to send the file to the exact reader.

    The readers leave the ``iter`` column out only when the file holds no whitespace
    but spaces and newlines (:func:`_only_spaces`); otherwise every id is checked for
    whitespace (the exact reader would split it).

    Also returns the file's (tag, query) blocks when each query's lines are together.
    """
    if df.height == 0:
        return None
    if "_extra" in df.columns:  # text after the tag (or a second result): the exact reader
        if df.get_column("_extra").is_not_null().any():
            return None
        df = df.drop("_extra")
    plain = "iter" not in df.columns
    checks = [pl.col("query_id").str.starts_with("#").any(),
              ~pl.col("score").is_finite().all(),
              pl.any_horizontal(pl.all().is_null()).any()]
    # a field holding whitespace (junk after the tag, padded ids; with spaces between
    # fields: a tab, VT, FF, a lone CR, NBSP...) or an empty field needs the exact
    # whitespace parser; the iter column is there to be checked (when not plain)
    for c in ("query_id", "iter", "doc_id", "tag"):
        if c in df.columns:
            checks.append((pl.col(c) == "").any())
            if not plain:
                checks.append(pl.col(c).str.contains(r"\s").any())
    if df.select(pl.any_horizontal(checks)).item():
        return None
    df = df.drop("iter", strict=False)
    # duplicate (tag, query, doc): distinct hashes prove uniqueness; otherwise the
    # exact parser checks and reports the lines
    key = ["query_id", "doc_id"]
    tag = df.get_column("tag")
    if (tag == tag[0]).all():
        # one run: a constant column (later steps see "one run" without scanning it)
        df = df.with_columns(pl.lit(tag[0], pl.String).alias("tag"))
    else:
        key.append("tag")
    blocks = frames.query_blocks(df, ("tag", "query_id"))
    if frames.has_repeats(frames.key_hash(df, key), blocks):
        return None
    return df, blocks
