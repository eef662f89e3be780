"""Reading and writing runs, qrels and query sets (searcheval_frames.io)."""

from __future__ import annotations

import gzip
import inspect
import os
import sys
from pathlib import Path

import pandas as pd
import polars as pl
import pytest
from conftest import shared_path
from hypothesis import given, settings
from hypothesis import strategies as st

import searcheval_frames as sef
from searcheval_frames import io
from searcheval_frames.errors import (
    FileAccessError,
    FileFormatError,
    InvalidOptionError,
    SearchEvalError,
)

RUN_TEXT = (
    "# produced by a test\n"
    "q1 Q0 d1 1 3.5 bm25\n"
    "q1\tQ0\td2\t2\t  2.25\tbm25\n"
    "q1 0  d3 3 1e-3 bm25 trailing junk here\n"
    "\n"
    "q2 Q0 doc#4 1 7 bm25\n"
)


def _w(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


# --------------------------------------------------------------------------- TREC runs
def test_trec_run_quirks(tmp_path):
    df = io.read_run(_w(tmp_path, "r.run", RUN_TEXT))
    assert df.columns == ["run", "query_id", "doc_id", "score", "rank"]
    assert df["run"].unique().to_list() == ["bm25"]
    assert df["doc_id"].to_list() == ["d1", "d2", "d3", "doc#4"]
    assert df["score"].to_list() == [3.5, 2.25, 0.001, 7.0]
    assert df["rank"].to_list() == [1, 2, 3, 1]


def test_run_without_tag_is_named_after_file(tmp_path):
    p = _w(tmp_path, "dense.run.gz", "")
    p.write_bytes(gzip.compress(b"q1 Q0 d1 1 3.5\nq1 Q0 d2 2 2.5\n"))
    df = io.read_run(p)
    assert df["run"].unique().to_list() == ["dense"]
    assert df.height == 2


def test_name_options_and_several_files(tmp_path):
    a = _w(tmp_path, "a.txt", "q1 Q0 d1 1 1.0 same\n")
    b = _w(tmp_path, "b.txt", "q1 Q0 d1 1 2.0 same\n")
    with pytest.raises(SearchEvalError, match="name_from='file'"):
        io.read_run([a, b])
    df = io.read_run([a, b], name_from="file")
    assert df["run"].to_list() == ["a", "b"]
    df = io.read_run([a, b], name=["x", "y"])
    assert df["run"].to_list() == ["x", "y"]
    with pytest.raises(SearchEvalError, match="one name per file"):
        io.read_run([a, b], name="x")


def test_pandas_backend(tmp_path):
    df = io.read_run(_w(tmp_path, "r.run", RUN_TEXT), backend="pandas")
    assert isinstance(df, pd.DataFrame)
    assert list(df["doc_id"]) == ["d1", "d2", "d3", "doc#4"]
    q = io.read_qrels(_w(tmp_path, "q.txt", "q1 0 d1 1\n"), backend="pandas")
    assert isinstance(q, pd.DataFrame)


def test_sef_namespace_exposes_io():
    # the public names are io's functions behind the one keyword check (issue #31)
    assert inspect.unwrap(sef.read_run) is io.read_run
    assert inspect.unwrap(sef.write_queries) is io.write_queries


@pytest.mark.parametrize(
    ("line", "pattern"),
    [
        ("q1 Q0 d9 4", "wrong number of fields"),
        ("q1 Q0 d9 4 abc bm25", "score 'abc' is not a number|score abc is not a number"),
        ("q1 Q0 d9 x 1.0 bm25", "rank x is not an integer"),
        ("q1 Q0 d1 4 0.5 bm25", "duplicate document: document d1 appears again in query q1"),
        ("q1 Q0 d9 4 nan bm25", "not a number"),
    ],
)
def test_malformed_run_line_reported_exactly(tmp_path, line, pattern):
    # comment and blank lines count: the bad line is line 5
    text = "# header comment\nq1 Q0 d1 1 3.0 bm25\n\nq1 Q0 d2 2 2.0 bm25\n" + line + "\n"
    p = _w(tmp_path, "bad.run", text)
    with pytest.raises(FileFormatError, match=pattern) as info:
        io.read_run(p)
    err = info.value
    assert err.path == str(p)
    assert err.line_no == 5
    assert err.line == line
    assert err.hint
    assert f"{p}:5" in str(err)


def test_duplicate_reports_first_line(tmp_path):
    p = _w(tmp_path, "dup.run", "q1 Q0 d1 1 3 r\nq1 Q0 d2 2 2 r\nq1 Q0 d1 3 1 r\n")
    with pytest.raises(FileFormatError, match="first on line 1") as info:
        io.read_run(p)
    assert info.value.line_no == 3


def test_fast_path_falls_back_for_the_exact_line(tmp_path):
    # a large clean file with one bad line: the multi-threaded parser gives up and
    # the exact parser reports the right line number
    n = 20000
    lines = [f"q{i // 100} Q0 d{i} {i % 100 + 1} {1.0 / (i + 1)} run" for i in range(n)]
    lines[15000] = lines[15000].replace(" run", "")  # 5 fields among 6-field lines
    p = _w(tmp_path, "big.run", "\n".join(lines) + "\n")
    with pytest.raises(FileFormatError) as info:
        io.read_run(p)
    assert info.value.line_no == 15001
    assert "5 fields" in str(info.value)


def test_several_errors_are_counted(tmp_path):
    p = _w(tmp_path, "bad.run", "q1 Q0 d1 1 x r\nq1 Q0 d2 2 y r\nq1 Q0 d3 z r\n")
    with pytest.raises(FileFormatError, match="3 malformed line") as info:
        io.read_run(p)
    assert "line 2" in str(info.value)


def test_non_utf8_and_missing_and_empty(tmp_path):
    p = tmp_path / "latin.run"
    p.write_bytes(b"q1 Q0 d1 1 1.0 r\nq1 Q0 caf\xe9 2 0.5 r\n")
    with pytest.raises(FileFormatError, match="not UTF-8") as info:
        io.read_run(p)
    assert info.value.line_no == 2
    with pytest.raises(SearchEvalError, match="no such file"):
        io.read_run(tmp_path / "nope.run")
    with pytest.raises(SearchEvalError, match="no result lines"):
        io.read_run(_w(tmp_path, "empty.run", "# only a comment\n"))


def test_shared_trec_eval_runs():
    df = io.read_run(shared_path("trec_eval_tests", "results.trunc"))
    assert df.height == 584
    assert df["run"].unique().to_list() == ["STANDARD"]  # junk after the tag ignored
    assert sorted(df["query_id"].unique().to_list()) == ["301", "303"]
    df = io.read_run(shared_path("trec_eval_tests", "results.test"))
    assert df.height == 1500
    assert df.filter(pl.col("doc_id") == "FR940202-2-00150")["score"].item() == 2.129133
    df = io.read_run(shared_path("trec_eval_tests", "results.comment.test"))
    assert df.height == 30100
    assert df["doc_id"].str.contains("#").all()


# --------------------------------------------------------------------------- qrels
def test_shared_qrels_with_comments():
    plain = io.read_qrels(shared_path("trec_eval_tests", "qrels.test"))
    with_comments = io.read_qrels(shared_path("trec_eval_tests", "qrels.test.with-comments"))
    assert plain.height == 3681
    # same judgments, except that one docno carries a '#' (not a comment)
    fixed = with_comments.with_columns(pl.col("doc_id").str.replace("CR#93E", "CR93E"))
    assert plain.equals(fixed)
    assert "CR#93E-1860" in with_comments["doc_id"].to_list()
    graded = io.read_qrels(shared_path("trec_eval_tests", "qrels.rel_level"))
    assert sorted(graded["relevance"].unique().to_list()) == [-1, 0, 1, 2, 3, 4]


@pytest.mark.parametrize(
    ("line", "pattern"),
    [
        ("q1 0 d9", "expected 4"),
        ("q1 0 d9 1 extra", "expected 4"),
        ("q1 0 d9 high", "relevance high is not an integer"),
        ("q1 0 d9 1.5", "not an integer"),
        ("q1 0 d1 0", "duplicate judgment"),
    ],
)
def test_malformed_qrels(tmp_path, line, pattern):
    p = _w(tmp_path, "q.txt", "q1 0 d1 1\n# note\n" + line + "\n")
    with pytest.raises(FileFormatError, match=pattern) as info:
        io.read_qrels(p)
    assert info.value.line_no == 3
    assert info.value.line == line


def test_qrels_float_integral_and_negative(tmp_path):
    q = io.read_qrels(_w(tmp_path, "q.txt", "q1 0 d1 1.0\nq1 0 d2 -1\n"))
    assert q["relevance"].to_list() == [1, -1]


# --------------------------------------------------------------------------- tables
def test_csv_run_with_aliases_and_line_numbers(tmp_path):
    p = _w(tmp_path, "run.csv", "qid,docno,score,system\n1,a,2.0,s\n1,b,oops,s\n")
    with pytest.raises(FileFormatError, match="score oops") as info:
        io.read_run(p)
    assert info.value.line_no == 3
    assert info.value.line == "1,b,oops,s"
    p = _w(tmp_path, "run2.csv", "qid,docno,score,system\n001,a,2.0,s\n001,b,1,s\n")
    df = io.read_run(p)
    assert df["query_id"].to_list() == ["001", "001"]  # ids stay strings
    assert df["run"].to_list() == ["s", "s"]


def test_tsv_qrels_with_header_and_columns(tmp_path):
    p = _w(tmp_path, "q.tsv", "topic\tpassage\tgrade\n1\tp1\t2\n")
    with pytest.raises(SearchEvalError, match="no column for 'doc_id'"):
        io.read_qrels(p)
    q = io.read_qrels(p, columns={"doc_id": "passage"})
    assert q.rows() == [("1", "p1", 2)]


def test_jsonl_bad_line(tmp_path):
    p = _w(tmp_path, "r.jsonl", '{"qid": "1", "docid": "a", "score": 1}\n{"qid": "1",\n')
    with pytest.raises(FileFormatError) as info:
        io.read_run(p)
    assert info.value.line_no == 2


def test_format_override_and_detection(tmp_path):
    p = _w(tmp_path, "data.bin", "query_id,doc_id,relevance\nq,d,1\n")
    assert io.detect_format(p, "qrels") == "csv"
    assert io.read_qrels(p).rows() == [("q", "d", 1)]
    with pytest.raises(InvalidOptionError, match=r"read_qrels\(format='xml'\): must be one of 'trec'"):
        io.read_qrels(p, format="xml")  # type: ignore[arg-type]
    p2 = _w(tmp_path, "qrels.tsv", "q\t0\td\t1\n")
    assert io.detect_format(p2, "qrels") == "trec"
    assert io.read_qrels(p2).rows() == [("q", "d", 1)]


# --------------------------------------------------------------------------- round trips
RUN = pl.DataFrame({
    "run": ["a", "a", "a", "b"],
    "query_id": ["1", "1", "2", "1"],
    "doc_id": ["x", "y", "x", "x"],
    "score": [1.5, 2.5, 0.125, -3.0],
})


@pytest.mark.parametrize("name", ["r.run", "r.run.gz", "r.csv", "r.tsv", "r.parquet",
                                  "r.jsonl", "r.csv.gz"])
def test_run_round_trip(tmp_path, name):
    p = io.write_run(RUN, tmp_path / name)
    back = io.read_run(p)
    key = ["run", "query_id", "doc_id"]
    assert back.select(*key, "score").sort(key).equals(RUN.sort(key))
    # ranks recomputed in trec_eval order: score descending within each query
    a1 = back.filter((pl.col("run") == "a") & (pl.col("query_id") == "1"))
    assert a1.sort("rank")["doc_id"].to_list() == ["y", "x"]
    assert not list(tmp_path.glob(".*tmp"))


def test_write_run_ties_and_keep_rank(tmp_path):
    run = pl.DataFrame({"query_id": ["1"] * 3, "doc_id": ["a", "c", "b"],
                        "score": [1.0, 1.0, 1.0], "rank": [3, 1, 2]})
    p = io.write_run(run, tmp_path / "t.run", name="tie")
    assert [ln.split()[2] for ln in p.read_text().splitlines()] == ["c", "b", "a"]
    p = io.write_run(run, tmp_path / "k.run", name="tie", keep_rank=True)
    assert [ln.split()[2] for ln in p.read_text().splitlines()] == ["c", "b", "a"]
    assert [ln.split()[3] for ln in p.read_text().splitlines()] == ["1", "2", "3"]


def test_write_rejects_whitespace_ids(tmp_path):
    run = pl.DataFrame({"query_id": ["1"], "doc_id": ["a b"], "score": [1.0]})
    with pytest.raises(SearchEvalError, match="whitespace"):
        io.write_run(run, tmp_path / "x.run")
    assert not (tmp_path / "x.run").exists()


def test_atomic_write_keeps_old_file_on_failure(tmp_path, monkeypatch):
    p = io.write_qrels({"q": {"d": 1}}, tmp_path / "q.txt")
    before = p.read_text()

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", boom)
    # a SearchEvalError naming the target, not the temporary file (issue #22)
    with pytest.raises(FileAccessError, match=r"q\.txt: cannot write the file \(disk full\)"):
        io.write_qrels({"q": {"d": 2}}, p)
    assert p.read_text() == before
    assert not list(tmp_path.glob(".*tmp"))


@pytest.mark.parametrize("name", ["q.txt", "q.txt.gz", "q.csv", "q.tsv", "q.parquet",
                                  "q.jsonl"])
def test_qrels_round_trip(tmp_path, name):
    qrels = pl.DataFrame({"query_id": ["1", "1", "10"], "doc_id": ["a", "b#2", "a"],
                          "relevance": [2, -1, 0]})
    back = io.read_qrels(io.write_qrels(qrels, tmp_path / name))
    assert back.sort("query_id", "doc_id").equals(qrels.sort("query_id", "doc_id"))


ids = st.text(alphabet="abcXYZ019_-.#:", min_size=1, max_size=6).filter(
    lambda s: not s.startswith("#"))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(ids, ids, st.floats(-1e6, 1e6, allow_nan=False, width=64)),
                min_size=1, max_size=30, unique_by=lambda t: (t[0], t[1])))
