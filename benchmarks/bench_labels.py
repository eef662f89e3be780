"""Issue #33: the label store's speed, measured.

* commit latency: 8 writer processes appending to one store (SQLite file; PostgreSQL
  started locally by tests/pg_server.py, with ``fsync = on``), each timing its
  ``store.append`` from call to return (the label committed: what the widget waits for
  before it says "saved"). Two paces: "assessors" (each writer pauses 0–50 ms between
  labels, already ~50 times faster than a person) and "flat out" (no pause, the file's
  or server's saturation).
* the widget's "keypress to saved": the Python side of one label message (commit, next
  pair routed for a team of 8 with ``per_pair=2``, progress and ETA synced), timed
  in-process on a pool of 2,000 pairs (the browser's round trip is not included).
* importing a 100,000-label journal, and ``store.qrels()`` of 100,000 labels.

Usage::

    python benchmarks/bench_labels.py            # prints a Markdown section
    python benchmarks/bench_labels.py --quick    # fewer labels per writer
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
os.environ.setdefault("POLARS_ALLOW_FORKING_THREAD", "1")

from searcheval_frames.evalset.store import LabelStore  # noqa: E402

WRITERS = 8


def _writer(target: str, who: str, n: int, pause_ms: float, barrier, out) -> None:
    store = LabelStore(target, assessor=who)
    rng = random.Random(who)
    lat = []
    barrier.wait()
    for i in range(n):
        t0 = time.perf_counter()
        store.append(f"q{i % 50}", f"{who}-{i}", i % 4, seconds=2.0)
        lat.append(time.perf_counter() - t0)
        if pause_ms:
            time.sleep(rng.uniform(0, pause_ms) / 1000)
    store.close()
    out.put(lat)


def commit_latency(target: str, n: int, pause_ms: float, writers: int = WRITERS
                   ) -> dict[str, float]:
    LabelStore(target).close()
    ctx = mp.get_context("fork")
    barrier, out = ctx.Barrier(writers), ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(target, f"w{k}", n, pause_ms, barrier, out))
             for k in range(writers)]
    t0 = time.perf_counter()
    for p in procs:
        p.start()
    lat = np.concatenate([np.asarray(out.get()) for _ in procs]) * 1000
    for p in procs:
        p.join()
    wall = time.perf_counter() - t0
    return {"n": float(lat.size), "p50": float(np.percentile(lat, 50)),
            "p99": float(np.percentile(lat, 99)), "max": float(lat.max()),
            "rate": lat.size / wall}


def widget_latency(target: str, n: int) -> dict[str, float]:
    import polars as pl

    import searcheval_frames as sef

    pool = pl.DataFrame({"query_id": [f"q{i // 20}" for i in range(2000)],
                         "doc_id": [f"d{i}" for i in range(2000)],
                         "best_rank": [i % 20 + 1 for i in range(2000)]})
    store = LabelStore(target, assessor="seed")
    store.extend(pool.head(1200).select("query_id", "doc_id",  # a team half way through
                                        pl.lit(1).alias("relevance")), assessor="seed")
    w = sef.label_widget(pool, store=target, assessor="ana", per_pair=2)
    w.send = lambda *a, **k: None  # type: ignore[method-assign]
    saved_at: list[float] = []
    w.observe(lambda ch: saved_at.append(time.perf_counter())
              if str(ch["new"]).startswith("saved") else None, names="status")
    lat, full = [], []
    for seq in range(1, n + 1):
        t0 = time.perf_counter()
        w._on_msg(w, {"action": "label", "grade": seq % 4, "index": w.position, "view": "v",
                      "seq": seq, "behind": False}, [])
        full.append((time.perf_counter() - t0) * 1000)
        lat.append((saved_at[-1] - t0) * 1000)
    a, b = np.asarray(lat), np.asarray(full)
    return {"n": float(a.size), "p50": float(np.percentile(a, 50)),
            "p99": float(np.percentile(a, 99)), "max": float(a.max()),
            "full_p50": float(np.percentile(b, 50)), "full_p99": float(np.percentile(b, 99))}


def bulk(target: str, folder: Path) -> dict[str, float]:
    journal = folder / "big.jsonl"
    if not journal.exists():
        j = LabelStore(journal, assessor="ana")
        j.append_many((f"q{i % 500}", f"d{i}", i % 4, None) for i in range(100_000))
        j.close()
    store = LabelStore(target, assessor="x")
    t0, c0 = time.perf_counter(), time.process_time()
    got = store.import_journal(journal)
    t_import, c_import = time.perf_counter() - t0, time.process_time() - c0
    assert got.added == 100_000, got
    times = []
    for _ in range(3):
        t0, c0 = time.perf_counter(), time.process_time()
        q = store.qrels()
        times.append((time.perf_counter() - t0, time.process_time() - c0))
    assert q.height == 100_000
    best = min(times)
    return {"import": t_import, "import_cpu": c_import, "qrels": best[0], "qrels_cpu": best[1]}


def _pg(fsync: bool):
    from pg_server import PostgresServer

    server = PostgresServer()
    if fsync:
        with open(server.data / "postgresql.conf", "a") as f:
            f.write("fsync = on\nsynchronous_commit = on\n")
        server.stop()
        server.start()
    return server


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    n = 100 if args.quick else 300
    folder = Path(tempfile.mkdtemp(prefix="bench-labels-"))
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    rows = []
    server = _pg(fsync=True)
    try:
        targets = {"SQLite (file, WAL, synchronous=FULL)": lambda k: str(folder / f"{k}.db"),
                   "PostgreSQL 15 local (fsync on)": lambda k: server.create_database()}
        for name, make in targets.items():
            for writers, pace, pause in ((1, "alone", 0.0), (8, "assessors (0-50 ms pauses)", 50.0),
                                         (8, "flat out", 0.0)):
                r = commit_latency(make(f"c{writers}{pause}"), n, pause, writers)
                rows.append(f"| {name} | {writers} writer(s), {pace} | {r['n']:.0f} | "
                            f"{r['p50']:.1f} | {r['p99']:.1f} | {r['max']:.1f} | "
                            f"{r['rate']:.0f} |")
            r = widget_latency(make("w"), 200)
            rows.append(f"| {name} | widget: label message to \"saved\" (team, 2,000 pairs) | "
                        f"{r['n']:.0f} | {r['p50']:.1f} | {r['p99']:.1f} | {r['max']:.1f} | |")
            rows.append(f"| {name} | widget: whole message (next pair routed, view synced) | "
                        f"{r['n']:.0f} | {r['full_p50']:.1f} | {r['full_p99']:.1f} | | |")
        bulk_rows = []
        for name, make in targets.items():
            b = bulk(make("bulk"), folder)
            bulk_rows.append(f"| {name} | {b['import']:.2f} ({b['import_cpu']:.2f} CPU) | "
                             f"{b['qrels']:.3f} ({b['qrels_cpu']:.3f} CPU) |")
    finally:
        server.close()
    print(f"Machine load at start: {load} (2 cores shared); {n} labels per writer.\n")
    print("| store | writers | labels | p50 ms | p99 ms | max ms | labels/s |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    print("\n| store | import 100,000-label journal, wall s (this process's CPU s) | "
          "qrels() of 100,000 labels, wall s (CPU s) |")
    print("|---|---|---|")
    print("\n".join(bulk_rows))
    print(f"\nload at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
