"""Regression tests for what tests/test_fuzz_readers.py found in the readers (issue #15)."""

from __future__ import annotations

import gzip
import re
import zlib

import polars as pl
import pytest

import searcheval_frames as sef
from searcheval_frames.errors import EmptyInputError, FileFormatError


@pytest.mark.parametrize("name", ["r.run", "r.run.gz"])
def test_corrupt_deflate_data_is_a_file_format_error(tmp_path, name):
    """A gzip stream whose deflate data is corrupt raised zlib.error, not a SearchEvalError."""
    # (found by the fuzzer) zlib: "invalid distance too far back"
    data = (b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03c\xd8\xbd\xdfP!\xd0\x00!\xc5P\xc1P"
            b"\xc1\x80\x0b\x00,\xa1\xfb\x86\x0f\x00\x00\x00")
    with pytest.raises(zlib.error):
        gzip.decompress(data)
    path = tmp_path / name
    path.write_bytes(data)
    for read in (sef.read_run, sef.read_qrels, sef.read_queries):
        with pytest.raises(FileFormatError, match="gzip data is corrupt") as info:
            read(path)
        assert info.value.path == str(path)


@pytest.mark.parametrize("gz", [False, True])
def test_a_utf8_bom_is_not_part_of_the_first_query_id(tmp_path, gz):
    """A leading UTF-8 BOM became part of the first query id ('\\ufeff1'): a silent
    mismatch with the other file's '1'."""
    def put(name, text):
        data = b"\xef\xbb\xbf" + text.encode()
        path = tmp_path / (name + (".gz" if gz else ""))
        path.write_bytes(gzip.compress(data) if gz else data)
        return path

    run = sef.read_run(put("r.run", "1 Q0 d1 1 2.5 bm25\n1 Q0 d2 2 1.5 bm25\n"))
    assert run["query_id"].to_list() == ["1", "1"]
    exact = sef.read_run(put("r2.run", "1 Q0 d1 1 2.5 bm25\n# comment\n"))  # exact reader
    assert exact["query_id"].to_list() == ["1"]
    assert sef.read_qrels(put("q.txt", "1 0 d1 1\n"))["query_id"].to_list() == ["1"]
    assert sef.read_queries(put("q.tsv", "1\thello\n"))["query_id"].to_list() == ["1"]
    assert sef.read_qrels(put("q.csv", "qid,docno,rel\n1,d1,1\n"))["query_id"].to_list() == ["1"]
    jl = sef.read_qrels(put("q.jsonl", '{"query_id": "1", "doc_id": "d1", "relevance": 1}\n'))
    assert jl["query_id"].to_list() == ["1"]


@pytest.mark.parametrize("value", ["9223372036854775808", "99999999999999999999",
                                   "-9223372036854775809"])
def test_an_integer_outside_int64_is_reported_on_its_line(tmp_path, value):
    """A rank or relevance beyond Int64 raised polars' InvalidOperationError (the cast
    went through Float64); now a FileFormatError on that line."""
    cases = [("r.run", f"1 Q0 d1 1 2.5 t\n1 Q0 d2 {value} 1.5 t\n", sef.read_run),
             ("q.txt", f"1 0 d1 1\n1 0 d2 {value}\n", sef.read_qrels),
             ("q.csv", f"qid,docno,rel\n1,d1,1\n1,d2,{value}\n", sef.read_qrels),
             ("r.csv", f"qid,docno,score,rank\n1,d1,2,1\n1,d2,1,{value}\n", sef.read_run)]
    for name, text, read in cases:
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(FileFormatError, match="not an integer") as info:
            read(path)
        assert (info.value.path, info.value.line_no) == (str(path), 2 if "csv" not in name
                                                         else 3)


def test_integers_above_2_53_keep_their_value(tmp_path):
    """Ranks and relevance went through Float64 and lost their last digits."""
    big = 2 ** 53 + 1
    run = tmp_path / "r.run"
    run.write_text(f"1 Q0 d1 {big} 2.5 t\n1 Q0 d2 {big}.0 1.5 t\n# exact reader\n")
    assert sef.read_run(run)["rank"].to_list() == [big, big]
    qrels = tmp_path / "q.txt"
    qrels.write_text(f"1 0 d1 {big}\n1 0 d2 -{big}\n")
    assert sef.read_qrels(qrels)["relevance"].to_list() == [big, -big]


