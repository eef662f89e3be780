"""Fuzzing the label readers: damaged label sheets and damaged label journals.

A sheet written by ``export_label_sheet`` and filled in, or a ``LabelStore`` journal,
is damaged the ways files get damaged: bytes flipped, rows deleted or duplicated, ids
edited, a byte-order mark added or lost, CRLF line ends, lines torn, duplicated or
garbled. Whatever happens, reading it back gives the right labels or a
``SearchEvalError`` that names the file and the line / row; never another exception
and never a label silently lost or changed (a label is "lost" only with a warning
that says so).

The examples are bounded (about 30 s in all on a shared 2-core machine).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import warnings
import zlib
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import searcheval_frames as sef
from searcheval_frames.errors import FileFormatError, SearchEvalError
from searcheval_frames.evalset.sheets import _row_key
from searcheval_frames.evalset.store import LabelStore

#: examples per fuzz test; SEF_FUZZ_EXAMPLES=2000 for a long run by hand
FUZZ = settings(
    max_examples=int(os.environ.get("SEF_FUZZ_EXAMPLES", "120")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

#: ids a spreadsheet likes to mangle: leading zeros, separators, quotes, non-ASCII
IDS = ["q1", "007", "7", "a,b", 'say "hi"', "ü-ß", "1e3", "d;2", "x\ty"]
TEXTS = ["plain", "with, comma", 'a "quoted" word', "東京 and ß", "semi; colon", ""]


def _where(exc: BaseException, path: Path) -> bool:
    """The error names the file and a line (``file:12``) or sheet rows (``row=12``)."""
    msg = str(exc)
    if path.name not in msg:
        return False
    return bool(re.search(rf"{re.escape(path.name)}'?:\d+", msg) or re.search(r"row=\d+", msg))


# --------------------------------------------------------------------------- sheets
@st.composite
def filled_sheets(draw, with_newlines: bool = False):
    """A pool with distinct (query, doc) pairs, document texts and filled-in labels."""
    n = draw(st.integers(1, 7))
    pairs = draw(
        st.lists(
            st.tuples(st.sampled_from(IDS), st.sampled_from(IDS)),
            min_size=n,
            max_size=n,
            unique=True,
        )
    )
    texts = TEXTS + (["two\nlines", "cr\r\nlf"] if with_newlines else [])
    docs = {d: draw(st.sampled_from(texts)) for _, d in pairs}
    labels = draw(st.lists(st.sampled_from(["0", "1", "2", "3", None]), min_size=n, max_size=n))
    pool = pl.DataFrame({"query_id": [q for q, _ in pairs], "doc_id": [d for _, d in pairs]})
    return pool, docs, labels


def _sheet(pool: pl.DataFrame, docs: dict[str, str], labels: list[str | None]) -> pl.DataFrame:
    sheet = sef.export_label_sheet(pool, docs=pl.DataFrame({"doc_id": list(docs), "text": list(docs.values())}))
    return sheet.with_columns(pl.Series("label", labels, dtype=pl.String))


def _write(sheet: pl.DataFrame, path: Path) -> None:
    """Save the filled sheet as the exporter does (CSV: UTF-8 with a byte-order mark)."""
    if path.suffix == ".parquet":
        sheet.write_parquet(path)
    else:
        sheet.write_csv(path, include_bom=True)


def _expected(sheet: pl.DataFrame) -> dict[tuple[str, str], int]:
    return {
        (q, d): int(lab)
        for q, d, lab in sheet.select("query_id", "doc_id", "label").iter_rows()
        if lab is not None
    }


def _read(path: Path, pool: pl.DataFrame) -> tuple[dict[tuple[str, str], int] | None, list, BaseException | None]:
    """Import the sheet: (labels, warnings, None) or (None, warnings, the SearchEvalError)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = sef.import_label_sheet(path, pool=pool)
        except SearchEvalError as exc:
            return None, list(caught), exc
    labels = {(q, d): r for q, d, r in out.iter_rows()}
    assert len(labels) == out.height, "a (query, doc) pair came back twice"
    return labels, list(caught), None


