"""Issue 32 (adapters and sweeps): what the embedded systems and a sweep cost.

Run from the repository root (needs ../shared/data/cranfield)::

    python benchmarks/bench_systems.py

1. Cranfield (1,400 documents, 225 queries): index build of ``sqlite_fts`` and ``bm25``,
   time per query of ``sqlite_fts``, ``bm25`` and ``rerank`` (client wall time and process
   CPU time: on a loaded machine the wall tail is the scheduler's, the CPU time the code's).
2. A sweep of BM25's k1 x b (5 x 4 points) on Cranfield: total time, the best point, the
   range of nDCG@10 and of the labelled share of the top 20, and a re-run from the cache.
3. ``elasticsearch`` against the test service (tests/search_service.py) with a fixed
   20 ms service time: one ``_search`` per query vs ``_msearch`` batches.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import polars as pl

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

import searcheval_frames as sef  # noqa: E402
from searcheval_frames.systems import bm25, rerank, sqlite_fts  # noqa: E402

CRAN = REPO.parent / "shared" / "data" / "cranfield"


def cranfield() -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    text = (CRAN / "cran.all.1400").read_text(encoding="utf-8")
    docs = []
    for block in re.split(r"^\.I ", text, flags=re.M)[1:]:
        did, rest = block.split("\n", 1)
        fields = dict(re.findall(r"^\.([TAWB])\n(.*?)(?=^\.[TAWB]\n|\Z)", rest, flags=re.M | re.S))
        docs.append((did.strip(), fields.get("T", "").strip(), fields.get("W", "").strip()))
    docs_df = pl.DataFrame(docs, schema=["doc_id", "title", "text"], orient="row")
    queries = pl.read_csv(CRAN / "topics.cranfield.tsv", separator="\t", comment_prefix="#",
                          has_header=False, new_columns=["query_id", "num", "query"],
                          schema_overrides={"query_id": pl.String, "num": pl.String})
    qrels = sef.read_qrels(CRAN / "qrels.cranfield.txt")
    return docs_df, queries.select("query_id", "query"), qrels


def per_query(system, queries: pl.DataFrame, k: int = 20) -> tuple[float, float, float]:
    """p50 and p95 wall ms, and mean CPU ms per query (direct calls, no runner)."""
    walls, cpu0 = [], time.process_time()
    for qid, q in queries.iter_rows():
        t = time.perf_counter()
        system.search(qid, q, k)
        walls.append(time.perf_counter() - t)
    cpu = (time.process_time() - cpu0) / queries.height
    w = np.array(walls) * 1000
    return float(np.percentile(w, 50)), float(np.percentile(w, 95)), cpu * 1000


def main() -> None:
    print(f"load: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    docs, queries, qrels = cranfield()
    print(f"Cranfield: {docs.height} documents, {queries.height} queries")
    t = time.perf_counter()
    fts = sqlite_fts(docs)
    t_fts = time.perf_counter() - t
    t = time.perf_counter()
    base = bm25(docs)
    t_bm25 = time.perf_counter() - t
    t = time.perf_counter()
    rr = rerank(fts, docs, depth=30)
    t_rr = time.perf_counter() - t
    print("| system | build s | p50 ms | p95 ms | CPU ms/query |\n|---|---|---|---|---|")
    for name, s, b in (("sqlite_fts", fts, t_fts), ("bm25 (numpy)", base, t_bm25),
                       ("rerank(sqlite_fts, depth=30)", rr, t_rr)):
        p50, p95, cpu = per_query(s, queries)
        print(f"| {name} | {b:.3f} | {p50:.3f} | {p95:.3f} | {cpu:.3f} |")

    grid = {"k1": [0.6, 0.9, 1.2, 1.5, 2.0], "b": [0.3, 0.5, 0.75, 0.9]}
    with tempfile.TemporaryDirectory() as d, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cache = Path(d) / "c.db"
        t = time.perf_counter()
        res = sef.sweep(lambda k1, b: base.with_params(k1=k1, b=b), grid, queries=queries,
                        qrels=qrels, measures=["nDCG@10", "AP"], k=20, cache=cache)
        first = time.perf_counter() - t
        t = time.perf_counter()
        sef.sweep(lambda k1, b: base.with_params(k1=k1, b=b), grid, queries=queries,
                  qrels=qrels, measures=["nDCG@10", "AP"], k=20, cache=cache)
        again = time.perf_counter() - t
    tab = res.table
    best = res.best("nDCG@10")
    print(f"\nsweep 5x4 on Cranfield: {first:.2f} s ({first / 20:.3f} s per point); again "
          f"from the cache {again:.2f} s")
    print(f"nDCG@10 {tab['nDCG@10'].min():.4f} .. {tab['nDCG@10'].max():.4f}; best "
          f"k1={best['k1']} b={best['b']} ({best['nDCG@10']:.4f}); labelled share of the "
          f"top 20 {tab['labelled'].min():.3f} .. {tab['labelled'].max():.3f}; points below "
          f"0.9: {int(tab['below_min_judged'].sum())} of {tab.height}")
    print(tab.select("k1", "b", "nDCG@10", "AP", "labelled").sort("nDCG@10", descending=True)
          .head(5))
    engines()


def engines() -> None:
    from search_service import SearchService

    qs = pl.read_csv(REPO / "data" / "example" / "queries.tsv", separator="\t")
    with SearchService(delay=0.02) as svc, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        print("\n| elasticsearch adapter, 38 queries, 20 ms service time | wall s |\n|---|---|")
        for label, batch, conc in (("one _search per query, 1 at a time", None, 1),
                                   ("one _search per query, max_concurrency=8", None, 8),
                                   ("_msearch, batch_size=50", 50, 1)):
            es = sef.systems.elasticsearch(svc.url, "docs", batch_size=batch or 50)
            es.batch_size = batch
            t = time.perf_counter()
            sef.retrieve(es, qs, 20, cache=False, max_concurrency=conc)
            print(f"| {label} | {time.perf_counter() - t:.3f} |")


if __name__ == "__main__":
    main()
