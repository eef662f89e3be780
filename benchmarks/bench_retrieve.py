"""Benchmarks of sef.retrieve (issue #32). Run: python benchmarks/bench_retrieve.py

1. Concurrency: 2,000 queries against the test HTTP service (tests/search_service.py)
   with a fixed 20 ms service time, max_concurrency=16; the floor is
   2,000 x 20 ms / 16 = 2.5 s, the goal within 1.25x of it (3.125 s).
2. Overhead: the package's own time per query for a Python function system (20 hits
   per answer, no cache), against a bare loop calling the same function; goal <= 50 us.
3. Cache: a re-run of 10,000 cached queries; goal <= 1 s.

Each measurement is repeated; the best and the median are printed with the load.
"""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import searcheval_frames as sef  # noqa: E402

HITS = [(f"d{i:04d}", 100.0 - i) for i in range(20)]


def queries(n: int) -> pl.DataFrame:
    words = ["pinecone", "hnsw", "faiss", "index", "vector", "search", "setup", "pricing"]
    return pl.DataFrame({"query_id": [f"q{i}" for i in range(n)],
                         "query": [f"{words[i % 8]} {words[(i // 8) % 8]} {i}" for i in range(n)]})


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def bare_httpx(url: str, texts: list[str]) -> float:
    """The same requests with 16 threads of a bare httpx client: what the machine allows."""
    import httpx

    with httpx.Client(limits=httpx.Limits(max_connections=64)) as client, \
            ThreadPoolExecutor(16) as pool:
        def one(text: str) -> Any:
            return client.get(url + "/search", params={"q": text, "k": 10}).json()

        list(pool.map(one, texts[:50]))
        start = time.perf_counter()
        list(pool.map(one, texts))
        return time.perf_counter() - start


def concurrency(repeats: int = 3) -> tuple[list[float], list[float]]:
    """The service runs in a process of its own (as a real engine would: the client's
    threads do not share its interpreter lock)."""
    qs = queries(2000)
    walls, bare = [], []
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "search_service.py"), "0.02"],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        system = sef.systems.http(url + "/search", params={"q": "{query}", "k": "{k}"})
        sef.retrieve(system, qs.head(50), k=10, cache=False, max_concurrency=16)  # warm
        for _ in range(repeats):
            start = time.perf_counter()
            result = sef.retrieve(system, qs, k=10, cache=False, max_concurrency=16)
            walls.append(time.perf_counter() - start)
            assert result.summary()["errors"][0] == 0
            bare.append(bare_httpx(url, qs["query"].to_list()))
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()
    return walls, bare


def overhead(n: int = 10_000, repeats: int = 5) -> tuple[list[float], list[float], list[float]]:
    qs = queries(n)
    texts = qs["query"].to_list()

    def fn(query: str, k: int) -> list[tuple[str, float]]:
        return HITS[:k]

    bare, ours, cached_fill = [], [], []
    for _ in range(repeats):
        start = time.perf_counter()
        for t in texts:
            fn(t, 20)
        bare.append((time.perf_counter() - start) / n)
        start = time.perf_counter()
        sef.retrieve(fn, qs, k=20, cache=False)
        ours.append((time.perf_counter() - start) / n)
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            sef.retrieve(fn, qs, k=20, cache=Path(tmp) / "c.db")
            cached_fill.append((time.perf_counter() - start) / n)
    return bare, ours, cached_fill


def cached_rerun(n: int = 10_000, repeats: int = 5) -> list[float]:
    qs = queries(n)

    def fn(query: str, k: int) -> list[tuple[str, float]]:
        return HITS[:k]

    walls = []
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "c.db"
        sef.retrieve(fn, qs, k=20, cache=db)
        for _ in range(repeats):
            start = time.perf_counter()
            result = sef.retrieve(fn, qs, k=20, cache=db)
            walls.append(time.perf_counter() - start)
            assert result.latency["cached"].all() and result.run.height == 20 * n
    return walls


def main() -> None:
    warnings.simplefilter("error")
    print(f"load before: {load()}")
    walls, bare = concurrency()
    print(f"concurrency: 2,000 queries x 20 ms / 16 = 2.5 s floor; best {min(walls):.2f} s "
          f"({min(walls) / 2.5:.2f}x), median {statistics.median(walls):.2f} s; goal <= 3.125 s "
          f"{'met' if min(walls) <= 3.125 else 'MISSED'}; the same requests from 16 threads of "
          f"a bare httpx client: best {min(bare):.2f} s ({min(bare) / 2.5:.2f}x), median "
          f"{statistics.median(bare):.2f} s (load {load()})")
    bare, ours, fill = overhead()
    own = [o - b for o, b in zip(ours, bare, strict=True)]
    print(f"overhead: bare loop {min(bare) * 1e6:.2f} us/query, retrieve {min(ours) * 1e6:.1f} "
          f"us/query -> own {min(own) * 1e6:.1f} us (median {statistics.median(own) * 1e6:.1f}); "
          f"goal <= 50 us {'met' if min(own) <= 50e-6 else 'MISSED'}; with the cache written "
          f"as it goes {min(fill) * 1e6:.1f} us/query (load {load()})")
    walls = cached_rerun()
    print(f"cached re-run of 10,000 queries: best {min(walls):.3f} s, median "
          f"{statistics.median(walls):.3f} s; goal <= 1 s "
          f"{'met' if min(walls) <= 1 else 'MISSED'} (load {load()})")


if __name__ == "__main__":
    main()
