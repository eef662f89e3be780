"""Where does searcheval_frames spend its time on the benchmark run?

Times the stages of ``sef.evaluate`` separately (reading, ``run_frame`` and its
validation steps, ``qrels_frame``, ``rank_judged`` with each strategy, the rest
of ``evaluate_frames``), for a frame from ``read_run`` and for a plain polars
frame. Usage::

    python benchmarks/profile_sef.py [--quick]
"""

from __future__ import annotations

import argparse
import importlib
import time
from contextlib import contextmanager
from pathlib import Path

import polars as pl

import searcheval_frames as sef
from searcheval_frames import frames
from searcheval_frames.core import ranking
from searcheval_frames.measures import Context, parse_measures

ev = importlib.import_module("searcheval_frames.core.evaluate")  # the module, not the function

WORK = Path(__file__).resolve().parent / "_work"
MEASURES = ["P@10", "R@100", "R@1000", "RR@10", "nDCG@10", "AP"]
ROWS: list[tuple[str, float]] = []


@contextmanager
def timer(label: str):
    t = time.perf_counter()
    c = time.process_time()
    yield
    dt = time.perf_counter() - t
    cpu = time.process_time() - c
    ROWS.append((label, dt))
    print(f"{dt:8.3f} s wall {cpu:7.3f} s cpu  {label}", flush=True)


def profile_frame(tag: str, run_in: pl.DataFrame, qrels_in: pl.DataFrame) -> None:
    print(f"--- {tag}: {run_in.height:,} rows, {run_in.n_chunks()} chunk(s), "
          f"columns {run_in.columns}")
    with timer(f"[{tag}] sef.evaluate total"):
        sef.evaluate(run_in, qrels_in, MEASURES)
    with timer(f"[{tag}] run_frame (validate=True)"):
        run = frames.run_frame(run_in)
    with timer(f"[{tag}] run_frame (validate=False)"):
        frames.run_frame(run_in, validate=False)
    with timer(f"[{tag}]   validate: finite-score check"):
        _ = run.filter(pl.col("score").is_null() | ~pl.col("score").is_finite()).height
    key = ["run", "query_id", "doc_id"]
    with timer(f"[{tag}]   validate: duplicate check struct(key).is_duplicated()"):
        _ = run.filter(pl.struct(key).is_duplicated()).height
    with timer(f"[{tag}]   alt dup check: hash(qid)^hash(doc) n_unique == height"):
        h = pl.col("query_id").hash(1) ^ pl.col("doc_id").hash(2)
        ok = run.select(h.n_unique()).item() == run.height
    print(f"           (hash check says unique: {ok})")
    with timer(f"[{tag}]   alt dup check: sorted-within-query is_duplicated on hash"):
        run.select(pl.struct(key).hash().is_duplicated().any()).item()
    with timer(f"[{tag}] qrels_frame"):
        qrels = frames.qrels_frame(qrels_in)
    ms = parse_measures(MEASURES)
    with timer(f"[{tag}] evaluate_frames (auto)"):
        ev.evaluate_frames(run, qrels, ms)
    with timer(f"[{tag}]   query_table"):
        importlib.import_module("searcheval_frames.core.plan").query_table(run, qrels, "zero")
    for strat in ("count", "sort"):
        with timer(f"[{tag}]   rank_judged strategy={strat}"):
            ranking.rank_judged(run, qrels, strategy=strat)
    with timer(f"[{tag}]   rank_judged: group_by(run,query) len"):
        run.group_by(ranking.KEYS).agg(pl.len())
    with timer(f"[{tag}]   rank_judged: hits join (run x qrels)"):
        hits = run.join(qrels, on=["query_id", "doc_id"], how="inner")
    with timer(f"[{tag}]   rank_judged count: judged x run join + filter + group_by"):
        mine = hits.select(*ranking.KEYS, pl.col("doc_id").alias("_d"), pl.col("score").alias("_s"))
        (mine.join(run.select(*ranking.KEYS, "doc_id", "score"), on=ranking.KEYS)
         .filter((pl.col("score") > pl.col("_s"))
                 | ((pl.col("score") == pl.col("_s")) & (pl.col("doc_id") > pl.col("_d"))))
         .group_by([*ranking.KEYS, "_d"]).agg(pl.len()))
    ctx = Context()
    for m in ms:
        m.definition.agg(m, ctx, "_x")
    with timer(f"[{tag}]   _qrels_stats"):
        ev._qrels_stats(qrels, ctx)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="only the read_run frame")
    a = ap.parse_args()
    print(f"polars threads: {pl.thread_pool_size()}")
    with timer("sef.read_run"):
        run = sef.read_run(WORK / "run.trec")
    with timer("sef.read_qrels"):
        qrels = sef.read_qrels(WORK / "qrels.trec")
    with timer("pl.read_csv(run) (separator=' ', has_header=False)"):
        plain = pl.read_csv(WORK / "run.trec", separator=" ", has_header=False,
                            new_columns=["query_id", "q0", "doc_id", "rank", "score", "tag"],
                            schema_overrides={"query_id": pl.String, "doc_id": pl.String})
    plain = plain.select("query_id", "doc_id", "score")
    profile_frame("read_run frame", run, qrels)
    if not a.quick:
        with timer("rechunk read_run frame"):
            rech = run.rechunk()
        profile_frame("read_run frame, rechunked", rech, qrels)
        profile_frame("plain polars frame", plain, qrels)


if __name__ == "__main__":
    main()
