"""Fuzzing the readers (issue #15): mutated files give the right frame or a clear error.

Every reader gets valid files put through random mutations (byte flips, deleted,
duplicated and swapped fields and lines, CRLF, a UTF-8 BOM, tabs and other ASCII
whitespace for spaces, odd numbers, truncation, gzip and corrupted gzip). The
outcome must be either

* exactly the frame that the small parser written here (plain Python, line by
  line, for the valid subset of each format) gives for the same bytes, or
* a :class:`SearchEvalError` naming the file and, for text formats, the line the
  parser here finds first,

never another exception, nor a frame with rows dropped or changed. Where the
parser here does not model the input (a mutated CSV header, a JSON key changed by
a byte flip, an unusual topic layout), only the second half holds: a frame or a
``SearchEvalError`` naming the file.

Semantics of the parser here (the documented ones):
TREC fields are separated by runs of Unicode whitespace (White_Space: space, tab,
VT, FF, CR, NBSP, ...; trec_eval splits on ASCII whitespace only), a line is split at ``\\n`` with one trailing
``\\r`` dropped, a leading UTF-8 BOM is dropped, blank lines and ``#`` lines are
skipped; a score is a finite decimal number, a rank or relevance an integer in
the Int64 range (``3.0`` allowed).
"""

from __future__ import annotations

import gzip
import io as _io
import json
import math
import os
import re
import zlib
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import searcheval_frames as sef
from searcheval_frames.errors import FileFormatError, SearchEvalError

#: examples per reader; SEF_FUZZ_EXAMPLES=2000 for a longer hunt
FUZZ = settings(max_examples=int(os.environ.get("SEF_FUZZ_EXAMPLES", "150")), deadline=None,
                database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow, HealthCheck.filter_too_much])
BOM = b"\xef\xbb\xbf"
#: Unicode White_Space (what polars' ``\s`` and ``strip_chars`` mean), without ``\n``.
WS = " \t\x0b\x0c\r\x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + (
    "\u2028\u2029\u202f\u205f\u3000")
