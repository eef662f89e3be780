"""Prototypes of faster stages for ``sef.evaluate`` (not used by the package).

Each prototype is checked against the package's own result before it is timed:

* ``fast_duplicate_check``: one 64-bit hash per row and ``n_unique`` instead of
  ``pl.struct(key).is_duplicated()``; only on a hash collision does it fall back
  to the exact check (so it is exact).
* ``query_codes``: integer codes for (run, query) from ``rle_id`` when each
  query's rows are contiguous (as in every TREC file), verified on the ~7k
  group heads; otherwise a dense rank. All later joins/group-bys use u32 keys.
* ``fast_rank_judged``: like ``ranking.rank_judged`` (strategy "count") but
  keyed on the integer codes, counting strictly-better scores with a numeric
  join and handling score ties with a separate (small) equality join.

Usage::

    python benchmarks/prototypes.py
"""

from __future__ import annotations

import importlib
import time
from contextlib import contextmanager
from pathlib import Path

import polars as pl

import searcheval_frames as sef
from searcheval_frames import frames
from searcheval_frames.core import ranking
from searcheval_frames.measures import parse_measures

ev = importlib.import_module("searcheval_frames.core.evaluate")
WORK = Path(__file__).resolve().parent / "_work"
MEASURES = ["P@10", "R@100", "R@1000", "RR@10", "nDCG@10", "AP"]
KEYS = ["run", "query_id"]


@contextmanager
def timer(label: str, out: dict[str, tuple[float, float]] | None = None):
    t, c = time.perf_counter(), time.process_time()
    yield
    dt, dc = time.perf_counter() - t, time.process_time() - c
    if out is not None:
        out[label] = (dt, dc)
    print(f"{dt:8.3f} s wall {dc:7.3f} s cpu  {label}", flush=True)


# --------------------------------------------------------------------------- prototypes
def fast_duplicate_check(run: pl.DataFrame) -> bool:
    """True when (run, query_id, doc_id) is unique; exact (hash, then exact on collision)."""
    h = pl.col("query_id").hash(1) ^ pl.col("doc_id").hash(2)
    if run.get_column("run").n_unique() > 1:
        h = h ^ pl.col("run").hash(3)
    if run.select(h.n_unique()).item() == run.height:
        return True
    return not run.select(pl.struct("run", "query_id", "doc_id").is_duplicated().any()).item()


def query_codes(run: pl.DataFrame) -> pl.DataFrame:
    """Add ``_q`` (u32), one code per (run, query); cheap when queries are contiguous."""
    if run.get_column("run").n_unique() == 1:
        code = pl.col("query_id").rle_id()
    else:
        code = pl.struct("run", "query_id").rle_id()
    out = run.with_columns(code.alias("_q"))
    heads = out.filter(pl.col("_q") != pl.col("_q").shift(1).fill_null(-1))
    if heads.select(pl.struct(KEYS).n_unique()).item() == heads.height:
        return out  # every (run, query) is one contiguous block
    return run.with_columns(
        pl.struct(KEYS).rank("dense").cast(pl.UInt32).alias("_q")
    )


