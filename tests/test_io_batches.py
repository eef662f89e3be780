"""The batched reader of one-tag TREC runs: checks, blocks and marks across batch edges.

The reader parses in batches of ``io.trec_fast.BATCH_ROWS`` lines and checks each batch
while polars parses the next. These tests shrink the batch to a few lines so
that queries, duplicates and comment lines fall on batch edges.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import searcheval_frames as sef
from searcheval_frames import io
from searcheval_frames.errors import FileFormatError
from searcheval_frames.frames import (
    query_blocks,
    repeated_blocks,
    repeats_in_blocks,
    score_increases,
)
from searcheval_frames.io import trec_fast
from searcheval_frames.io._lines import split_fields
from searcheval_frames.io.trec import exact_trec_run

DOCS = [f"d{i}" for i in range(8)]


@st.composite
def run_files(draw):
    """Lines of a one-tag run: query blocks in some order, maybe split, maybe a duplicate."""
    queries = draw(st.lists(st.sampled_from(["1", "2", "10", "q3"]), min_size=1, max_size=6))
    lines = []
    for q in queries:  # the same query twice in this list = a query split in two blocks
        docs = draw(st.lists(st.sampled_from(DOCS), unique=True, min_size=1, max_size=6))
        lines += [(q, d) for d in docs]
    scores = draw(st.lists(st.sampled_from([0.5, 1.0, 2.0, 2.5]), min_size=len(lines),
                           max_size=len(lines)))
    if draw(st.booleans()):  # as most files are: best score first
        scores = sorted(scores, reverse=True)
    scored = [f"{q} Q0 {d} {i + 1} {s} tagA"
              for i, ((q, d), s) in enumerate(zip(lines, scores, strict=True))]
    dup = len({(q, d) for q, d in lines}) < len(lines)
    return scored, dup

def _file_or_refused(tmp_path, monkeypatch, lines, dup, batch):
    """The run file of ``lines``, read in batches of ``batch``; None when it holds a
    duplicate, after checking that the reader refuses it."""
    monkeypatch.setattr(trec_fast, "BATCH_ROWS", batch)
    path = tmp_path / "r.run"
    path.write_text("\n".join(lines) + "\n")
    if dup:
        with pytest.raises(FileFormatError, match="duplicate"):
            sef.read_run(path)
        return None
    return path



@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=run_files(), batch=st.integers(1, 9),
       mark=st.sets(st.tuples(st.sampled_from(["1", "2", "10", "q3", "x"]),
                              st.sampled_from(DOCS))))
def test_batched_reader_matches_exact_reader(tmp_path, monkeypatch, data, batch, mark):
    path = _file_or_refused(tmp_path, monkeypatch, *data, batch)
    if path is None:
        return
    marks = pl.DataFrame(sorted(mark), schema={"query_id": pl.String, "doc_id": pl.String},
                         orient="row")
    df, blocks = io.read_runs(path, rank=False, mark=marks)
    exact = exact_trec_run(path, path.read_bytes())
    assert df.select("query_id", "doc_id", "score").equals(
        exact.select("query_id", "doc_id", "score"))
    assert df["run"].unique().to_list() == ["tagA"]
    expected = query_blocks(df)
    if expected is None:  # a query split in two blocks: no blocks, and no marks
        assert blocks is None
        return
    assert blocks is not None
    assert blocks.starts.tolist() == expected.starts.tolist()
    assert blocks.ends.tolist() == expected.ends.tolist()
    assert blocks.keys.equals(expected.keys)
    # every row of a marked pair is marked, and the rows of a document marked in another
    # query may be (the marks are found by the document's hash: a superset, which the
    # ranking joins on the ids; a hash collision could add a row, none here)
    want = [i for i, pair in enumerate(zip(df["query_id"], df["doc_id"], strict=True))
            if pair in mark]
    docs = {d for _, d in mark}
    may = [i for i, d in enumerate(df["doc_id"]) if d in docs]
    assert blocks.marked is not None and blocks.marked.tolist() == may
    assert set(want) <= set(may)
    sorted_scores = bool(np.isin(score_increases(df["score"]), expected.starts).all())
    assert blocks.sorted_scores is sorted_scores


@pytest.mark.parametrize("batch", [1, 2, 3, 4, 5, 100])
@pytest.mark.parametrize(("text", "msg"), [
    # a duplicate inside query 1's block, across batch edges for small batches
    ("1 Q0 a 1 3 t\n1 Q0 b 2 2 t\n1 Q0 c 3 1.5 t\n1 Q0 a 4 1 t\n2 Q0 a 1 1 t\n",
     r"r\.run:4: .*document a appears again in query 1 \(first on line 1\)"),
    # query 1 in two places (not a block): its duplicate must still be found
    ("1 Q0 a 1 3 t\n2 Q0 a 1 2 t\n2 Q0 b 2 1 t\n1 Q0 a 2 1 t\n",
     r"r\.run:4: .*document a appears again in query 1"),
])
def test_duplicates_are_reported_with_their_line(tmp_path, monkeypatch, batch, text, msg):
    monkeypatch.setattr(trec_fast, "BATCH_ROWS", batch)
    path = tmp_path / "r.run"
    path.write_text(text)
    with pytest.raises(FileFormatError, match=msg):
        sef.read_run(path)


@pytest.mark.parametrize("batch", [1, 2, 3])
def test_lines_that_fail_the_batch_check_go_to_the_other_readers(tmp_path, monkeypatch, batch):
    monkeypatch.setattr(trec_fast, "BATCH_ROWS", batch)
    two_tags = tmp_path / "two.run"
    two_tags.write_text("1 Q0 a 1 3 A\n1 Q0 b 2 2 A\n1 Q0 a 1 3 B\n")
    assert sef.read_run(two_tags)["run"].to_list() == ["A", "A", "B"]
    comment = tmp_path / "comment.run"
    comment.write_text("1 Q0 a 1 3 A\n1 Q0 b 2 2 A\n# note\n2 Q0 a 1 3 A\n")
    assert sef.read_run(comment)["doc_id"].to_list() == ["a", "b", "a"]
    nan = tmp_path / "nan.run"
    nan.write_text("1 Q0 a 1 3 A\n1 Q0 b 2 nan A\n")
    with pytest.raises(FileFormatError, match="not a number"):
        sef.read_run(nan)


def test_evaluate_from_files_uses_marks_and_agrees_with_frames(tmp_path, monkeypatch):
    monkeypatch.setattr(trec_fast, "BATCH_ROWS", 3)
    rows = [("1", "a", 3.0), ("1", "b", 2.0), ("1", "c", 2.0), ("1", "d", 1.0),
            ("2", "a", 5.0), ("2", "e", 4.0), ("2", "b", 4.0)]
    run = tmp_path / "r.run"
    run.write_text("".join(f"{q} Q0 {d} {i} {s} sys\n" for i, (q, d, s) in enumerate(rows)))
    qrels = tmp_path / "q.txt"
    qrels.write_text("1 0 c 1\n1 0 d 2\n2 0 b 1\n2 0 zz 1\n")
    ms = ["P@2", "RR", "AP", "nDCG@3", "NumRet"]
    from_files = sef.evaluate(str(run), str(qrels), ms, per_query=True)
    frame = pl.DataFrame(rows, schema=["query_id", "doc_id", "score"], orient="row")
    from_frames = sef.evaluate(frame.with_columns(run=pl.lit("sys")), sef.read_qrels(qrels), ms,
                               per_query=True)
    assert from_files.equals(from_frames)
    # ties by doc id descending: query 1 ranks c (2.0) before b; query 2 ranks e before b
    rr = from_files.filter(pl.col("measure") == "RR")["value"].to_list()
    assert rr == [1 / 2, 1 / 3]


@pytest.mark.parametrize("batch", [2, 3, 4, 6, 7, 50])
@pytest.mark.parametrize("where", [0, 5, 10, 15])
def test_duplicate_in_equal_blocks(tmp_path, monkeypatch, batch, where):
    """Blocks of equal length take the row-wise sort; a duplicate anywhere is found."""
    monkeypatch.setattr(trec_fast, "BATCH_ROWS", batch)
    docs = [[f"d{j}" for j in range(4)] for _ in range(5)]  # 5 queries x 4 documents
    q, j = divmod(where, 4)
    docs[q][j] = docs[q][(j + 1) % 4]
    text = "".join(f"{qi} Q0 {d} {r} {9 - r} t\n" for qi, ds in enumerate(docs)
                   for r, d in enumerate(ds))
    path = tmp_path / "r.run"
    path.write_text(text)
    with pytest.raises(FileFormatError, match="duplicate"):
        sef.read_run(path)
    # the helper itself, on blocks directly
    h = np.arange(20, dtype=np.uint64)
    assert not repeats_in_blocks(h, np.array([4] * 5))
    h[where] = h[where ^ 1]
    assert repeats_in_blocks(h, np.array([4] * 5))
    # a repeat across blocks only (a hash collision) need not be reported
    assert not repeats_in_blocks(np.array([1, 2, 1, 3], dtype=np.uint64), np.array([2, 2]))


def _split_fields_by_regex(df: pl.DataFrame, n: int) -> pl.DataFrame:
    """The reference: one regex with optional groups (exact, but slow on big files)."""
    pattern = r"^\s*(\S+)" + "".join([r"(?:\s+(\S+))?"] * (n - 1))
    groups = pl.col("text").str.extract_groups(pattern)
    return df.with_columns(
        pl.col("text").str.count_matches(r"\S+").alias("nf"),
        *[groups.struct.field(str(i + 1)).alias(f"f{i}") for i in range(n)],
    )


SEPS = [" ", " ", " ", "  ", "\t", " \t", "\u00a0", "\u2003", "\r"]


@st.composite
def text_lines(draw):
    fields = draw(st.lists(st.text(alphabet="ab1.#é-", min_size=1, max_size=3), min_size=1,
                           max_size=8))
    seps = draw(st.lists(st.sampled_from(SEPS), min_size=len(fields) - 1,
                         max_size=len(fields) - 1))
    lead = draw(st.sampled_from(["", "", " ", "\t"]))
    trail = draw(st.sampled_from(["", "", " ", "\t "]))
    return lead + fields[0] + "".join(s + f for s, f in zip(seps, fields[1:], strict=True)) + trail


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(text_lines(), min_size=1, max_size=20))
def test_split_fields_matches_the_regex_reference(lines):
    df = pl.DataFrame({"line_no": range(1, len(lines) + 1), "text": lines})
    for n in (4, 6):
        assert split_fields(df, n).equals(_split_fields_by_regex(df, n))


def test_without_collect_batches_the_one_shot_parse_is_used(tmp_path, monkeypatch):
    """Older polars: no batched reading, same frame, same blocks, same errors."""
    monkeypatch.delattr(pl.LazyFrame, "collect_batches")
    path = tmp_path / "r.run"
    path.write_text("1 Q0 a 1 3 t\n1 Q0 b 2 2 t\n2 Q0 a 1 1 t\n")
    df, blocks = io.read_runs(path, rank=False,
                               mark=pl.DataFrame({"query_id": ["1"], "doc_id": ["a"]}))
    assert df["doc_id"].to_list() == ["a", "b", "a"]
    assert blocks is not None and blocks.starts.tolist() == [0, 2]
    assert blocks.marked is None  # only the batched reader marks rows
    path.write_text("1 Q0 a 1 3 t\n1 Q0 a 2 2 t\n")
    with pytest.raises(FileFormatError, match="duplicate"):
        sef.read_run(path)


@pytest.mark.parametrize("batch", [1, 2, 100])
def test_crlf_lines_read_like_lf_lines(tmp_path, monkeypatch, batch):
    monkeypatch.setattr(trec_fast, "BATCH_ROWS", batch)
    text = "1 Q0 a 1 3 t\n1 Q0 b 2 2 t\n2 Q0 a 1 1 t\n"
    lf, crlf = tmp_path / "lf.run", tmp_path / "crlf.run"
    lf.write_bytes(text.encode())
    crlf.write_bytes(text.replace("\n", "\r\n").encode())
    a, blocks_a = io.read_runs(lf, rank=False)
    b, blocks_b = io.read_runs(crlf, rank=False)
    assert a.equals(b) and b["run"].to_list() == ["t"] * 3
    assert blocks_a is not None and blocks_b is not None
    assert blocks_a.starts.tolist() == blocks_b.starts.tolist() == [0, 2]


def test_a_duplicate_goes_straight_to_the_exact_reader(tmp_path, monkeypatch):
    """No second parse with tags: the batched reader hands over to the exact reader."""
    monkeypatch.setattr(trec_fast, "BATCH_ROWS", 2)

    def fail(*_a, **_k):
        raise AssertionError("the tag parse should not run for a one-tag file")

    monkeypatch.setattr(trec_fast, "_clean_fast_run", fail)
    path = tmp_path / "r.run"
    path.write_text("1 Q0 a 1 3 t\n1 Q0 b 2 2 t\n1 Q0 a 3 1 t\n")
    with pytest.raises(FileFormatError, match="duplicate"):
        sef.read_run(path)


@pytest.mark.parametrize("batch", [1, 2, 3, 4, 100])
@pytest.mark.parametrize("where", [0, 1, 2, 3])
def test_a_comment_line_with_six_fields_is_skipped_in_any_batch(tmp_path, monkeypatch, batch,
                                                                 where):
    # it passes every per-line check (the tag too): the blocks' query ids catch it
    monkeypatch.setattr(trec_fast, "BATCH_ROWS", batch)
    lines = ["1 Q0 a 1 3 A", "1 Q0 b 2 2 A", "2 Q0 a 1 3 A"]
    lines.insert(where, "#c Q0 z 1 9 A")
    path = tmp_path / "c.run"
    path.write_text("\n".join(lines) + "\n")
    df = sef.read_run(path)
    assert df.select("query_id", "doc_id").rows() == [("1", "a"), ("1", "b"), ("2", "a")]


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=40) | st.text(alphabet=" ab1\n\t\r\x0b\x0cé\u00a0").map(
    str.encode), chunk=st.integers(1, 9))
def test_only_spaces_in_chunks_matches_the_whole_file_test(tmp_path, monkeypatch, data, chunk):
    """The byte scan reads small chunks into one buffer; the answer is the whole file's
    (None: two spaces together, also across a chunk's edge)."""
    monkeypatch.setattr(trec_fast, "SCAN_CHUNK", chunk)
    path = tmp_path / "r.run"
    path.write_bytes(data)
    whole = data.isascii() and not any(b in data for b in (b"\t", b"\r", b"\x0b", b"\x0c"))
    assert trec_fast._only_spaces(path) is (None if b"  " in data else whole)


@settings(max_examples=150, deadline=None)
@given(lengths=st.lists(st.integers(0, 6), min_size=1, max_size=6), data=st.data())
def test_repeated_blocks_matches_a_loop(lengths, data):
    lens = np.array(lengths, dtype=np.int64)
    values = np.array(data.draw(st.lists(st.integers(0, 2**32 - 1) | st.integers(0, 3),
                                         min_size=int(lens.sum()), max_size=int(lens.sum()))),
                      dtype=np.uint32)
    ends = np.cumsum(lens)
    want = [i for i, (a, e) in enumerate(zip(ends - lens, ends, strict=True))
            if len(set(values[a:e].tolist())) < e - a]
    assert repeated_blocks(values, lens).tolist() == want


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=run_files(), batch=st.integers(1, 9))
def test_colliding_document_hashes_are_told_apart_by_the_ids(tmp_path, monkeypatch, data,
                                                              batch):
    """Every document hash equal (as 32-bit hashes of two documents may be): every block is
    checked by its ids; the frame, the blocks and the duplicates are those without
    collisions."""
    monkeypatch.setattr(trec_fast, "_DOC_HASH", pl.col("doc_id").str.len_bytes().cast(pl.UInt64))
    path = _file_or_refused(tmp_path, monkeypatch, *data, batch)
    if path is None:
        return
    df, blocks = io.read_runs(path, rank=False)
    exact = exact_trec_run(path, path.read_bytes())
    assert df.select("query_id", "doc_id", "score").equals(
        exact.select("query_id", "doc_id", "score"))
    expected = query_blocks(df)
    assert (blocks is None) == (expected is None)
    if blocks is not None and expected is not None:
        assert blocks.starts.tolist() == expected.starts.tolist()