def test_non_ascii_digits_are_not_an_integer(tmp_path):
    """'\\u0661' (ARABIC-INDIC DIGIT ONE) matched the integer check (\\d is Unicode in
    polars) and became a null rank or relevance."""
    qrels = tmp_path / "q.txt"
    qrels.write_text("1 0 d1 1\n1 0 d2 \u0661\n")
    with pytest.raises(FileFormatError, match="not an integer") as info:
        sef.read_qrels(qrels)
    assert info.value.line_no == 2


ODD_SPACE_RUNS = [
    # (file text, rows the exact reader gives: whitespace splits fields, junk after the tag
    # is ignored)
    ("1 Q0 d1 1 2.5 bm25\n1 Q0 d2 2 1.5 bm25\x0b\n", [("bm25", "d1"), ("bm25", "d2")]),
    ("1 Q0 d1 1 2.5 bm25\x0c\n1 Q0 d2 2 1.5 bm25\x0c\n", [("bm25", "d1"), ("bm25", "d2")]),
    ("1 Q0 d1 1 2.5 bm25\n1 Q0 d2 2 1.5 bm25\tx\n", [("bm25", "d1"), ("bm25", "d2")]),
    ("1 Q0 d1\x0b 1 2.5 bm25\n", [("bm25", "d1")]),
    ("1 Q0 d1\u00a0 1 2.5 bm25\n", [("bm25", "d1")]),
]


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize(("text", "rows"), ODD_SPACE_RUNS)
def test_fast_run_reader_splits_fields_like_the_exact_reader(tmp_path, gz, text, rows):
    """The fast readers split at single spaces only: a VT, FF, lone CR, tab or NBSP kept
    inside a field made 'bm25\\x0b' another run, 'd1\\x0b' another document, and (gzip,
    pyarrow) a lone CR a new line; the same file with a comment line (exact reader) was
    read otherwise."""
    data = text.encode()
    path = tmp_path / ("r.run.gz" if gz else "r.run")
    path.write_bytes(gzip.compress(data) if gz else data)
    assert sef.read_run(path).select("run", "doc_id").rows() == rows
    path.write_bytes(gzip.compress(b"# c\n" + data) if gz else b"# c\n" + data)
    assert sef.read_run(path).select("run", "doc_id").rows() == rows


@pytest.mark.parametrize("text", ["1 Q0\x0bx d1 1 2.5 bm25\n", "1\tQ0 x\td1\t1\t2.5\tbm25\n"])
def test_whitespace_in_the_iter_column_shifts_the_fields(tmp_path, text):
    """The iter column was not checked: 'Q0<VT>x' is two fields for the exact reader, so
    the rank is 'd1' and the line is malformed; the fast reader accepted it."""
    path = tmp_path / "r.run"
    path.write_text(text)
    with pytest.raises(FileFormatError, match="rank") as info:
        sef.read_run(path)
    assert info.value.line_no == 1


@pytest.mark.parametrize(("name", "read"), [
    ("q.csv", sef.read_qrels), ("r.tsv", sef.read_run), ("r.jsonl", sef.read_run),
    ("q.tsv", sef.read_queries), ("q.csv", sef.read_queries)])
@pytest.mark.parametrize("text", ["", "\n", "# only a comment\n"])
def test_an_empty_file_is_an_empty_input_error(tmp_path, name, read, text):
    """An empty CSV/TSV/JSONL raised polars' NoDataError or ComputeError, and an empty
    headerless query file gave an empty frame."""
    if text.startswith("#") and not name.startswith("q.tsv"):
        return  # (a comment line is data in CSV and JSON Lines)
    path = tmp_path / name
    path.write_text(text)
    fmt = {"csv": "csv", "tsv": "tsv", "jsonl": "jsonl"}[name.split(".")[1]]
    with pytest.raises(EmptyInputError, match=re.escape(name)):
        read(path, format=fmt)


