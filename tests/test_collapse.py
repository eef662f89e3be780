"""Chunk-level runs: ``sef.collapse`` against a slow reference written here, evaluated
documents against pytrec_eval, the level checks, and docs/rag.md's ragas identities."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import searcheval_frames as sef
from searcheval_frames.errors import IdMismatchError, InvalidOptionError, SearchEvalError


def reference_collapse(rows: list[tuple[str, str, float]], how: str) -> dict[str, list]:
    """Slow reference: per query, chunks in trec_eval order (score desc, id desc), the
    first chunk of each document wins; "first" scores documents n, n-1, ..."""
    out: dict[str, list] = {}
    for q in sorted({r[0] for r in rows}):
        chunks = sorted((r for r in rows if r[0] == q), key=lambda r: (r[2], r[1]),
                        reverse=True)
        seen: dict[str, float] = {}
        for _, chunk, score in chunks:
            doc = chunk.rsplit("#", 1)[0]
            if doc not in seen:
                seen[doc] = score
        docs = list(seen.items())
        if how == "first":
            docs = [(d, float(len(docs) - i)) for i, (d, _) in enumerate(docs)]
        out[q] = docs
    return out


@st.composite
def chunk_run(draw):
    rows, labels = [], []
    for qi in range(draw(st.integers(1, 4))):
        q = f"q{qi}"
        for _ in range(draw(st.integers(1, 12))):  # repeats: identical chunks
            chunk = f"d{draw(st.integers(0, 5))}#{draw(st.integers(0, 3))}"
            rows.append((q, chunk, float(draw(st.sampled_from([0.5, 1.0, 1.5, 2.0])))))
        for d in draw(st.lists(st.integers(0, 5), min_size=1, max_size=4, unique=True)):
            for c in draw(st.lists(st.integers(0, 3), min_size=1, max_size=3, unique=True)):
                labels.append((q, f"d{d}#{c}", draw(st.integers(0, 2))))
    return rows, labels


@settings(max_examples=80, deadline=None)
@given(chunk_run(), st.sampled_from(["max", "first"]))
def test_collapse_equals_the_reference(data, how):
    rows, _ = data
    run = pl.DataFrame(rows, schema=["query_id", "doc_id", "score"], orient="row")
    got = sef.collapse(run, how=how)
    want = reference_collapse(rows, how)
    for q, docs in want.items():
        mine = got.filter(pl.col("query_id") == q)
        assert sorted(mine.select("doc_id", "score").rows()) == sorted(docs)
        # ranked in trec_eval order, the documents come in the reference's order
        ranked = mine.sort(["score", "doc_id"], descending=True)["doc_id"].to_list()
        if how == "first":
            assert ranked == [d for d, _ in docs]


@settings(max_examples=40, deadline=None)
@given(chunk_run())
def test_collapsed_run_and_qrels_evaluate_like_pytrec_eval(data):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rows, labels = data
    run = pl.DataFrame(rows, schema=["query_id", "doc_id", "score"], orient="row")
    qrels = pl.DataFrame(labels, schema=["query_id", "doc_id", "relevance"], orient="row")
    doc_run, doc_qrels = sef.collapse(run, qrels=qrels)
    # reference: documents with their best chunk's score, labels the max over chunks
    ref_run: dict[str, dict[str, float]] = {}
    for q, docs in reference_collapse(rows, "max").items():
        ref_run[q] = dict(docs)
    ref_qrels: dict[str, dict[str, int]] = {}
    for q, chunk, rel in labels:
        d = chunk.rsplit("#", 1)[0]
        ref_qrels.setdefault(q, {})[d] = max(rel, ref_qrels.get(q, {}).get(d, -1))
    ev = pytrec_eval.RelevanceEvaluator(ref_qrels, {"P_5", "recall_10", "map", "ndcg_cut_10"})
    want = ev.evaluate(ref_run)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mine = sef.pivot(sef.evaluate(doc_run, doc_qrels, ["P@5", "R@10", "AP", "nDCG@10"],
                                      per_query=True, compat="trec_eval-9", missing="skip"))
    for r in mine.iter_rows(named=True):
        w = want[r["query_id"]]
        for ours, theirs in (("P@5", "P_5"), ("R@10", "recall_10"), ("AP", "map"),
                             ("nDCG@10", "ndcg_cut_10")):
            assert r[ours] == pytest.approx(w[theirs], abs=1e-12), (ours, r["query_id"])


def test_doc_of_forms_agree_and_kinds_round_trip():
    run = pd.DataFrame({"query_id": "q1", "doc_id": ["a#1", "b#4", "a#2", "a#1", "c#1"],
                        "score": [0.9, 0.8, 0.7, 0.6, 0.8]})
    by_sep = sef.collapse(run)
    assert isinstance(by_sep, pd.DataFrame)
    by_fn = sef.collapse(run, doc_of=lambda c: c.split("#")[0])
    mapping = {"a#1": "a", "a#2": "a", "b#4": "b", "c#1": "c"}
    by_dict = sef.collapse(run, doc_of=mapping)
    by_frame = sef.collapse(run, doc_of=pl.DataFrame({"chunk_id": list(mapping),
                                                      "doc_id": list(mapping.values())}))
    for other in (by_fn, by_dict, by_frame):
        pd.testing.assert_frame_equal(by_sep, other)
    assert by_sep["doc_id"].tolist() == ["a", "c", "b"]  # ties: doc id descending
    assert sef.collapse(run, to="chunk")["doc_id"].tolist() == ["a#1", "c#1", "b#4", "a#2"]
    # a separator inside document ids: the last one splits
    nested = pl.DataFrame({"query_id": "q", "doc_id": ["x#y#1", "x#y#2"], "score": [1.0, 2.0]})
    assert sef.collapse(nested)["doc_id"].to_list() == ["x#y"]


def test_identical_chunks_make_chunk_recall_exceed_one_until_collapsed():
    qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a#1", "b#1"], "relevance": [1, 1]})
    run = pl.DataFrame({"query_id": "q", "doc_id": ["a#1", "a#1", "c#1"],
                        "score": [3.0, 2.0, 1.0]})
    # counting retrieved matches (as some RAG tools do) gives 2 / 2 = 1 with only a found
    matches = run.join(qrels, on=["query_id", "doc_id"]).height / qrels.height
    assert matches == 1.0
    with pytest.raises(sef.DuplicateRowsError):
        sef.evaluate(run, qrels, "R@3")
    assert sef.evaluate(sef.collapse(run, to="chunk"), qrels, "R@3")["value"].item() == 0.5


def test_mixed_levels_are_an_error_that_says_so():
    run = pl.DataFrame({"query_id": "q", "doc_id": ["a#1", "b#1"], "score": [2.0, 1.0]})
    mixed = pl.DataFrame({"query_id": "q", "doc_id": ["a#1", "b"], "relevance": [1, 1]})
    with pytest.raises(IdMismatchError, match=r"mixes levels.*chunk ids.*document ids"):
        sef.collapse(run, qrels=mixed)
    with pytest.raises(IdMismatchError, match="mixes levels"):
        sef.collapse(pl.DataFrame({"query_id": "q", "doc_id": ["a#1", "b"],
                                   "score": [2.0, 1.0]}))
    doc_qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "c"], "relevance": [1, 1]})
    with pytest.raises(IdMismatchError, match="document level"):
        sef.collapse(run, to="chunk", qrels=doc_qrels)
    r, q = sef.collapse(run, qrels=doc_qrels)  # document labels are kept as they are
    assert q["doc_id"].to_list() == ["a", "c"] and r["doc_id"].to_list() == ["a", "b"]
    with pytest.raises(IdMismatchError, match="neither a chunk nor a document"):
        sef.collapse(run, doc_of={"a#1": "a"})
    with pytest.raises(SearchEvalError, match="two documents"):
        sef.collapse(run, doc_of=pl.DataFrame({"chunk_id": ["a#1", "a#1"],
                                               "doc_id": ["a", "b"]}))
    with pytest.raises(InvalidOptionError):
        sef.collapse(run, how="sum")
    with pytest.raises(SearchEvalError, match="the function failed"):
        sef.collapse(run, doc_of=lambda c: 1 / 0)


# docs/rag.md: ragas' context precision as a custom measure, and its identity with AP@K
@sef.measure("ContextPrecision", cutoff=True)
def context_precision(rows):
    top = rows.rank <= rows.k
    precision_at = rows.relevant.cum_sum() / rows.rank  # P@rank of each judged row
    hits = rows.relevant.filter(top).sum()
    return (precision_at.filter(rows.relevant & top).sum() / hits).fill_nan(0.0)


def test_context_precision_identities_from_docs_rag():
    run = pl.DataFrame({"query_id": "q", "doc_id": [f"c{i}" for i in range(1, 6)],
                        "score": [5.0, 4.0, 3.0, 2.0, 1.0]})
    qrels = pl.DataFrame({"query_id": "q", "doc_id": ["c1", "c3", "c9"], "relevance": 1})
    # by hand (docs/rag.md): relevant at ranks 1 and 3 -> (1/1 + 2/3) / 2
    got = sef.pivot(sef.evaluate(run, qrels, ["ContextPrecision@5", "AP@5", "R@5"]))
    assert got["ContextPrecision@5"].item() == pytest.approx((1 + 2 / 3) / 2)
    assert got["AP@5"].item() == pytest.approx((1 + 2 / 3) / 3)  # divides by |R| = 3
    assert got["R@5"].item() == pytest.approx(2 / 3)  # ragas' id-based context recall


def test_context_precision_is_ap_rescaled_on_the_bundled_set(data_dir):
    runs = [str(data_dir / "example" / "runs" / f"{n}.run") for n in ("bm25", "lsi")]
    w = sef.pivot(sef.evaluate(runs, str(data_dir / "example" / "qrels.txt"),
                               ["ContextPrecision@10", "AP@10", "NumRel", "P@10"],
                               per_query=True))
    hits = (w["P@10"] * 10).round()
    scaled = np.where(hits > 0, w["AP@10"] * w["NumRel"] / hits.to_numpy(), 0.0)
    np.testing.assert_allclose(w["ContextPrecision@10"], scaled, atol=1e-12)
    assert w.height == 76
