"""sef.audit_queries: near duplicates against a slow pairwise reference (hypothesis), copied
runs against a plain dynamic programme, the distribution tests against scipy, the codes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import searcheval_frames as sef
from searcheval_frames.evalset.queryset.similar import copied_runs, near_duplicate_pairs

WORDS = ["a", "b", "c", "d", "e", "f", "g", "h"]


def _jaccard_reference(queries: dict[str, list[str]], t: float) -> set[tuple[str, str]]:
    out = set()
    ids = sorted(queries)
    for i, a in enumerate(ids):
        for b in ids[i + 1:]:
            x, y = set(queries[a]), set(queries[b])
            if x and y and len(x & y) / len(x | y) >= t - 1e-9:
                out.add((a, b))
    return out


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6), min_size=2,
                max_size=25),
       st.sampled_from([0.3, 0.5, 0.6, 2 / 3, 0.75, 0.8, 1.0]))
def test_near_duplicates_match_the_pairwise_reference(token_lists, t):
    queries = {f"q{i:02d}": toks for i, toks in enumerate(token_lists)}
    df = pl.DataFrame({"query_id": list(queries), "tokens": list(queries.values())})
    got = near_duplicate_pairs(df, t)
    assert set(got.select("a", "b").iter_rows()) == _jaccard_reference(queries, t)
    for a, b, j in got.iter_rows():
        x, y = set(queries[a]), set(queries[b])
        assert j == pytest.approx(len(x & y) / len(x | y))


def _longest_run_reference(q: list[str], d: list[str]) -> int:
    best = 0
    prev = [0] * (len(d) + 1)
    for i in range(1, len(q) + 1):
        cur = [0] * (len(d) + 1)
        for j in range(1, len(d) + 1):
            if q[i - 1] == d[j - 1]:
                cur[j] = prev[j - 1] + 1
                best = max(best, cur[j])
        prev = cur
    return best


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.lists(st.sampled_from(WORDS[:4]), min_size=1, max_size=6),
                          st.integers(0, 2)), min_size=1, max_size=8),
       st.lists(st.lists(st.sampled_from(WORDS[:4]), min_size=0, max_size=12), min_size=3,
                max_size=3))
def test_copied_runs_match_a_dynamic_programme(queries, docs):
    q = pl.DataFrame({"query_id": [f"q{i}" for i in range(len(queries))],
                      "doc_id": [f"d{d}" for _, d in queries],
                      "tokens": [t for t, _ in queries]})
    d = pl.DataFrame({"doc_id": ["d0", "d1", "d2"], "tokens": docs},
                     schema={"doc_id": pl.String, "tokens": pl.List(pl.String)})
    got = {r["query_id"]: r for r in copied_runs(q, d).iter_rows(named=True)}
    for i, (toks, di) in enumerate(queries):
        r = got[f"q{i}"]
        assert r["longest_run"] == _longest_run_reference(toks, docs[di])
        assert r["overlap"] == pytest.approx(len(set(toks) & set(docs[di])) / len(set(toks)))


def test_codes_on_a_crafted_set():
    queries = pd.DataFrame({
        "query_id": ["q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8", "q8"],
        "query": ["what is bm25", "What  is BM25", "is bm25 what", "x", "   ",
                  "word " * 40, "the cat sat on the mat today", "pinecone", "other text"],
        "doc_id": [None, None, None, None, None, None, "d1", "d9", "d9"]})
    docs = {"d1": "Yesterday the cat sat on the mat today and slept."}
    audit = sef.audit_queries(queries, docs=docs)
    assert isinstance(audit.frame, pd.DataFrame)
    assert set(audit.codes()) == {
        "duplicate_query_id", "empty_query", "one_character_query", "long_query",
        "duplicate_query", "near_duplicate", "copies_document", "unknown_source_document"}
    rows = {r["code"]: r for r in audit.to_polars().iter_rows(named=True)}
    assert rows["duplicate_query"]["query_id"] == ["q1", "q2"]
    assert rows["near_duplicate"]["count"] == 2  # q3 ~ q1 and q3 ~ q2 (q1 = q2 exactly)
    assert rows["copies_document"]["query_id"] == ["q7"]
    assert rows["unknown_source_document"]["doc_id"] == ["d9"]
    assert not audit.ok and "sef.audit_queries:" in audit.summary()
    assert "<table>" in audit._repr_html_()
    assert audit.details["copies"].filter(pl.col("query_id") == "q7")["longest_run"][0] == 7


def test_distribution_tests_are_scipys():
    rng = np.random.default_rng(0)
    vocab = [f"w{i}" for i in range(30)]
    log_q = [" ".join(rng.choice(vocab[:20], size=rng.integers(1, 4))) for _ in range(400)]
    log = pl.DataFrame({"query": log_q})
    test_q = {f"t{i}": " ".join(rng.choice(vocab, size=rng.integers(4, 9))) for i in range(40)}
    audit = sef.audit_queries(test_q, log=log)
    assert {"length_shift", "vocabulary_shift", "not_in_log"} <= set(audit.codes())
    dist = audit.details["distribution"]
    # the oracle: scipy on the same lengths (each distinct log query once)
    distinct = sorted({" ".join(q.split()) for q in log_q})
    ks = stats.ks_2samp([len(q.split()) for q in test_q.values()],
                        [len(q.split()) for q in distinct])
    row = dist.filter(pl.col("test") == "length (KS)").row(0, named=True)
    assert row["statistic"] == pytest.approx(ks.statistic)
    assert row["p_value"] == pytest.approx(ks.pvalue)
    # words: the same 2 x K table built by hand
    counts_log: dict[str, int] = {}
    for q in distinct:
        for w in q.split():
            counts_log[w] = counts_log.get(w, 0) + 1
    counts_q: dict[str, int] = {}
    for q in test_q.values():
        for w in q.split():
            counts_q[w] = counts_q.get(w, 0) + 1
    n_q, n_l = sum(counts_q.values()), sum(counts_log.values())
    kept = [w for w in counts_log if counts_log[w] / n_l * n_q >= 5]
    table = np.array([[counts_q.get(w, 0) for w in kept] + [n_q - sum(counts_q.get(w, 0) for w in kept)],
                      [counts_log[w] for w in kept] + [n_l - sum(counts_log[w] for w in kept)]])
    chi = stats.chi2_contingency(table, correction=False)
    row = dist.filter(pl.col("test") == "words (chi-square)").row(0, named=True)
    assert row["statistic"] == pytest.approx(chi.statistic)
    assert row["p_value"] == pytest.approx(chi.pvalue)


def test_a_sample_of_the_log_passes_and_strata_are_counted():
    log = pl.DataFrame({"query": [f"topic {i} words here" for i in range(60)
                                  for _ in range(60 - i)]})
    sample = sef.sample_queries(log, 12, "stratified", seed=1)
    audit = sef.audit_queries(sample, log=log, min_per_stratum=4)
    assert audit.codes() == []
    strata = dict(audit.details["strata"].iter_rows())
    assert strata == {"head": 4, "torso": 4, "tail": 4}
    small = sef.audit_queries(sample, min_per_stratum=5)
    assert small.codes() == ["small_stratum"]
    assert small.to_polars()["count"][0] == 3


def test_bad_options():
    with pytest.raises(sef.errors.InvalidOptionError, match="near_duplicate"):
        sef.audit_queries({"q": "a"}, near_duplicate=0)
    with pytest.raises(sef.errors.MissingColumnError, match="query id"):
        sef.audit_queries(pl.DataFrame({"x": ["a"]}))