WS_RE = re.compile(f"[{WS}]+")
NUM_RE = re.compile(r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$")
INT_RE = re.compile(r"^[+-]?([0-9]+)(\.0*)?$")
INT64 = 2 ** 63

UNKNOWN = ("unknown",)


def error(line: int | None, bad: list[int] | None = None) -> tuple:
    """The reader must raise, naming ``line`` (or, when ``bad`` is given, any of those
    malformed lines: a CSV reader may first report a row of the wrong width)."""
    return ("error", line, set(bad) if bad else {line})


class Bad(Exception):
    """The parser here rejects the file at this line (None: no particular line)."""

    def __init__(self, line: int | None) -> None:
        self.line = line


# --------------------------------------------------------------------------- mutations
ODD_NUMBERS = ["1e400", "-1e400", "nan", "inf", "-inf", "1_0", "0x10", "1,5", "+.5", "5.",
               ".5", "-0", "007", "3.000", "3.5", "9223372036854775807",
               "9223372036854775808", "99999999999999999999", "9007199254740993",
               "-9223372036854775809", "1e5", "", "\u0661", "+", "."]
SEPARATORS = [" ", "\t", "  ", " \t", "\x0b", "\x0c", "\r", "\t\t"]


@st.composite
def mutated(draw, lines: list[str], sep: str, numeric: tuple[int, ...] = (),
            allow_gzip: bool = True, no_quotes: bool = False) -> bytes:
    """Bytes of ``lines`` after a few random mutations."""
    lines = list(lines)
    n_ops = draw(st.integers(0, 4))
    for _ in range(n_ops):
        op = draw(st.sampled_from(["del_line", "dup_line", "swap_lines", "del_field",
                                   "dup_field", "swap_fields", "space", "space", "space",
                                   "number", "number", "blank", "comment", "junk"]))
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        fields = lines[i].split(sep)
        if op == "del_line":
            del lines[i]
        elif op == "dup_line":
            lines.insert(draw(st.integers(0, len(lines))), lines[i])
        elif op == "swap_lines":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op in ("del_field", "dup_field", "swap_fields"):
            k = draw(st.integers(0, len(fields) - 1))
            if op == "del_field":
                del fields[k]
            elif op == "dup_field":
                fields.insert(k, fields[k])
            else:
                m = draw(st.integers(0, len(fields) - 1))
                fields[k], fields[m] = fields[m], fields[k]
            lines[i] = sep.join(fields)
        elif op == "space" and len(fields) > 1:
            k = draw(st.integers(0, len(fields) - 2))
            s = draw(st.sampled_from(SEPARATORS))
            lines[i] = sep.join(fields[: k + 1]) + s + sep.join(fields[k + 1:])
            if draw(st.booleans()):  # padding at either end
                lines[i] = draw(st.sampled_from(["", *SEPARATORS])) + lines[i] + draw(
                    st.sampled_from(["", *SEPARATORS]))
        elif op == "number" and numeric:
            k = draw(st.sampled_from([k for k in numeric if k < len(fields)] or [0]))
            if k < len(fields):
                fields[k] = draw(st.sampled_from(ODD_NUMBERS))
                lines[i] = sep.join(fields)
        elif op == "junk":  # text after the last field
            lines[i] += draw(st.sampled_from(SEPARATORS)) + draw(st.sampled_from(
                ["x", "junk 1 2", "#", "1 Q0 d9 9 0.5 t"]))
        elif op == "blank":
            lines.insert(i, draw(st.sampled_from(["", " ", "\t"])))
        elif op == "comment":
            lines.insert(i, draw(st.sampled_from(["# a comment", "#", "  # indented"])))
    nl = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    text = nl.join(lines) + draw(st.sampled_from([nl, nl, ""]))
    data = text.encode("utf-8")
    if draw(st.integers(0, 5)) == 0:
        data = BOM + data
    if data and draw(st.integers(0, 3)) == 0:  # byte flips
        for _ in range(draw(st.integers(1, 3))):
            pos = draw(st.integers(0, len(data) - 1))
            data = data[:pos] + bytes([draw(st.integers(0, 255))]) + data[pos + 1:]
    if data and draw(st.integers(0, 6)) == 0:  # truncation
        data = data[: draw(st.integers(0, len(data) - 1))]
    if no_quotes:
        data = data.replace(b'"', b"'")
    if allow_gzip:
        mode = draw(st.sampled_from(["plain"] * 5 + ["gzip", "gzip", "flip", "cut"]))
        if mode != "plain":
            data = gzip.compress(data, mtime=0)
            if mode == "flip":
                pos = draw(st.integers(2, len(data) - 1))  # keep the magic bytes
                data = data[:pos] + bytes([draw(st.integers(0, 255))]) + data[pos + 1:]
            elif mode == "cut":
                data = data[: draw(st.integers(2, len(data) - 1))]
    return data


# --------------------------------------------------------------------------- parsers here
def unzip(data: bytes) -> bytes:
    if data[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(data)
        except (OSError, EOFError, zlib.error):
            raise Bad(None) from None
    return data


def text_lines(data: bytes, utf16: bool = True) -> list[tuple[int, str]]:
    """(line number, text) of every physical line; Bad at the first non-UTF-8 line (and,
    with ``utf16``, for UTF-16 text: a byte order mark or a quarter of NUL bytes)."""
    data = unzip(data)
    if data.startswith(BOM):
        data = data[3:]
    if not data:
        return []
    head = data[:4096]
    if utf16 and (head[:2] in (b"\xff\xfe", b"\xfe\xff") or head.count(0) * 4 >= len(head)):
        raise Bad(data[: data.index(b"\x00")].count(b"\n") + 1 if b"\x00" in data else 1)
    pieces = data.split(b"\n")
    if data.endswith(b"\n"):
        pieces.pop()
    out = []
    for no, raw in enumerate(pieces, start=1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise Bad(no) from None
        out.append((no, text[:-1] if text.endswith("\r") else text))
    return out


def data_lines(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    return [(no, t) for no, t in lines if t.lstrip(WS) and not t.lstrip(WS).startswith("#")]


def number(s: str) -> float | None:
    if not NUM_RE.match(s):
        return None
    v = float(s)
    return v if math.isfinite(v) else None


def integer(s: str) -> int | None:
    m = INT_RE.match(s)
    if not m:
        return None
    v = int(s.split(".")[0])
    return v if -INT64 <= v < INT64 else None


def first_duplicate(keys: list[tuple[int, tuple]]) -> int | None:
    seen: set[tuple] = set()
    for no, key in keys:
        if key in seen:
            return no
        seen.add(key)
    return None


RANK_RE = re.compile(r"[+-]?\d+")
SCORE_RE = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def joined(text: str, fields: list[str]) -> bool:
    """Two results on one line (issue #22): more than 6 fields and a lone CR, or after the
    tag ``[qid] iter docno rank score`` (text after the tag is otherwise ignored)."""
    if len(fields) <= 6:
        return False
    if "\r" in text:
        return True
    after = fields[6:]
    return any(len(f) >= 4 and RANK_RE.fullmatch(f[2]) and SCORE_RE.fullmatch(f[3])
               for f in (after, after[1:]))


def trec_run_here(data: bytes, stem: str) -> tuple:
    try:
        lines = data_lines(text_lines(data))
    except Bad as bad:
        return error(bad.line)
    if not lines:
        return error(None)
    rows = [(no, WS_RE.split(t.strip(WS))) for no, t in lines]
    all_five = all(len(f) == 5 for _, f in rows)
    bad = []
    for (no, f), (_, t) in zip(rows, lines, strict=True):
        if (len(f) < 5 or (len(f) == 5 and not all_five) or number(f[4]) is None
                or integer(f[3]) is None or joined(t, f)):
            bad.append(no)
    if bad:
        return error(min(bad))
    dup = first_duplicate([(no, (f[5] if len(f) > 5 else None, f[0], f[2])) for no, f in rows])
    if dup is not None:
        return error(dup)
    return ("frame", [(f[5] if len(f) > 5 else stem, f[0], f[2], number(f[4]), integer(f[3]))
                      for _, f in rows])


def trec_qrels_here(data: bytes) -> tuple:
    try:
        lines = data_lines(text_lines(data))
    except Bad as bad:
        return error(bad.line)
    if not lines:
        return error(None)
    rows = [(no, WS_RE.split(t.strip(WS))) for no, t in lines]
    bad = [no for no, f in rows if len(f) != 4 or integer(f[3]) is None]
    if bad:
        return error(min(bad))
    dup = first_duplicate([(no, (f[0], f[2])) for no, f in rows])
    if dup is not None:
        return error(dup)
    return ("frame", [(f[0], f[2], integer(f[3])) for _, f in rows])


# --------------------------------------------------------------------------- checks
def check(read, path: Path, expected: tuple, *, text: bool = True) -> str:
    """Compare the reader's outcome with the parser here; returns the outcome kind."""
    try:
        got = read(path)
    except SearchEvalError as exc:
        assert str(path) in str(exc), f"the error does not name the file: {exc}"
        if expected[0] == "frame" and text:
            pytest.fail(f"the reader rejects a file the parser here reads: {exc}\n"
                        f"{path.read_bytes()[:400]!r}")
        if expected[0] == "error" and expected[1] is not None and text:
            assert isinstance(exc, FileFormatError) and exc.line_no in expected[2], (
                f"expected an error on line {sorted(expected[2])}, got: {exc}\n"
                f"{path.read_bytes()[:400]!r}")
        return "error"
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # (a polars PanicException is no Exception)
        raise AssertionError(f"the reader raised {type(exc).__name__}: {exc}\n"
                             f"{path.read_bytes()[:400]!r}") from exc
    if expected[0] == "error":
        pytest.fail(f"the reader returns a frame for a file the parser here rejects "
                    f"(line {expected[1]}):\n{got}\n{path.read_bytes()[:400]!r}")
    if expected[0] == "frame":
        assert got.rows() == expected[1], (
            f"frames differ:\n{got}\nexpected {expected[1]}\n{path.read_bytes()[:400]!r}")
    return "frame"


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


# --------------------------------------------------------------------------- TREC runs
QIDS = ["1", "2", "10", "q3", "301"]
DOCS = ["d1", "d2", "d3", "FBIS3-10", "doc_7", "LA0101-1"]
TAGS = ["bm25", "dense", "run-1"]


@st.composite
def trec_run_lines(draw) -> tuple[list[str], str]:
    sep = draw(st.sampled_from([" ", " ", "\t"]))
    tags = draw(st.lists(st.sampled_from(TAGS), min_size=1, max_size=2, unique=True))
    no_tag = draw(st.integers(0, 5)) == 0
    lines = []
    for q in draw(st.lists(st.sampled_from(QIDS), min_size=1, max_size=4, unique=True)):
        docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=4, unique=True))
        for tag in tags:
            for r, d in enumerate(docs, start=1):
                score = draw(st.one_of(st.integers(-50, 50).map(str),
                                       st.floats(-1e6, 1e6, allow_nan=False).map(repr)))
                fields = [q, draw(st.sampled_from(["Q0", "0"])), d, str(r), score]
                if not no_tag:
                    fields.append(tag)
                lines.append(sep.join(fields))
    return lines, sep


@st.composite
def trec_run_files(draw) -> bytes:
    lines, sep = draw(trec_run_lines())
    return draw(mutated(lines, sep, numeric=(3, 4)))


@FUZZ
@given(data=trec_run_files())
def test_fuzz_trec_run(tmp_path, data):
    path = write(tmp_path, "fuzz.run", data)
    check(lambda p: sef.read_run(p, format="trec").select(
        "run", "query_id", "doc_id", "score", "rank"), path, trec_run_here(data, "fuzz"))


@st.composite
def trec_qrels_files(draw) -> bytes:
    sep = draw(st.sampled_from([" ", " ", "\t"]))
    lines = []
    for q in draw(st.lists(st.sampled_from(QIDS), min_size=1, max_size=4, unique=True)):
        for d in draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=4, unique=True)):
            rel = draw(st.integers(-2, 4))
            lines.append(sep.join([q, "0", d, str(rel)]))
    return draw(mutated(lines, sep, numeric=(3,)))