def _skipped(caught: list) -> bool:
    return any("were skipped" in str(w.message) for w in caught)


@FUZZ
@given(
    data=filled_sheets(with_newlines=True),
    suffix=st.sampled_from([".csv", ".parquet"]),
    edits=st.lists(st.sampled_from(["delete", "duplicate", "edit_query", "edit_doc", "bom", "crlf"]), min_size=1, max_size=3),
    picks=st.lists(st.integers(0, 1000), min_size=3, max_size=3),
)
def test_sheet_row_edits(data, suffix, edits, picks):
    """Deleted / duplicated rows, edited ids, BOM and CRLF: right labels or a row error."""
    pool, docs, labels = data
    sheet = _sheet(pool, docs, labels)
    for edit, pick in zip(edits, picks, strict=False):
        if sheet.height == 0:
            break
        i = pick % sheet.height
        if edit == "delete":
            sheet = sheet.filter(pl.int_range(pl.len()) != i)
        elif edit == "duplicate":
            sheet = pl.concat([sheet.head(i + 1), sheet.slice(i, 1), sheet.slice(i + 1)])
        elif edit in ("edit_query", "edit_doc"):
            col = "query_id" if edit == "edit_query" else "doc_id"
            old = sheet[col][i]
            new = next(x for x in [*IDS, "zz"] if x != old)
            row = pl.int_range(pl.len()) == i
            sheet = sheet.with_columns(pl.when(row).then(pl.lit(new)).otherwise(pl.col(col)).alias(col))
    # rows whose ids no longer match the key the exporter wrote (an id edited back to
    # its original value is not an edit)
    edited_ids = any(_row_key(q, d) != k for q, d, k in sheet.select("query_id", "doc_id", "key").iter_rows())
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"sheet{suffix}"
        _write(sheet, path)
        if suffix == ".csv":
            raw = path.read_bytes()
            if "bom" in edits:
                raw = raw.removeprefix(b"\xef\xbb\xbf")
            if "crlf" in edits:
                raw = re.sub(rb"(?<!\r)\n", b"\r\n", raw)
            path.write_bytes(raw)
        got, _caught, exc = _read(path, pool)
        if edited_ids:
            assert exc is not None and "edited out of the pool" in str(exc), (got, exc)
            assert _where(exc, path), str(exc)
            return
        if exc is not None:
            raise AssertionError(f"an intact sheet was refused: {exc}")
        # duplicated rows carry the same label: dropped with a warning, never a conflict
        assert got == _expected(sheet)


@FUZZ
@given(
    data=filled_sheets(with_newlines=False),
    suffix=st.sampled_from([".csv", ".parquet"]),
    where=st.integers(0, 10**9),
    byte=st.integers(0, 255),
)
def test_sheet_byte_flip(data, suffix, where, byte):
    """One byte changed anywhere: the labels of other rows never change or vanish."""
    pool, docs, labels = data
    sheet = _sheet(pool, docs, labels)
    expected = _expected(sheet)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"sheet{suffix}"
        _write(sheet, path)
        raw = bytearray(path.read_bytes())
        pos = where % len(raw)
        if raw[pos] == byte:
            byte = (byte + 1) % 256
        raw[pos] = byte
        path.write_bytes(bytes(raw))
        got, caught, exc = _read(path, pool)
    if exc is not None:
        if suffix == ".parquet" and isinstance(exc, FileFormatError):
            # a Parquet file that does not decode has no rows to name
            assert exc.path == str(path) and "damaged" in str(exc), str(exc)
            return
        assert _where(exc, path) or _header_error(exc, path), str(exc)
        return
    assert got is not None
    # pairs never appear from nowhere: ids are checked against the key and the pool
    assert set(got) <= set(pool.select("query_id", "doc_id").rows())
    if suffix == ".csv":
        # each record is one line (no line breaks in these texts): only the flipped
        # line's label may differ
        line = raw[:pos].count(b"\n")  # 0 = header
        touched = set()
        if line >= 1 and line - 1 < sheet.height:
            touched = {(sheet["query_id"][line - 1], sheet["doc_id"][line - 1])}
        for key, lab in expected.items():
            if key in touched:
                continue
            assert got.get(key) == lab, (key, lab, got)
        for key in set(got) - set(expected):
            assert key in touched, (key, got, expected)
    lost = set(expected) - set(got)
    assert not lost or _skipped(caught), f"labels lost without a warning: {lost}"


