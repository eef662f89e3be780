"""sef.systems.postgres against a real PostgreSQL, and sef.systems.retriever with a real
LangChain BaseRetriever (and a LlamaIndex-shaped object: llama-index is not installed)."""

from __future__ import annotations

import json
from types import SimpleNamespace as NS

import polars as pl
import pytest
from conftest import DATA

import searcheval_frames as sef
from searcheval_frames.errors import InvalidOptionError, SearchEvalWarning
from searcheval_frames.systems import TransientError, postgres, retriever, sqlite_fts
from searcheval_frames.systems.postgres import EXAMPLE_SQL, redact_dsn

DOCS = DATA / "example" / "docs.jsonl"
QUERIES = DATA / "example" / "queries.tsv"


# ----------------------------------------------------------------------------- postgres


def _load_docs(dsn: str) -> None:
    import psycopg

    docs = [json.loads(line) for line in DOCS.read_text(encoding="utf-8").splitlines() if line]
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE docs (doc_id text PRIMARY KEY, title text, body text, "
                     "tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', "
                     "coalesce(title, '') || ' ' || coalesce(body, ''))) STORED)")
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO docs (doc_id, title, body) VALUES (%s, %s, %s)",
                            [(d["doc_id"], d["title"], d["text"]) for d in docs])


def _direct(dsn: str, query: str, k: int) -> list[tuple[str, float]]:
    """The same search by hand: PostgreSQL's own ts_rank, OR of the query's lexemes."""
    import psycopg

    with psycopg.connect(dsn) as conn:
        lexemes = conn.execute("SELECT lexeme FROM unnest(to_tsvector('english', %s))",
                               (query,)).fetchall()
        if not lexemes:
            return []
        tsq = " | ".join("'" + lx.replace("'", "''") + "'" for (lx,) in lexemes)
        rows = conn.execute("SELECT doc_id, ts_rank(tsv, to_tsquery('english', %s)) AS s "
                            "FROM docs WHERE tsv @@ to_tsquery('english', %s) "
                            "ORDER BY s DESC, doc_id DESC LIMIT %s", (tsq, tsq, k)).fetchall()
    return [(d, float(s)) for d, s in rows]


def test_postgres_full_text_run_equals_the_search_by_hand(postgres_dsn, tmp_path) -> None:
    _load_docs(postgres_dsn)
    pg = postgres(postgres_dsn, name="pg-fts")
    res = sef.retrieve(pg, QUERIES, k=10, max_concurrency=4, cache=tmp_path / "c.db")
    assert res.latency["status"].unique().to_list() == ["ok"]
    run = res.frame
    queries = pl.read_csv(QUERIES, separator="\t")
    for qid, text in queries.head(12).iter_rows():
        want = _direct(postgres_dsn, text, 10)
        got = run.filter(pl.col("query_id") == qid).sort("rank")
        assert got["doc_id"].to_list() == [d for d, _ in want], qid
        assert got["score"].to_list() == pytest.approx([s for _, s in want], rel=1e-6)
    assert pg.conns == []  # sef.retrieve closed the system: every thread's connection
    assert pg.search("q1", "pinecone", 3).hits  # and it reconnects on next use
    conns = list(pg.conns)
    assert len(conns) == 1
    pg.close()
    assert all(c.closed for c in conns)


def test_postgres_params_and_redacted_dsn(postgres_dsn) -> None:
    _load_docs(postgres_dsn)
    sql = EXAMPLE_SQL.replace("'english'", "%(lang)s::regconfig")
    pg = postgres(postgres_dsn, sql, {"lang": "simple"})
    assert pg.search("q1", "index", 3).hits  # 'simple' keeps the word; english's stem too
    user_dsn = postgres_dsn.replace("postgresql://", "postgresql://ann:s3cret@", 1) \
        if "@" not in postgres_dsn else postgres_dsn
    shown = json.dumps(postgres(user_dsn).config())
    assert "s3cret" not in shown
    assert redact_dsn("host=h password='a b' user=u") == "host=h password=*** user=u"
    assert redact_dsn("postgresql://u:p%40ss@h/db?password=x&sslmode=require") == \
        "postgresql://u:***@h/db?password=***&sslmode=require"
    pg.close()


def test_postgres_bad_sql_fails_the_query_and_a_lost_server_is_transient(
        postgres_server, postgres_dsn, tmp_path) -> None:
    _load_docs(postgres_dsn)
    bad = postgres(postgres_dsn, "SELECT nope FROM docs WHERE %(query)s = '' LIMIT %(k)s")
    with pytest.warns(SearchEvalWarning, match="nope"):
        res = sef.retrieve(bad, {"q1": "x"}, k=5, cache=False, on_error="record")
    assert res.latency["status"].to_list() != ["ok"]
    assert "nope" in (res.latency["error"][0] or "")
    bad.close()
    pg = postgres(postgres_dsn)
    assert pg.search("q1", "pinecone", 3).hits
    postgres_server.stop()
    try:
        with pytest.raises(TransientError):
            pg.search("q1", "pinecone", 3)
    finally:
        postgres_server.start()
    assert pg.search("q1", "pinecone", 3).hits  # a new connection
    pg.close()