@FUZZ
@given(data=trec_qrels_files())
def test_fuzz_trec_qrels(tmp_path, data):
    path = write(tmp_path, "fuzz.qrels", data)
    check(lambda p: sef.read_qrels(p, format="trec"), path, trec_qrels_here(data))


# --------------------------------------------------------------------------- CSV / TSV
TABLE_HEADERS = {
    "qrels": [["query_id", "doc_id", "relevance"], ["qid", "docno", "rel"]],
    "run": [["qid", "docno", "score"], ["query_id", "doc_id", "score", "rank"],
            ["run", "qid", "docno", "score"]],
}
CANON = {"query_id": "query_id", "qid": "query_id", "doc_id": "doc_id", "docno": "doc_id",
         "relevance": "relevance", "rel": "relevance", "score": "score", "rank": "rank",
         "run": "run"}


@st.composite
def table_files(draw, kind: str, sep: str) -> tuple[bytes, str]:
    header = draw(st.sampled_from(TABLE_HEADERS[kind]))
    lines = [sep.join(header)]
    for q in draw(st.lists(st.sampled_from(QIDS), min_size=1, max_size=3, unique=True)):
        docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=3, unique=True))
        for r, d in enumerate(docs, start=1):
            values = {"query_id": q, "doc_id": d, "relevance": str(draw(st.integers(-1, 3))),
                      "score": repr(draw(st.floats(-100, 100, allow_nan=False))),
                      "rank": str(r), "run": draw(st.sampled_from(TAGS))}
            lines.append(sep.join(values[CANON[h]] for h in header))
    numeric = tuple(i for i, h in enumerate(header) if CANON[h] in ("score", "rank",
                                                                    "relevance"))
    data = draw(mutated(lines, sep, numeric=numeric, no_quotes=True))
    return data, sep.join(header)