@pytest.mark.parametrize(("name", "fmt", "read", "data"), [
    ("q.csv", "csv", sef.read_qrels, b"qid,docno,rel\n1,d1,1\n\x80,d2,0\n"),
    ("q.csv", "csv", sef.read_qrels, b"qid,docno,rel\n1,d1,1\n1,d2\x80,0\n"),
    ("r.tsv", "tsv", sef.read_run, b"qid\tdocno\tscore\n1\td1\t1\n1\t\xffd2\t0\n"),
    ("q.tsv", "tsv", sef.read_queries, b"1\thello\n2\tw\xe9lt\n"),
    ("t.txt", "trec", sef.read_queries, b"<top>\n<num> 1\n<title> hi\n</top>\n<top>\n"
                                         b"<num> 2\n<title> w\xe9lt\n</top>\n"),
])
def test_non_utf8_text_is_reported_on_its_line(tmp_path, name, fmt, read, data):
    """CSV/TSV said 'cannot parse CSV: invalid utf-8 sequence' without a line (or, in a
    header, read no rows), and TREC topic files replaced the bytes with U+FFFD silently."""
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(FileFormatError, match="not UTF-8") as info:
        read(path, format=fmt)
    assert info.value.line_no == data.count(b"\n", 0, re.search(rb"[\x80-\xff]", data).start()) + 1


@pytest.mark.parametrize("first", ["1\tnumber of planets", "1\twhat is the id of bm25",
                                   "1\tquery text title"])
def test_a_headerless_query_file_whose_first_text_has_a_column_word(tmp_path, first):
    """The header test split the whole first line into words, so a first query such as
    'number of planets' made the line a header: the file then failed with 'no column for
    query' (or lost its first query)."""
    path = tmp_path / "q.tsv"
    path.write_text(first + "\n2\tsecond\n")
    assert sef.read_queries(path).rows() == [("1", first.split("\t")[1]), ("2", "second")]


@pytest.mark.parametrize("header", ["qid\tquery", "id\ttext", "query_id\tquestion_text",
                                    "text\tid", "\"qid\"\t\"title\""])
def test_query_file_headers_are_still_headers(tmp_path, header):
    path = tmp_path / "q.tsv"
    path.write_text(header + "\n1\thello\n")
    if header == "query_id\tquestion_text":  # a header whose text column is not known
        assert sef.read_queries(path, columns={"query": "question_text"}).rows() == [
            ("1", "hello")]
        return
    df = sef.read_queries(path)
    assert df.height == 1


def test_topic_errors_name_the_line_and_duplicate_topics_are_reported(tmp_path):
    """A topic without <num> was reported without a line, and two topics with the same
    number were both returned (a duplicate query id, where every other query reader
    reports one)."""
    path = tmp_path / "t.txt"
    path.write_text("<top>\n<num> Number: 1\n<title> a\n</top>\n\n<top>\n<title> b\n</top>\n")
    with pytest.raises(FileFormatError, match="has no <num>") as info:
        sef.read_queries(path, format="trec")
    assert info.value.line_no == 6
    path.write_text("<top>\n<num> Number: 1\n<title> a\n</top>\n<top>\n<num> Number: 1\n"
                    "<title> b\n</top>\n")
    with pytest.raises(FileFormatError, match=r"duplicate query id '1'.*line 1") as info:
        sef.read_queries(path, format="trec")
    assert info.value.line_no == 5
    path.write_text('<topic number="7"><query>a</query></topic>\n'
                    '<topic number="7"><query>b</query></topic>\n')
    with pytest.raises(FileFormatError, match="duplicate query id '7'") as info:
        sef.read_queries(path, format="trec")
    assert info.value.line_no == 2


