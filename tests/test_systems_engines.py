"""sef.systems.elasticsearch / opensearch: the official clients against the test search
service's Elasticsearch-compatible surface (tests/search_service.py), faults included.

Oracle: the service ranks with SQLite FTS5's bm25() over the bundled documents (the
unicode61 tokenizer), which is what ``sqlite_fts(..., tokenize="unicode61")`` computes
in-process: the engine's run must equal it.
"""

from __future__ import annotations

import json
import math

import polars as pl
import pytest
from conftest import DATA

import searcheval_frames as sef
from searcheval_frames.errors import InvalidOptionError, SearchEvalWarning
from searcheval_frames.systems import TransientError, elasticsearch, opensearch, sqlite_fts
from searcheval_frames.systems.engines import fill_template

DOCS = DATA / "example" / "docs.jsonl"
QUERIES = DATA / "example" / "queries.tsv"
ENGINES = [elasticsearch, opensearch]


@pytest.fixture(scope="module")
def oracle() -> pl.DataFrame:
    fts = sqlite_fts(DOCS, tokenize="unicode61")
    return sef.retrieve(fts, QUERIES, k=1000, cache=False).frame


def _same_run(got: pl.DataFrame, want: pl.DataFrame, k: int = 10) -> None:
    """Each retrieved document has FTS5's score, and the top k scores are FTS5's (the
    service breaks ties by doc id ascending, so tied documents at the cut may differ).

    q29 ("trec_eval run ...") is left out: the service quotes ``\\w+`` words, so
    "trec_eval" is one phrase there ("trec" next to "eval") and two words in sqlite_fts.
    """
    got, want = (f.filter(pl.col("query_id") != "q29") for f in (got, want))
    j = got.join(want, on=["query_id", "doc_id"], how="left", suffix="_want")
    assert j["score_want"].null_count() == 0
    assert j["score"].to_list() == pytest.approx(j["score_want"].to_list(), rel=1e-9)
    top = want.filter(pl.col("rank") <= k).group_by("query_id").agg(pl.col("score").sort())
    mine = got.group_by("query_id").agg(pl.col("score").sort())
    both = top.join(mine, on="query_id", suffix="_got")
    assert both.height == top.height
    for a, b in both.select("score", "score_got").iter_rows():
        assert b == pytest.approx(a, rel=1e-9)


@pytest.mark.parametrize("make", ENGINES)
def test_one_search_per_query_equals_fts5(make, search_service, oracle, tmp_path) -> None:
    eng = make(search_service.url, "docs")
    eng.batch_size = None  # one _search per query
    res = sef.retrieve(eng, QUERIES, k=10, max_concurrency=4, cache=tmp_path / "c.db")
    _same_run(res.frame, oracle)
    lat = res.latency
    assert lat["server_seconds"].null_count() == 0  # took, in seconds
    assert (lat["server_seconds"] <= lat["seconds"] + 1e-3).all()
    paths = {r["path"] for r in search_service.requests}
    assert paths == {"/docs/_search"}
    eng.close()


@pytest.mark.parametrize("make", ENGINES)
def test_batches_go_through_msearch(make, search_service, oracle, tmp_path) -> None:
    eng = make(search_service.url, "docs", batch_size=10)
    res = sef.retrieve(eng, QUERIES, k=10, cache=tmp_path / "c.db")
    _same_run(res.frame, oracle)
    searches = [r for r in search_service.requests if r["path"].endswith("_msearch")]
    assert len(searches) == math.ceil(38 / 10)
    assert sorted(q for r in searches for q in r["queries"]) == \
        sorted(pl.read_csv(QUERIES, separator="\t")["query"].to_list())
    eng.close()


@pytest.mark.parametrize("make", ENGINES)
def test_429_is_retried_by_the_runner_not_the_client(make, search_service, tmp_path) -> None:
    query = "how to use Pinecone"
    search_service.fault("status", query=query, code=429, retry_after=0, times=2,
                         body=json.dumps({"error": {"type": "es_rejected_execution_exception"},
                                          "status": 429}))
    eng = make(search_service.url, "docs")
    eng.batch_size = None
    res = sef.retrieve(eng, {"q01": query, "q02": "hnsw"}, k=5, cache=False, retries=3)
    row = res.latency.filter(pl.col("query_id") == "q01").row(0, named=True)
    assert row["status"] == "ok" and row["attempts"] == 3
    assert search_service.asked(query).count(query) == 3  # the client did not retry itself
    eng.close()