def table_here(data: bytes, header: str, sep: str, kind: str, stem: str) -> tuple:
    try:
        lines = text_lines(data)
    except Bad as bad:
        return error(bad.line)
    if not lines or lines[0][1] != header:
        return UNKNOWN  # (a mutated header: not modelled here)
    if not unzip(data).endswith(b"\n") and lines[-1][1].endswith(sep):
        return UNKNOWN  # (polars ignores one trailing separator on an unterminated last line)
    names = [CANON[h] for h in header.split(sep)]
    bad, rows, keys = [], [], []
    for no, t in lines[1:]:
        f = dict(zip(names, t.split(sep), strict=False))
        if len(t.split(sep)) != len(names) or any(not f[c].strip(WS) for c in f
                                                   if c in ("query_id", "doc_id", "run")):
            bad.append(no)
            continue
        if kind == "qrels":
            rel = integer(f["relevance"].strip(WS))
            if rel is None:
                bad.append(no)
                continue
            rows.append((f["query_id"], f["doc_id"], rel))
            keys.append((no, (f["query_id"], f["doc_id"])))
        else:
            score = number(f["score"].strip(WS))
            rank = integer(f["rank"].strip(WS)) if "rank" in f else 0
            if score is None or rank is None:
                bad.append(no)
                continue
            rows.append((f.get("run", stem), f["query_id"], f["doc_id"], score))
            keys.append((no, (f.get("run"), f["query_id"], f["doc_id"])))
    if bad:
        return error(min(bad), bad)
    if not rows:
        return error(None)
    dup = first_duplicate(keys)
    return error(dup) if dup is not None else ("frame", rows)