@pytest.mark.parametrize(("text", "line_no"), [
    ("# a comment\n", 1),
    ('{"query_id": "1", "doc_id": "d1", "score": NaN}\n', 1),
    ('{"query_id": "1", "doc_id": "d1", "score": 1}\n\n\n'
     '{"query_id": "1", "doc_id": "d1", "score": 2}\n', 4),
    ('{"query_id": "1", "doc_id": "d1", "score": 1}\n\n{"query_id": " ", "doc_id": "d2", '
     '"score": 2}\n', 3),
])
def test_json_lines_errors_name_the_right_line(tmp_path, text, line_no):
    """A '#' line or a NaN made polars fail and Python's json accept (comment lines were
    skipped, NaN is a Python extension): polars' ComputeError escaped. Rows were numbered
    1, 2, ... although polars skips blank lines: the error named the wrong line."""
    path = tmp_path / "r.jsonl"
    path.write_text(text)
    with pytest.raises(FileFormatError) as info:
        sef.read_run(path)
    assert info.value.line_no == line_no


@pytest.mark.parametrize(("text", "line_no"), [
    ("qid\tdocno\tscore\n1\td1\t0.5\n1\t1\td2\t0.5\n", 3),
    ("qid,docno,rel\n1,d1,1\r1,d2,0\n", 2),
    ("run,qid,docno,score\nA,1,d1,0.5\nB,1,d2\n", 3),
])
def test_csv_rows_with_the_wrong_number_of_fields_name_their_line(tmp_path, text, line_no):
    """A row with more fields than the header failed without a line number; a row with
    fewer left the run name null (a run without a name)."""
    path = tmp_path / ("r.tsv" if "\t" in text else "r.csv")
    path.write_text(text)
    read = sef.read_qrels if "rel" in text else sef.read_run
    with pytest.raises(FileFormatError) as info:
        read(path)
    assert info.value.line_no == line_no


# a polars-written Parquet file with 3 bytes changed (zlib + base64): polars' decoder panics
PANIC_PARQUET = (
    "eNqdVM1u00AQXtuJFaQcSpVd2ZIPAalWK1CxF/KHWqRNSX9ogDRS1TYXlMY2jUiTkjRJw6FC5RU4cyo3Dhx64R04"
    "IB6CY56AAzMbp0mrIiFG3pnZ+ftmdqKURNmlEZqgiSIIQogCx0XGKaGzdPY+1ekMHN1Kk3mFG4oLPhWOrihahMbN"
    "FNFnTCP2tuu3B6/qHiVMZz3Ws9N2bCoFihvUCDEw3XMlvwlF9bihetM46iWO7rVqY5RTdmqfXdg/lCtJAOFQpwjF"
    "yISUUKqhBFQY+QpqbOwzYlOJaPysqNodqBu2cKvtN/xetVnzZRdfFfjsoWafazeV+YDMvK2a8AxwYF6ThQZoF9m0"
    "6RIa1Emv0m2xNF1nRGpnKi2G6lCjAapUNYvrkXardUx1QuNz6mQlc6RoYQQaw/cbmyJgmswD45iWuWR/Uax/Xiz7"
    "qdME+x6ld4n9XrP+vij1+qLYL50yNoxSm9ifotZ/vq8k9htLfdTpE8LONabbMRAJfB8jLsrllzuPO7UD/7BqXKgP"
    "kHKOACogy/bgfrIV3qVpU4iOWJFyS9wrgb/fR/uGEK/DuOcg8tJYRiYwf2UDS2/iNS/CeHSNhBBPHfRLpBEOON5g"
    "qJSQNKjsnDS8w9XuHt/G+ALGr12vV94a15P+PLa0Vu7tubmjCqgZ7HcgW5PNro3wtmWT+Q0sBbKA8wH1R6VK7yAp"
    "W0CXtK+vupXdZ6ld3oDGlpeJ8aLUalTbneT80eD4oNVcSPb8dqfeaib5orvoJOf3u/WGl8wEOYfvew+DwOOZIMhy"
    "z33EM9mqk6vyXCoIeJCp+l6OL5hL8OsbfeQbLLQE/0J/AO0i0jg="
)


