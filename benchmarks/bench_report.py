"""Time sef.report on a synthetic evaluation: 20 runs x 7,000 queries (seconds per stage).

The data are generated with numpy (seeded): per query a pool of candidate documents
with hidden grades 0-3, a qrels file that judges part of each pool, and runs of
varied quality (score = grade x quality + noise, top ``--depth`` of the pool). The
report is built once (``sef.report``), rendered to HTML and Markdown, and saved;
the stage timings come from the report itself (``rep.data.timings``).

    python benchmarks/bench_report.py                 # 20 runs x 7,000 queries
    python benchmarks/bench_report.py --runs 3 --queries 500 --no-results   # a quick look

With ``--results`` (default) the section "Report (bench_report.py)" of
benchmarks/RESULTS.md is written (replaced if present), with the load average.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

HERE = Path(__file__).resolve().parent
SECTION = "## Report (bench_report.py)"


def make_data(n_runs: int, n_queries: int, depth: int, pool: int, judged: int, seed: int
              ) -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = np.random.default_rng(seed)
    grades = rng.choice(4, size=(n_queries, pool), p=[0.85, 0.08, 0.05, 0.02])
    # qrels: the first `judged` candidates of each query's pool are labelled (a pool
    # built from some earlier systems); the hidden grades of the others stay unknown
    order = np.argsort(-(grades + rng.normal(0, 1.0, grades.shape)), axis=1)[:, :judged]
    q_idx = np.repeat(np.arange(n_queries), judged)
    d_idx = order.ravel()
    qrels = pl.DataFrame({
        "query_id": pl.Series(q_idx).cast(pl.String),
        "doc_id": pl.Series(d_idx).cast(pl.String),
        "relevance": grades[q_idx, d_idx].astype(np.int64),
    }).with_columns(pl.format("q{}", "query_id").alias("query_id"),
                    pl.format("q{}-d{}", "query_id", "doc_id").alias("doc_id"))
    parts = []
    for r in range(n_runs):
        quality = 0.4 + 1.6 * r / max(n_runs - 1, 1)
        scores = grades * quality + rng.normal(0, 1.0, grades.shape)
        top = np.argpartition(-scores, depth - 1, axis=1)[:, :depth]
        s = np.take_along_axis(scores, top, axis=1)
        parts.append(pl.DataFrame({
            "run": f"run{r:02d}",
            "qi": np.repeat(np.arange(n_queries), depth),
            "di": top.ravel(),
            "score": np.round(s.ravel(), 6),
        }))
    runs = pl.concat(parts).select(
        "run",
        pl.format("q{}", "qi").alias("query_id"),
        pl.format("q{}-d{}", "qi", "di").alias("doc_id"),
        "score",
    )
    return runs, qrels


class _Stamp(float):
    """A wall-clock reading that carries the process's CPU time (all threads) along: the
    difference of two is the wall seconds, with ``.cpu`` the CPU seconds between them."""

    cpu: float

    def __new__(cls, wall: float, cpu: float) -> _Stamp:
        out = super().__new__(cls, wall)
        out.cpu = cpu
        return out

    def __sub__(self, other: float) -> _Stamp:  # type: ignore[override]
        return _Stamp(float(self) - float(other), self.cpu - getattr(other, "cpu", 0.0))


def _cpu_per_stage() -> None:
    """Make the report's stage timings carry CPU seconds too (its module's clock only)."""
    import importlib
    from types import SimpleNamespace

    import searcheval_frames as sef

    # the package of sef.report (whatever it is called), its module "build"
    mod = importlib.import_module(sef.report.__module__ + ".build")
    mod.time = SimpleNamespace(  # type: ignore[attr-defined]
        perf_counter=lambda: _Stamp(time.perf_counter(), time.process_time()))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--queries", type=int, default=7000)
    ap.add_argument("--depth", type=int, default=100, help="documents per query and run")
    ap.add_argument("--pool", type=int, default=300, help="candidates per query")
    ap.add_argument("--judged", type=int, default=60, help="judged candidates per query")
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-results", dest="results", action="store_false",
                    help="do not write benchmarks/RESULTS.md")
    ap.add_argument("--json", action="store_true",
                    help="print one JSON line (stages, totals, one evaluate of the same runs) "
                         "last and write nothing (bench_issue25.py)")
    args = ap.parse_args()
    if args.json:
        args.results = False

    import searcheval_frames as sef

    load_start = Path("/proc/loadavg").read_text().strip()
    stages: dict[str, float] = {}
    t = time.perf_counter()
    runs, qrels = make_data(args.runs, args.queries, args.depth, args.pool, args.judged, args.seed)
    stages["generate data (numpy)"] = time.perf_counter() - t
    _cpu_per_stage()
    t0, c0 = time.perf_counter(), time.process_time()
    rep = sef.report(runs, qrels, baseline="run00", n_resamples=args.resamples)
    total_report = time.perf_counter() - t0
    cpu_report = time.process_time() - c0
    for k, v in rep.data.timings.items():
        stages[f"report: {k}"] = v
    t = time.perf_counter()
    html = rep.to_html()
    stages["render HTML"] = time.perf_counter() - t
    t = time.perf_counter()
    rep.to_markdown()
    stages["render Markdown"] = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        rep.save(Path(d) / "report")
        stages["save folder"] = time.perf_counter() - t
    load_end = Path("/proc/loadavg").read_text().strip()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if args.json:  # and one evaluate of the same runs with the report's measures
        import json

        t0, c0 = time.perf_counter(), time.process_time()
        sef.evaluate(runs, qrels, rep.data.measures, per_query=True)
        ev_s, ev_cpu = time.perf_counter() - t0, time.process_time() - c0
        print(json.dumps({"stages": {k: v for k, v in stages.items() if k.startswith("report:")},
                          "stages_cpu": {k: getattr(v, "cpu", None) for k, v in stages.items()
                                         if k.startswith("report:")},
                          "total": total_report, "cpu": cpu_report, "rss_peak_mb": peak,
                          "evaluate": ev_s, "evaluate_cpu": ev_cpu, "rows": runs.height,
                          "load_start": load_start, "load_end": load_end}))
        return 0
    n_cmp = rep.frame.height
    lines = [
        SECTION, "",
        f"Generated by `python benchmarks/bench_report.py` on {time.strftime('%Y-%m-%d %H:%M')} "
        f"(one process; {platform.python_version()}, nproc = {os.cpu_count()}).",
        "",
        f"Synthetic data (numpy, seed {args.seed}): {args.runs} runs x {args.queries:,} queries x "
        f"{args.depth} documents = {runs.height:,} run rows; {qrels.height:,} qrels rows "
        f"({args.judged} judged of {args.pool} candidates per query, grades 0-3). "
        f"`sef.report(runs, qrels, baseline='run00')` with the default measures "
        f"({', '.join(rep.data.measures)}), {n_cmp} comparisons (paired t-test, Holm, BCa "
        f"bootstrap with {args.resamples:,} resamples each), figures, 5 losses and 5 wins "
        f"side by side; low-coverage runs (judged share < 90%): {len(rep.data.low_coverage)} "
        "(metric bounds computed for the baseline and the after run among them).",
        "",
        f"`cat /proc/loadavg` at start / end: `{load_start}` / `{load_end}` (the machine is "
        "shared; with load above the core count wall-clock times are inflated).",
        "",
        "| stage | seconds |",
        "|---|--:|",
    ]
    lines += [f"| {k} | {v:.2f} |" for k, v in stages.items()]
    lines += [f"| **sef.report total** | **{total_report:.2f}** |", "",
              f"CPU time of sef.report (user + system, all threads): {cpu_report:.1f} s.", "",
              f"HTML page: {len(html) / 1e6:.2f} MB; peak RSS {peak:,.0f} MB.", ""]
    text = "\n".join(lines)
    print(text)
    if args.results:
        path = HERE / "RESULTS.md"
        old = path.read_text(encoding="utf-8")
        pattern = re.compile(re.escape(SECTION) + r".*?(?=\n## |\n<!-- |\Z)", re.S)
        new = pattern.sub(lambda _: text.rstrip() + "\n", old) if SECTION in old else \
            old.rstrip() + "\n\n" + text
        path.write_text(new, encoding="utf-8")
        print(f"updated {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