def read_table(kind: str, fmt: str):
    if kind == "qrels":
        return lambda p: sef.read_qrels(p, format=fmt)
    return lambda p: sef.read_run(p, format=fmt).select("run", "query_id", "doc_id", "score")


@FUZZ
@given(st.data())
@pytest.mark.parametrize(("kind", "fmt"), [("qrels", "csv"), ("run", "tsv")])
def test_fuzz_csv_tsv(tmp_path, kind, fmt, data):
    sep = "," if fmt == "csv" else "\t"
    raw, header = data.draw(table_files(kind, sep))
    path = write(tmp_path, f"fuzz.{fmt}", raw)
    check(read_table(kind, fmt), path, table_here(raw, header, sep, kind, "fuzz"))


# --------------------------------------------------------------------------- JSON Lines
@st.composite
def jsonl_files(draw) -> bytes:
    lines = []
    for q in draw(st.lists(st.sampled_from(QIDS), min_size=1, max_size=3, unique=True)):
        for d in draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=3, unique=True)):
            score = draw(st.one_of(st.integers(-5, 5), st.floats(-100, 100, allow_nan=False)))
            lines.append(json.dumps({"query_id": q, "doc_id": d, "score": score}))
    return draw(mutated(lines, ", ", numeric=(2,)))


def _no_constant(name: str):
    raise ValueError(name)


def jsonl_here(data: bytes, stem: str) -> tuple:
    try:
        lines = text_lines(data)
    except Bad as bad:
        return error(bad.line)
    if not "".join(t for _, t in lines).strip(WS):
        return error(None)  # (empty, or only whitespace: an EmptyInputError)
    bad, rows, keys = [], [], []
    for no, t in lines:
        if not t.strip(" \t\r"):
            continue
        try:
            obj = json.loads(t, parse_constant=_no_constant)
        except ValueError:
            try:  # what a lenient parser may accept (control characters in strings)
                json.loads(t, strict=False, parse_constant=_no_constant)
            except ValueError:
                bad.append(no)
                continue
            return UNKNOWN
        if not isinstance(obj, dict):
            bad.append(no)
            continue
        if (set(obj) != {"query_id", "doc_id", "score"} or not all(
                isinstance(obj[k], str) for k in ("query_id", "doc_id"))
                or type(obj["score"]) not in (int, float)):
            return UNKNOWN  # (a key or a type changed by a byte flip: not modelled)
        if not obj["query_id"].strip(WS) or not obj["doc_id"].strip(WS) or not math.isfinite(
                obj["score"]):
            bad.append(no)
            continue
        rows.append((stem, obj["query_id"], obj["doc_id"], float(obj["score"])))
        keys.append((no, (obj["query_id"], obj["doc_id"])))
    if bad:
        return error(min(bad))
    if not rows:
        return error(None)
    dup = first_duplicate(keys)
    return error(dup) if dup is not None else ("frame", rows)