def test_a_parquet_file_that_makes_polars_panic_is_a_file_format_error(tmp_path):
    """pl.read_parquet panicked on corrupt bytes (a PanicException, which is no Exception,
    escaped the reader; other corruptions abort the process on a huge allocation); the
    reader now reads Parquet with pyarrow, validated, and reports a FileFormatError."""
    import base64

    data = zlib.decompress(base64.b64decode(PANIC_PARQUET))
    path = tmp_path / "q.parquet"
    path.write_bytes(data)
    with pytest.raises(pl.exceptions.PanicException):
        pl.read_parquet(path)
    with pytest.raises(FileFormatError, match="cannot read Parquet") as info:
        sef.read_qrels(path)
    assert info.value.path == str(path)
    ok = tmp_path / "ok.parquet"
    pl.DataFrame({"qid": ["1"], "docno": ["d1"], "rel": [2]}).write_parquet(ok)
    assert sef.read_qrels(ok).rows() == [("1", "d1", 2)]


def test_a_topic_without_its_title_tag(tmp_path):
    """With the <title> tag lost, the title text ran into <num>: the query id became
    '1 what' (silently; no run can hold such an id), and a topic without a title had a
    null query when other topics had one ('' when none had)."""
    path = tmp_path / "t.txt"
    path.write_text("<top>\n<num> Number: 1\nwhat\n<desc> d\n</top>\n"
                    "<top>\n<num> Number: 2\n<title> b\n</top>\n")
    with pytest.raises(FileFormatError, match="a query id is one word") as info:
        sef.read_queries(path, format="trec")
    assert info.value.line_no == 1
    path.write_text("<top>\n<num> Number: 1\n<desc> d\n</top>\n"
                    "<top>\n<num> Number: 2\n<title> b\n</top>\n")
    assert sef.read_queries(path, format="trec").select("query_id", "query").rows() == [
        ("1", ""), ("2", "b")]


def test_malformed_lines_after_tab_separated_junk_do_not_panic(tmp_path):
    """Lines split by the slow path (a tab) gave two-chunk columns on which polars 2.1's
    pl.format panicked while building the error message (PanicException, no Exception)."""
    path = tmp_path / "q.txt"
    path.write_text("1 0 d1 0\n1 0 d2 0\n1 0 d3 0\n1 0 FBIS3-10 0\tx\n2 0 d1 0\tx\n")
    with pytest.raises(FileFormatError, match="wrong number of fields") as info:
        sef.read_qrels(path)
    assert info.value.line_no == 4


def test_a_first_line_with_only_an_id_word_is_not_a_header(tmp_path):
    """A first line 'qid' (one field, no TAB) was taken for a header: the file failed with
    'no rows' or on line 2 instead of the malformed line 1."""
    path = tmp_path / "q.tsv"
    path.write_text("qid\n1\thello\n")
    with pytest.raises(FileFormatError, match="no TAB") as info:
        sef.read_queries(path)
    assert info.value.line_no == 1


def test_query_ids_that_differ_only_by_spaces_are_duplicates(tmp_path):
    """The duplicate check compared the ids before stripping them, the frame holds them
    stripped: '1 ' and '1' came out as two queries '1'."""
    path = tmp_path / "q.tsv"
    path.write_text("1 \twhat\n1\twho\n")
    with pytest.raises(FileFormatError, match="duplicate query id") as info:
        sef.read_queries(path)
    assert info.value.line_no == 2


@pytest.mark.parametrize("gz", [False, True])
def test_a_lone_cr_joining_two_results_is_an_error_not_a_lost_document(tmp_path, gz):
    """A lone CR between two results made the second one "text after the tag", and d3
    was silently lost (issue #22): now the line is reported."""
    data = b"1 Q0 d1 1 2.5 bm25\n1 Q0 d2 2 1.5 bm25\r1 Q0 d3 3 1 bm25\n"
    path = tmp_path / ("r.run.gz" if gz else "r.run")
    path.write_bytes(gzip.compress(data) if gz else data)
    with pytest.raises(FileFormatError, match="carriage return") as info:
        sef.read_run(path)
    assert info.value.line_no == 2
