"""One reader of queries/docs tables: the report/analysis path and the label-sheet path
accept the same inputs and read the same texts (issue 19).

The oracle is the case table itself: each case says which of its columns is the id and
which the text, and the expected rows are built from those columns in plain Python.
"""

from __future__ import annotations

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searcheval_frames.analysis import _inputs as analysis_inputs
from searcheval_frames.errors import MissingColumnError
from searcheval_frames.evalset import _labels
from searcheval_frames.io import texts

IDS = ["d1", "d2", "d3"]
TEXTS = ["BM25 is a ranking function", "x" * 200, "dense retrieval"]

# (id column, title column or None, text column or None)
DOC_CASES = [
    ("doc_id", "title", None), ("document_id", "doc_title", None), ("docno", None, "text"),
    ("id", None, "body"), ("pid", None, "passage"), ("_id", "title", "contents"),
    ("doc_id", None, "document"), ("did", "headline", None), ("docid", "name", None),
    ("DOCNO", None, "Text"), ("passage_id", None, "doc_text"), ("corpus_id", None, "abstract"),
]
# (id column, text column)
QUERY_CASES = [("query_id", "query"), ("qid", "text"), ("id", "query"), ("topic", "question"),
               ("query", "text"), ("_id", "query_text"), ("topic_id", "title"), ("QID", "Query")]


def _frame(cols: dict[str, list[str]], kind: str):
    df = pl.DataFrame(cols)
    return {"polars": df, "pandas": df.to_pandas(), "arrow": df.to_arrow()}[kind]


def _display(text: str) -> str:  # the analysis path's 90-character display title
    return text if len(text) <= 90 else text[:89] + "…"


@pytest.mark.parametrize("kind", ["polars", "pandas", "arrow"])
@pytest.mark.parametrize("case", DOC_CASES, ids=lambda c: "/".join(x for x in c if x))
def test_both_paths_read_the_same_docs(case, kind):
    did, title, text = case
    cols = {did: IDS}
    if title:
        cols[title] = [t.upper() for t in TEXTS]
    if text:
        cols[text] = TEXTS
    df = _frame(cols, kind)
    shown = analysis_inputs.docs_table(df)
    sheet = _labels.docs_texts(df, None, None, 50)
    want_title = [t.upper() for t in TEXTS] if title else None
    assert shown.rows() == list(zip(IDS, map(_display, want_title or TEXTS), strict=True))
    assert sheet["doc_id"].to_list() == IDS
    if title:
        assert sheet["title"].to_list() == want_title
    if text:
        assert sheet["text"].to_list() == [t if len(t) <= 50 else t[:50] + "…" for t in TEXTS]


@pytest.mark.parametrize("case", QUERY_CASES, ids=lambda c: "/".join(c))
def test_both_paths_read_the_same_queries(case):
    qid, text = case
    df = pl.DataFrame({qid: ["1", "2"], text: ["bm25", "dense"]})
    want = [("1", "bm25"), ("2", "dense")]
    assert analysis_inputs.queries_table(df).rows() == want
    assert texts.queries_table(df).rows() == want
    assert analysis_inputs.queries_table(dict(want)).rows() == want
    assert texts.queries_table(dict(want)).rows() == want


@pytest.mark.parametrize("qid", texts.QUERY_ID_COLUMNS[:-1])
def test_every_query_id_name_of_query_files_is_read_from_frames_too(qid, tmp_path):
    # the names read_queries knows for files, both paths know for frames
    df = pl.DataFrame({qid: ["1"], "query_string": ["bm25"]})
    assert analysis_inputs.queries_table(df).rows() == [("1", "bm25")]
    assert texts.queries_table(df).rows() == [("1", "bm25")]
    path = tmp_path / "q.csv"
    df.write_csv(path)
    assert texts.queries_table(path).rows() == [("1", "bm25")]


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".tsv", ".parquet"])
def test_doc_files_are_read_by_both(tmp_path, suffix):
    df = pl.DataFrame({"document_id": IDS, "doc_title": TEXTS})
    path = tmp_path / f"docs{suffix}"
    {".jsonl": df.write_ndjson, ".csv": df.write_csv, ".parquet": df.write_parquet,
     ".tsv": lambda p: df.write_csv(p, separator="\t", quote_style="never")}[suffix](path)
    assert analysis_inputs.docs_table(path)["doc_id"].to_list() == IDS
    assert _labels.docs_texts(str(path), None, None, None)["title"].to_list() == TEXTS


def test_query_files_are_read_by_both(tmp_path):
    path = tmp_path / "topics.tsv"
    path.write_text("1\tbm25\n2\tdense\n", encoding="utf-8")
    want = [("1", "bm25"), ("2", "dense")]
    assert analysis_inputs.queries_table(path).rows() == want
    assert texts.queries_table(path).rows() == want


@pytest.mark.parametrize("cols", [{"doc": ["d1"], "score": ["1"]}, {"body": ["t"]},
                                  {"doc_id": ["d1"], "score": ["1"]}])
def test_both_paths_refuse_the_same_docs(cols):
    df = pl.DataFrame(cols)
    with pytest.raises(MissingColumnError, match="Recognised names"):
        analysis_inputs.docs_table(df)
    with pytest.raises(MissingColumnError, match="Recognised names"):
        _labels.docs_texts(df, None, None, None)


def test_both_paths_refuse_the_same_queries():
    df = pl.DataFrame({"score": ["1"], "rank": ["1"]})
    for read in (analysis_inputs.queries_table, texts.queries_table):
        with pytest.raises(MissingColumnError, match="queries: no query id column"):
            read(df)


def test_named_columns_win_over_recognised_names():
    df = pl.DataFrame({"doc_id": ["d1"], "text": ["a"], "snippet": ["b"]})
    assert texts.docs_table(df, text_column="snippet")["text"].to_list() == ["b"]
    with pytest.raises(MissingColumnError, match="text_column='nope'"):
        texts.docs_table(df, text_column="nope")


@settings(max_examples=80, deadline=None)
@given(did=st.sampled_from(texts.DOC_ID_COLUMNS[:-2]),
       body=st.sampled_from(texts.DOC_TEXT_COLUMNS + texts.DOC_TITLE_COLUMNS),
       upper=st.booleans(), kind=st.sampled_from(["polars", "pandas", "arrow"]),
       values=st.lists(st.text(min_size=1, max_size=120), min_size=1, max_size=5))
def test_any_recognised_pair_is_read_alike(did, body, upper, kind, values):
    ids = [f"d{i}" for i in range(len(values))]
    cols = {(did.upper() if upper else did): ids, (body.upper() if upper else body): values}
    df = _frame(cols, kind)
    shown = analysis_inputs.docs_table(df)
    sheet = _labels.docs_texts(df, None, None, None)
    assert shown.rows() == list(zip(ids, map(_display, values), strict=True))
    body_col = "title" if body in texts.DOC_TITLE_COLUMNS else "text"
    assert sheet.rows() == list(zip(ids, values, strict=True)) and sheet.columns[1] == body_col


def test_first_row_of_a_repeated_id_wins():
    df = pd.DataFrame({"doc_id": ["d1", "d1"], "text": ["first", "second"]})
    assert analysis_inputs.docs_table(df).rows() == [("d1", "first")]
    assert _labels.docs_texts(df, None, None, None).rows() == [("d1", "first")]
    assert texts.docs_table(pa.table({"doc_id": ["d1"], "text": ["t"]})).rows() == [("d1", "t")]
