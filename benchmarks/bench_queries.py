"""Time the test-query tools of issue #34: sampling from a 10-million-row query log and
auditing 10,000 queries with near duplicates.

Goals: ``sef.sample_queries(log, 100)`` on a 10,000,000-row log (one row per search) in
<= 2 s; ``sef.audit_queries`` of 10,000 queries (near duplicates included) in <= 2 s.
Run: ``PYTHONPATH=. python benchmarks/bench_queries.py`` (``--write`` appends the table
to benchmarks/RESULTS.md).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import polars as pl

HERE = Path(__file__).resolve().parent
WORDS = [f"w{i}" for i in range(3000)]


def query_log(rows: int, distinct: int, seed: int = 0) -> pl.DataFrame:
    """One row per search: Zipf(1.1) popularity over ``distinct`` queries, some typed in
    upper case or with padding (so normalisation has work to do)."""
    rng = np.random.default_rng(seed)
    pick = np.minimum(rng.zipf(1.1, rows), distinct) - 1
    texts = pl.Series([" ".join(rng.choice(WORDS, rng.integers(1, 6))) for _ in range(distinct)])
    df = pl.DataFrame({"i": pick}).with_columns(pl.col("i").cast(pl.UInt32))
    typed = pl.Series(rng.integers(0, 20, rows))
    q = texts.gather(df["i"])
    return pl.DataFrame({"query": q, "t": typed}).select(
        pl.when(pl.col("t") == 0).then(pl.col("query").str.to_uppercase())
        .when(pl.col("t") == 1).then(pl.lit(" ") + pl.col("query") + pl.lit(" "))
        .otherwise(pl.col("query")).alias("query"))


def test_queries(n: int, seed: int = 1) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``n`` queries (a quarter near or exact duplicates of others), each with a source
    document of 120 words (a tenth of the queries copy a run of it)."""
    rng = np.random.default_rng(seed)
    docs = [" ".join(rng.choice(WORDS, 120)) for _ in range(2000)]
    qs, src = [], []
    for i in range(n):
        d = int(rng.integers(0, len(docs)))
        if i % 4 == 3 and qs:  # a near duplicate of an earlier query
            words = qs[int(rng.integers(0, len(qs)))].split()
            qs.append(" ".join([*words, "x"]))  # Jaccard n / (n + 1)
        elif i % 10 == 5:  # copies its document
            start = int(rng.integers(0, 100))
            qs.append(" ".join(docs[d].split()[start:start + 8]))
        else:
            qs.append(" ".join(rng.choice(WORDS, rng.integers(3, 8))))
        src.append(f"d{d}")
    q = pl.DataFrame({"query_id": [f"q{i}" for i in range(n)], "query": qs, "doc_id": src})
    return q, pl.DataFrame({"doc_id": [f"d{i}" for i in range(len(docs))], "text": docs})


def _time(fn) -> tuple[float, float]:
    t, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t, time.process_time() - c


def main() -> None:
    import searcheval_frames as sef

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", action="store_true")
    a = ap.parse_args()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    log = query_log(10_000_000, 200_000)
    small_log = log.head(100_000)
    q, docs = test_queries(10_000)
    sef.sample_queries(log.head(1000), 10)  # imports and first-call set-up
    sef.audit_queries(q.head(100), docs=docs.head(10), log=small_log.head(1000))  # + scipy
    rows = []
    for method in ("pptss", "stratified", "top", "random"):
        w, c = _time(lambda m=method: sef.sample_queries(log, 100, m, seed=0))
        rows.append((f"sample_queries(10,000,000-row log, 100, {method!r})", w, c))
    audit = sef.audit_queries(q)
    n_pairs = audit.details["near_duplicates"].height
    rows.append(("audit_queries(10,000 queries): texts, duplicates, near duplicates",
                 *_time(lambda: sef.audit_queries(q))))
    rows.append(("audit_queries(10,000 queries, docs=2,000 documents)",
                 *_time(lambda: sef.audit_queries(q, docs=docs))))
    rows.append(("audit_queries(10,000 queries, docs=..., log=100,000 searches)",
                 *_time(lambda: sef.audit_queries(q, docs=docs, log=small_log))))
    lines = ["", "## Issue #34: sampling and auditing test queries", "",
             f"`python benchmarks/bench_queries.py`; load average {load} (2 shared cores). "
             f"The audit found {n_pairs:,} near-duplicate pairs.", "",
             "| step | wall s | CPU s | goal |", "|---|---|---|---|"]
    for label, w, c in rows:
        lines.append(f"| {label} | {w:.2f} | {c:.2f} | <= 2 s |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.write:
        with open(HERE / "RESULTS.md", "a", encoding="utf-8") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
