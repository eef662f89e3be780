"""sef.systems.sqlite_fts, bm25 and rerank against independent reference implementations.

Oracles: a slow pure-Python BM25 (FTS5's formula written from its documentation, over
tokens split by a regex: the ``unicode61`` tokenizer without stemming on ASCII text);
brute-force minimal windows for the proximity feature; the reranker's formula by hand.
"""

from __future__ import annotations

import csv
import math
import re
from collections import Counter

import polars as pl
import pytest
from conftest import DATA
from hypothesis import given, settings
from hypothesis import strategies as st

import searcheval_frames as sef
from searcheval_frames.errors import InvalidOptionError, MissingColumnError
from searcheval_frames.systems import bm25, rerank, sqlite_fts
from searcheval_frames.systems.rerank import FEATURES, proximity

DOCS = DATA / "example" / "docs.jsonl"
QUERIES = DATA / "example" / "queries.tsv"


def _queries() -> list[tuple[str, str]]:
    with QUERIES.open(encoding="utf-8") as f:
        return [(r["query_id"], r["query"]) for r in csv.DictReader(f, delimiter="\t")]


def _tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def slow_bm25(docs: pl.DataFrame, fields: list[str], query: str, *, k1: float, b: float,
              weights: list[float]) -> dict[str, float]:
    """BM25 as FTS5 documents it, one document and term at a time (no numpy, no SQLite)."""
    toks = {r["doc_id"]: [_tokens(r[f]) for f in fields] for r in docs.iter_rows(named=True)}
    n = len(toks)
    lengths = {d: sum(len(t) for t in cols) for d, cols in toks.items()}
    avgdl = sum(lengths.values()) / n
    out: dict[str, float] = {}
    for term in _tokens(query):  # a repeated word counts again
        holding = [d for d, cols in toks.items() if any(term in c for c in cols)]
        idf = math.log((n - len(holding) + 0.5) / (len(holding) + 0.5))
        idf = idf if idf > 0 else 1e-6
        for d in holding:
            f = sum(w * Counter(c)[term] for w, c in zip(weights, toks[d], strict=True))
            s = idf * f * (k1 + 1) / (f + k1 * (1 - b + b * lengths[d] / avgdl))
            out[d] = out.get(d, 0.0) + s
    return out


@pytest.fixture(scope="module")
def docs() -> pl.DataFrame:
    return pl.read_ndjson(DOCS)


@pytest.mark.parametrize("weights", [None, {"title": 3.0, "text": 0.5}])
def test_sqlite_fts_scores_are_fts5_bm25_by_the_slow_reference(docs, weights) -> None:
    fts = sqlite_fts(docs, tokenize="unicode61", weights=weights)
    w = [1.0, 1.0] if weights is None else [weights["title"], weights["text"]]
    for qid, query in _queries():
        got = fts.search(qid, query, 1000).hits
        want = slow_bm25(docs, ["title", "text"], query, k1=1.2, b=0.75, weights=w)
        assert {d for d, _ in got} == set(want), qid
        for d, s in got:
            assert s == pytest.approx(want[d], rel=1e-9, abs=1e-12), (qid, d)
        # best first, ties by doc id descending (trec_eval's order)
        assert got == sorted(got, key=lambda x: (x[1], x[0]), reverse=True)


@pytest.mark.parametrize(("k1", "b"), [(1.2, 0.75), (0.0, 0.5), (2.5, 0.0), (0.9, 1.0)])
def test_bm25_knobs_match_the_slow_reference(docs, k1, b) -> None:
    sys_ = bm25(docs, tokenize="unicode61", k1=k1, b=b, weights=[2.0, 1.0])
    for qid, query in _queries()[:15]:
        got = dict(sys_.search(qid, query, 1000).hits)
        want = slow_bm25(docs, ["title", "text"], query, k1=k1, b=b, weights=[2.0, 1.0])
        assert got.keys() == want.keys()
        for d in got:
            assert got[d] == pytest.approx(want[d], rel=1e-9, abs=1e-12)