def test_run_round_trip_property(tmp_path_factory, rows):
    tmp = tmp_path_factory.mktemp("prop")
    run = pl.DataFrame(rows, schema=["query_id", "doc_id", "score"], orient="row")
    back = io.read_run(io.write_run(run, tmp / "p.run", name="prop"))
    key = ["query_id", "doc_id"]
    assert back.select(*key, "score").sort(key).equals(run.sort(key))


# --------------------------------------------------------------------------- queries
def test_queries_round_trips(tmp_path):
    q = pl.DataFrame({"query_id": ["1", "2"], "query": ["what is bm25", "ndcg, formula"]})
    for name in ("q.tsv", "q.csv", "q.jsonl", "q.parquet"):
        back = io.read_queries(io.write_queries(q, tmp_path / name))
        assert back.equals(q), name
    assert (tmp_path / "q.tsv").read_text() == "1\twhat is bm25\n2\tndcg, formula\n"
    meta = q.with_columns(pl.Series("split", ["dev", "test"]))
    back = io.read_queries(io.write_queries(meta, tmp_path / "m.tsv"))
    assert back.equals(meta)
    topics = q.with_columns(pl.Series("description", ["d1", "d2"]))
    back = io.read_queries(io.write_queries(topics, tmp_path / "t.xml", format="trec"))
    assert back.select("query_id", "query", "description").equals(topics)


