"""Issue #35: how long structured comparisons take (wall and CPU seconds).

    PYTHONPATH=. python benchmarks/bench_structured.py

* the bundled example (63 queries x 3 systems x 3 seeds): compare_replicates with the
  numpy REML, statsmodels' MixedLM, and the hierarchical bootstrap (10,000 samples);
* synthetic: 500 queries x 3 systems x 5 seeds (numpy REML, bootstrap);
* compare_datasets / leaderboard_datasets: 13 datasets x 300 queries x 5 systems (two-stage
  bootstrap, 2,000 samples; the mixed model included);
* variance_components (ANOVA) on the 500-query set.
"""

from __future__ import annotations

import os
import time
import warnings
from pathlib import Path

import numpy as np
import polars as pl

import searcheval_frames as sef

DATA = Path(__file__).resolve().parents[1] / "data" / "structured"


def timed(label: str, fn) -> None:  # type: ignore[no-untyped-def]
    t0, c0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn()
    print(f"| {label} | {time.perf_counter() - t0:.2f} | {time.process_time() - c0:.2f} |")


def synthetic_replicates(n_q: int, n_sys: int, n_seeds: int) -> pl.DataFrame:
    rng = np.random.default_rng(0)
    base = rng.uniform(0.1, 0.9, n_q)
    rows = {"run": [], "seed": [], "query_id": [], "value": []}
    for s in range(n_sys):
        inter = rng.normal(0, 0.08, n_q)
        for r in range(n_seeds):
            v = base + 0.02 * s + inter + rng.normal(0, 0.01) + rng.normal(0, 0.03, n_q)
            rows["run"] += [f"s{s}"] * n_q
            rows["seed"] += [str(r)] * n_q
            rows["query_id"] += [f"q{q}" for q in range(n_q)]
            rows["value"] += v.tolist()
    return pl.DataFrame(rows).with_columns(pl.lit("nDCG@10").alias("measure"))


def synthetic_datasets(n_sets: int, n_q: int, n_sys: int) -> pl.DataFrame:
    rng = np.random.default_rng(1)
    parts = []
    for d in range(n_sets):
        base = rng.uniform(0.1, 0.9, n_q)
        for s in range(n_sys):
            parts.append(pl.DataFrame({
                "run": f"s{s}", "ds": f"d{d}", "query_id": [f"q{q}" for q in range(n_q)],
                "measure": "nDCG@10",
                "value": base + 0.01 * s + rng.normal(0, 0.05, n_q)}))
    return pl.concat(parts)


def main() -> None:
    print(f"load {os.getloadavg()}")
    schema = {"query_id": pl.String, "seed": pl.String}
    runs = pl.read_csv(DATA / "runs.csv", schema_overrides=schema)
    qrels = pl.read_csv(DATA / "qrels.csv", schema_overrides={"query_id": pl.String})
    pq = sef.evaluate(runs.with_columns(
        pl.concat_str(["collection", "query_id"], separator=":").alias("query_id"),
        pl.concat_str(["run", "seed"], separator="#").alias("run")).drop("collection", "seed"),
        qrels.with_columns(pl.concat_str(["collection", "query_id"], separator=":")
                           .alias("query_id")).drop("collection"), ["nDCG@10"], per_query=True)
    pq = pq.with_columns(pl.col("run").str.split("#").list.get(1).alias("seed"),
                         pl.col("run").str.split("#").list.get(0).alias("run"))
    print("| step | wall s | CPU s |\n|---|---|---|")
    for engine in ("numpy", "statsmodels"):
        timed(f"bundled, compare_replicates mixed ({engine})", lambda e=engine: sef.compare_replicates(
            per_query=pq, baseline="bm25", replicate="seed", engine=e))
    timed("bundled, compare_replicates bootstrap (10,000)", lambda: sef.compare_replicates(
        per_query=pq, baseline="bm25", replicate="seed", method="bootstrap"))
    timed("bundled, report(replicate=, dataset=) end to end", lambda: sef.report(
        runs, qrels, baseline="bm25", replicate="seed", dataset="collection"))
    big = synthetic_replicates(500, 3, 5)
    timed("500 q x 3 sys x 5 seeds, mixed (numpy)", lambda: sef.compare_replicates(
        per_query=big, baseline="s0", replicate="seed"))
    timed("500 q x 3 sys x 5 seeds, bootstrap (10,000)", lambda: sef.compare_replicates(
        per_query=big, baseline="s0", replicate="seed", method="bootstrap"))
    timed("500 q x 3 sys x 5 seeds, variance_components (ANOVA)",
          lambda: sef.variance_components(per_query=big))
    ds = synthetic_datasets(13, 300, 5)
    timed("13 datasets x 300 q x 5 sys, compare_datasets (mixed model incl.)",
          lambda: sef.compare_datasets(per_query=ds, baseline="s0", dataset="ds"))
    timed("13 datasets x 300 q x 5 sys, leaderboard_datasets",
          lambda: sef.leaderboard_datasets(per_query=ds, measure="nDCG@10", dataset="ds"))


if __name__ == "__main__":
    main()