def test_bm25_equals_sqlite_fts_with_porter_stems_and_with_params_shares_the_index() -> None:
    fts = sqlite_fts(DOCS)
    base = bm25(DOCS, k1=0.5, b=0.3)
    same = base.with_params(k1=1.2, b=0.75)
    assert same.stats is base.stats and same.fingerprint() != base.fingerprint()
    assert same.fingerprint() == bm25(DOCS).fingerprint()
    for qid, query in _queries():
        a, c = fts.search(qid, query, 50).hits, same.search(qid, query, 50).hits
        assert [d for d, _ in a] == [d for d, _ in c]
        assert [s for _, s in a] == pytest.approx([s for _, s in c], rel=1e-9)


@pytest.mark.parametrize("query", ['"', 'NEAR(a b)', "AND OR NOT", "title:pinecone*", "^a -b +c",
                                   "(", "'; DROP TABLE docs; --", "\u00e9t\u00e9 caf\u00e9"])
def test_fts5_syntax_in_a_query_is_just_words(query) -> None:
    fts = sqlite_fts(DOCS)
    hits = fts.search("q", query, 10).hits
    assert isinstance(hits, list)
    assert fts.search("q", "pinecone", 3).hits  # the table is still there


@pytest.mark.parametrize("query", ["", "   ", "?!", "---"])
def test_a_query_without_words_has_no_hits(query) -> None:
    assert sqlite_fts(DOCS).search("q", query, 10).hits == []
    assert bm25(DOCS).search("q", query, 10).hits == []


def test_retrieve_runs_sqlite_fts_and_the_run_is_its_answers(tmp_path) -> None:
    fts = sqlite_fts(DOCS)
    res = sef.retrieve(fts, QUERIES, k=10, name="fts", cache=tmp_path / "c.db")
    run = res.frame
    for qid, query in _queries()[:5]:
        want = fts.search(qid, query, 10).hits
        got = run.filter(pl.col("query_id") == qid).sort("rank")
        assert got["doc_id"].to_list() == [d for d, _ in want]
        assert got["score"].to_list() == pytest.approx([s for _, s in want])
    assert res.provenance["config"]["docs"] == fts.config()["docs"]


def test_the_fingerprint_follows_documents_and_options(docs) -> None:
    a = sqlite_fts(docs)
    changed = docs.with_columns(pl.when(pl.col("doc_id") == "d001").then(pl.lit("x"))
                                .otherwise(pl.col("text")).alias("text"))
    assert sqlite_fts(changed).fingerprint() != a.fingerprint()
    assert sqlite_fts(docs, weights={"title": 2}).fingerprint() != a.fingerprint()
    assert sqlite_fts(docs, tokenize="unicode61").fingerprint() != a.fingerprint()
    assert sqlite_fts(docs).fingerprint() == a.fingerprint()


def test_an_index_file_is_reused_while_documents_are_the_same(tmp_path, docs) -> None:
    path = tmp_path / "idx.db"
    first = sqlite_fts(docs, path=path)
    hits = first.search("q", "pinecone index", 5).hits
    first.close()
    stamp = path.stat().st_mtime_ns
    again = sqlite_fts(docs, path=path)
    assert again.search("q", "pinecone index", 5).hits == hits
    assert path.stat().st_mtime_ns == stamp  # nothing written
    again.close()
    fewer = sqlite_fts(docs.head(10), path=path)
    assert {d for d, _ in fewer.search("q", "pinecone", 100).hits} <= set(docs.head(10)["doc_id"])