@pytest.mark.parametrize("make", ENGINES)
def test_a_429_item_of_msearch_is_asked_again_alone(make, search_service, tmp_path) -> None:
    query = "how to use Pinecone"
    search_service.fault("status", query=query, code=429, times=1)
    eng = make(search_service.url, "docs", batch_size=5)
    res = sef.retrieve(eng, {"q01": query, "q02": "hnsw", "q03": "ivf"}, k=5, cache=False)
    assert res.latency["status"].to_list() == ["ok"] * 3
    batches = [r["queries"] for r in search_service.requests]
    assert batches == [[query, "hnsw", "ivf"], [query]]
    eng.close()


@pytest.mark.parametrize("make", ENGINES)
def test_errors_and_bad_answers_are_recorded_per_query(make, search_service) -> None:
    search_service.fault("status", query="alpha", code=500)
    search_service.fault("nohits", query="beta")
    search_service.fault("duplicate", query="pinecone")
    eng = make(search_service.url, "docs")
    eng.batch_size = None
    with pytest.warns(SearchEvalWarning, match="failed on 3 of 4"):
        res = sef.retrieve(eng, {"q1": "alpha", "q2": "beta", "q3": "pinecone", "q4": "hnsw"},
                           k=5, cache=False, retries=1)
    status = dict(zip(res.latency["query_id"], res.latency["status"], strict=True))
    assert status["q4"] == "ok" and {status[q] for q in ("q1", "q2", "q3")} != {"ok"}
    errors = dict(zip(res.latency["query_id"], res.latency["error"], strict=True))
    assert "hits.hits" in errors["q2"]
    assert "appears 2 times" in errors["q3"] or "at most k" in errors["q3"]
    eng.close()


def test_a_passed_client_doc_id_from_source_and_a_template(search_service) -> None:
    from elasticsearch import Elasticsearch

    client = Elasticsearch(search_service.url)
    body = {"query": {"match": {"text": {"query": "{query}"}}}, "size": "{k}"}
    eng = elasticsearch(client, "docs", body, doc_id="doc_id", name="es-match")
    hits = eng.search("q1", "pinecone index", 3).hits
    assert [d for d, _ in hits] == [d for d, _ in
                                    sqlite_fts(DOCS, tokenize="unicode61").search(
                                        "q", "pinecone index", 3).hits]
    cfg = eng.config()
    assert cfg["url"].startswith("http://127.0.0.1") and cfg["query"]["_source"] == ["doc_id"]
    eng.close()  # the caller's client stays open
    assert client.info()["version"]["number"]
    client.close()


def test_credentials_come_from_the_environment_and_are_never_recorded(monkeypatch,
                                                                       search_service) -> None:
    monkeypatch.setenv("SEF_TEST_ES_KEY", "topsecret")
    eng = elasticsearch(search_service.url, "docs", api_key_env="SEF_TEST_ES_KEY")
    assert "topsecret" not in repr(eng.config()) and eng.config()["api_key_env"] == \
        "SEF_TEST_ES_KEY"
    assert eng.search("q", "pinecone", 2).hits
    eng.close()
    with pytest.raises(InvalidOptionError, match="environment variable"):
        opensearch(search_service.url, "docs", auth_env="SEF_TEST_NOT_SET_ANYWHERE")


def test_a_refused_connection_is_transient() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for make in ENGINES:
        eng = make(f"http://127.0.0.1:{port}", "docs", timeout=2)
        with pytest.raises(TransientError):
            eng.search("q", "x", 3)
        eng.close()


def test_fill_template_and_options() -> None:
    t = {"query": {"bool": {"should": [{"match": {"title": "{query}"}}]}}, "size": "{k}",
         "script": "params.x > {k}", "n": 3}
    out = fill_template(t, 'say "hi" {k}', 7)
    assert out["size"] == 7 and out["script"] == "params.x > 7" and out["n"] == 3
    assert out["query"]["bool"]["should"][0]["match"]["title"] == 'say "hi" {k}'  # left alone
    with pytest.raises(InvalidOptionError, match="query"):
        elasticsearch("http://127.0.0.1:1", "docs", query="match pinecone")
    with pytest.raises(InvalidOptionError, match="batch_size"):
        opensearch("http://127.0.0.1:1", "docs", batch_size=0)
