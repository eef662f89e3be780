"""Build the bundled structured example in ``data/structured/`` (issue #35).

Three systems x three seeds x two query sets, on the project's own documents:

* query set ``docs``: the 38 queries and 112 documents of ``data/example/`` with its
  qrels (``qrels.txt``);
* query set ``help``: the 25 questions and 28 help-centre chunks of ``data/rag/`` with
  its grades (``grades.csv``); questions become ``q01``..``q25`` and chunks
  ``c01``..``c28`` in file order, so query ids **repeat across the two sets** (a query is
  the pair ``(collection, query_id)``).

Systems (numpy only; lowercase ``[a-z0-9]+`` tokens, a short stopword list, title + text):

* ``bm25``: BM25 (k1 = 1.2, b = 0.75). Deterministic; the seed only breaks exact score
  ties (a jitter of 1e-9), so its three seeds are (almost) the same run.
* ``bm25-prf``: BM25 with RM3-style feedback (5 feedback documents, 8 expansion terms,
  original query weight 0.6); the seed drops each expansion term with probability 0.4
  (a stochastic query rewriter).
* ``hybrid-lsi``: 0.5 x BM25/max + 0.5 x the cosine in a 16-dimensional latent space
  found by randomized SVD (Halko, Martinsson & Tropp 2011: a Gaussian test matrix
  drawn from the seed, one power iteration) of the TF-IDF matrix: a "dense" model
  whose quality depends on its initialisation. (Of the three settings tried, 32-d
  random projections, 16-d randomized SVD without and with a power iteration, this is
  the one whose seeds differ visibly; none was tuned further.)

Outputs (deterministic, small): ``runs.csv`` (``collection, run, seed, query_id,
doc_id, score``; top 10 per query), ``qrels.csv`` (``collection, query_id, doc_id,
relevance``), ``queries.csv`` (``collection, query_id, query``). Run from the
repository root: ``python data/make_structured_example.py``.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "structured"
DEPTH = 10
SEEDS = (0, 1, 2)
STOP = frozenset(["a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "how", "i", "in", "is", "it", "my", "of", "on", "or", "the", "to", "what", "when", "where", "which", "why", "with", "you", "your"])


def tokens(text: str) -> list[str]:
    return [t for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in STOP]


def load_docs_set() -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[tuple]]:
    ex = HERE / "example"
    docs = [(d["doc_id"], d["title"] + " " + d["text"])
            for d in map(json.loads, (ex / "docs.jsonl").read_text().splitlines())]
    rows = list(csv.reader((ex / "queries.tsv").read_text().splitlines(), delimiter="\t"))
    queries = [(r[0], r[1]) for r in rows[1:]]
    qrels = [tuple(line.split()[i] for i in (0, 2, 3))
             for line in (ex / "qrels.txt").read_text().splitlines()]
    return docs, queries, qrels


def load_help_set() -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[tuple]]:
    rag = HERE / "rag"
    chunks = [json.loads(line) for line in (rag / "chunks.jsonl").read_text().splitlines()]
    doc_id = {c["url"]: f"c{i + 1:02d}" for i, c in enumerate(chunks)}
    docs = [(doc_id[c["url"]], c["title"] + " " + c["text"]) for c in chunks]
    rows = list(csv.reader((rag / "questions.tsv").read_text().splitlines(), delimiter="\t"))
    qid = {r[0]: f"q{i + 1:02d}" for i, r in enumerate(rows[1:])}
    queries = [(qid[r[0]], r[0]) for r in rows[1:]]
    with (rag / "grades.csv").open() as f:
        qrels = [(qid[r["question"]], doc_id[r["url"]], r["grade"]) for r in csv.DictReader(f)]
    return docs, queries, qrels


class Index:
    """Term counts, BM25 and TF-IDF over one document set."""

    def __init__(self, docs: list[tuple[str, str]]) -> None:
        self.ids = [d for d, _ in docs]
        toks = [tokens(t) for _, t in docs]
        self.vocab = {t: i for i, t in enumerate(sorted({t for ts in toks for t in ts}))}
        self.tf = np.zeros((len(docs), len(self.vocab)))
        for i, ts in enumerate(toks):
            for t in ts:
                self.tf[i, self.vocab[t]] += 1
        df = (self.tf > 0).sum(axis=0)
        n = len(docs)
        self.idf = np.log(1 + (n - df + 0.5) / (df + 0.5))
        lengths = self.tf.sum(axis=1)
        k1, b = 1.2, 0.75
        self.bm25 = (self.tf * (k1 + 1) / (self.tf + k1 * (1 - b + b * lengths / lengths.mean())[:, None])
                     * self.idf[None, :])
        tfidf = self.tf * np.log(n / df)[None, :]
        self.tfidf = tfidf / np.maximum(np.linalg.norm(tfidf, axis=1, keepdims=True), 1e-12)

    def weights(self, text: str) -> np.ndarray:
        w = np.zeros(len(self.vocab))
        for t in tokens(text):
            if t in self.vocab:
                w[self.vocab[t]] += 1
        return w


def bm25(ix: Index, q: np.ndarray) -> np.ndarray:
    return ix.bm25 @ q


def bm25_prf(ix: Index, q: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    first = bm25(ix, q)
    top = np.argsort(-first, kind="stable")[:5]
    rel = (ix.tf[top] / np.maximum(ix.tf[top].sum(axis=1, keepdims=True), 1)
           * np.maximum(first[top], 0)[:, None]).sum(axis=0)
    rel[q > 0] = 0
    terms = np.argsort(-rel, kind="stable")[:8]
    keep = terms[rng.random(terms.size) >= 0.4]  # the seed drops expansion terms
    expansion = np.zeros_like(q)
    if keep.size and rel[keep].sum() > 0:
        expansion[keep] = rel[keep] / rel[keep].sum() * max(q.sum(), 1)
    return bm25(ix, 0.6 * q + 0.4 * expansion)


def latent_space(ix: Index, rng: np.random.Generator, k: int = 16) -> np.ndarray:
    """A vocab x k orthonormal basis: randomized SVD's range finder, one power step."""
    A = ix.tfidf
    Y = A.T @ rng.normal(size=(A.shape[0], k))
    Y = A.T @ (A @ Y)
    return np.linalg.qr(Y)[0]


