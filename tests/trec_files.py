"""Small, obviously-correct readers for the test oracles (independent of sef.io)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
from hypothesis import strategies as st


def read_trec_run(path: Path | str) -> pl.DataFrame:
    rows = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip() or line.startswith("#"):
                continue
            f = line.split()
            rows.append((f[5], f[0], f[2], float(f[4])))
    return pl.DataFrame(rows, schema=["run", "query_id", "doc_id", "score"], orient="row")


def read_trec_qrels(path: Path | str) -> pl.DataFrame:
    rows = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip() or line.startswith("#"):
                continue
            f = line.split()
            rows.append((f[0], f[2], int(f[3])))
    return pl.DataFrame(rows, schema=["query_id", "doc_id", "relevance"], orient="row")


def read_expected(path: Path | str) -> list[tuple[str, str, str]]:
    """trec_eval output lines as (measure, query, value text)."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 3:
                out.append((parts[0].strip(), parts[1], parts[2]))
    return out


# ----------------------------------------------------------------------------- random runs
DOCS = ["a", "b", "B", "aa", "1", "10", "9", "d#1", "z", "é", "x-1", "x_1", "07", "7"]
QUERIES = ["q1", "q2", "q3", "301", "q10"]


@st.composite
def collections(draw, max_grade=3):
    """Random runs A and B and qrels over tricky ids: ties, float32 scores, unjudged
    documents, -1 labels, grades to ``max_grade``, queries missing on either side."""
    qrels_rows, run_rows = [], []
    for q in QUERIES:
        if draw(st.booleans()) or q == "q1":
            judged = draw(st.lists(st.sampled_from(DOCS), unique=True, min_size=1, max_size=10))
            for doc in judged:
                qrels_rows.append((q, doc, draw(st.integers(-1, max_grade))))
        if draw(st.booleans()) or q == "q1":
            for name in ("A", "B"):
                docs = draw(st.lists(st.sampled_from(DOCS), unique=True, min_size=1, max_size=12))
                for doc in docs:
                    score = draw(st.one_of(st.integers(0, 3).map(float),
                                           st.floats(-5, 5, allow_nan=False, width=32)))
                    run_rows.append((name, q, doc, score))
    qrels = pl.DataFrame(qrels_rows, schema=["query_id", "doc_id", "relevance"], orient="row")
    run = pl.DataFrame(run_rows, schema=["run", "query_id", "doc_id", "score"], orient="row")
    return run, qrels
