"""Read and write runs, qrels and query sets.

The readers return the canonical long frames of :mod:`searcheval_frames.frames`
(polars by default, pandas with ``backend="pandas"``):

* :func:`read_run` → ``run, query_id, doc_id, score, rank``
* :func:`read_qrels` → ``query_id, doc_id, relevance``
* :func:`read_queries` → ``query_id, query`` (+ metadata columns)

Formats (detected from the extension and the content, or forced with
``format=``):

``"trec"``
    TREC run ``qid iter docno rank score tag`` / qrels ``qid iter docno rel``;
    fields separated by any mix of spaces and tabs, ``Q0`` or ``0`` in the
    iter column, ``#`` comment lines (trec_eval 10), anything after the tag
    ignored (trec_eval does the same), runs without the tag column (the run
    name is then the file name). For query sets: TREC topic files
    (``<top><num>..</num><title>..</title></top>`` and the older
    ``<num> Number: 301`` layout).
``"csv"``, ``"tsv"``
    A header row naming the columns (``qid``, ``docno``, ``score``, ``label`` ...
    are recognised, see :data:`searcheval_frames.frames.ALIASES`). For query
    sets a ``.tsv`` file may also be headerless ``qid<TAB>text`` (TREC DL topics).
``"parquet"``, ``"jsonl"``
    Columns as for CSV.

Any of the text formats may be gzip-compressed (``.gz``, or detected from the
content). ``"irds:<dataset-id>"`` instead of a path reads qrels or queries
through the optional ``ir_datasets`` package.

Reading never drops a line silently: every malformed line is reported with
the file name, the line number (comment lines counted), the text of the line
and a hint. Writers are atomic: they write a temporary file in the target
folder, flush it to disk and rename it over the target.
"""

from __future__ import annotations

import contextlib
import gzip
import io as _io
import json
import os
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
import polars as pl

from .. import frames
from ..errors import EmptyInputError, FileFormatError, MissingColumnError, SearchEvalError

__all__ = [
    "detect_format",
    "read_qrels",
    "read_queries",
    "read_run",
    "write_qrels",
    "write_queries",
    "write_run",
]

PathLike = str | os.PathLike[str]
Backend = Literal["polars", "pandas"]
Format = Literal["trec", "csv", "tsv", "parquet", "jsonl"]

_FORMATS = ("trec", "csv", "tsv", "parquet", "jsonl")
_EXT = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".csv": "csv",
    ".tsv": "tsv",
}
#: Extensions dropped when a file name becomes a run name.
_NAME_EXT = (".gz", ".run", ".runs", ".txt", ".trec", ".res", ".tsv", ".csv", ".parquet",
             ".pq", ".jsonl", ".ndjson", ".json", ".qrels")
_MAX_REPORTED = 3

QUERY_ID_ALIASES = (*frames.ALIASES["query_id"], "id", "_id", "num", "number", "qno")
QUERY_TEXT_ALIASES = ("query", "text", "title", "query_text", "question", "querytext",
                      "query_string")


# --------------------------------------------------------------------------- bytes
def _read_bytes(path: Path) -> bytes:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise SearchEvalError(
            f"{path}: no such file; check the path (relative paths start at {Path.cwd()})"
        ) from None
    except IsADirectoryError:
        raise SearchEvalError(f"{path}: is a folder, not a file; give the file inside it") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise FileFormatError(
                f"gzip data is corrupt ({exc})", path=str(path),
                hint="re-download or re-compress the file",
            ) from None
    return data


def _check_file(path: Path) -> None:
    if not path.exists():
        raise SearchEvalError(
            f"{path}: no such file; check the path (relative paths start at {Path.cwd()})"
        )
    if path.is_dir():
        raise SearchEvalError(f"{path}: is a folder, not a file; give the file inside it")


def _head_text(path: Path, n: int = 65536) -> str:
    _check_file(path)
    with open(path, "rb") as fh:
        raw = fh.read(n)
    if raw[:2] == b"\x1f\x8b":
        with gzip.open(path, "rb") as gz:
            try:
                raw = gz.read(n)
            except (OSError, EOFError):
                raw = b""
    if raw[:4] == b"PAR1":
        return "PAR1"
    return raw.decode("utf-8", errors="replace")


def _stem(path: Path) -> str:
    name = path.name
    changed = True
    while changed:
        changed = False
        for ext in _NAME_EXT:
            if name.lower().endswith(ext) and len(name) > len(ext):
                name = name[: -len(ext)]
                changed = True
    return name


def _ext(path: Path) -> str:
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    return suffixes[-1] if suffixes else ""


def _first_data_line(head: str) -> str | None:
    for line in head.splitlines():
        s = line.strip()
        if s and not s.startswith("#"):
            return line
    return None


def _looks_like_header(line: str, aliases: Sequence[str]) -> bool:
    tokens = [t.strip().strip('"').strip("'").lower() for t in re.split(r"[,\t;]| +", line)]
    return any(t in aliases for t in tokens if t)


def detect_format(path: PathLike, kind: Literal["run", "qrels", "queries"] = "run") -> str:
    """Guess the format of a file from its extension and its first bytes.

    Parameters
    ----------
    path
        The file.
    kind
        What the file holds: ``"run"``, ``"qrels"`` or ``"queries"``.

    Returns
    -------
    str
        ``"trec"``, ``"csv"``, ``"tsv"``, ``"parquet"`` or ``"jsonl"``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "bm25.run"
    >>> _ = p.write_text("1 Q0 d1 1 2.5 bm25\\n")
    >>> detect_format(p)
    'trec'
    """
    path = Path(path)
    head = _head_text(path)
    if head == "PAR1":
        return "parquet"
    ext = _EXT.get(_ext(path))
    if ext == "parquet":
        return "parquet"
    first = _first_data_line(head)
    if first is None:
        return ext or "trec"
    if kind == "queries" and first.lstrip().startswith("<"):
        return "trec"
    if first.lstrip().startswith("{"):
        return "jsonl"
    aliases = QUERY_ID_ALIASES if kind == "queries" else frames.ALIASES["query_id"]
    header = _looks_like_header(first, aliases)
    if ext in ("csv", "tsv", "jsonl"):
        if ext == "tsv" and not header and kind != "queries":
            return "trec"
        return ext
    if header:
        if "\t" in first:
            return "tsv"
        if "," in first:
            return "csv"
    if kind == "queries" and "\t" in first:
        return "tsv"
    return "trec"