def hybrid_lsi(ix: Index, q: np.ndarray, basis: np.ndarray) -> np.ndarray:
    lexical = bm25(ix, q)
    lexical = lexical / lexical.max() if lexical.max() > 0 else lexical
    docs = ix.tfidf @ basis
    qv = (q * np.log(len(ix.ids) / np.maximum((ix.tf > 0).sum(axis=0), 1))) @ basis
    cos = docs @ qv / np.maximum(np.linalg.norm(docs, axis=1) * np.linalg.norm(qv), 1e-12)
    return 0.5 * lexical + 0.5 * cos


def run_rows(name: str, docs: list, queries: list) -> list[tuple]:
    ix = Index(docs)
    rows = []
    for seed in SEEDS:
        rng = np.random.default_rng([35, seed, len(docs)])
        basis = latent_space(ix, rng)
        for system in ("bm25", "bm25-prf", "hybrid-lsi"):
            for qid, text in queries:
                q = ix.weights(text)
                if system == "bm25":
                    s = bm25(ix, q) + 1e-9 * rng.random(len(ix.ids))
                elif system == "bm25-prf":
                    s = bm25_prf(ix, q, rng)
                else:
                    s = hybrid_lsi(ix, q, basis)
                s = np.round(s, 6)
                order = sorted(range(len(s)), key=lambda i: (-s[i], ix.ids[i]))[:DEPTH]
                rows += [(name, system, seed, qid, ix.ids[i], f"{s[i]:.6f}") for i in order]
    return rows


def main() -> None:
    OUT.mkdir(exist_ok=True)
    runs, qrels, queries = [], [], []
    for name, (docs, qs, labels) in (("docs", load_docs_set()), ("help", load_help_set())):
        runs += run_rows(name, docs, qs)
        qrels += [(name, *r) for r in labels]
        queries += [(name, *q) for q in qs]
    for fname, header, rows in (
            ("runs.csv", ("collection", "run", "seed", "query_id", "doc_id", "score"), runs),
            ("qrels.csv", ("collection", "query_id", "doc_id", "relevance"), qrels),
            ("queries.csv", ("collection", "query_id", "query"), queries)):
        with (OUT / fname).open("w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(header)
            w.writerows(rows)
    print(f"wrote {len(runs)} run rows, {len(qrels)} qrels, {len(queries)} queries to {OUT}")


if __name__ == "__main__":
    main()