def fast_rank_judged(run: pl.DataFrame, qrels: pl.DataFrame, **_: object) -> ranking.RankedJudged:
    run = query_codes(run.select("run", "query_id", "doc_id", "score"))
    counts = run.group_by("_q").agg(pl.first("run"), pl.first("query_id"),
                                    pl.len().cast(pl.Int64).alias("num_ret"))
    # judged retrieved documents: a cheap doc-id pre-filter, then the exact join
    cand = run.filter(pl.col("doc_id").is_in(qrels.get_column("doc_id").unique().implode()))
    hits = cand.join(qrels, on=["query_id", "doc_id"], how="inner").with_row_index("_h")
    slim = run.select("_q", "score")
    better = (
        hits.select("_h", "_q", pl.col("score").alias("_s"))
        .join(slim, on="_q")
        .filter(pl.col("score") > pl.col("_s"))
        .group_by("_h")
        .agg(pl.len().alias("_b"))
    )
    tied = (
        hits.select("_h", "_q", "score", pl.col("doc_id").alias("_d"))
        .join(run.select("_q", "score", "doc_id"), on=["_q", "score"])
        .filter(pl.col("doc_id") > pl.col("_d"))
        .group_by("_h")
        .agg(pl.len().alias("_t"))
    )
    judged = (
        hits.join(better, on="_h", how="left")
        .join(tied, on="_h", how="left")
        .select(*KEYS, "doc_id", "relevance",
                (pl.col("_b").fill_null(0) + pl.col("_t").fill_null(0) + 1)
                .cast(pl.Int64).alias("rank"))
        .sort([*KEYS, "rank"])
    )
    return ranking.RankedJudged(judged, counts.select(*KEYS, "num_ret"))


# --------------------------------------------------------------------------- driver
def main() -> None:
    print(f"polars {pl.__version__}, threads {pl.thread_pool_size()}")
    t: dict[str, tuple[float, float]] = {}
    with timer("sef.read_run", t):
        run = sef.read_run(WORK / "run.trec")
    with timer("pl.scan_csv: only query, doc, score columns", t):
        pl.scan_csv(WORK / "run.trec", separator=" ", has_header=False,
                    new_columns=["query_id", "q0", "doc_id", "rank", "score", "tag"],
                    schema_overrides={"query_id": pl.String, "doc_id": pl.String,
                                      "score": pl.Float64}
                    ).select("query_id", "doc_id", "score").collect()
    qrels = sef.read_qrels(WORK / "qrels.trec")
    canon = frames.run_frame(run, validate=False)
    qr = frames.qrels_frame(qrels)

    with timer("duplicate check: package (struct is_duplicated)", t):
        a = not canon.select(pl.struct("run", "query_id", "doc_id").is_duplicated().any()).item()
    with timer("duplicate check: prototype (hash n_unique)", t):
        b = fast_duplicate_check(canon)
    assert a == b

    with timer("query codes via rle_id (+ contiguity check)", t):
        coded = query_codes(canon)
    assert coded["_q"].n_unique() == canon.select(KEYS).unique().height

    with timer("rank_judged: package strategy=count", t):
        ref = ranking.rank_judged(canon, qr, strategy="count")
    with timer("rank_judged: prototype (u32 keys, ties apart)", t):
        new = fast_rank_judged(canon, qr)
    assert ref.judged.sort([*KEYS, "rank"]).equals(new.judged), "judged frames differ"
    assert ref.num_ret.sort(KEYS).equals(new.num_ret.sort(KEYS)), "num_ret differs"
    print("           prototype ranks == package ranks (all judged documents)")

    ms = parse_measures(MEASURES)
    with timer("evaluate_frames: package", t):
        want = ev.evaluate_frames(canon, qr, ms)
    orig = ev.rank_judged
    ev.rank_judged = fast_rank_judged
    try:
        with timer("evaluate_frames: with prototype rank_judged", t):
            got = ev.evaluate_frames(canon, qr, ms)
    finally:
        ev.rank_judged = orig
    assert want.equals(got), (want, got)
    print("           prototype means == package means")
    print(got)

    print("\nEstimated end to end from file (CPU s): package read_run + run_frame "
          "(struct dup check) + evaluate_frames vs prototype read + hash dup check + "
          "prototype evaluate_frames")
    pkg = t["sef.read_run"][1] + t["duplicate check: package (struct is_duplicated)"][1] + \
        t["evaluate_frames: package"][1]
    pro = t["pl.scan_csv: only query, doc, score columns"][1] + \
        t["duplicate check: prototype (hash n_unique)"][1] + \
        t["evaluate_frames: with prototype rank_judged"][1]
    print(f"package ~{pkg:.2f} s cpu, prototype ~{pro:.2f} s cpu")


if __name__ == "__main__":
    main()