def test_bad_documents_and_options_are_named() -> None:
    frame = pl.DataFrame({"doc_id": ["a", "a"], "title": ["x", "y"], "text": ["", ""]})
    with pytest.raises(InvalidOptionError, match="repeated"):
        sqlite_fts(frame)
    with pytest.raises(MissingColumnError, match=r"body.*fields="):
        sqlite_fts(frame, fields=["body"])
    with pytest.raises(InvalidOptionError, match=r"weights"):
        sqlite_fts(DOCS, weights={"titel": 2})
    with pytest.raises(InvalidOptionError, match=r"tokenize"):
        sqlite_fts(DOCS, tokenize="porter'); DROP")
    with pytest.raises(InvalidOptionError, match=r"bm25\(b=2"):
        bm25(DOCS, b=2)


def _slow_proximity(tokens: list[str], terms: list[str], n: int) -> float:
    need = set(terms)
    if not need:
        return 0.0
    if len(need) == 1:
        return 1 / n
    best = min((j - i + 1 for i in range(len(tokens)) for j in range(i, len(tokens))
                if need <= set(tokens[i:j + 1])), default=None)
    return 0.0 if best is None else (len(need) / best) * (len(need) / n)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from("abcde"), max_size=12), st.sets(st.sampled_from("abc")))
def test_proximity_is_the_brute_force_minimal_window(tokens, terms) -> None:
    terms = sorted(terms)
    assert proximity(tokens, terms, 4) == pytest.approx(_slow_proximity(tokens, terms, 4))


def test_rerank_scores_are_the_weighted_features_by_hand() -> None:
    docs = pl.DataFrame({"doc_id": ["d1", "d2", "d3", "d4", "d5"],
                         "title": ["HNSW index", "Notes", "Soup", "Bread", "Tea"],
                         "text": ["How the graph is built", "hnsw hnsw hnsw", "a soup", "a loaf",
                                  "green index"]})
    fts = sqlite_fts(docs)
    first = dict(fts.search("q", "hnsw index", 3).hits)
    top = max(first.values())
    n = 5  # Lucene idf over the 5 documents: hnsw in 2, index in 2
    idf = math.log(1 + (n - 2 + 0.5) / (2 + 0.5))
    # d1: both terms (title "hnsw index"), adjacent -> proximity 1; d2: hnsw only
    # d5: index only (text)
    want = {
        "d1": FEATURES["first_stage"] * first["d1"] / top + FEATURES["coverage"] * 1
        + FEATURES["title"] * 1 + FEATURES["proximity"] * 1.0,
        "d2": FEATURES["first_stage"] * first["d2"] / top + FEATURES["coverage"] * idf / (2 * idf)
        + FEATURES["title"] * 0 + FEATURES["proximity"] * 0.5,
        "d5": FEATURES["first_stage"] * first["d5"] / top + FEATURES["coverage"] * 0.5
        + FEATURES["title"] * 0 + FEATURES["proximity"] * 0.5,
    }
    got = rerank(fts, docs, depth=3).search("q", "hnsw index", 10)
    assert dict(got.hits) == pytest.approx(want)
    assert [d for d, _ in got.hits] == sorted(want, key=want.get, reverse=True)


def test_rerank_keeps_the_first_stage_depth_and_its_fingerprint_covers_it() -> None:
    fts = sqlite_fts(DOCS)
    r = rerank(fts, DOCS, depth=5)
    assert r.name == "sqlite_fts-rerank"
    hits = r.search("q", "pinecone index setup", 20).hits
    assert {d for d, _ in hits} == {d for d, _ in fts.search("q", "pinecone index setup", 5).hits}
    assert r.fingerprint() != rerank(fts, DOCS, depth=6).fingerprint()
    assert r.fingerprint() != rerank(sqlite_fts(DOCS, weights=[2, 1]), DOCS, depth=5).fingerprint()
    with pytest.raises(InvalidOptionError, match="weights"):
        rerank(fts, DOCS, weights={"bm25": 1.0})


