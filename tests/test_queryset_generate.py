"""sef.generate_queries through a plain function and through the judges' OpenAI-compatible
adapter against the local stub server over HTTP on 127.0.0.1: source documents kept,
synthetic qrels, the journal as cache, retries, dry run, prompt templates."""

from __future__ import annotations

import re

import polars as pl
import pytest

import searcheval_frames as sef
from searcheval_frames.errors import InvalidOptionError
from searcheval_frames.evalset.queryset.generate import DEFAULT_PROMPT, QueryPrompt

DOCS = pl.DataFrame({
    "doc_id": ["d1", "d2", "d3"],
    "title": ["HNSW graphs", "BM25 weighting", "Chunking"],
    "text": ["HNSW builds a layered graph so vector search is fast.",
             "BM25 weighs query terms by idf and saturates term frequency.",
             "Split documents into chunks of a few hundred tokens for retrieval."]})


def _writer(user: str) -> str:
    """A deterministic 'model': n queries from the document's words."""
    n = int(re.search(r"Write (\d+) different", user).group(1))
    words = re.findall(r"[a-z0-9]+", user.split("Document:")[1].split("Write")[0].lower())
    return "\n".join(f"{i + 1}. {' '.join(words[i:i + 3])}" for i in range(n))


def test_a_plain_function_and_the_journal_as_cache(tmp_path):
    calls = []

    def llm(prompt: str) -> str:
        calls.append(prompt)
        return _writer(prompt)

    g = sef.generate_queries(DOCS, llm, per_doc=2, journal=tmp_path / "g.jsonl", progress=False)
    assert g.calls == 3 and len(calls) == 3
    df = g.frame
    assert df.height == 6
    assert df["query_id"].to_list() == ["gen-d1-1", "gen-d1-2", "gen-d2-1", "gen-d2-2",
                                        "gen-d3-1", "gen-d3-2"]
    assert df.filter(pl.col("doc_id") == "d1")["query"].to_list() == [
        "hnsw graphs hnsw", "graphs hnsw builds"]
    q = g.qrels
    assert q.columns == ["query_id", "doc_id", "relevance", "source"]
    assert (q["source"] == "synthetic").all() and (q["relevance"] == 1).all()
    assert q["doc_id"].to_list() == df["doc_id"].to_list()
    again = sef.generate_queries(DOCS, llm, per_doc=2, journal=tmp_path / "g.jsonl",
                                 progress=False)
    assert again.calls == 0 and again.cached == 3 and len(calls) == 3
    assert again.frame.equals(df)
    # another prompt is another cache key
    other = sef.generate_queries(DOCS, llm, per_doc=2, journal=tmp_path / "g.jsonl",
                                 prompt=DEFAULT_PROMPT + "\nBe brief.", progress=False)
    assert other.calls == 3


def test_the_openai_compatible_adapter_against_the_stub_server(tmp_path):
    with sef.judges.StubServer(writer=_writer, rate_limit_every=2) as stub:
        llm = sef.judges.OpenAICompatible(stub.url, "stub-model", api_key_env=None,
                                          max_concurrency=2, retries=6, backoff=0.01)
        g = sef.generate_queries(DOCS.to_pandas(), llm, per_doc=1,
                                 journal=tmp_path / "gen.jsonl", progress=False)
        assert g.calls == 3 and stub.faults["429"] >= 1  # retried through the 429s
        assert g.frame["query"].tolist() == ["hnsw graphs hnsw", "bm25 weighting bm25",
                                             "chunking split documents"]
        assert g.frame["model"].tolist() == ["stub-model"] * 3
        before = stub.requests
        g2 = sef.generate_queries(DOCS, llm, per_doc=1, journal=tmp_path / "gen.jsonl",
                                  progress=False)
        assert g2.calls == 0 and stub.requests == before  # nothing asked twice
        dry = sef.generate_queries(DOCS, llm, per_doc=2, journal=tmp_path / "gen.jsonl",
                                   dry_run=True, prices={"input": 1.0, "output": 2.0})
        assert isinstance(dry, sef.judges.DryRun)
        assert dry.calls == 3 and dry.output_tokens == 3 * 32
        assert dry.cost == pytest.approx((dry.input_tokens + 2 * dry.output_tokens) / 1e6)
        assert stub.requests == before  # a dry run calls nothing
        llm.close()


def test_answers_with_too_few_queries_are_errors_not_queries(tmp_path):
    def short(prompt: str) -> str:
        return "only one" if "BM25" in prompt else _writer(prompt)

    with pytest.warns(UserWarning, match="got no grade"):
        g = sef.generate_queries(DOCS, short, per_doc=2, journal=tmp_path / "g.jsonl",
                                 progress=False)
    assert g.frame["doc_id"].unique().sort().to_list() == ["d1", "d3"]
    assert g.errors["doc_id"].to_list() == ["d2"]
    assert "asked for 2 queries" in g.errors["error"][0]


def test_sampled_documents_prompts_and_options(tmp_path):
    g = sef.generate_queries(DOCS, _writer, n_docs=2, seed=1, journal=tmp_path / "g.jsonl",
                             progress=False)
    assert g.frame.height == 2
    p = QueryPrompt.load("Queries for: {document} ({n})")
    assert p.messages(3, "TEXT") == [{"role": "user", "content": "Queries for: TEXT (3)"}]
    with pytest.raises(InvalidOptionError, match="document"):
        sef.generate_queries(DOCS, _writer, prompt="no placeholder here")
    with pytest.raises(InvalidOptionError, match="llm"):
        sef.generate_queries(DOCS, "gpt-4")
    with pytest.raises(InvalidOptionError, match="n_docs"):
        sef.generate_queries(DOCS, _writer, n_docs=9)


def test_generated_queries_audited_against_their_documents(tmp_path):
    def copier(prompt: str) -> str:  # copies a long run of the document
        return " ".join(prompt.split("Document:")[1].split("Write")[0].split()[:9])

    g = sef.generate_queries(DOCS, copier, journal=tmp_path / "c.jsonl", progress=False)
    audit = sef.audit_queries(g, docs=DOCS)
    assert "copies_document" in audit.codes()
    assert set(audit.details["copies"]["query_id"]) == set(g.frame["query_id"])
