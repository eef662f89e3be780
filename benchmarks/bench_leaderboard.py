"""Time sef.leaderboard on 20 runs x 7,000 queries (randomised Tukey HSD, B = 10,000).

Writes its own marked section of benchmarks/RESULTS.md (tag ``leaderboard``) with the
load average, since the machine is shared. Run:
``PYTHONPATH=. python benchmarks/bench_leaderboard.py`` (``--no-write`` to only print).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_scale import _load, write_section  # noqa: E402

N_QUERIES, N_RUNS, B = 7_000, 20, 10_000


def matrix(seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    topic = rng.random((N_QUERIES, 1)) * 0.6
    effect = np.linspace(0.0, 0.05, N_RUNS)[None, :]
    return np.clip(topic + effect + rng.normal(0, 0.15, (N_QUERIES, N_RUNS)), 0, 1)


def main() -> None:
    import searcheval_frames as sef
    from searcheval_frames.analysis import leaderboard_stats as ls

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--json", action="store_true",
                    help="print one JSON line of the rows last and write nothing")
    a = ap.parse_args()
    X = matrix()
    pq = pl.DataFrame({
        "run": np.repeat([f"run{j:02d}" for j in range(N_RUNS)], N_QUERIES),
        "query_id": np.tile([f"q{i}" for i in range(N_QUERIES)], N_RUNS),
        "measure": "nDCG@10", "value": X.T.ravel()})
    load_start = _load()
    rows = []
    t, c = time.perf_counter(), time.process_time()
    ls.range_null(X[:50, :3], 10, np.random.default_rng(0))  # numba JIT (or cache load)
    rows.append(("numba kernel JIT / cache load (once per process)", time.perf_counter() - t,
                 time.process_time() - c))
    for label, fn in [
        ("randomised Tukey HSD shuffles only (range_null, numba)",
         lambda: ls.range_null(X, B, np.random.default_rng(1))),
        ("query bootstrap of the ranks only (rank_bootstrap)",
         lambda: ls.rank_bootstrap(X, B, np.random.default_rng(2))),
        ("sef.leaderboard(test='randomized_tukey_hsd') end to end",
         lambda: sef.leaderboard(per_query=pq, measure="nDCG@10", seed=0, progress=False)),
        ("sef.leaderboard(test='tukey_hsd') end to end",
         lambda: sef.leaderboard(per_query=pq, measure="nDCG@10", test="tukey_hsd", seed=0,
                                 progress=False)),
        ("sef.leaderboard(test='holm') end to end",
         lambda: sef.leaderboard(per_query=pq, measure="nDCG@10", test="holm", seed=0,
                                 progress=False)),
    ]:
        t, c = time.perf_counter(), time.process_time()
        fn()
        rows.append((label, time.perf_counter() - t, time.process_time() - c))
    t, c = time.perf_counter(), time.process_time()
    ls.range_null(X, 100, np.random.default_rng(3), engine="numpy")
    rows.append(("numpy engine (no numba), 100 shuffles, x100 for B = 10,000",
                 (time.perf_counter() - t) * 100, (time.process_time() - c) * 100))
    text = [f"## Leaderboard: {N_RUNS} runs x {N_QUERIES:,} queries, B = {B:,}", "",
            f"`benchmarks/bench_leaderboard.py`, {time.strftime('%Y-%m-%d %H:%M')}. "
            f"Load average at start / end: {load_start} / {_load()} (2 cores shared with "
            "other developers; wall-clock times are inflated by the load; CPU s is user + "
            "system time of all threads).", "",
            "| step | wall s | CPU s |", "|---|---|---|"]
    text += [f"| {label} | {w:.2f} | {cpu:.2f} |" for label, w, cpu in rows]
    out = "\n".join(text)
    print(out)
    if a.json:
        import json

        print(json.dumps({"rows": rows, "load_start": load_start, "load_end": _load()}))
        return
    if not a.no_write:
        write_section(out, HERE / "RESULTS.md", "leaderboard")


if __name__ == "__main__":
    main()