# --------------------------------------------------------------------------- lines
def _lines(data: bytes, path: Path) -> pl.DataFrame:
    """One row per physical line: ``line_no`` (1-based) and ``text`` (no newline)."""
    if not data:
        return pl.DataFrame(schema={"line_no": pl.Int64, "text": pl.String})
    if len(data) < (8 << 20):
        # small files (qrels, query sets): Python's split is fast enough, and polars
        # would import pyarrow.compute (~0.1 s) to take the arrow array below
        try:
            pieces = data.decode("utf-8").split("\n")
        except UnicodeDecodeError:
            pieces = None
        if pieces is not None:
            if data.endswith(b"\n"):
                pieces.pop()
            text = pl.Series("text", pieces, dtype=pl.String).str.strip_suffix("\r")
            return pl.DataFrame({"line_no": pl.int_range(1, len(pieces) + 1, eager=True),
                                 "text": text})
    import pyarrow as pa

    buf = np.frombuffer(data, dtype=np.uint8)
    nl = np.flatnonzero(buf == 10)
    ends = nl if data.endswith(b"\n") else np.append(nl, len(data))
    n = len(ends)
    offsets = np.empty(n + 1, dtype=np.int64)
    offsets[0] = 0
    offsets[1:] = ends + 1
    offsets[-1] = min(offsets[-1], len(data))
    arr = pa.LargeStringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))
    try:
        arr.validate(full=True)
    except pa.ArrowInvalid:
        bad = _first_non_utf8_line(data)
        raise FileFormatError(
            "the file is not UTF-8 text", path=str(path), line_no=bad[0], line=bad[1],
            hint="convert it with `iconv -f latin1 -t utf-8` (or the file is binary: "
                 "pass format='parquet' for Parquet)",
        ) from None
    text = pl.Series("text", arr).str.strip_suffix("\n").str.strip_suffix("\r")
    return pl.DataFrame({"line_no": pl.int_range(1, n + 1, eager=True), "text": text})


def _first_non_utf8_line(data: bytes) -> tuple[int, str]:
    for i, raw in enumerate(data.split(b"\n"), start=1):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            return i, raw.decode("utf-8", errors="replace")
    return 1, ""


def _data_lines(lines: pl.DataFrame) -> pl.DataFrame:
    """Drop blank lines and ``#`` comment lines, keeping the original line numbers."""
    stripped = pl.col("text").str.strip_chars_start()
    return lines.filter((stripped != "") & ~stripped.str.starts_with("#"))


def _split_fields(df: pl.DataFrame, n: int) -> pl.DataFrame:
    """Add ``nf`` (number of whitespace-separated fields) and ``f0..f{n-1}``.

    Lines whose only whitespace is single spaces between fields (almost all) are
    split on the space directly; the others (tabs, runs of spaces, padding, other
    Unicode whitespace) are first normalised to that form.
    """
    text = pl.col("text")
    messy = text.str.contains(r"[^\S ]|  |^ | $")
    df = df.with_row_index("_o")
    parts = [
        df.filter(~messy),
        df.filter(messy).with_columns(text.str.strip_chars().str.replace_all(r"\s+", " ")),
    ]
    flat = pl.concat(parts).sort("_o") if parts[1].height else parts[0]
    split = flat.select(text.str.splitn(" ", n + 1).alias("_s")).unnest("_s")
    return df.drop("_o").with_columns(
        (flat.get_column("text").str.count_matches(" ", literal=True) + 1)
        .cast(pl.UInt32).alias("nf"),
        *[split.to_series(i).alias(f"f{i}") for i in range(n)],
    )


class _Problems:
    """Collects malformed lines; raises one FileFormatError naming the first ones."""

    def __init__(self, path: Path, what: str) -> None:
        self.path = path
        self.what = what
        self.parts: list[pl.DataFrame] = []
        self.line_nos: list[pl.Series] = []

    def add(self, bad: pl.DataFrame, hint: pl.Expr | str) -> None:
        if bad.height:
            h = pl.lit(hint) if isinstance(hint, str) else hint
            self.parts.append(
                bad.head(50).select(
                    pl.col("line_no").cast(pl.Int64), pl.col("text"), h.alias("hint")
                )
            )
            self.line_nos.append(bad.get_column("line_no").cast(pl.Int64))

    def raise_if_any(self, line_label: str = "line") -> None:
        if not self.parts:
            return
        allp = pl.concat(self.parts).sort("line_no", maintain_order=True)
        allp = allp.unique("line_no", keep="first", maintain_order=True)
        total = pl.concat(self.line_nos).n_unique()
        first = allp.row(0, named=True)
        msg = f"{total} malformed {line_label}(s) in this {self.what} file; the first: " \
              f"{first['hint']}"
        more = allp.slice(1, _MAX_REPORTED - 1)
        if more.height:
            msg += "; also " + "; ".join(
                f"{line_label} {r['line_no']}: {r['hint']} ({r['text']!r})"
                for r in more.iter_rows(named=True)
            )
        raise FileFormatError(
            msg,
            path=str(self.path),
            line_no=first["line_no"],
            line=first["text"],
            hint=_HINT_FIX.get(self.what, ""),
        )


_HINT_FIX = {
    "run": "a TREC run line is `qid iter docno rank score tag` (e.g. `301 Q0 FBIS3-10 1 "
           "12.5 bm25`); fix or delete the line, or pass format='csv'/'tsv' for a file "
           "with a header",
    "qrels": "a TREC qrels line is `qid iter docno relevance` (e.g. `301 0 FBIS3-10 1`) with "
             "an integer relevance; fix or delete the line",
    "queries": "a query line is `qid<TAB>query text`; fix or delete the line",
}


def _is_number(col: str) -> pl.Expr:
    return pl.col(col).str.strip_chars().cast(pl.Float64, strict=False).is_not_null() & (
        pl.col(col).str.strip_chars().cast(pl.Float64, strict=False).is_finite()
    )


_INT_RE = r"^\s*[+-]?\d+(\.0*)?\s*$"


def _dup_problems(df: pl.DataFrame, key: list[str], probs: _Problems, what: str) -> None:
    """Report duplicated keys with the line of the first occurrence."""
    if df.height == 0:
        return
    if not frames.has_repeats(frames.key_hash(df, key)):
        return
    d = df.with_columns(pl.col("line_no").min().over(key).alias("_first"))
    d = d.filter(pl.col("line_no") != pl.col("_first"))
    probs.add(
        d,
        pl.format(
            "duplicate " + what + ": document {} appears again in query {} (first on line {})",
            pl.col("doc_id"), pl.col("query_id"), pl.col("_first"),
        ),
    )


# --------------------------------------------------------------------------- trec runs
_RUN_NAMES = ["query_id", "iter", "doc_id", "rank", "score", "tag"]


