"""Generate a deterministic MS MARCO-dev-like run and qrels for the benchmark.

Writes into ``benchmarks/_work/`` (git-ignored):

* ``run.trec``   6,980 queries x 1,000 documents (6,980,000 lines)
  ``qid Q0 docid rank score tag``; ids are integers as strings (query ids up to
  ~1.1M, passage ids up to 8.8M, like MS MARCO); scores are BM25-like floats
  printed with 4 decimals, so a few ties per query occur, as in real runs.
* ``qrels.trec`` ~1.07 relevant passages per query (label 1), 7,437 lines,
  ``qid 0 docid 1``. About 80 % of the relevant passages are retrieved, at ranks
  skewed towards the top (MRR@10 around 0.19, like BM25 on MS MARCO dev).

Usage::

    python benchmarks/make_data.py [--queries 6980] [--depth 1000] [--seed 20240]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import polars as pl

WORK = Path(__file__).resolve().parent / "_work"
N_DOCS_CORPUS = 8_841_823  # MS MARCO passage collection size
N_QUERY_IDS = 1_102_000
EXTRA_RELEVANT = 457  # 6,980 + 457 = 7,437 judgments, as MS MARCO dev (small)
P_RETRIEVED = 0.80


def _unique_docs(rng: np.random.Generator, n_q: int, depth: int) -> np.ndarray:
    """``n_q x depth`` passage ids, distinct within each query."""
    docs = rng.integers(0, N_DOCS_CORPUS, size=(n_q, depth), dtype=np.int64)
    while True:
        srt = np.sort(docs, axis=1)
        dup_rows = np.nonzero((srt[:, 1:] == srt[:, :-1]).any(axis=1))[0]
        if dup_rows.size == 0:
            return docs
        for r in dup_rows:  # a handful of rows; resample the repeated ids
            row = docs[r]
            _, first = np.unique(row, return_index=True)
            mask = np.ones(depth, dtype=bool)
            mask[first] = False
            row[mask] = rng.integers(0, N_DOCS_CORPUS, size=int(mask.sum()))


def make(n_queries: int = 6980, depth: int = 1000, seed: int = 20240,
         out: Path = WORK) -> tuple[Path, Path]:
    rng = np.random.default_rng(seed)
    out.mkdir(parents=True, exist_ok=True)
    qids = np.sort(rng.choice(N_QUERY_IDS, size=n_queries, replace=False))

    # ---- run: BM25-like scores, descending within a query, 4 printed decimals
    top = rng.normal(22.0, 4.0, size=(n_queries, 1)).clip(8.0, None)
    span = rng.uniform(6.0, 12.0, size=(n_queries, 1))
    # decreasing, convex profile: steep at the top, flat in the tail
    x = np.sort(rng.random((n_queries, depth)), axis=1)[:, ::-1]
    scores = np.round(top - span * (1.0 - x) ** 0.35, 4)
    scores = -np.sort(-scores, axis=1)  # non-increasing after rounding
    docs = _unique_docs(rng, n_queries, depth)

    # ---- qrels: 1 relevant per query plus EXTRA_RELEVANT second/third ones
    n_rel = np.ones(n_queries, dtype=np.int64)
    np.add.at(n_rel, rng.choice(n_queries, size=EXTRA_RELEVANT, replace=True), 1)
    n_rel = np.minimum(n_rel, 4)
    q_of_rel = np.repeat(np.arange(n_queries), n_rel)
    retrieved = rng.random(q_of_rel.size) < P_RETRIEVED
    # rank of a retrieved relevant passage: log-uniform-ish, skewed to the top
    ranks = np.minimum((np.exp(rng.random(q_of_rel.size) * np.log(depth * 2.2)) - 1), depth - 1)
    ranks = ranks.astype(np.int64)
    rel_docs = np.empty(q_of_rel.size, dtype=np.int64)
    used: set[tuple[int, int]] = set()
    for i, (q, r) in enumerate(zip(q_of_rel, ranks, strict=True)):
        if retrieved[i] and (q, r) not in used:
            used.add((int(q), int(r)))
            rel_docs[i] = docs[q, r]
        else:  # not retrieved: a passage outside this query's list
            listed = set(docs[q].tolist())
            while True:
                d = int(rng.integers(0, N_DOCS_CORPUS))
                if d not in listed:
                    break
            rel_docs[i] = d

    qid_s = qids.astype(str)
    run = pl.DataFrame(
        {
            "qid": np.repeat(qid_s, depth),
            "q0": "Q0",
            "docid": docs.ravel().astype(str),
            "rank": np.tile(np.arange(1, depth + 1, dtype=np.int64), n_queries),
            "score": scores.ravel(),
            "tag": "bm25",
        }
    )
    qrels = pl.DataFrame(
        {"qid": qid_s[q_of_rel], "it": "0", "docid": rel_docs.astype(str), "rel": 1}
    ).unique(["qid", "docid"], maintain_order=True)
    run_path, qrels_path = out / "run.trec", out / "qrels.trec"
    run.write_csv(run_path, separator=" ", include_header=False, float_precision=4)
    qrels.write_csv(qrels_path, separator=" ", include_header=False)
    return run_path, qrels_path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--queries", type=int, default=6980)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=20240)
    ap.add_argument("--out", type=Path, default=WORK)
    a = ap.parse_args()
    t = time.perf_counter()
    run_path, qrels_path = make(a.queries, a.depth, a.seed, a.out)
    n_run = run_path.read_bytes().count(b"\n")
    n_qrels = qrels_path.read_bytes().count(b"\n")
    print(f"wrote {run_path} ({n_run:,} lines, {run_path.stat().st_size / 1e6:.0f} MB) and "
          f"{qrels_path} ({n_qrels:,} lines, {n_qrels / a.queries:.3f} relevant per query) "
          f"in {time.perf_counter() - t:.1f} s")


if __name__ == "__main__":
    main()