@FUZZ
@given(data=jsonl_files())
def test_fuzz_jsonl(tmp_path, data):
    path = write(tmp_path, "fuzz.jsonl", data)
    array = unzip_or_none(data).lstrip()[:1] == b"["  # a JSON array, not JSON Lines
    expected = UNKNOWN if array else jsonl_here(data, "fuzz")
    check(read_table("run", "jsonl"), path, expected)


def unzip_or_none(data: bytes) -> bytes:
    try:
        return unzip(data).removeprefix(BOM)
    except Bad:
        return b""


# --------------------------------------------------------------------------- Parquet
@st.composite
def parquet_files(draw) -> tuple[bytes, list[tuple]]:
    rows = []
    for q in draw(st.lists(st.sampled_from(QIDS), min_size=1, max_size=3, unique=True)):
        for d in draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=3, unique=True)):
            rows.append((q, d, draw(st.integers(-1, 3))))
    buf = _io.BytesIO()
    pl.DataFrame(rows, schema=["query_id", "doc_id", "relevance"], orient="row").write_parquet(
        buf, compression=draw(st.sampled_from(["uncompressed", "snappy", "zstd"])))
    data = buf.getvalue()
    for _ in range(draw(st.integers(0, 3))):
        pos = draw(st.integers(0, len(data) - 1))
        data = data[:pos] + bytes([draw(st.integers(0, 255))]) + data[pos + 1:]
    if draw(st.integers(0, 4)) == 0:
        data = data[: draw(st.integers(0, len(data) - 1))]
    return data, rows


def parquet_here(data: bytes) -> tuple:
    """pyarrow (another Parquet reader) decides what the bytes hold. (Corrupt bytes that
    pyarrow still reads may be rejected: ``check`` with ``text=False`` accepts an error
    naming the file; but a frame must be pyarrow's.)"""
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(_io.BytesIO(data))
        table.validate(full=True)  # (pyarrow reads invalid UTF-8 unless told to check)
        if table.column_names != ["query_id", "doc_id", "relevance"] or str(
                table.schema.field("relevance").type) != "int64":
            return UNKNOWN
        rows = [tuple(r.values()) for r in table.to_pylist()]
        if not all(isinstance(v, str | None) for q, d, _ in rows for v in (q, d)):
            return UNKNOWN  # (an id column that a flipped byte made binary)
    except Exception:
        return UNKNOWN  # pyarrow cannot read it: only no crash (a frame or an error)
    if any(q is None or d is None or r is None or not q.strip(WS) or not d.strip(WS)
           for q, d, r in rows):
        return error(None)
    if not rows or len(set((q, d) for q, d, _ in rows)) != len(rows):
        return error(None)
    return ("frame", rows)


@FUZZ
@given(parquet_files())
def test_fuzz_parquet(tmp_path, case):
    data, _ = case
    path = write(tmp_path, "fuzz.parquet", data)
    check(lambda p: sef.read_qrels(p, format="parquet"), path, parquet_here(data), text=False)


# --------------------------------------------------------------------------- query sets
WORDS = ["what", "is", "bm25", "number", "id", "query", "text", "title", "of", "the",
         "qid", "topic", "#", "tab"]


@st.composite
def query_tsv_files(draw) -> bytes:
    lines = []
    for q in draw(st.lists(st.sampled_from(QIDS), min_size=1, max_size=5, unique=True)):
        words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=5))
        lines.append(q + "\t" + " ".join(words))
    return draw(mutated(lines, "\t"))


def looks_like_a_header(line: str) -> bool:
    """The documented rule: two fields or more, the first naming an id column, or the
    fields naming both an id and a text column."""
    from searcheval_frames.io._common import QUERY_ID_ALIASES, QUERY_TEXT_ALIASES

    fields = [f.strip(WS).strip("\"'").lower() for f in line.split("\t")]
    return len(fields) > 1 and (fields[0] in QUERY_ID_ALIASES or (
        bool(set(fields) & set(QUERY_ID_ALIASES)) and bool(set(fields) & set(
            QUERY_TEXT_ALIASES))))