def _fast_trec_run(
    path: Path, rank: bool = True, mark: pl.DataFrame | None = None
) -> tuple[pl.DataFrame, frames.Blocks | None] | None:
    """Multi-threaded parse of a clean single-separator run file; None when not clean."""
    head = _head_text(path, 1 << 16)
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
        return _clean_fast_run(parsed[0], sep)
    import pyarrow as pa
    import pyarrow.csv as pacsv

    types = {n: pa.string() for n in _RUN_NAMES}
    types["rank"] = pa.int64()
    types["score"] = pa.float64()
    try:
        table = pacsv.read_csv(
            pa.input_stream(str(path), compression="gzip"),
            read_options=pacsv.ReadOptions(column_names=_RUN_NAMES, block_size=1 << 24),
            parse_options=pacsv.ParseOptions(delimiter=sep, quote_char=False,
                                              ignore_empty_lines=True),
            convert_options=pacsv.ConvertOptions(
                column_types=types, include_columns=["query_id", "doc_id", "rank", "score",
                                                     "tag"]
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError, OSError):
        return None
    frame = pl.from_arrow(table, rechunk=False)
    assert isinstance(frame, pl.DataFrame)
    return _clean_fast_run(frame, sep)


def _first_tag(head: str) -> str | None:
    """The run tag of the first result line when it is a plain 6-field line."""
    line = _first_data_line(head)
    fields = line.split(" ") if line is not None else []
    return fields[5] if len(fields) == 6 and all(fields) else None


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
    :func:`_stream_checked_run`). Only when some line is not like that, the file
    is parsed again with its tags (several runs in one file, or the exact reader).
    """
    schema = {n: pl.String for n in _RUN_NAMES} | {"rank": pl.Int64, "score": pl.Float64}
    cols = ["query_id", "doc_id", *(["rank"] if rank else []), "score"]
    tag0 = _first_tag(head) if sep == " " else None
    try:
        lf = pl.scan_csv(path, separator=sep, has_header=False, schema=schema, quote_char=None)
        if tag0 is not None and hasattr(lf, "collect_batches"):
            ok = ((pl.col("tag") == tag0) & ~pl.col("query_id").str.starts_with("#")
                  & pl.col("score").is_finite()).fill_null(False)
            done = _stream_checked_run(lf.select(*cols, ok.alias("_ok")), cols, tag0, mark)
            if done is not None:
                return done[0], True, done[1]
        return lf.select(*cols, "tag").collect(), False, None
    except (pl.exceptions.PolarsError, OSError, UnicodeDecodeError, _NotClean):
        return None


_BATCH_ROWS = 1 << 20
_PAIR_HASH = pl.col("query_id").hash(1) ^ pl.col("doc_id").hash(2)  # of a (query, doc)


class _NotClean(Exception):
    """The file needs the exact reader (a comment, a bad score, a missing field or a
    possible duplicate), which reports the lines."""


def _stream_checked_run(
    lf: pl.LazyFrame, cols: list[str], tag0: str, mark: pl.DataFrame | None
) -> tuple[pl.DataFrame, frames.Blocks | None] | None:
    """Read a one-tag run in batches, checking each while polars parses the next.

    Per batch: the line check (``_ok``), the query blocks (run-length encoding of
    the query ids, merged across batch edges), the duplicate check (hashes of
    (query, doc) sorted block-aligned segment by segment: a document can only
    repeat inside its query's block) and, with ``mark`` (``query_id, doc_id``
    pairs), the rows whose pair may be one of them: their 64-bit pair hash is one
    of the marked pairs' hashes (the caller joins on the ids, so a collision only
    adds a row it drops). None when a line has another tag (the caller reads the tags);
    raises :class:`_NotClean` for a comment, a bad score, a missing field or a hash
    that repeats (the exact reader then reports the lines). When a query's lines
    turn out not to be together, the duplicate check is redone over the whole frame.
    """
    parts: list[pl.DataFrame] = []
    lens: list[np.ndarray] = []
    vals: list[pl.Series] = []
    marked: list[np.ndarray] = []
    ups: list[np.ndarray] = []
    carry = np.zeros(0, np.uint64)
    offset = 0
    last_score = None
    judged = (mark.select(_PAIR_HASH).to_series().unique().implode()
              if mark is not None else None)
    try:  # (collect_batches is recent in polars and marked unstable)
        batches = lf.collect_batches(chunk_size=_BATCH_ROWS, maintain_order=True)
    except TypeError:
        return None
    for b in batches:
        n = b.height
        if n == 0:
            continue
        if not b.get_column("_ok").all() or any(b.get_column(c).null_count() for c in cols):
            bad = b.filter(~pl.col("_ok"))
            if bad.select(pl.any_horizontal(
                    pl.col("query_id").str.starts_with("#").any(),
                    ~pl.col("score").is_finite().all(),
                    pl.any_horizontal(pl.col(cols).is_null()).any())).item():
                raise _NotClean  # comment, bad score or missing field: the exact reader
            return None  # another run tag: read the tags
        b = b.drop("_ok")
        runs = b.select(pl.col("query_id").rle()).to_series()
        bl = runs.struct.field("len").to_numpy().astype(np.int64)
        bv = runs.struct.field("value")
        h = b.select(_PAIR_HASH).to_series().to_numpy()
        score = b.get_column("score")
        ups.append(frames.score_increases(score, last_score) + offset)
        last_score = score[-1]
        last_start = n - int(bl[-1])
        inner = bl[:-1]  # lengths of the batch's blocks before its last one
        cont = bool(vals) and vals[-1][-1] == bv[0]
        if cont:  # the batch goes on with the previous batch's last query
            lens[-1][-1] += bl[0]
            bl, bv = bl[1:], bv[1:]
        if last_start == 0:  # one query only in this batch
            if cont:
                carry = np.concatenate((carry, h))
            else:
                if frames.repeats_in_blocks(carry):
                    raise _NotClean
                carry = h
        else:
            if cont:  # the carried rows and this batch's first block are one block
                seg = np.concatenate((carry, h[:last_start]))
                seg_lens = np.concatenate(([carry.size + inner[0]], inner[1:]))
            else:
                if frames.repeats_in_blocks(carry):
                    raise _NotClean
                seg, seg_lens = h[:last_start], inner
            if frames.repeats_in_blocks(seg, seg_lens):
                raise _NotClean
            carry = h[last_start:]
        if bl.size:
            lens.append(bl.copy())
            vals.append(bv)
        if judged is not None:
            hit = np.flatnonzero(pl.Series(h).is_in(judged).to_numpy())
            marked.append(hit.astype(np.int64) + offset)
        parts.append(b)
        offset += n
    if not parts:
        return None
    if frames.repeats_in_blocks(carry):
        raise _NotClean
    df = pl.concat(parts, how="vertical", rechunk=False).with_columns(
        pl.lit(tag0, pl.String).alias("tag"))
    lengths = np.concatenate(lens)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    keys = pl.DataFrame({"tag": pl.Series([tag0] * lengths.size, dtype=pl.String),
                         "query_id": pl.concat(vals)})
    if keys.get_column("query_id").is_duplicated().any():
        # a query's lines are not together: blocks do not hold, check the whole frame
        if frames.has_repeats(frames.key_hash(df, ["query_id", "doc_id"])):
            raise _NotClean
        return df, None
    mk = np.concatenate(marked) if judged is not None else None
    up = np.concatenate(ups)
    return df, frames.Blocks(starts, starts + lengths, keys, mk,
                             bool(np.isin(up, starts).all()))


def _clean_fast_run(
    df: pl.DataFrame, sep: str
) -> tuple[pl.DataFrame, frames.Blocks | None] | None:
    """The fast parse when it is trustworthy, None to send the file to the exact reader.

    Also returns the file's (tag, query) blocks when each query's lines are together.
    """
    if df.height == 0:
        return None
    checks = [pl.col("query_id").str.starts_with("#").any(),
              ~pl.col("score").is_finite().all(),
              pl.any_horizontal(pl.all().is_null()).any()]
    if sep == "\t":
        # tab-separated: a field holding spaces (junk after the tag, padded ids) or an
        # empty field needs the exact whitespace parser
        for c in ("query_id", "doc_id", "tag"):
            checks += [(pl.col(c) == "").any(), pl.col(c).str.contains(r"\s").any()]
    if df.select(pl.any_horizontal(checks)).item():
        return None
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


def _exact_trec_run(path: Path, data: bytes) -> pl.DataFrame:
    lines = _data_lines(_lines(data, path))
    df = _split_fields(lines, 6)
    probs = _Problems(path, "run")
    if df.height:
        few = df.filter(pl.col("nf") < 5)
        probs.add(few, pl.format(
            "wrong number of fields: expected 6 (qid iter docno rank score tag), found {}",
            pl.col("nf")))
        five = df.filter(pl.col("nf") == 5)
        if five.height and five.height != df.height:
            probs.add(five, "wrong number of fields: 5 fields (no run tag) while other lines "
                            "have 6 or more; add the tag")
        ok = df.filter((pl.col("nf") >= 6) | ((pl.col("nf") == 5) & (five.height == df.height)))
        probs.add(ok.filter(~_is_number("f4")), pl.format(
            "the score {} is not a number (fields: qid iter docno rank score tag)",
            pl.col("f4")))
        probs.add(ok.filter(~pl.col("f3").str.contains(_INT_RE)), pl.format(
            "the rank {} is not an integer (fields: qid iter docno rank score tag; are rank "
            "and score swapped?)", pl.col("f3")))
        if not probs.parts:
            _dup_problems(
                ok.rename({"f0": "query_id", "f2": "doc_id"}),
                ["f5", "query_id", "doc_id"], probs, "document",
            )
    probs.raise_if_any()
    return df.select(
        pl.col("line_no"),
        pl.col("f0").alias("query_id"),
        pl.col("f2").alias("doc_id"),
        pl.col("f3").str.strip_chars().cast(pl.Float64).cast(pl.Int64).alias("rank"),
        pl.col("f4").str.strip_chars().cast(pl.Float64).alias("score"),
        pl.col("f5").alias("tag"),
    )


def _read_trec_run(
    path: Path, rank: bool = True, mark: pl.DataFrame | None = None
) -> tuple[pl.DataFrame, frames.Blocks | None]:
    fast = _fast_trec_run(path, rank, mark)
    if fast is None:
        return _exact_trec_run(path, _read_bytes(path)).drop("line_no"), None
    return fast


# --------------------------------------------------------------------------- tables
def _read_table(path: Path, fmt: str) -> tuple[pl.DataFrame, int, str]:
    """Read csv/tsv/jsonl/parquet; return (frame, number of the first row's line, label)."""
    if fmt == "parquet":
        try:
            return pl.read_parquet(path), 1, "row"
        except Exception as exc:
            raise FileFormatError(f"cannot read Parquet: {exc}", path=str(path),  # noqa: B904
                                  hint="check that the file is Parquet or pass format=")
    data = _read_bytes(path)
    if fmt == "jsonl":
        lines = _data_lines(_lines(data, path)) if data else pl.DataFrame()
        if data.lstrip()[:1] == b"[":
            try:
                return pl.DataFrame(json.loads(data)), 1, "record"
            except (ValueError, TypeError) as exc:
                raise FileFormatError(f"cannot read JSON: {exc}", path=str(path)) from None
        try:
            df = pl.read_ndjson(_io.BytesIO(data), infer_schema_length=None)
        except Exception:
            for row in lines.iter_rows(named=True):
                try:
                    obj = json.loads(row["text"])
                    if not isinstance(obj, dict):
                        raise ValueError("not a JSON object")
                except ValueError as exc:
                    raise FileFormatError(
                        f"not a JSON object ({exc})", path=str(path), line_no=row["line_no"],
                        line=row["text"], hint="each line of a JSON Lines file is one object "
                        'like {"query_id": "1", "doc_id": "d1", "score": 2.5}',
                    ) from None
            raise
        return df, 1, "line"
    sep = "," if fmt == "csv" else "\t"
    try:
        df = pl.read_csv(_io.BytesIO(data), separator=sep, infer_schema=False,
                         comment_prefix=None, truncate_ragged_lines=False)
    except pl.exceptions.ComputeError as exc:
        raise FileFormatError(f"cannot parse {fmt.upper()}: {str(exc).splitlines()[0]}",
                              path=str(path), hint="every row needs as many fields as the "
                              "header; quote fields that contain the separator") from None
    return df, 2, "line"


def _find(df: pl.DataFrame, canon: str, aliases: Sequence[str],
          columns: Mapping[str, str] | None, taken: set[str]) -> str | None:
    if columns and canon in columns:
        if columns[canon] not in df.columns:
            raise MissingColumnError(
                f"columns= maps {canon!r} to {columns[canon]!r}, but the file has no such "
                f"column; its columns are {df.columns}"
            )
        return columns[canon]
    lower = {c.lower(): c for c in reversed(df.columns)}
    for a in aliases:
        c = lower.get(a)
        if c is not None and c not in taken:
            return c
    return None


def _as_str(df: pl.DataFrame, col: str) -> pl.Expr:
    dtype = df.schema[col]
    if dtype == pl.String:
        return pl.col(col)
    if dtype.is_float():
        return pl.when(pl.col(col) == pl.col(col).floor()).then(
            pl.col(col).cast(pl.Int64, strict=False).cast(pl.String)
        ).otherwise(pl.col(col).cast(pl.String))
    return pl.col(col).cast(pl.String)


def _table_lines(path: Path, line_nos: list[int]) -> dict[int, str]:
    """Text of some lines (error path only)."""
    wanted = set(line_nos)
    out: dict[int, str] = {}
    with open(path, "rb") as fh:
        gz = fh.read(2) == b"\x1f\x8b"
    opener: Callable[..., Any] = gzip.open if gz else open
    with contextlib.suppress(OSError), opener(path, "rt", encoding="utf-8", errors="replace") as fh:
        for i, line in enumerate(fh, start=1):
            if i in wanted:
                out[i] = line.rstrip("\n")
            if i >= max(wanted):
                break
    return out


def _table_canonical(df: pl.DataFrame, path: Path, first_line: int, label: str,
                     fmt: str, kind: str, columns: Mapping[str, str] | None) -> pl.DataFrame:
    if df.height == 0:
        raise EmptyInputError(f"{path}: the file has no rows")
    wanted = ("query_id", "doc_id") + (("relevance",) if kind == "qrels" else ())
    optional = ("score", "rank", "run") if kind == "run" else ()
    found: dict[str, str] = {}
    taken: set[str] = set()
    for canon in wanted + optional:
        c = _find(df, canon, frames.ALIASES[canon], columns, taken)
        if c is not None:
            found[canon] = c
            taken.add(c)
    missing = [c for c in wanted if c not in found]
    if kind == "run" and "score" not in found and "rank" not in found:
        missing.append("score")
    if missing:
        raise MissingColumnError(
            f"{path}: no column for {', '.join(map(repr, missing))}; the {fmt} columns are "
            f"{df.columns}. Recognised names for {missing[0]!r}: "
            f"{', '.join(frames.ALIASES[missing[0]])}. Rename the column or pass "
            f"columns={{{missing[0]!r}: 'your_column'}}"
        )
    sel = [pl.int_range(first_line, first_line + pl.len()).alias("line_no")]
    for canon, col in found.items():
        sel.append(_as_str(df, col).alias(canon))
    raw = df.select(sel)
    text = pl.concat_str(
        [pl.col(c).fill_null("") for c in found], separator="," if fmt == "csv" else "\t"
    )
    raw = raw.with_columns(text.alias("text"))
    probs = _Problems(path, kind)
    for c in ("query_id", "doc_id"):
        probs.add(raw.filter(pl.col(c).is_null() | (pl.col(c).str.strip_chars() == "")),
                  f"the {found[c]!r} field is empty")
    if kind == "run":
        for c in ("score", "rank"):
            if c not in found:
                continue
            if c == "score":
                bad = raw.filter(~_is_number(c).fill_null(False))
                probs.add(bad, pl.format("the score {} is not a number",
                                         pl.col(c).fill_null("(missing)")))
            else:
                bad = raw.filter(~pl.col(c).str.contains(_INT_RE).fill_null(False))
                probs.add(bad, pl.format("the rank {} is not an integer",
                                         pl.col(c).fill_null("(missing)")))
    else:
        bad = raw.filter(~pl.col("relevance").str.contains(_INT_RE).fill_null(False))
        probs.add(bad, pl.format("the relevance {} is not an integer",
                                 pl.col("relevance").fill_null("(missing)")))
    if not probs.parts:
        key = (["run"] if "run" in found else []) + ["query_id", "doc_id"]
        _dup_problems(raw, key, probs, "document" if kind == "run" else "judgment")
    if probs.parts and fmt in ("csv", "tsv", "jsonl"):
        # replace reconstructed text with the real lines of the file
        nos = [int(n) for p in probs.parts for n in p["line_no"]]
        real = _table_lines(path, nos)
        probs.parts = [p.with_columns(pl.col("line_no").replace_strict(
            real, default=None, return_dtype=pl.String).fill_null(pl.col("text")).alias("text"))
            for p in probs.parts]
    probs.raise_if_any(label)
    out = raw.drop("text", "line_no")
    if kind == "run":
        if "score" in found:
            out = out.with_columns(pl.col("score").str.strip_chars().cast(pl.Float64))
        if "rank" in found:
            out = out.with_columns(
                pl.col("rank").str.strip_chars().cast(pl.Float64).cast(pl.Int64))
        if "score" not in found:
            out = out.with_columns((-pl.col("rank").cast(pl.Float64)).alias("score"))
        out = out.rename({"run": "tag"}) if "run" in out.columns else out
    else:
        out = out.with_columns(
            pl.col("relevance").str.strip_chars().cast(pl.Float64).cast(pl.Int64))
    return out


# --------------------------------------------------------------------------- public: runs
def _paths(path: PathLike | Sequence[PathLike]) -> list[Path]:
    if isinstance(path, str | os.PathLike):
        return [Path(path)]
    out = [Path(p) for p in path]
    if not out:
        raise SearchEvalError("path: an empty list of files; give at least one file")
    return out


def _check_format(fmt: str | None) -> None:
    if fmt is not None and fmt not in _FORMATS:
        raise SearchEvalError(
            f"format={fmt!r} is not a known format; use one of {list(_FORMATS)} or None to "
            "detect it from the file"
        )


def _native(df: pl.DataFrame, backend: str) -> Any:
    if backend == "polars":
        return df
    if backend == "pandas":
        return df.to_pandas()
    raise SearchEvalError(f"backend={backend!r}: use 'polars' or 'pandas'")


def read_run(
    path: PathLike | Sequence[PathLike],
    *,
    format: Format | None = None,
    name: str | Sequence[str] | None = None,
    name_from: Literal["tag", "file"] = "tag",
    columns: Mapping[str, str] | None = None,
    backend: Backend = "polars",
    rank: bool = True,
) -> Any:
    """Read one or several run files into one canonical run frame.

    Parameters
    ----------
    path
        A file, or a list of files read into one frame (each keeps its name in
        the ``run`` column).
    format
        ``"trec"``, ``"csv"``, ``"tsv"``, ``"parquet"`` or ``"jsonl"``; by
        default detected from the extension and the content.
    name
        The run name (one per file for a list), overriding the tag column.
    name_from
        ``"tag"`` (default): the TREC tag column (or a ``run``/``tag``/``system``
        column of a table); files without one are named after the file.
        ``"file"``: always the file name (without ``.gz``/``.run``/``.txt``...).
    columns
        For tables: canonical name → your column name, e.g. ``{"score": "sim"}``.
    backend
        ``"polars"`` (default) or ``"pandas"``.
    rank
        Keep the file's rank column (default). ``rank=False`` skips it, which
        is faster; the evaluation ignores it anyway.

    Returns
    -------
    DataFrame
        ``run, query_id, doc_id, score, rank`` (``rank`` as in the file; the
        evaluation ignores it and orders by score, as trec_eval does).

    Raises
    ------
    FileFormatError
        A malformed line, with the file, the line number, the line and a hint.
    DuplicateRowsError
        Two files give the same run name (pass ``name=`` or ``name_from="file"``).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "bm25.run"
    >>> _ = p.write_text("1 Q0 d1 1 2.5 bm25\\n1 Q0 d2 2 1.5 bm25\\n")
    >>> read_run(p).row(0)
    ('bm25', '1', 'd1', 2.5, 1)
    """
    out, blocks = _read_runs(path, format, name, name_from, columns, rank)
    return _native(frames.mark_checked(out, blocks), backend)


def _read_runs(
    path: PathLike | Sequence[PathLike],
    format: Format | None = None,
    name: str | Sequence[str] | None = None,
    name_from: Literal["tag", "file"] = "tag",
    columns: Mapping[str, str] | None = None,
    rank: bool = True,
    mark: pl.DataFrame | None = None,
) -> tuple[pl.DataFrame, frames.Blocks | None]:
    """:func:`read_run` as a polars frame, with its (run, query) blocks when known.

    ``mark``: ``query_id, doc_id`` pairs (the qrels) whose rows to list in
    ``blocks.marked`` (one TREC file only; a superset: join on the ids to use them).
    """
    _check_format(format)
    if name_from not in ("tag", "file"):
        raise SearchEvalError(f"name_from={name_from!r}: use 'tag' or 'file'")
    paths = _paths(path)
    names: list[str | None]
    if name is None:
        names = [None] * len(paths)
    elif isinstance(name, str):
        if len(paths) > 1:
            raise SearchEvalError(
                f"name={name!r} names one run but {len(paths)} files were given; pass one "
                "name per file, e.g. name=['bm25', 'dense']"
            )
        names = [name]
    else:
        names = list(name)
        if len(names) != len(paths):
            raise SearchEvalError(
                f"name= has {len(names)} names for {len(paths)} files; give one per file"
            )
    parts = []
    seen: dict[str, Path] = {}
    blocks = None
    for p, nm in zip(paths, names, strict=True):
        df, blocks = _read_one_run(p, format, columns, rank, mark if len(paths) == 1 else None)
        if nm is not None or name_from == "file" or "tag" not in df.columns:
            df = df.with_columns(pl.lit(nm if nm is not None else _stem(p)).alias("run"))
            blocks = None  # the reader's blocks are by tag, the run is named otherwise
        else:
            df = df.with_columns(pl.col("tag").alias("run"))
            if blocks is not None:  # (tag, query) blocks are the (run, query) blocks
                blocks = replace(blocks, keys=blocks.keys.rename({"tag": "run"}))
        df = df.select("run", "query_id", "doc_id", "score",
                       pl.col("rank") if "rank" in df.columns else pl.lit(None, pl.Int64)
                       .alias("rank"))
        names_here = (df.get_column("run").unique(maintain_order=True).to_list()
                      if len(paths) > 1 else [])
        for r in names_here:
            if r in seen and len(paths) > 1:
                from ..errors import DuplicateRowsError

                raise DuplicateRowsError(
                    f"{p}: run name {r!r} is also the name of the run in {seen[r]}; the two "
                    "would mix in one frame. Pass name_from='file' to name runs after their "
                    "files, or name=[...] with one name per file"
                )
            seen[r] = p
        parts.append(df)
    out = parts[0] if len(parts) == 1 else pl.concat(parts, how="vertical_relaxed")
    if not rank or out["rank"].null_count() == out.height:
        out = out.drop("rank")
    # blocks of one file's rows in file order hold for the frame (same rows, same order)
    return out, (blocks if len(parts) == 1 else None)


def _read_one_run(
    p: Path, fmt: str | None, columns: Mapping[str, str] | None, rank: bool = True,
    mark: pl.DataFrame | None = None,
) -> tuple[pl.DataFrame, frames.Blocks | None]:
    fmt = fmt or detect_format(p, "run")
    if fmt == "trec":
        df, blocks = _read_trec_run(p, rank, mark)
        if df.height == 0:
            raise EmptyInputError(f"{p}: the run file has no result lines (only comments or "
                                  "blank lines)")
        # (an expression: get_column would build a constant tag column's 7M values)
        if df.select(pl.col("tag").null_count() == pl.len()).item():
            df = df.drop("tag")
        return df, blocks
    table, first, label = _read_table(p, fmt)
    return _table_canonical(table, p, first, label, fmt, "run", columns), None


# --------------------------------------------------------------------------- public: qrels
def _read_trec_qrels(path: Path, data: bytes) -> pl.DataFrame:
    lines = _data_lines(_lines(data, path))
    df = _split_fields(lines, 4)
    probs = _Problems(path, "qrels")
    if df.height:
        probs.add(df.filter(pl.col("nf") != 4), pl.format(
            "wrong number of fields: expected 4 (qid iter docno relevance), found {}",
            pl.col("nf")))
        ok = df.filter(pl.col("nf") == 4)
        probs.add(ok.filter(~pl.col("f3").str.contains(_INT_RE)), pl.format(
            "the relevance {} is not an integer", pl.col("f3")))
        if not probs.parts:
            _dup_problems(ok.rename({"f0": "query_id", "f2": "doc_id"}),
                          ["query_id", "doc_id"], probs, "judgment")
    probs.raise_if_any()
    return df.select(
        pl.col("f0").alias("query_id"),
        pl.col("f2").alias("doc_id"),
        pl.col("f3").str.strip_chars().cast(pl.Float64).cast(pl.Int64).alias("relevance"),
    )


def read_qrels(
    path: PathLike | Sequence[PathLike],
    *,
    format: Format | None = None,
    columns: Mapping[str, str] | None = None,
    backend: Backend = "polars",
) -> Any:
    """Read relevance judgments into the canonical qrels frame.

    Parameters
    ----------
    path
        A qrels file (TREC ``qid iter docno rel``, CSV/TSV with a header,
        Parquet, JSON Lines; gzip allowed), a list of files (concatenated), or
        ``"irds:<dataset-id>"`` to load them through ``ir_datasets``.
    format
        Force a format instead of detecting it.
    columns
        For tables: canonical name → your column name, e.g. ``{"relevance": "grade"}``.
    backend
        ``"polars"`` (default) or ``"pandas"``.

    Returns
    -------
    DataFrame
        ``query_id, doc_id, relevance`` (Int64; negative = judged but unusable).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "qrels.txt"
    >>> _ = p.write_text("# graded\\n1 0 d1 2\\n1 0 d2 0\\n")
    >>> read_qrels(p).rows()
    [('1', 'd1', 2), ('1', 'd2', 0)]
    """
    _check_format(format)
    if isinstance(path, str) and path.startswith("irds:"):
        return _native(_irds_qrels(path[5:]), backend)
    parts = []
    for p in _paths(path):
        fmt = format or detect_format(p, "qrels")
        if fmt == "trec":
            df = _read_trec_qrels(p, _read_bytes(p))
        else:
            table, first, label = _read_table(p, fmt)
            df = _table_canonical(table, p, first, label, fmt, "qrels", columns)
        if df.height == 0:
            raise EmptyInputError(f"{p}: the qrels file has no judgments")
        parts.append(df)
    out = parts[0] if len(parts) == 1 else pl.concat(parts)
    if len(parts) > 1:
        frames.qrels_frame(out, arg="qrels files")  # duplicate judgments across files
    return _native(out, backend)


# --------------------------------------------------------------------------- ir_datasets
def _irds(dataset_id: str) -> Any:
    try:
        import ir_datasets
    except ImportError:
        raise SearchEvalError(
            f"'irds:{dataset_id}' needs the optional package ir_datasets; install it with "
            "`pip install ir_datasets`"
        ) from None
    try:
        return ir_datasets.load(dataset_id)
    except KeyError:
        raise SearchEvalError(
            f"ir_datasets has no dataset {dataset_id!r}; see https://ir-datasets.com for ids "
            "such as 'msmarco-passage/trec-dl-2019/judged'"
        ) from None


def _irds_qrels(dataset_id: str) -> pl.DataFrame:
    ds = _irds(dataset_id)
    if not ds.has_qrels():
        raise SearchEvalError(f"ir_datasets dataset {dataset_id!r} has no qrels")
    q, d, r = [], [], []
    for row in ds.qrels_iter():
        q.append(str(row.query_id))
        d.append(str(row.doc_id))
        r.append(int(row.relevance))
    return pl.DataFrame({"query_id": q, "doc_id": d, "relevance": r},
                        schema={"query_id": pl.String, "doc_id": pl.String,
                                "relevance": pl.Int64})


def _irds_queries(dataset_id: str) -> pl.DataFrame:
    ds = _irds(dataset_id)
    if not ds.has_queries():
        raise SearchEvalError(f"ir_datasets dataset {dataset_id!r} has no queries")
    rows = []
    for row in ds.queries_iter():
        rec = row._asdict()
        qid = str(rec.pop("query_id"))
        text = rec.pop("text", None)
        if text is None:
            text = rec.pop("title", "")
        rows.append({"query_id": qid, "query": str(text),
                     **{k: (v if isinstance(v, str | int | float) else str(v))
                        for k, v in rec.items()}})
    return pl.DataFrame(rows, infer_schema_length=None)


# --------------------------------------------------------------------------- queries
_TOPIC_RE = re.compile(r"<top>(.*?)</top>", re.S | re.I)
_TOPIC_XML_RE = re.compile(r"<topic\b([^>]*)>(.*?)</topic>", re.S | re.I)
_TAG_RE = re.compile(r"<(\w+)>", re.S)
_PREFIXES = {"num": r"number\s*:", "title": r"topic\s*:", "desc": r"description\s*:",
             "narr": r"narrative\s*:"}
_TOPIC_COLUMNS = {"num": "query_id", "title": "query", "desc": "description",
                  "narr": "narrative", "query": "query", "description": "description",
                  "narrative": "narrative"}


def _topic_fields(body: str) -> dict[str, str]:
    out: dict[str, str] = {}
    marks = list(_TAG_RE.finditer(body))
    for i, m in enumerate(marks):
        tag = m.group(1).lower()
        end = marks[i + 1].start() if i + 1 < len(marks) else len(body)
        text = re.sub(r"</\w+>", " ", body[m.end():end])
        if tag in _PREFIXES:
            text = re.sub(r"^\s*" + _PREFIXES[tag], "", text, flags=re.I)
        out[tag] = " ".join(text.split())
    return out


def _read_topics(path: Path) -> pl.DataFrame:
    text = _read_bytes(path).decode("utf-8", errors="replace")
    rows: list[dict[str, str]] = []
    for m in _TOPIC_XML_RE.finditer(text):
        attrs = dict(re.findall(r'(\w+)\s*=\s*"([^"]*)"', m.group(1)))
        fields = _topic_fields(m.group(2))
        if "number" in attrs:
            fields.setdefault("num", attrs.pop("number"))
        rows.append({**{k: v for k, v in attrs.items()}, **fields})
    if not rows:
        for m in _TOPIC_RE.finditer(text):
            rows.append(_topic_fields(m.group(1)))
    if not rows:
        raise FileFormatError("no <top>...</top> topics found", path=str(path),
                              hint="a TREC topic file has blocks <top><num>1</num>"
                                   "<title>query</title></top>; for qid<TAB>text pass "
                                   "format='tsv'")
    renamed = [{_TOPIC_COLUMNS.get(k, k): v for k, v in r.items()} for r in rows]
    for i, r in enumerate(renamed, start=1):
        if not r.get("query_id"):
            raise FileFormatError(f"topic number {i} has no <num>", path=str(path),
                                  line=str(rows[i - 1])[:200], hint="give every topic a <num>")
    df = pl.DataFrame(renamed, infer_schema_length=None)
    if "query" not in df.columns:
        df = df.with_columns(pl.lit("").alias("query"))
    return df.select("query_id", "query", pl.exclude("query_id", "query"))


def _read_headerless_tsv(path: Path) -> pl.DataFrame:
    lines = _data_lines(_lines(_read_bytes(path), path))
    parts = pl.col("text").str.splitn("\t", 2)
    df = lines.with_columns(parts.struct.field("field_0").alias("query_id"),
                            parts.struct.field("field_1").alias("query"))
    probs = _Problems(path, "queries")
    probs.add(df.filter(pl.col("query").is_null()),
              "wrong number of fields: no TAB between the query id and the text")
    probs.add(df.filter(pl.col("query_id").str.strip_chars() == ""), "the query id is empty")
    if not probs.parts:
        d = df.with_columns(pl.col("line_no").min().over("query_id").alias("_first"))
        probs.add(d.filter(pl.col("line_no") != pl.col("_first")),
                  pl.format("duplicate query id {} (first on line {})", pl.col("query_id"),
                            pl.col("_first")))
    probs.raise_if_any()
    return df.select(pl.col("query_id").str.strip_chars(), pl.col("query"))


def read_queries(
    path: PathLike,
    *,
    format: Literal["trec", "csv", "tsv", "parquet", "jsonl"] | None = None,
    columns: Mapping[str, str] | None = None,
    backend: Backend = "polars",
) -> Any:
    """Read a query set: ``query_id, query`` plus any metadata columns.

    Parameters
    ----------
    path
        ``qid<TAB>text`` lines without a header (TREC DL topics), CSV/TSV with a
        header, JSON Lines, Parquet, a TREC topic file (``<top>`` blocks; the
        title becomes ``query``, ``<desc>``/``<narr>`` become ``description`` and
        ``narrative``), or ``"irds:<dataset-id>"`` (needs ``ir_datasets``).
    format
        Force a format (``"trec"`` means a TREC topic file here).
    columns
        For tables: ``{"query_id": ..., "query": ...}`` naming your columns.
    backend
        ``"polars"`` (default) or ``"pandas"``.

    Returns
    -------
    DataFrame
        ``query_id`` (str), ``query`` (str), then the other columns.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "queries.tsv"
    >>> _ = p.write_text("1\\twhat is bm25\\n2\\tndcg formula\\n")
    >>> read_queries(p).rows()
    [('1', 'what is bm25'), ('2', 'ndcg formula')]
    """
    _check_format(format)
    if isinstance(path, str) and path.startswith("irds:"):
        return _native(_irds_queries(path[5:]), backend)
    p = Path(path)
    fmt = format or detect_format(p, "queries")
    if fmt == "trec":
        df = _read_topics(p)
    elif fmt == "tsv" and not _looks_like_header(
        _first_data_line(_head_text(p)) or "", QUERY_ID_ALIASES
    ):
        df = _read_headerless_tsv(p)
    else:
        table, first, label = _read_table(p, fmt)
        if table.height == 0:
            raise EmptyInputError(f"{p}: the query file has no rows")
        taken: set[str] = set()
        qcol = _find(table, "query_id", QUERY_ID_ALIASES, columns, taken)
        if qcol:
            taken.add(qcol)
        tcol = _find(table, "query", QUERY_TEXT_ALIASES, columns, taken)
        if qcol is None or tcol is None:
            miss = "query_id" if qcol is None else "query"
            al = QUERY_ID_ALIASES if qcol is None else QUERY_TEXT_ALIASES
            raise MissingColumnError(
                f"{p}: no column for {miss!r}; the columns are {table.columns}. Recognised "
                f"names: {', '.join(al)}. Pass columns={{{miss!r}: 'your_column'}}"
            )
        df = table.select(_as_str(table, qcol).alias("query_id"),
                          _as_str(table, tcol).alias("query"),
                          pl.exclude(qcol, tcol))
        probs = _Problems(p, "queries")
        raw = df.with_columns(pl.int_range(first, first + pl.len()).alias("line_no"),
                              pl.col("query_id").fill_null("").alias("text"))
        probs.add(raw.filter(pl.col("query_id").is_null()), "the query id is missing")
        if not probs.parts:
            d = raw.with_columns(pl.col("line_no").min().over("query_id").alias("_first"))
            probs.add(d.filter(pl.col("line_no") != pl.col("_first")),
                      pl.format("duplicate query id {} (first on {} {})", pl.col("query_id"),
                                pl.lit(label), pl.col("_first")))
        probs.raise_if_any(label)
    return _native(df, backend)


# --------------------------------------------------------------------------- writing
def _atomic_write(path: Path, payload: Callable[[Any], None], *, binary: bool = True) -> None:
    """Write through a temporary file in the same folder, fsync, then rename."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.exists():
        raise SearchEvalError(f"{path}: the folder {folder} does not exist; create it first")
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            if path.name.lower().endswith(".gz"):
                with gzip.GzipFile(fileobj=fh, mode="wb", filename="", mtime=0) as gz:
                    payload(gz)
            else:
                payload(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _write_fmt(path: Path, fmt: str | None, default: str) -> str:
    _check_format(fmt)
    return fmt or _EXT.get(_ext(path), default)


def _no_space(df: pl.DataFrame, cols: Sequence[str], arg: str) -> None:
    for c in cols:
        bad = df.filter(pl.col(c).str.contains(r"\s") | (pl.col(c) == ""))
        if bad.height:
            from ..errors import format_rows

            raise SearchEvalError(
                f"{arg}: column {c!r} has values that are empty or contain whitespace, which "
                f"the TREC format cannot hold:\n{format_rows(bad)}\nReplace the spaces "
                "(e.g. df.with_columns(pl.col(c).str.replace_all(r'\\s', '_'))) or write "
                "CSV/Parquet/JSONL instead"
            )


def _write_table(df: pl.DataFrame, path: Path, fmt: str) -> None:
    def payload(fh: Any) -> None:
        if fmt == "parquet":
            df.write_parquet(fh)
        elif fmt == "jsonl":
            df.write_ndjson(fh)
        else:
            df.write_csv(fh, separator="," if fmt == "csv" else "\t")

    _atomic_write(path, payload)


def _ranked(run: pl.DataFrame, keep_rank: bool) -> pl.DataFrame:
    order = [pl.int_range(pl.len()).min().over("run").alias("_r"),
             pl.int_range(pl.len()).min().over("run", "query_id").alias("_q")]
    df = run.with_columns(order)
    if keep_rank and "rank" in df.columns:
        return df.sort("_r", "_q", "rank").drop("_r", "_q")
    df = df.sort(["_r", "_q", "score", "doc_id"], descending=[False, False, True, True])
    return df.with_columns(
        pl.int_range(1, pl.len() + 1).over("run", "query_id").cast(pl.Int64).alias("rank")
    ).drop("_r", "_q")


def write_run(
    run: Any,
    path: PathLike,
    *,
    format: Format | None = None,
    keep_rank: bool = False,
    iteration: str = "Q0",
    columns: Mapping[str, str] | None = None,
    name: str | None = None,
) -> Path:
    """Write a run (any frame :func:`~searcheval_frames.frames.run_frame` accepts).

    Parameters
    ----------
    run
        The run; several runs (the ``run`` column) go into one file, each with
        its own tag.
    path
        Target file; the format follows the extension (``.parquet``, ``.jsonl``,
        ``.csv``, ``.tsv``; anything else is TREC), ``.gz`` compresses text.
    format
        Force a format.
    keep_rank
        Keep the ``rank`` column as given. By default ranks are recomputed in
        trec_eval's order (score descending, ties by doc id descending) and rows
        are written in that order.
    iteration
        The second TREC column (``Q0``).
    columns
        Canonical name → your column name.
    name
        Run name when ``run`` has no run column.

    Returns
    -------
    pathlib.Path
        The written file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "bm25.run"
    >>> _ = write_run({"q1": {"d1": 1.0, "d2": 3.0}}, p, name="bm25")
    >>> p.read_text()
    'q1 Q0 d2 1 3.0 bm25\\nq1 Q0 d1 2 1.0 bm25\\n'
    """
    path = Path(path)
    df = frames.run_frame(run, columns=columns, name=name)
    df = _ranked(df, keep_rank)
    fmt = _write_fmt(path, format, "trec")
    if fmt == "trec":
        _no_space(df, ["run", "query_id", "doc_id"], "run")
        if re.search(r"\s", iteration) or not iteration:
            raise SearchEvalError(f"iteration={iteration!r} must be one word, e.g. 'Q0'")
        lines = df.select(pl.concat_str(
            [pl.col("query_id"), pl.lit(iteration), pl.col("doc_id"),
             pl.col("rank").cast(pl.String), pl.col("score").cast(pl.String), pl.col("run")],
            separator=" ").alias("line"))
        _atomic_write(path, lambda fh: lines.write_csv(fh, include_header=False,
                                                       quote_style="never"))
    else:
        _write_table(df.select("run", "query_id", "doc_id", "rank", "score"), path, fmt)
    return path


def write_qrels(
    qrels: Any,
    path: PathLike,
    *,
    format: Format | None = None,
    iteration: str = "0",
    columns: Mapping[str, str] | None = None,
) -> Path:
    """Write relevance judgments (TREC ``qid 0 docno rel`` unless the extension says otherwise).

    Parameters
    ----------
    qrels
        Any frame :func:`~searcheval_frames.frames.qrels_frame` accepts.
    path
        Target file (``.parquet``, ``.jsonl``, ``.csv``, ``.tsv``, else TREC; ``.gz`` ok).
    format
        Force a format.
    iteration
        The second TREC column (``0``).
    columns
        Canonical name → your column name.

    Returns
    -------
    pathlib.Path
        The written file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "qrels.txt"
    >>> _ = write_qrels({"q1": {"d1": 2}}, p)
    >>> p.read_text()
    'q1 0 d1 2\\n'
    """
    path = Path(path)
    df = frames.qrels_frame(qrels, columns=columns)
    fmt = _write_fmt(path, format, "trec")
    if fmt == "trec":
        _no_space(df, ["query_id", "doc_id"], "qrels")
        lines = df.select(pl.concat_str(
            [pl.col("query_id"), pl.lit(iteration), pl.col("doc_id"),
             pl.col("relevance").cast(pl.String)], separator=" ").alias("line"))
        _atomic_write(path, lambda fh: lines.write_csv(fh, include_header=False,
                                                       quote_style="never"))
    else:
        _write_table(df, path, fmt)
    return path


def write_queries(
    queries: Any,
    path: PathLike,
    *,
    format: Literal["trec", "csv", "tsv", "parquet", "jsonl"] | None = None,
    header: bool | None = None,
) -> Path:
    """Write a query set (``query_id``, ``query`` and optional metadata columns).

    Parameters
    ----------
    queries
        A pandas/polars frame with ``query_id`` and ``query`` columns (aliases
        such as ``qid``/``text`` are recognised), or a dict ``{query_id: text}``.
    path
        Target file. ``.tsv`` writes ``qid<TAB>text`` without a header (TREC DL
        style) when there is no metadata, ``.csv``/``.jsonl``/``.parquet`` as
        named; anything else with ``format="trec"`` writes ``<top>`` topics.
    format
        Force a format.
    header
        For TSV: write a header row (default: only when there are metadata columns).

    Returns
    -------
    pathlib.Path
        The written file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "queries.tsv"
    >>> _ = write_queries({"1": "what is bm25"}, p)
    >>> p.read_text()
    '1\\twhat is bm25\\n'
    """
    path = Path(path)
    if isinstance(queries, Mapping):
        df = pl.DataFrame({"query_id": [str(k) for k in queries],
                           "query": [str(v) for v in queries.values()]})
    else:
        df = frames._to_polars(queries, "queries")
        taken: set[str] = set()
        q = _find(df, "query_id", QUERY_ID_ALIASES, None, taken)
        if q:
            taken.add(q)
        t = _find(df, "query", QUERY_TEXT_ALIASES, None, taken)
        if q is None or t is None:
            raise MissingColumnError(
                f"queries: needs 'query_id' and 'query' columns; the columns are {df.columns}"
            )
        df = df.select(_as_str(df, q).alias("query_id"), _as_str(df, t).alias("query"),
                       pl.exclude(q, t))
    fmt = format or _EXT.get(_ext(path), "tsv")
    _check_format(fmt)
    if fmt == "tsv":
        with_header = header if header is not None else df.width > 2
        bad = df.filter(pl.any_horizontal(pl.col(pl.String).str.contains(r"[\t\n\r]")))
        if bad.height:
            from ..errors import format_rows

            raise SearchEvalError(
                f"queries: TAB or newline characters inside values cannot be written as TSV:\n"
                f"{format_rows(bad)}\nClean the text or write .jsonl/.parquet"
            )
        _atomic_write(path, lambda fh: df.write_csv(fh, separator="\t",
                                                    include_header=with_header,
                                                    quote_style="never"))
    elif fmt == "trec":
        tags = {"query_id": "num", "query": "title", "description": "desc",
                "narrative": "narr"}
        out = []
        for row in df.iter_rows(named=True):
            out.append("<top>\n" + "".join(
                f"<{tags[k]}>{v}</{tags[k]}>\n" for k, v in row.items()
                if k in tags and v is not None) + "</top>\n")
        text = "".join(out).encode()
        _atomic_write(path, lambda fh: fh.write(text))
    else:
        _write_table(df, path, fmt)
    return path