def _header_error(exc: BaseException, path: Path) -> bool:
    """A damaged header row: the error names the file, its line 1 (Parquet: the schema)."""
    msg = str(exc)
    where = "schema" if path.suffix == ".parquet" else "header row (line 1)"
    return f"{path.name}', {where}: no " in msg and "column" in msg


# --------------------------------------------------------------------------- journal
@st.composite
def journals(draw):
    """A journal written by LabelStore: labels, relabels and retractions by two people."""
    steps = draw(
        st.lists(
            st.tuples(
                st.sampled_from(IDS[:4]),
                st.sampled_from(IDS),
                st.sampled_from([0, 1, 2, 3, None]),
                st.sampled_from(["alice", "bob"]),
            ),
            min_size=1,
            max_size=8,
        )
    )
    return steps


def _write_journal(path: Path, steps) -> list[bytes]:
    store = LabelStore(path, assessor="alice")
    for q, d, lab, who in steps:
        if lab is None:
            store.remove(q, d, assessor=who)
        else:
            store.append(q, d, lab, assessor=who)
    store.close()
    return path.read_bytes().splitlines(keepends=True)


def _journal_labels(lines: list[bytes]) -> dict[tuple[str, str, str], int]:
    """The current labels of complete journal lines (the oracle: latest line wins)."""
    out: dict[tuple[str, str, str], int | None] = {}
    for line in lines:
        if not line.endswith(b"\n") or not line.strip():
            continue
        rec = json.loads(line)
        out[(rec["assessor"], rec["query_id"], rec["doc_id"])] = rec["label"]
    return {k: v for k, v in out.items() if v is not None}