def query_tsv_here(data: bytes) -> tuple:
    try:
        lines = data_lines(text_lines(data))
    except Bad as bad:
        return error(bad.line)
    if lines and looks_like_a_header(lines[0][1]):
        return UNKNOWN  # (a table with a header: not modelled here)
    bad, rows, keys = [], [], []
    for no, t in lines:
        if "\t" not in t or not t.split("\t", 1)[0].strip(WS):
            bad.append(no)
            continue
        qid, text = t.split("\t", 1)
        rows.append((qid.strip(WS), text))
        keys.append((no, (qid.strip(WS),)))
    if bad:
        return error(min(bad))
    if not rows:
        return error(None)
    dup = first_duplicate(keys)
    return error(dup) if dup is not None else ("frame", rows)


@FUZZ
@given(data=query_tsv_files())
def test_fuzz_query_tsv(tmp_path, data):
    path = write(tmp_path, "fuzz.tsv", data)
    check(lambda p: sef.read_queries(p, format="tsv").select("query_id", "query"), path,
          query_tsv_here(data))


TOPIC_TAGS = [("num", "Number:"), ("title", ""), ("desc", "Description:"),
              ("narr", "Narrative:")]
TOPIC_COLUMNS = {"num": "query_id", "title": "query", "desc": "description",
                 "narr": "narrative"}


@st.composite
def topic_files(draw) -> bytes:
    lines = []
    for q in draw(st.lists(st.sampled_from(QIDS), min_size=1, max_size=4, unique=True)):
        lines.append("<top>")
        for tag, prefix in TOPIC_TAGS:
            if tag == "num":
                lines.append(f"<num> {prefix} {q}")
            else:
                words = draw(st.lists(st.sampled_from(WORDS[:11]), min_size=1, max_size=4))
                lines.append(f"<{tag}> {prefix}".rstrip())
                lines.append(" ".join(words))
        lines.append("</top>")
        lines.append("")
    return draw(mutated(lines, " "))


def topics_here(data: bytes) -> tuple:
    """Line by line: <top> opens a topic, </top> closes it, <tag> lines start a field."""
    try:
        lines = text_lines(data)
    except Bad as bad:
        return error(bad.line)
    topics, cur, field = [], None, None
    for no, t in lines:
        s = t.strip(WS)
        if "<" not in s and ">" not in s:
            if cur is not None and field is not None:
                cur[field].append(s)
            elif s:
                return UNKNOWN
            continue
        m = re.fullmatch(r"<(top|/top|num|title|desc|narr)>(.*)", s)
        if m is None or "<" in m.group(2) or ">" in m.group(2):
            return UNKNOWN
        tag, rest = m.groups()
        if tag == "top":
            if cur is not None or rest.strip(WS):
                return UNKNOWN
            cur, field = {"_line": no}, None
        elif tag == "/top":
            if cur is None or rest.strip(WS):
                return UNKNOWN
            topics.append(cur)
            cur, field = None, None
        else:
            if cur is None or tag in cur:
                return UNKNOWN
            field = tag
            cur[tag] = [rest]
    if cur is not None:
        return UNKNOWN  # an unclosed topic
    if not topics:
        return error(None)
    rows = []
    for t in topics:
        out = {}
        for tag, prefix in TOPIC_TAGS:
            if tag in t:
                text = " ".join(" ".join(t[tag]).split())
                if prefix and text.lower().startswith(prefix.lower()):
                    text = text[len(prefix):].strip()
                out[TOPIC_COLUMNS[tag]] = text
        if not out.get("query_id") or len(out["query_id"].split()) > 1:
            return error(t["_line"])
        rows.append(out)
    first = {}
    for t, r in zip(topics, rows, strict=True):
        if r["query_id"] in first:
            return error(t["_line"])
        first[r["query_id"]] = t["_line"]
    return ("frame", rows)


@FUZZ
@given(data=topic_files())
def test_fuzz_trec_topics(tmp_path, data):
    path = write(tmp_path, "fuzz.txt", data)
    expected = topics_here(data)
    if expected[0] == "frame":
        cols = sorted({c for r in expected[1] for c in r} | {"query_id", "query"})
        expected = ("frame", [tuple(r.get(c, "" if c == "query" else None) for c in cols)
                              for r in expected[1]])

        def read(p):
            return sef.read_queries(p, format="trec").select(cols)
    else:
        def read(p):
            return sef.read_queries(p, format="trec")
    check(read, path, expected)