def test_systems_stay_usable_after_close_as_retrieve_closes_them(tmp_path) -> None:
    fts = sqlite_fts(DOCS)
    first = sef.retrieve(fts, QUERIES, k=10, cache=False)  # closes fts at the end
    again = sef.retrieve(fts, QUERIES, k=10, cache=False)
    assert first.run.drop("run").equals(again.run.drop("run"))
    reranked = sef.retrieve(rerank(fts, DOCS), QUERIES, k=10, cache=False)
    assert reranked.run.height == first.run.height
    on_disk = sqlite_fts(DOCS, path=tmp_path / "idx.db")
    on_disk.close()
    assert on_disk.index.db is None  # a file's connection is released
    assert on_disk.search("q", "pinecone", 3).hits == fts.search("q", "pinecone", 3).hits
    on_disk.close()


def test_searcheval_retrieve_runs_sqlite_fts_from_a_toml_file(tmp_path) -> None:
    import subprocess
    import sys

    from conftest import REPO

    (tmp_path / "fts.toml").write_text(f'adapter = "sqlite_fts"\ndocs = "{DOCS.as_posix()}"\n'
                                       'weights = {title = 2.0}\nname = "fts-title2"\n',
                                       encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "searcheval_frames", "retrieve", "fts.toml", str(QUERIES),
         "-k", "10", "-o", "run.tsv", "--no-cache"], capture_output=True, text=True,
        cwd=tmp_path, timeout=120, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    got = pl.read_csv(tmp_path / "run.tsv", separator="\t", schema_overrides={"score": pl.Float64})
    want = sef.retrieve(sqlite_fts(DOCS, weights={"title": 2.0}), QUERIES, 10, cache=False).run
    j = got.join(want, on=["query_id", "rank"], suffix="_py")
    assert j.height == want.height and (j["doc_id"] == j["doc_id_py"]).all()
    assert j["score"].to_list() == pytest.approx(j["score_py"].to_list(), rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["ann", "hnsw", "ivf", "pq", "graph", "index"]),
                         min_size=0, max_size=8), min_size=1, max_size=8),
       st.lists(st.sampled_from(["ann", "hnsw", "ivf", "pq", "zzz"]), min_size=1, max_size=4),
       st.floats(0.0, 3.0), st.floats(0.0, 1.0), st.floats(0.1, 4.0))
def test_bm25_equals_fts5_and_the_slow_reference_on_random_corpora(bodies, words, k1, b,
                                                                  title_w) -> None:
    docs = pl.DataFrame({"doc_id": [f"d{i}" for i in range(len(bodies))],
                         "title": [" ".join(x[:2]) for x in bodies],
                         "text": [" ".join(x[2:]) for x in bodies]})
    query = " ".join(words)
    fts = sqlite_fts(docs, tokenize="unicode61", weights=[title_w, 1.0])
    same = bm25(docs, tokenize="unicode61", weights=[title_w, 1.0])
    a, c = fts.search("q", query, 100).hits, same.search("q", query, 100).hits
    assert dict(a).keys() == dict(c).keys()
    for d, s in a:
        assert dict(c)[d] == pytest.approx(s, rel=1e-9, abs=1e-12)
    got = dict(same.with_params(k1=k1, b=b).search("q", query, 100).hits)
    want = slow_bm25(docs, ["title", "text"], query, k1=k1, b=b, weights=[title_w, 1.0])
    assert got.keys() == want.keys()
    for d in got:
        assert got[d] == pytest.approx(want[d], rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("make", [lambda: sqlite_fts(DOCS), lambda: bm25(DOCS),
                                  lambda: rerank(sqlite_fts(DOCS), DOCS)])
def test_eight_threads_give_the_sequential_run(make) -> None:
    system = make()
    one = sef.retrieve(system, QUERIES, k=20, cache=False).run
    many = sef.retrieve(system, QUERIES, k=20, cache=False, max_concurrency=8).run
    assert one.sort("query_id", "rank").equals(many.sort("query_id", "rank"))