def test_postgres_options_are_checked() -> None:
    with pytest.raises(InvalidOptionError, match=r"%\(query\)s"):
        postgres("postgresql://localhost/x", "SELECT 1")
    with pytest.raises(InvalidOptionError, match="params"):
        postgres("postgresql://localhost/x", params=[1])


def test_the_server_has_no_pgvector_so_the_docs_say_function_system(postgres_dsn) -> None:
    import psycopg

    with psycopg.connect(postgres_dsn) as conn:
        row = conn.execute("SELECT count(*) FROM pg_available_extensions "
                           "WHERE name = 'vector'").fetchone()
    if row[0]:
        pytest.skip("pgvector is available here: the ts_rank test covers the adapter")
    assert "function system" in postgres.__doc__


# ---------------------------------------------------------------------------- retrievers


def _lc_retriever(fts, k: int = 20, chunks: bool = False):
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever

    class FtsRetriever(BaseRetriever):
        """A real LangChain retriever over sqlite_fts (its Documents carry no score)."""

        system: object
        k: int = 20
        chunks: bool = False

        def _get_relevant_documents(self, query, *, run_manager):
            hits = self.system.search("-", query, self.k).hits
            docs = [Document(page_content=d, metadata={"source": d}, id=f"chunk-{d}")
                    for d, _ in hits]
            if self.chunks:  # each document twice, as a chunked index returns them
                docs = [x for doc in docs for x in (doc, doc)]
            return docs

    return FtsRetriever(system=fts, k=k, chunks=chunks)


def test_a_langchain_retriever_runs_in_the_retrievers_order(tmp_path) -> None:
    fts = sqlite_fts(DOCS)
    lc = retriever(_lc_retriever(fts), doc_id="source")
    res = sef.retrieve(lc, QUERIES, k=10, cache=tmp_path / "c.db")
    want = sef.retrieve(fts, QUERIES, k=10, cache=False).frame
    joined = res.frame.join(want, on=["query_id", "rank"], suffix="_fts")
    assert joined.height == want.height == res.frame.height
    assert (joined["doc_id"] == joined["doc_id_fts"]).all()
    assert (joined["score"] == 1.0 / joined["rank"]).all()  # rank-based scores
    assert res.provenance["config"]["class"].endswith("FtsRetriever")
    assert res.name == "FtsRetriever"


def test_langchain_ids_from_doc_id_and_chunks_collapse() -> None:
    fts = sqlite_fts(DOCS)
    plain = retriever(_lc_retriever(fts, k=5)).search("q", "pinecone", 5).hits
    assert all(d.startswith("chunk-") for d, _ in plain)  # doc.id when no metadata key
    chunked = _lc_retriever(fts, k=5, chunks=True)
    docs = retriever(chunked, doc_id="source", collapse=True).search("q", "pinecone", 5).hits
    assert [d for d, _ in docs] == [d for d, _ in fts.search("q", "pinecone", 5).hits]
    with pytest.warns(SearchEvalWarning, match="appears 2 times"):
        res = sef.retrieve(retriever(chunked, doc_id="source"), {"q1": "pinecone"}, k=10,
                           cache=False, on_error="record")
    assert res.latency["status"].to_list() != ["ok"]  # duplicates are refused, not kept


def test_a_llamaindex_shaped_retriever_gives_its_scores() -> None:
    class Li:
        def retrieve(self, query):
            return [NS(node=NS(metadata={"doc": "d2"}, node_id="n2"), score=0.9),
                    NS(node=NS(metadata={}, node_id="n7"), score=0.4)]

    assert retriever(Li(), doc_id="doc").search("q", "x", 5).hits == [("d2", 0.9), ("n7", 0.4)]
    assert retriever(Li(), doc_id="doc").search("q", "x", 1).hits == [("d2", 0.9)]


def test_a_result_without_an_id_is_named() -> None:
    class Bad:
        def invoke(self, query):
            return [NS(metadata={"title": "t"}, id=None)]

    with pytest.raises(ValueError, match=r"query 'q7'.*metadata\['source'\].*title"):
        retriever(Bad(), doc_id="source").search("q7", "x", 5)
    with pytest.raises(InvalidOptionError, match=r"\.invoke"):
        retriever(object())