def test_old_style_trec_topics(tmp_path):
    text = ("<top>\n<num> Number: 301\n<title> International Organized Crime\n\n"
            "<desc> Description:\nIdentify organizations.\n\n<narr> Narrative:\nA relevant "
            "document...\n</top>\n\n<top>\n<num> Number: 302\n<title> Poliomyelitis\n</top>\n")
    q = io.read_queries(_w(tmp_path, "topics.301", text))
    assert q["query_id"].to_list() == ["301", "302"]
    assert q["query"].to_list() == ["International Organized Crime", "Poliomyelitis"]
    assert q["description"][0] == "Identify organizations."


def test_shared_topic_files():
    q = io.read_queries(shared_path("vaswani_npl", "query-text.trec"))
    assert q.height == 93
    assert q["query"][0].startswith("MEASUREMENT OF DIELECTRIC")
    q = io.read_queries(shared_path("trec_dl_passage", "topics.dl19-passage.txt"))
    assert q.row(0) == ("156493", "do goldfish grow")


def test_queries_bad_lines(tmp_path):
    p = _w(tmp_path, "q.tsv", "1\tfirst\n2 no tab here\n")
    with pytest.raises(FileFormatError, match="no TAB") as info:
        io.read_queries(p)
    assert info.value.line_no == 2
    p = _w(tmp_path, "d.tsv", "1\tfirst\n1\tagain\n")
    with pytest.raises(FileFormatError, match="duplicate query id 1"):
        io.read_queries(p)
    with pytest.raises(SearchEvalError, match="TAB or newline"):
        io.write_queries({"1": "a\tb"}, tmp_path / "x.tsv")