def _open_journal(path: Path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            store = LabelStore(path)
            lab = store.labels()
        except SearchEvalError as exc:
            return None, list(caught), exc
    got = {(a, q, d): v for q, d, a, v in lab.select("query_id", "doc_id", "assessor", "label").iter_rows()}
    return got, list(caught), None


@FUZZ
@given(
    steps=journals(),
    damage=st.sampled_from(["torn", "duplicate", "blank", "garbage"]),
    where=st.integers(0, 10**9),
)
def test_journal_structural_damage(steps, damage, where):
    """Torn tail, duplicated, blank or garbage lines: right labels or a line error."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "labels.jsonl"
        lines = _write_journal(path, steps)
        i = where % len(lines)
        garbage_at = None
        if damage == "torn":
            raw = b"".join(lines)
            cut = where % len(raw)
            raw = raw[:cut]
            lines = raw.splitlines(keepends=True)
        elif damage == "duplicate":
            lines = [*lines[: i + 1], lines[i], *lines[i + 1 :]]
        elif damage == "blank":
            lines = [*lines[:i], b"\n", *lines[i:]]
        else:
            lines = [*lines[:i], b'{"query_id": "q1", "doc_id"\n', *lines[i:]]
            garbage_at = i + 1
        path.write_bytes(b"".join(lines))
        got, caught, exc = _open_journal(path)
    if garbage_at is not None:
        assert exc is not None and f"labels.jsonl:{garbage_at}" in str(exc), exc
        return
    assert exc is None, exc
    assert got == _journal_labels(lines)
    if lines and not lines[-1].endswith(b"\n"):
        assert any("incomplete line" in str(w.message) for w in caught)


@FUZZ
@given(steps=journals(), where=st.integers(0, 10**9), byte=st.integers(0, 255))
def test_journal_byte_flip(steps, where, byte):
    """One byte changed: the labels are intact, or the damaged line is named."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "labels.jsonl"
        lines = _write_journal(path, steps)
        raw = bytearray(b"".join(lines))
        pos = where % len(raw)
        if raw[pos] == byte:
            byte = (byte + 1) % 256
        raw[pos] = byte
        path.write_bytes(bytes(raw))
        got, caught, exc = _open_journal(path)
    line_no = raw[:pos].count(b"\n") + 1
    if exc is not None:
        # a byte turned into a newline splits its line: the damage is then on the next one
        named = {line_no, line_no - 1} | ({line_no + 1} if byte == ord("\n") else set())
        assert any(f"labels.jsonl:{n}:" in str(exc) for n in named), (line_no, str(exc))
        return
    expected = _journal_labels(lines)
    if pos == len(raw) - 1 and byte != ord("\n"):
        # the last newline is gone: the last line is torn, set aside with a warning
        assert any("incomplete line" in str(w.message) for w in caught)
        expected = _journal_labels(lines[:-1])
    assert got == expected, f"line {line_no} changed silently"


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_fuzz_helpers_accept_an_intact_sheet(tmp_path: Path, suffix: str) -> None:
    """The oracle itself: an undamaged sheet reads back exactly (else the fuzz proves nothing)."""
    pool = pl.DataFrame({"query_id": ["q1", "007"], "doc_id": ["a,b", 'say "hi"']})
    sheet = _sheet(pool, {"a,b": "x", 'say "hi"': "y"}, ["2", None])
    path = tmp_path / f"s{suffix}"
    _write(sheet, path)
    got, caught, exc = _read(path, pool)
    assert exc is None and got == {("q1", "a,b"): 2} and _skipped(caught)


# --------------------------------------------------------------------------- regressions
# What the fuzzing above found, one deterministic test each.
POOL3 = pl.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["d1", "d2", "d1"]})


def _csv_sheet(tmp_path: Path) -> tuple[Path, list[bytes]]:
    sheet = _sheet(POOL3, {"d1": "one", "d2": "two"}, ["2", "0", "1"])
    path = tmp_path / "s.csv"
    _write(sheet, path)
    return path, path.read_bytes().split(b"\n")


def test_short_row_is_refused_with_its_line(tmp_path: Path) -> None:
    # polars padded a row that lost a separator with nulls: the label moved to "notes"
    # and the row was skipped as unlabelled
    path, lines = _csv_sheet(tmp_path)
    lines[2] = lines[2].replace(b",,", b",", 1)
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(FileFormatError, match=r"s\.csv:3: this row has 5 cells where the header has 6"):
        sef.import_label_sheet(path, pool=POOL3)


def test_stray_quote_that_joins_rows_is_refused(tmp_path: Path) -> None:
    # an opening quote in row 2 made rows 2-4 one cell: two labels vanished silently
    path, lines = _csv_sheet(tmp_path)
    lines[1] = lines[1].replace(b"q1,d1,", b'q1,d1,"', 1)
    lines[3] = lines[3].replace(b"q2,d1,", b'q2,d1",', 1)
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(FileFormatError, match=r"s\.csv:[23]:") as err:
        sef.import_label_sheet(path, pool=POOL3)
    assert "quote" in str(err.value)


def test_row_joined_to_the_header_is_refused(tmp_path: Path) -> None:
    # the header's line break turned into another byte: the only row became part of the
    # header and the sheet read as empty, its label lost without a word
    path = tmp_path / "s.csv"
    _write(_sheet(POOL3.head(1), {"d1": "one"}, ["2"]), path)
    path.write_bytes(path.read_bytes().replace(b"key\n", b"key\x00", 1))
    with pytest.raises(FileFormatError, match=r"s\.csv:1: the row key 'k[0-9a-f]{10}' is not in"):
        sef.import_label_sheet(path, pool=POOL3)