@pytest.mark.parametrize("dup", [None, 0, 7, 13])
def test_repeats_in_blocks_looks_past_equal_low_bits(dup):
    """64-bit values are sorted by their low 32 bits first: values equal there only are not
    repeats; a real repeat inside a block is found, one across blocks is not looked for."""
    values = (np.arange(16, dtype=np.uint64) << np.uint64(32)) | np.uint64(5)
    lengths = np.array([4] * 4)
    if dup is not None:
        values[dup ^ 1] = values[dup]
    assert repeats_in_blocks(values, lengths) is (dup is not None)
    values[4] = values[0]  # across blocks: not a repeat the caller looks for
    assert repeats_in_blocks(values, lengths) is (dup is not None)


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ids=st.lists(st.sampled_from(["1", "2", "10"]), min_size=1, max_size=12),
       big=st.integers(1, 13))
def test_run_checks_blocks_found_in_two_halves_are_the_blocks(monkeypatch, ids, big):
    """Frames from PARALLEL_ROWS rows on find their run lengths in two halves at once (a run
    across the middle joined): the blocks are those of one pass, and so are the others."""
    from searcheval_frames.frames import blocks as blocks_mod

    df = pl.DataFrame({"run": "r", "query_id": ids, "doc_id": [f"d{i}" for i in range(len(ids))],
                       "score": 1.0})
    one = blocks_mod.run_checks(df)
    monkeypatch.setattr(blocks_mod, "PARALLEL_ROWS", big)
    two = blocks_mod.run_checks(df)
    assert one[0] == two[0] and one[2].equals(two[2])
    assert (one[1] is None) == (two[1] is None)
    if one[1] is not None and two[1] is not None:
        assert one[1].starts.tolist() == two[1].starts.tolist()
        assert one[1].keys.equals(two[1].keys)
    row, lengths = blocks_mod._with_run_lengths(df, "query_id", [pl.len()])
    want = df.select(pl.col("query_id").rle().struct.field("len")).to_series().to_list()
    assert lengths.tolist() == want and row.item() == len(ids)


@pytest.mark.parametrize("gap", ["  ", "   "])
def test_a_second_result_after_two_spaces_is_refused_not_dropped(tmp_path, gap):
    """Found by test_fuzz_readers: with two spaces after the tag, polars read the seventh
    field as null (empty), so the fast reader kept the first six fields of a line that
    holds two results; the exact reader refuses it, naming the line."""
    path = tmp_path / "r.run"
    path.write_text(f"1 Q0 d1 1 0 bm25\n2 Q0 d1 1 0 bm25{gap}1 Q0 d9 9 0.5 t\n")
    with pytest.raises(sef.errors.FileFormatError, match=r"r\.run:2:.*two result lines"):
        sef.read_run(path)
    ok = tmp_path / "ok.run"
    ok.write_text("1 Q0 d1 1 0 bm25  \n2 Q0 d1 1 0 bm25\n")  # trailing spaces: fine
    assert sef.read_run(ok).height == 2
