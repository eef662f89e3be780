"""Out of core on one machine: time and peak memory of ``sef.evaluate`` on a Parquet run
of 1M to 100M rows (1,000 documents per query), evaluated by query-id parts.

For each size: the run is generated in chunks of queries straight into one Parquet
file (sorted by query id, row groups of 1M rows) with its qrels, then
``sef.evaluate(path, qrels_path, measures)`` runs in a fresh process that reports
its wall time and peak RSS (``VmHWM``). At ``--check-rows`` (10M) a second
fresh process evaluates the same file in memory (``pl.read_parquet`` then
``sef.evaluate`` on the frame, one part) and compares every per-query value with
the out-of-core result. The curve goes into ``benchmarks/RESULTS.md`` (section
"Out of core"); generated data is deleted afterwards unless ``--keep``.

Usage::

    python benchmarks/bench_scale.py                       # 1M, 10M, 50M, 100M rows
    python benchmarks/bench_scale.py --sizes 1e6,1e7 --no-write
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = HERE / "_work" / "scale"
MEASURES = ["P@10", "R@100", "RR", "nDCG@10", "AP", "Judged@10"]
DEPTH = 1000
CHUNK_QUERIES = 2000


def _rss_mb() -> float:
    """Peak RSS of this process in MB: VmHWM, which exec resets (``ru_maxrss`` keeps the
    forking parent's peak, so a big parent would show up in its children)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def generate(rows: int, out: Path, seed: int = 7) -> tuple[Path, Path, float]:
    """A ``rows``-row run (DEPTH documents per query) and its qrels, written chunk by chunk."""
    import numpy as np
    import polars as pl
    import pyarrow.parquet as pq

    out.mkdir(parents=True, exist_ok=True)
    run_path, qrels_path = out / "run.parquet", out / "qrels.parquet"
    n_q = rows // DEPTH
    rng = np.random.default_rng(seed)
    writer = None
    qrels_parts = []
    t0 = time.perf_counter()
    for start in range(0, n_q, CHUNK_QUERIES):
        k = min(CHUNK_QUERIES, n_q - start)
        qid = np.repeat(np.arange(start, start + k), DEPTH)
        docs = rng.integers(0, 50_000_000, size=(k, DEPTH))
        docs = np.sort(docs, axis=1)  # distinct within a query unless equal neighbours
        docs[:, 1:] += np.cumsum(docs[:, 1:] == docs[:, :-1], axis=1)  # make them distinct
        rng.permuted(docs, axis=1, out=docs)
        # descending scores with two decimals: ties occur, as in real runs
        scores = -np.sort(-np.round(rng.gamma(2.0, 3.0, size=(k, DEPTH)), 2), axis=1)
        chunk = pl.DataFrame({
            "query_id": pl.Series(qid).cast(pl.String).str.zfill(8),
            "doc_id": pl.Series(docs.ravel()).cast(pl.String),
            "score": scores.ravel(),
        }).with_columns(pl.format("q{}", "query_id").alias("query_id"))
        table = chunk.to_arrow()
        if writer is None:
            writer = pq.ParquetWriter(run_path, table.schema)
        writer.write_table(table, row_group_size=1_000_000)
        # ~6 labels per query: 4 retrieved (skewed to the top), 2 not retrieved; grades 0..3
        pos = np.minimum((rng.pareto(1.2, size=(k, 4)) * 20).astype(int), DEPTH - 1)
        judged = docs[np.arange(k)[:, None], pos]
        unseen = rng.integers(50_000_000, 60_000_000, size=(k, 2))
        lab = np.concatenate([judged, unseen], axis=1)
        qrels_parts.append(pl.DataFrame({
            "query_id": pl.Series(np.repeat(np.arange(start, start + k), 6)).cast(pl.String)
            .str.zfill(8),
            "doc_id": pl.Series(lab.ravel()).cast(pl.String),
            "relevance": rng.integers(0, 4, size=k * 6),
        }).with_columns(pl.format("q{}", "query_id").alias("query_id"))
          .unique(["query_id", "doc_id"], keep="first", maintain_order=True))
    assert writer is not None
    writer.close()
    pl.concat(qrels_parts).write_parquet(qrels_path)
    return run_path, qrels_path, time.perf_counter() - t0


def worker(mode: str, run_path: str, qrels_path: str) -> dict:
    """One evaluation in this fresh process; prints JSON."""
    import polars as pl

    import searcheval_frames as sef
    from searcheval_frames.core import partitioned

    base = _rss_mb()
    qrels = pl.read_parquet(qrels_path)
    t0 = time.perf_counter()
    cpu0 = sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
    if mode == "scan":
        scan = partitioned.scan_run(run_path)
        parts = 1 if scan is None else len(scan.bounds) + 1
        res = sef.evaluate(run_path, qrels, MEASURES, per_query=True)
    else:  # in memory, one part
        run = pl.read_parquet(run_path)
        partitioned.ROWS_PER_PART = run.height + 1
        parts = 1
        res = sef.evaluate(run, qrels, MEASURES, per_query=True)
    secs = time.perf_counter() - t0
    cpu = sum(resource.getrusage(resource.RUSAGE_SELF)[:2]) - cpu0
    means = res.group_by("measure", maintain_order=True).agg(pl.col("value").mean())
    out = {"mode": mode, "seconds": secs, "cpu": cpu, "rss_peak_mb": _rss_mb(),
           "rss_base_mb": base, "parts": parts, "queries": res["query_id"].n_unique(),
           "means": dict(means.iter_rows())}
    res.write_parquet(Path(run_path).parent / f"per_query_{mode}.parquet")
    return out


def _spawn(*args: str) -> dict:
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", *args],
                          capture_output=True, text=True, env=env)
    if proc.returncode:
        raise RuntimeError(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def agreement(folder: Path) -> dict:
    import polars as pl

    a = pl.read_parquet(folder / "per_query_scan.parquet")
    b = pl.read_parquet(folder / "per_query_memory.parquet")
    return {"values": a.height, "same_rows": a.select("run", "query_id", "measure").equals(
        b.select("run", "query_id", "measure")),
        "equal_values": int((a["value"] == b["value"]).sum()),
        "bit_identical": a.equals(b)}


def write_section(text: str, path: Path, tag: str) -> None:
    start, end = f"<!-- {tag}:start -->", f"<!-- {tag}:end -->"
    old = path.read_text() if path.exists() else ""
    block = f"{start}\n{text.rstrip()}\n{end}\n"
    if start in old and end in old:
        new = old[: old.index(start)] + block + old[old.index(end) + len(end) + 1:]
    else:
        new = old.rstrip() + "\n\n" + block
    path.write_text(new)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--worker", nargs=3, metavar=("MODE", "RUN", "QRELS"))
    ap.add_argument("--sizes", default="1e6,1e7,5e7,1e8")
    ap.add_argument("--check-rows", type=float, default=1e7)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args()
    if a.worker:
        print(json.dumps(worker(*a.worker)))
        return
    rows_list = [int(float(s)) for s in a.sizes.split(",")]
    results = []
    load_start = _load()
    for rows in rows_list:
        folder = WORK / f"{rows}"
        run_path, qrels_path, gen = generate(rows, folder)
        size_mb = run_path.stat().st_size / 1e6
        print(f"{rows:,} rows: generated in {gen:.0f} s ({size_mb:.0f} MB)", flush=True)
        load = _load()
        r = _spawn("scan", str(run_path), str(qrels_path))
        r.update(rows=rows, file_mb=size_mb, load=load, gen_s=gen)
        if rows == int(a.check_rows):
            mem = _spawn("memory", str(run_path), str(qrels_path))
            r["memory"] = mem
            r["agree"] = agreement(folder)
        print(json.dumps(r), flush=True)
        results.append(r)
        if not a.keep:
            shutil.rmtree(folder)
    load_end = _load()
    if a.no_write:
        return
    lines = [
        "## Out of core (one machine): `sef.evaluate` on a Parquet run by query-id parts",
        "",
        "Generated by `python benchmarks/bench_scale.py` on "
        f"{time.strftime('%Y-%m-%d %H:%M')} UTC. One fresh process per size: "
        f"`sef.evaluate(run.parquet, qrels, {MEASURES}, per_query=True)`; the run has "
        f"{DEPTH:,} documents per query (two-decimal scores with ties), ~6 graded labels per "
        "query (4 retrieved, 2 not), sorted by query id, row groups of 1M rows. Parts of "
        "about `ROWS_PER_PART` = 5M rows. Seconds are wall clock (CPU s = user + system, "
        "all threads); peak RSS is the process's `VmHWM` (absolute, includes "
        "Python, polars and the per-query result).",
        "",
        f"Load average at the start / end: {load_start} / {load_end} (2 cores shared with "
        "other jobs: wall times are inflated by the load; CPU seconds much less).",
        "",
        "| rows | queries | Parquet MB | parts | seconds | CPU s | peak RSS MB | load at start |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(f"| {r['rows']:,} | {r['queries']:,} | {r['file_mb']:.0f} | {r['parts']} | "
                     f"{r['seconds']:.1f} | {r['cpu']:.1f} | {r['rss_peak_mb']:.0f} | "
                     f"{r['load']} |")
    for r in results:
        if "memory" in r:
            m, ag = r["memory"], r["agree"]
            lines += [
                "",
                f"In memory at {r['rows']:,} rows (`pl.read_parquet` + `sef.evaluate` on the "
                f"frame, one part): {m['seconds']:.1f} s, peak RSS {m['rss_peak_mb']:.0f} MB. "
                f"Per-query values: {ag['equal_values']:,} of {ag['values']:,} equal "
                f"(bit for bit: {ag['bit_identical']}); rows in the same order: "
                f"{ag['same_rows']}.",
            ]
    big = max(results, key=lambda r: r["rows"])
    lines += ["", f"Target: peak RSS < 6 GB at 100M rows → **{big['rss_peak_mb'] / 1024:.2f} GB "
              f"at {big['rows']:,} rows** ({'met' if big['rss_peak_mb'] < 6144 else 'missed'})."]
    write_section("\n".join(lines), HERE / "RESULTS.md", "scale")


if __name__ == "__main__":
    main()
