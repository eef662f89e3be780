"""sef.systems.http against a real HTTP service on 127.0.0.1 (tests/search_service.py):
templates, dotted paths, each injected fault, credentials, the cache; and the service's
Elasticsearch-compatible surface as the official clients see it.

The oracle for the hits is the service's own index (SQLite FTS5 bm25) asked directly."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import polars as pl
import pytest

import searcheval_frames as sef
from searcheval_frames.errors import RetrievalError, SearchEvalWarning

REPO = Path(__file__).resolve().parents[1]
QUERIES = sef.read_queries(REPO / "data" / "example" / "queries.tsv")
Q1, Q2 = QUERIES["query"][0], QUERIES["query"][1]


@pytest.fixture(autouse=True)
def _own_folder(tmp_path, monkeypatch):
    """Each test in a folder of its own: the default cache (.searcheval/) lands there."""
    monkeypatch.chdir(tmp_path)


def simple(svc, **kw):
    return sef.systems.http(svc.url + "/search", params={"q": "{query}", "k": "{k}"},
                            server_time="took", name="svc", **kw)


def es_like(svc):
    return sef.systems.http(svc.url + "/docs/_search", method="POST",
                            json={"query": {"match": {"text": "{query}"}}, "size": "{k}"},
                            hits="hits.hits", doc_id="_id", score="_score", server_time="took",
                            name="es")


def expected_run(svc, k: int, name: str) -> pl.DataFrame:
    rows = [(qid, d, r, s, name) for qid, text in QUERIES.select("query_id", "query").iter_rows()
            for r, (d, s) in enumerate(svc.index.search(text, k), start=1)]
    return pl.DataFrame(rows, schema=["query_id", "doc_id", "rank", "score", "run"], orient="row")


def test_get_and_es_style_post_give_the_index_ranking(search_service):
    svc = search_service
    for system, name in ((simple(svc), "svc"), (es_like(svc), "es")):
        got = sef.retrieve(system, QUERIES, k=7, cache=False, max_concurrency=4)
        assert got.frame.equals(expected_run(svc, 7, name))
        assert got.latency["server_seconds"].is_not_null().all()
        assert got.provenance["adapter"] == "http"
        assert got.provenance["versions"]["httpx"] == __import__("httpx").__version__


def test_k_in_a_json_body_is_sent_as_an_integer(search_service):
    system = sef.systems.http(search_service.url + "/search", method="POST",
                              json={"query": "{query}", "k": "{k}", "tag": "k={k}"})
    sef.retrieve(system, {"q1": Q1}, k=3, cache=False)
    assert search_service.requests[0]["k"] == 3  # an int in the JSON body, not "3"


def test_a_delay_is_measured(search_service):
    search_service.fault("delay", query=Q1, seconds=0.3)
    lat = sef.retrieve(simple(search_service), {"q1": Q1, "q2": Q2}, cache=False).latency
    assert lat["seconds"][0] >= 0.3 > lat["seconds"][1]


@pytest.mark.parametrize("code", [429, 503])
def test_429_and_503_are_retried_after_retry_after(search_service, code):
    svc = search_service
    svc.fault("status", query=Q1, code=code, retry_after=1, times=1)
    result = sef.retrieve(simple(svc), {"q1": Q1}, cache=False, backoff=0.001)
    assert result.latency.row(0, named=True)["attempts"] == 2
    assert result.latency.row(0, named=True)["status"] == "ok"
    first, second = (r["t"] for r in svc.requests)
    assert second - first >= 1.0  # waited the Retry-After, not the 1 ms backoff


def test_a_500_fails_the_query_without_retrying(search_service):
    svc = search_service
    svc.fault("status", query=Q1, code=500, body="index corrupt")
    with pytest.warns(SearchEvalWarning, match=r"failed on 1 of 2 queries.*q1 \(error: HTTP 500"):
        result = sef.retrieve(simple(svc), {"q1": Q1, "q2": Q2}, cache=False)
    row = result.latency.row(0, named=True)
    assert row["attempts"] == 1 and "index corrupt" in row["error"]
    assert len(svc.asked(Q1)) == 1
    with pytest.raises(RetrievalError, match=r"system 'svc' \(http\).*query 'q1'.*HTTP 500"):
        sef.retrieve(simple(svc), {"q1": Q1, "q2": Q2}, cache=False, on_error="raise")


def test_a_hang_past_the_timeout_is_a_timeout(search_service):
    search_service.fault("hang", query=Q1, seconds=3)
    start = time.perf_counter()
    with pytest.warns(SearchEvalWarning, match="timeout"):
        result = sef.retrieve(simple(search_service), {"q1": Q1, "q2": Q2}, cache=False,
                              timeout=0.3, retries=0)
    assert time.perf_counter() - start < 2.0
    assert result.latency["status"].to_list() == ["timeout", "ok"]


@pytest.mark.parametrize(("fault", "status", "message"), [
    ("malformed", "invalid", "not JSON"),
    ("nohits", "invalid", "has no 'hits'"),
    ("duplicate", "invalid", "appears 2 times"),
    ("nan", "invalid", "finite"),
])
def test_bad_responses_are_recorded_failures(search_service, fault, status, message):
    search_service.fault(fault, query=Q1)
    with pytest.warns(SearchEvalWarning, match=message):
        result = sef.retrieve(simple(search_service), {"q1": Q1, "q2": Q2}, cache=False)
    row = result.latency.row(0, named=True)
    assert (row["status"], row["attempts"]) == (status, 1) and message in row["error"]
    assert result.frame["query_id"].unique().to_list() == ["q2"]


def test_a_reset_connection_is_retried(search_service):
    search_service.fault("reset", query=Q1, times=1)
    result = sef.retrieve(simple(search_service), {"q1": Q1}, cache=False, backoff=0.001)
    assert result.latency.row(0, named=True)["attempts"] == 2


def test_credentials_come_from_the_environment_and_are_never_kept(search_service, tmp_path,
                                                                  monkeypatch):
    svc = search_service
    svc.token = "s3cr3t-token-value"
    monkeypatch.delenv("SEF_TEST_TOKEN", raising=False)
    with pytest.raises(RetrievalError, match="SEF_TEST_TOKEN is not set"):
        simple(svc, auth_env="SEF_TEST_TOKEN")
    with pytest.warns(SearchEvalWarning, match="HTTP 401"):
        sef.retrieve(simple(svc), {"q1": Q1}, cache=False)
    monkeypatch.setenv("SEF_TEST_TOKEN", svc.token)
    for system in (simple(svc, auth_env="SEF_TEST_TOKEN"),
                   sef.systems.http(svc.url + "/search", params={"q": "{query}", "k": "{k}"},
                                    headers={"Authorization": "Bearer {env:SEF_TEST_TOKEN}"})):
        db = tmp_path / f"{system.name}.db"
        result = sef.retrieve(system, {"q1": Q1}, cache=db)
        assert result.latency["status"].to_list() == ["ok"]
        for text in (repr(system), str(system.config()), str(result.provenance), repr(result),
                     result._repr_html_()):
            assert svc.token not in text
        for path in (db, Path(str(db) + "-wal")):
            assert not path.exists() or svc.token.encode() not in path.read_bytes()


def test_secrets_written_in_the_configuration_are_redacted():
    system = sef.systems.http("https://bob:pw@example.com/s?api_key=abc&q={query}",
                              params={"token": "xyz", "q": "{query}"},
                              headers={"X-Api-Key": "k3y", "Accept": "json"})
    text = str(system.config())
    assert not any(s in text for s in ("abc", "xyz", "k3y", "bob", ":pw"))
    assert "***" in text and "{query}" in text and "json" in text


def test_the_default_cache_asks_nothing_twice_and_a_changed_config_asks_again(
        search_service, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    svc = search_service
    first = sef.retrieve(simple(svc), QUERIES, k=5)
    assert (tmp_path / ".searcheval" / "retrieve-cache.db").exists()
    n = len(svc.requests)
    assert n == QUERIES.height
    again = sef.retrieve(simple(svc), QUERIES, k=5)
    assert len(svc.requests) == n and again.latency["cached"].all()
    assert again.frame.equals(first.frame)
    changed = sef.systems.http(svc.url + "/search", params={"q": "{query}", "k": "{k}", "x": 1},
                               server_time="took", name="svc")
    sef.retrieve(changed, QUERIES, k=5)
    assert len(svc.requests) == 2 * n


def test_concurrency_overlaps_the_service_time(search_service):
    """max_concurrency=8 keeps up to 8 requests inside the service's 50 ms at once (seen
    by the server, so the machine's load cannot make this pass or fail; the speed itself
    is measured in benchmarks/bench_retrieve.py); one at a time without it."""
    search_service.delay = 0.05
    result = sef.retrieve(simple(search_service), QUERIES, k=5, cache=False, max_concurrency=8)
    assert 2 <= search_service.max_in_flight <= 8
    assert result.latency["status"].eq("ok").all()
    search_service.reset()
    search_service.delay = 0.05
    sef.retrieve(simple(search_service), QUERIES.head(5), k=5, cache=False)
    assert search_service.max_in_flight == 1


def test_the_official_clients_talk_to_the_service(search_service):
    elasticsearch = pytest.importorskip("elasticsearch")
    opensearchpy = pytest.importorskip("opensearchpy")
    svc = search_service
    want = [d for d, _ in svc.index.search(Q1, 5)]
    es = elasticsearch.Elasticsearch(svc.url)
    got = es.search(index="docs", query={"match": {"text": Q1}}, size=5)
    assert [h["_id"] for h in got["hits"]["hits"]] == want
    multi = es.msearch(searches=[{"index": "docs"}, {"query": {"match": {"text": Q1}}, "size": 5}])
    assert [h["_id"] for h in multi["responses"][0]["hits"]["hits"]] == want
    os_client = opensearchpy.OpenSearch(svc.url)
    got = os_client.search(index="docs", body={"query": {"match": {"text": Q1}}, "size": 5})
    assert [h["_id"] for h in got["hits"]["hits"]] == want
    es.close()
    os_client.close()


def test_the_service_index_is_sqlite_fts5_bm25():
    from search_service import DOCS, Index, fts_query

    index = Index()
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(doc_id UNINDEXED, title, text)")
    rows = [__import__("json").loads(line) for line in DOCS.read_text().splitlines()]
    db.executemany("INSERT INTO t VALUES (?,?,?)", [(r["doc_id"], r["title"], r["text"])
                                                   for r in rows])
    want = db.execute("SELECT doc_id FROM t WHERE t MATCH ? ORDER BY bm25(t), doc_id LIMIT 5",
                      (fts_query(Q1),)).fetchall()
    assert [d for d, _ in index.search(Q1, 5)] == [d for (d,) in want]