def test_quote_inside_a_cell_reads_the_right_labels(tmp_path: Path) -> None:
    # polars refused a quote in the middle of an unquoted cell, without a line number
    path, lines = _csv_sheet(tmp_path)
    lines[1] = lines[1].replace(b"q1,d1,one,", b'q1,d1,say x"y,', 1)
    path.write_bytes(b"\n".join(lines))
    sheet = sef.import_label_sheet(path, pool=POOL3)
    assert sheet.rows() == [("q1", "d1", 2), ("q1", "d2", 0), ("q2", "d1", 1)]


def test_damaged_header_names_line_1(tmp_path: Path) -> None:
    path, lines = _csv_sheet(tmp_path)
    lines[0] = lines[0].replace(b"doc_id", b"doc_ix")
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(SearchEvalError, match=r"s\.csv', header row \(line 1\): no 'doc_id' column"):
        sef.import_label_sheet(path, pool=POOL3)


def test_bytes_that_are_not_utf8_name_their_line(tmp_path: Path) -> None:
    path, lines = _csv_sheet(tmp_path)
    lines[3] = lines[3].replace(b"q2", b"q\xff", 1)
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(FileFormatError, match=r"s\.csv:4: the label sheet is not UTF-8"):
        sef.import_label_sheet(path, pool=POOL3)


def test_parquet_decoder_panic_becomes_a_file_error(tmp_path: Path) -> None:
    # a flipped byte made polars' Parquet decoder panic (PanicException is no Exception)
    sheet = sef.export_label_sheet(POOL3).with_columns(pl.Series("label", ["2", "0", "1"]))
    path = tmp_path / "s.parquet"
    sheet.write_parquet(path)
    raw = bytearray(path.read_bytes())
    raw[76] = 0
    path.write_bytes(bytes(raw))
    try:
        pl.read_parquet(path)
    except pl.exceptions.PanicException:
        pass
    except Exception:
        pytest.skip("this polars version no longer panics on this damaged file")
    else:
        pytest.skip("this polars version reads this damaged file")
    with pytest.raises(FileFormatError, match=r"s\.parquet: cannot read the label sheet \(the file is damaged"):
        sef.import_label_sheet(path, pool=POOL3)


def test_journal_line_with_a_changed_id_is_refused(tmp_path: Path) -> None:
    # without a checksum the line was read as a label of another document
    path = tmp_path / "j.jsonl"
    store = LabelStore(path, assessor="alice")
    store.append("q1", "d1", 2)
    store.append("q1", "d2", 1)
    store.close()
    path.write_bytes(path.read_bytes().replace(b'"doc_id":"d1"', b'"doc_id":"d3"'))
    with pytest.raises(FileFormatError, match=r"j\.jsonl:1: label journal has a damaged line .*checksum"):
        LabelStore(path).labels()


def test_journal_line_without_its_label_is_refused(tmp_path: Path) -> None:
    # a line whose "label" key was damaged read as a retraction: the label vanished
    path = tmp_path / "j.jsonl"
    path.write_text('{"query_id":"q1","doc_id":"d1","label":2}\n{"query_id":"q1","doc_id":"d1","lbel":1}\n')
    with pytest.raises(FileFormatError, match=r"j\.jsonl:2: .*damaged line \('label'\)"):
        LabelStore(path).labels()


def test_journal_lines_without_checksum_still_read(tmp_path: Path) -> None:
    # journals written before the checksum, and lines typed by hand, keep working
    path = tmp_path / "j.jsonl"
    path.write_text(
        '{"query_id":"q1","doc_id":"d1","label":2,"assessor":"a","time":"2024-01-01T00:00:00Z"}\n'
        '{"query_id":"q1","doc_id":"d2","label":null,"assessor":"a"}\n'
    )
    store = LabelStore(path, assessor="a")
    store.append("q1", "d3", 1)
    assert store.qrels().rows() == [("q1", "d1", 2), ("q1", "d3", 1)]
    last = path.read_bytes().split(b"\n")[-2]
    body = last[: last.rfind(b',"crc":')]
    assert json.loads(last)["crc"] == f"{zlib.crc32(body):08x}"