# --------------------------------------------------------------------------- ir_datasets
class _FakeDataset:
    def has_qrels(self):
        return True

    def has_queries(self):
        return True

    def qrels_iter(self):
        from collections import namedtuple

        Q = namedtuple("Q", "query_id doc_id relevance iteration")
        return iter([Q("1", "d1", 2, "0"), Q("1", "d2", 0, "0")])

    def queries_iter(self):
        from collections import namedtuple

        Q = namedtuple("Q", "query_id text")
        return iter([Q("1", "what is bm25")])


def test_ir_datasets_adapter(monkeypatch):
    import types

    fake = types.SimpleNamespace(load=lambda name: _FakeDataset())
    monkeypatch.setitem(sys.modules, "ir_datasets", fake)
    assert io.read_qrels("irds:fake/set").rows() == [("1", "d1", 2), ("1", "d2", 0)]
    assert io.read_queries("irds:fake/set").rows() == [("1", "what is bm25")]
    monkeypatch.setitem(sys.modules, "ir_datasets", None)
    with pytest.raises(SearchEvalError, match="pip install ir_datasets"):
        io.read_qrels("irds:fake/set")


# --------------------------------------------------------------------------- speed
@pytest.mark.slow
def test_large_run_reads_fast(tmp_path):
    import time

    n_q, k = 2000, 1000
    df = pl.DataFrame({"q": pl.int_range(n_q * k, eager=True) // k,
                       "r": pl.int_range(n_q * k, eager=True) % k + 1})
    lines = df.select(pl.format("{} Q0 doc{} {} {} fast", "q", pl.col("r") * 7919, "r",
                                1.0 / pl.col("r")).alias("l"))
    p = tmp_path / "big.run"
    lines.write_csv(p, include_header=False, quote_style="never")
    t = time.perf_counter()
    run = io.read_run(p)
    took = time.perf_counter() - t
    assert run.height == n_q * k
    assert took < 10  # about 0.6 s on 2 cores; generous for loaded CI machines
