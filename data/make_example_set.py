"""Build the bundled example evaluation set in ``data/example/``.

Run from the repository root::

    python data/make_example_set.py            # regenerate runs/ and qrels.txt
    python data/make_example_set.py --todo todo.tsv   # also list unlabeled pooled docs

Inputs (hand-written, kept in the repo):

* ``data/example/docs.jsonl``   documents (``doc_id``, ``title``, ``text``)
* ``data/example/queries.tsv``  queries (``query_id<TAB>query``, with header)
* ``data/example/labels.tsv``   relevance labels made by reading the documents
  (``query_id``, ``doc_id``, ``relevance`` 0-3, ``note``)

Outputs (generated, deterministic):

* ``data/example/runs/{bm25,bm25-rerank,tfidf,bm25-prf,lsi,hybrid-rrf}.run``  TREC run files
* ``data/example/qrels.txt``  TREC qrels written from ``labels.tsv``

Systems:

* ``bm25``        bm25s, Lucene variant (k1=1.2, b=0.75), English stopwords,
                  PyStemmer Snowball English stemmer, over title + text.
* ``bm25-rerank`` the BM25 top-30 re-scored by a small feature-based reranker
                  (BM25 score, IDF-weighted query-term coverage, title match,
                  term proximity). No model downloads. Only 30 rows per query.
* ``tfidf``       plain TF-IDF cosine (raw tf, log(N/df) idf, no stemming, no
                  stopword list) implemented with numpy. A weaker baseline.
* ``bm25-prf``    BM25 with RM3-style pseudo-relevance feedback. It is NOT part
                  of the judging pool, so its top-20 contains unjudged documents
                  ("holes") on purpose.
* ``lsi``         a semantic run without a model download: latent semantic
                  indexing (truncated SVD, 48 dimensions) of the TF-IDF matrix of
                  the stemmed documents, in numpy; cosine in the latent space.
* ``hybrid-rrf``  reciprocal rank fusion (k=60) of ``bm25`` and ``lsi`` made with
                  ``searcheval_frames.fuse``: the hybrid-search example.
                  ``lsi`` and ``hybrid-rrf`` are NOT in the judging pool either.

The judging pool is the union of the top-20 of ``bm25``, ``bm25-rerank`` and
``tfidf`` for each query. The script fails (exit code 1) if any pooled document
has no label in ``labels.tsv``, and lists the holes so they can be labeled.

Requires the optional "examples" dependencies: ``bm25s`` and ``PyStemmer``.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

try:
    import bm25s
    import Stemmer
except ImportError as exc:  # pragma: no cover - only hit without the extra
    sys.exit(
        f"{exc}. Install the examples extra: pip install 'searcheval_frames[examples]' "
        "(bm25s, PyStemmer)"
    )

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE / "example"
RUNS_DIR = EXAMPLE / "runs"

DEPTH = 100  # rows per query in a run (fewer if fewer docs score > 0)
POOL_DEPTH = 20  # judging pool depth per pooled system
RERANK_DEPTH = 30  # candidates re-scored by the reranker
POOLED_SYSTEMS = ("bm25", "bm25-rerank", "tfidf")
UNPOOLED_SYSTEMS = ("bm25-prf", "lsi", "hybrid-rrf")

BM25_K1, BM25_B = 1.2, 0.75  # Lucene defaults
PRF_DOCS, PRF_TERMS, PRF_ORIG_WEIGHT = 10, 10, 0.5  # RM3 settings (Anserini-like)
RERANK_WEIGHTS = {"bm25": 0.45, "coverage": 0.20, "title": 0.20, "proximity": 0.15}
LSI_DIMS = 48  # latent dimensions, chosen a priori (not tuned on the labels)
RRF_K = 60  # hybrid-rrf: Cormack et al.'s constant


# --------------------------------------------------------------------------- io


def load_docs(path: Path) -> list[dict]:
    docs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    ids = [d["doc_id"] for d in docs]
    dup = [k for k, v in Counter(ids).items() if v > 1]
    if dup:
        sys.exit(f"duplicate doc_id in {path}: {dup}")
    return docs


def load_queries(path: Path) -> list[tuple[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    return [(r["query_id"], r["query"]) for r in rows]


def load_labels(path: Path) -> dict[tuple[str, str], int]:
    labels: dict[tuple[str, str], int] = {}
    if not path.exists():
        return labels
    with path.open(encoding="utf-8", newline="") as f:
        for lineno, row in enumerate(csv.DictReader(f, delimiter="\t"), start=2):
            key = (row["query_id"].strip(), row["doc_id"].strip())
            rel = int(row["relevance"])
            if rel not in (0, 1, 2, 3):
                sys.exit(f"{path}:{lineno}: relevance must be 0-3, got {rel}")
            if key in labels and labels[key] != rel:
                sys.exit(f"{path}:{lineno}: conflicting labels for {key}")
            labels[key] = rel
    return labels


def trec_order(scores: dict[str, float], depth: int = DEPTH) -> list[tuple[str, float]]:
    """Round to 6 decimals, keep score > 0, sort score desc then docno desc (trec_eval)."""
    rounded = [(doc, round(float(s), 6)) for doc, s in scores.items()]
    rounded = [(doc, s) for doc, s in rounded if s > 0]
    rounded.sort(key=lambda x: (x[1], x[0]), reverse=True)
    return rounded[:depth]


def write_run(path: Path, tag: str, ranking: dict[str, list[tuple[str, float]]]) -> int:
    n = 0
    with path.open("w", encoding="utf-8") as f:
        for qid in sorted(ranking):
            for rank, (doc, score) in enumerate(ranking[qid], start=1):
                f.write(f"{qid} Q0 {doc} {rank} {score:.6f} {tag}\n")
                n += 1
    return n


# ------------------------------------------------------------------- analysis


STEMMER = Stemmer.Stemmer("english")


def bm25_tokens(texts: list[str]) -> list[list[str]]:
    """bm25s tokenizer: lowercase, \\w\\w+ tokens, English stopwords, Snowball stems."""
    return bm25s.tokenize(
        texts, stopwords="en", stemmer=STEMMER, return_ids=False, show_progress=False
    )


def plain_tokens(text: str) -> list[str]:
    """Tokenizer for the TF-IDF baseline: lowercase alphanumeric runs, nothing else."""
    return re.findall(r"[a-z0-9]+", text.lower())


def doc_text(d: dict) -> str:
    return f"{d['title']}\n{d['text']}"


# -------------------------------------------------------------------- systems


class BM25System:
    def __init__(self, docs: list[dict]):
        self.doc_ids = [d["doc_id"] for d in docs]
        self.doc_tokens = bm25_tokens([doc_text(d) for d in docs])
        self.title_tokens = bm25_tokens([d["title"] for d in docs])
        self.retriever = bm25s.BM25(method="lucene", k1=BM25_K1, b=BM25_B)
        self.retriever.index(self.doc_tokens, show_progress=False)
        n = len(docs)
        df = Counter(t for toks in self.doc_tokens for t in set(toks))
        # Lucene IDF, also used to weight reranker features
        self.idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}

    def term_scores(self, terms: list[str]) -> np.ndarray:
        terms = [t for t in terms if t in self.retriever.vocab_dict]
        if not terms:
            return np.zeros(len(self.doc_ids), dtype=np.float64)
        return np.asarray(self.retriever.get_scores(terms), dtype=np.float64)

    def query_terms(self, query: str) -> list[str]:
        return bm25_tokens([query])[0]

    def search(self, query: str) -> dict[str, float]:
        scores = self.term_scores(self.query_terms(query))
        return dict(zip(self.doc_ids, scores, strict=True))

    # ---- RM3 pseudo-relevance feedback
    def search_prf(self, query: str) -> dict[str, float]:
        q_terms = self.query_terms(query)
        first = trec_order(self.search(query), depth=PRF_DOCS)
        if not first:
            return {}
        index = {d: i for i, d in enumerate(self.doc_ids)}
        total = sum(s for _, s in first)
        rm1: Counter[str] = Counter()
        for doc, s in first:
            toks = self.doc_tokens[index[doc]]
            tf = Counter(toks)
            for t, c in tf.items():
                rm1[t] += (s / total) * (c / len(toks))
        # top expansion terms, ties broken alphabetically for determinism
        top = sorted(rm1.items(), key=lambda x: (-x[1], x[0]))[:PRF_TERMS]
        z = sum(w for _, w in top)
        q_model = Counter(q_terms)
        weights: dict[str, float] = defaultdict(float)
        for t, c in q_model.items():
            weights[t] += PRF_ORIG_WEIGHT * c / len(q_terms)
        for t, w in top:
            weights[t] += (1 - PRF_ORIG_WEIGHT) * w / z
        scores = np.zeros(len(self.doc_ids), dtype=np.float64)
        for t in sorted(weights):
            scores += weights[t] * self.term_scores([t])
        return dict(zip(self.doc_ids, scores, strict=True))

    # ---- second-stage reranker over the BM25 top-30
    def rerank(self, query: str, first_stage: list[tuple[str, float]]) -> dict[str, float]:
        q_terms = list(dict.fromkeys(self.query_terms(query)))  # unique, in order
        if not q_terms or not first_stage:
            return {}
        index = {d: i for i, d in enumerate(self.doc_ids)}
        q_idf = {t: self.idf.get(t, 0.0) for t in q_terms}
        idf_total = sum(q_idf.values()) or 1.0
        top_score = first_stage[0][1]
        out: dict[str, float] = {}
        for doc, bm25 in first_stage:
            i = index[doc]
            toks = self.doc_tokens[i]
            title = set(self.title_tokens[i])
            present = set(toks)
            f_bm25 = bm25 / top_score
            f_cov = sum(q_idf[t] for t in q_terms if t in present) / idf_total
            f_title = sum(q_idf[t] for t in q_terms if t in title) / idf_total
            f_prox = proximity(toks, [t for t in q_terms if t in present], len(q_terms))
            out[doc] = (
                RERANK_WEIGHTS["bm25"] * f_bm25
                + RERANK_WEIGHTS["coverage"] * f_cov
                + RERANK_WEIGHTS["title"] * f_title
                + RERANK_WEIGHTS["proximity"] * f_prox
            )
        return out


def proximity(tokens: list[str], matched: list[str], n_query_terms: int) -> float:
    """Compactness of the smallest window holding every matched query term.

    Returns matched/window_length scaled by the share of query terms matched;
    a single matched term of a one-term query counts as perfectly compact.
    """
    m = len(matched)
    if m == 0:
        return 0.0
    if m == 1:
        return 1.0 / n_query_terms
    need = set(matched)
    counts: Counter[str] = Counter()
    have = 0
    best = len(tokens) + 1
    left = 0
    for right, tok in enumerate(tokens):
        if tok in need:
            counts[tok] += 1
            if counts[tok] == 1:
                have += 1
        while have == m:
            best = min(best, right - left + 1)
            lt = tokens[left]
            if lt in need:
                counts[lt] -= 1
                if counts[lt] == 0:
                    have -= 1
            left += 1
    return (m / best) * (m / n_query_terms)


class TfidfSystem:
    def __init__(self, docs: list[dict]):
        self.doc_ids = [d["doc_id"] for d in docs]
        toks = [plain_tokens(doc_text(d)) for d in docs]
        vocab = sorted({t for ts in toks for t in ts})
        self.vocab = {t: i for i, t in enumerate(vocab)}
        tf = np.zeros((len(docs), len(vocab)), dtype=np.float64)
        for i, ts in enumerate(toks):
            for t, c in Counter(ts).items():
                tf[i, self.vocab[t]] = c
        df = (tf > 0).sum(axis=0)
        self.idf = np.log(len(docs) / df)
        w = tf * self.idf
        norms = np.linalg.norm(w, axis=1, keepdims=True)
        self.matrix = w / np.where(norms == 0, 1.0, norms)

    def search(self, query: str) -> dict[str, float]:
        q = np.zeros(len(self.vocab), dtype=np.float64)
        for t, c in Counter(plain_tokens(query)).items():
            if t in self.vocab:
                q[self.vocab[t]] = c
        q *= self.idf
        norm = np.linalg.norm(q)
        if norm == 0:
            return {}
        scores = self.matrix @ (q / norm)
        return dict(zip(self.doc_ids, scores, strict=True))


class LsiSystem:
    """Latent semantic indexing: SVD of the stemmed TF-IDF matrix, cosine in latent space.

    Documents are the rows of ``X = tf * idf`` (bm25s tokens: stems, no stopwords,
    ``idf = log(N/df)``), L2-normalised; ``X = U S V^T`` and the top ``LSI_DIMS``
    right singular vectors ``V_k`` project documents (``X V_k``) and queries
    (``q V_k``) alike, so the signs numpy picks for singular vectors cancel out.
    """

    def __init__(self, docs: list[dict], dims: int = LSI_DIMS):
        self.doc_ids = [d["doc_id"] for d in docs]
        toks = bm25_tokens([doc_text(d) for d in docs])
        vocab = sorted({t for ts in toks for t in ts})
        self.vocab = {t: i for i, t in enumerate(vocab)}
        tf = np.zeros((len(docs), len(vocab)), dtype=np.float64)
        for i, ts in enumerate(toks):
            for t, c in Counter(ts).items():
                tf[i, self.vocab[t]] = c
        self.idf = np.log(len(docs) / (tf > 0).sum(axis=0))
        x = tf * self.idf
        x /= np.where((n := np.linalg.norm(x, axis=1, keepdims=True)) == 0, 1.0, n)
        _, _, vt = np.linalg.svd(x, full_matrices=False)
        self.basis = vt[:dims].T  # terms x dims
        latent = x @ self.basis
        self.latent = latent / np.where(
            (n := np.linalg.norm(latent, axis=1, keepdims=True)) == 0, 1.0, n)

    def search(self, query: str) -> dict[str, float]:
        q = np.zeros(len(self.vocab), dtype=np.float64)
        for t, c in Counter(bm25_tokens([query])[0]).items():
            if t in self.vocab:
                q[self.vocab[t]] = c
        z = (q * self.idf) @ self.basis
        norm = np.linalg.norm(z)
        if norm == 0:
            return {}
        return dict(zip(self.doc_ids, self.latent @ (z / norm), strict=True))


def hybrid_rrf(runs: dict[str, dict[str, list[tuple[str, float]]]]) -> dict[str, list]:
    """RRF of the bm25 and lsi runs with searcheval_frames.fuse (the package in this repo)."""
    sys.path.insert(0, str(HERE.parent))
    import polars as pl

    import searcheval_frames as sef

    frame = pl.DataFrame(
        [(tag, q, d, s) for tag in ("bm25", "lsi") for q, docs in runs[tag].items()
         for d, s in docs],
        schema=["run", "query_id", "doc_id", "score"], orient="row",
    )
    fused = sef.fuse(frame, "rrf", k=RRF_K, name="hybrid-rrf")
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for q, d, s in fused.select("query_id", "doc_id", "score").iter_rows():
        out[q][d] = s
    return {q: trec_order(out.get(q, {})) for q in runs["bm25"]}


# -------------------------------------------------------------- quick metrics


def quick_metrics(
    ranking: dict[str, list[tuple[str, float]]],
    labels: dict[tuple[str, str], int],
    qids: list[str],
) -> dict[str, float]:
    """Small, self-contained P@5 / MRR / nDCG@10 (linear gain, trec_eval style).

    Unjudged documents count as non-relevant. Queries without results score 0.
    """
    by_q: dict[str, dict[str, int]] = defaultdict(dict)
    for (q, d), r in labels.items():
        by_q[q][d] = r
    acc: dict[str, list[float]] = defaultdict(list)
    for q in qids:
        docs = [d for d, _ in ranking.get(q, [])]
        rels = [by_q[q].get(d, 0) for d in docs]
        for lvl in (1, 2):
            hits = [r >= lvl for r in rels]
            acc[f"P@5(>={lvl})"].append(sum(hits[:5]) / 5)
            first = next((i for i, h in enumerate(hits) if h), None)
            acc[f"MRR(>={lvl})"].append(0.0 if first is None else 1 / (first + 1))
        dcg = sum(r / math.log2(i + 2) for i, r in enumerate(rels[:10]))
        ideal = sorted(by_q[q].values(), reverse=True)[:10]
        idcg = sum(r / math.log2(i + 2) for i, r in enumerate(ideal))
        acc["nDCG@10"].append(dcg / idcg if idcg else 0.0)
        top20 = docs[:POOL_DEPTH]
        acc["judged@20"].append(sum((q, d) in labels for d in top20) / len(top20) if top20 else 1.0)
    return {k: sum(v) / len(v) for k, v in acc.items()}


# ----------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--todo", type=Path, help="write unlabeled pooled (query, doc) pairs here")
    args = ap.parse_args(argv)

    docs = load_docs(EXAMPLE / "docs.jsonl")
    queries = load_queries(EXAMPLE / "queries.tsv")
    labels = load_labels(EXAMPLE / "labels.tsv")
    doc_ids = {d["doc_id"] for d in docs}
    qids = [q for q, _ in queries]
    titles = {d["doc_id"]: d["title"] for d in docs}

    bm25 = BM25System(docs)
    tfidf = TfidfSystem(docs)
    lsi = LsiSystem(docs)
    runs: dict[str, dict[str, list[tuple[str, float]]]] = defaultdict(dict)
    for qid, text in queries:
        first = trec_order(bm25.search(text))
        runs["bm25"][qid] = first
        runs["bm25-rerank"][qid] = trec_order(bm25.rerank(text, first[:RERANK_DEPTH]))
        runs["tfidf"][qid] = trec_order(tfidf.search(text))
        runs["bm25-prf"][qid] = trec_order(bm25.search_prf(text))
        runs["lsi"][qid] = trec_order(lsi.search(text))
    runs["hybrid-rrf"] = hybrid_rrf(runs)

    RUNS_DIR.mkdir(parents=True, exist_ok=True)
    rows = {}
    for tag in (*POOLED_SYSTEMS, *UNPOOLED_SYSTEMS):
        rows[tag] = write_run(RUNS_DIR / f"{tag}.run", tag, runs[tag])

    # ---- labels -> qrels, with sanity checks
    stray = sorted(k for k in labels if k[0] not in qids or k[1] not in doc_ids)
    for q, d in stray:
        print(f"warning: label for unknown query/doc ({q}, {d}) is ignored", file=sys.stderr)
    labels = {k: v for k, v in labels.items() if k not in set(stray)}
    qorder = {q: i for i, q in enumerate(qids)}
    with (EXAMPLE / "qrels.txt").open("w", encoding="utf-8") as f:
        for (q, d), r in sorted(labels.items(), key=lambda x: (qorder[x[0][0]], x[0][1])):
            f.write(f"{q} 0 {d} {r}\n")

    # ---- pool completeness
    holes = []
    for q in qids:
        pool = sorted({d for tag in POOLED_SYSTEMS for d, _ in runs[tag][q][:POOL_DEPTH]})
        holes += [(q, d) for d in pool if (q, d) not in labels]
    unpooled_holes = {
        tag: [(q, d) for q in qids for d, _ in runs[tag][q][:POOL_DEPTH] if (q, d) not in labels]
        for tag in UNPOOLED_SYSTEMS
    }

    # ---- summary
    grades = Counter(labels.values())
    print(f"docs: {len(docs)}  queries: {len(queries)}  judgments: {len(labels)}")
    print("judgments per grade: " + ", ".join(f"{g}: {grades.get(g, 0)}" for g in (0, 1, 2, 3)))
    rel_per_q = Counter(q for (q, _), r in labels.items() if r >= 2)
    no_rel = [q for q in qids if rel_per_q[q] == 0]
    print(
        f"docs with grade >= 2 per query: min {min(rel_per_q[q] for q in qids)}, "
        f"max {max(rel_per_q[q] for q in qids)}" + (f"; none for {no_rel}" if no_rel else "")
    )
    header = ["run", "rows", "P@5(>=1)", "P@5(>=2)", "MRR(>=1)", "MRR(>=2)", "nDCG@10", "judged@20"]
    print("  ".join(f"{h:>11}" for h in header))
    for tag in (*POOLED_SYSTEMS, *UNPOOLED_SYSTEMS):
        m = quick_metrics(runs[tag], labels, qids)
        vals = [tag, str(rows[tag])] + [f"{m[h]:.4f}" for h in header[2:]]
        print("  ".join(f"{v:>11}" for v in vals))
    for tag, tag_holes in unpooled_holes.items():
        print(
            f"{tag} (not pooled): {len(tag_holes)} unjudged docs in its top-{POOL_DEPTH} "
            f"across {len({q for q, _ in tag_holes})} queries"
        )

    if args.todo:
        with args.todo.open("w", encoding="utf-8") as f:
            f.write("query_id\tdoc_id\trelevance\tnote\n")
            for q, d in holes:
                f.write(f"{q}\t{d}\t\t{titles[d]}\n")
        print(f"wrote {len(holes)} unlabeled pooled pairs to {args.todo}")

    if holes:
        sys.stdout.flush()
        print(f"ERROR: {len(holes)} pooled (query, doc) pairs have no label:", file=sys.stderr)
        for q, d in holes:
            print(f"  {q}\t{d}\t{titles[d]}", file=sys.stderr)
        return 1
    print("pool check: every doc in the top-20 of the pooled systems is labeled")
    return 0


if __name__ == "__main__":
    sys.exit(main())
