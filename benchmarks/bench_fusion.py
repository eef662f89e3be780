"""Time sef.fuse against ranx.fuse on synthetic runs (5 runs x 7,000 queries x 1,000 docs).

Data (numpy, seeded): for each query a pool of 2,000 document ids; each run takes
1,000 of them at random (so runs overlap partly) with scores on its own scale
(BM25-like 0-30, cosine-like 0-1, ...), rows in trec_eval order as in run files.
The runs are written once to Parquet in a temporary folder; every measurement then
runs in a fresh process that reads them (untimed), records its RSS, and times one
fusion call. Peak RSS is the process's ``ru_maxrss`` at the end.

ranx gets the same data as ``ranx.Run`` objects built with ``Run.from_dict``
(timed apart: "convert"); its numba functions are compiled on a tiny input first
(untimed). ranx's fuse needs the same query set in every run, which this data has.

Usage::

    python benchmarks/bench_fusion.py                     # full size, sef; ranx at 1/10
    python benchmarks/bench_fusion.py --ranx-queries 7000 # ranx at full size too
    python benchmarks/bench_fusion.py --append            # (re)write its section of RESULTS.md
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SCALES = [30.0, 1.0, 100.0, 0.05, 12.0]
CASES = {"rrf": ("rrf", None), "combsum-minmax": ("combsum", "min-max")}


def make_data(folder: Path, queries: int, docs: int, runs: int, seed: int = 13) -> None:
    import polars as pl

    rng = np.random.default_rng(seed)
    pool = 2 * docs
    qids = pl.Series(np.repeat(np.arange(queries), docs)).cast(pl.String)
    for r in range(runs):
        # 1,000 of the query's 2,000 pool documents, in random order
        picks = np.argsort(rng.random((queries, pool), dtype=np.float32), axis=1)[:, :docs]
        doc_num = (np.arange(queries)[:, None] * 7919 + picks * 13) % 50_000_000
        scores = np.sort(rng.random((queries, docs)) * SCALES[r % len(SCALES)], axis=1)[:, ::-1]
        df = pl.DataFrame({
            "run": f"sys{r}",
            "query_id": qids,
            "doc_id": pl.Series(doc_num.ravel()).cast(pl.String),
            "score": np.round(scores.ravel(), 6),
        }).sort(["query_id", "score", "doc_id"], descending=[False, True, True],
                maintain_order=True)
        df.write_parquet(folder / f"sys{r}.parquet")


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def worker(tool: str, case: str, folder: Path, queries: int | None) -> dict:
    import polars as pl

    files = sorted(folder.glob("sys*.parquet"))
    scan = pl.concat([pl.scan_parquet(f) for f in files])
    if queries is not None:  # the first queries (by id), without loading the rest
        ids = pl.read_parquet(files[0], columns=["query_id"]).get_column("query_id")
        keep = ids.unique().sort().head(queries).implode()
        scan = scan.filter(pl.col("query_id").is_in(keep))
    frame = scan.collect()
    method, norm = CASES[case]
    out: dict = {"tool": tool, "case": case, "rows_in": frame.height,
                 "queries": frame.get_column("query_id").n_unique()}
    if tool == "sef":
        sys.path.insert(0, str(HERE.parent))
        import searcheval_frames as sef

        out["rss_input_mb"] = rss_mb()
        t = time.perf_counter()
        cpu = time.process_time()
        fused = sef.fuse(frame, method, norm=norm)
        out["seconds"] = time.perf_counter() - t
        out["cpu"] = time.process_time() - cpu
        out["rows_out"] = fused.height
    else:
        import ranx

        tiny = [ranx.Run.from_dict({"q": {"a": 1.0, "b": 0.5}}, name="a"),
                ranx.Run.from_dict({"q": {"b": 1.0, "c": 0.5}}, name="b")]
        ranx.fuse(tiny, norm=norm, method="rrf" if method == "rrf" else "sum")  # JIT
        t = time.perf_counter()
        runs = []
        for (name,), part in frame.partition_by("run", as_dict=True, maintain_order=True).items():
            d: dict = {}
            for q, doc, s in part.select("query_id", "doc_id", "score").iter_rows():
                d.setdefault(q, {})[doc] = s
            runs.append(ranx.Run.from_dict(d, name=name))
            del d
        out["convert"] = time.perf_counter() - t
        del frame
        out["rss_input_mb"] = rss_mb()
        t = time.perf_counter()
        cpu = time.process_time()
        fused = ranx.fuse(runs, norm=norm, method="rrf" if method == "rrf" else "sum")
        out["seconds"] = time.perf_counter() - t
        out["cpu"] = time.process_time() - cpu
        out["rows_out"] = sum(len(v) for v in fused.run.values())
    out["peak_rss_mb"] = rss_mb()
    return out


def run_worker(tool: str, case: str, folder: Path, queries: int | None) -> dict:
    cmd = [sys.executable, __file__, "--worker", tool, "--case", case, "--data", str(folder)]
    if queries is not None:
        cmd += ["--subset", str(queries)]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        return {"tool": tool, "case": case, "error": res.stderr.strip().splitlines()[-1:]}
    return json.loads(res.stdout.strip().splitlines()[-1])


def loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().split(" ")[:3].__str__()
    except OSError:
        return "n/a"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--worker")
    ap.add_argument("--case", default="rrf")
    ap.add_argument("--data", type=Path)
    ap.add_argument("--subset", type=int)
    ap.add_argument("--queries", type=int, default=7000)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--ranx-queries", type=int, default=700)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--append", action="store_true", help="write its section of RESULTS.md")
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.case, args.data, args.subset)))
        return

    load_start = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        t = time.perf_counter()
        make_data(folder, args.queries, args.docs, args.runs)
        print(f"data: {time.perf_counter() - t:.1f} s", file=sys.stderr)
        plan = [("sef", c, None) for c in CASES] + [("sef", c, args.ranx_queries) for c in CASES]
        plan += [("ranx", c, args.ranx_queries) for c in CASES]
        for _ in range(args.repeats):
            for tool, case, q in plan:
                r = run_worker(tool, case, folder, q)
                print(r, file=sys.stderr)
                rows.append(r)
    load_end = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    lines = table(rows, args, load_start, load_end)
    print("\n".join(lines))
    if args.append:  # (replaces the section of an earlier run)
        sys.path.insert(0, str(HERE))
        from bench_scale import write_section

        write_section("\n".join(lines), HERE / "RESULTS.md", "fusion")


def table(rows: list[dict], args: argparse.Namespace, start: str, end: str) -> list[str]:
    when = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    out = [
        "## Fusion (`benchmarks/bench_fusion.py`)",
        "",
        f"Run on {when}: {args.runs} synthetic runs x {args.queries:,} queries x {args.docs:,} "
        f"documents (each run draws its {args.docs:,} from a pool of {2 * args.docs:,} per query, "
        "so runs overlap partly; scores on different scales), read from Parquet untimed in a "
        f"fresh process per row; {args.repeats} process(es) per row, median / min. ranx at "
        f"{args.ranx_queries:,} queries (its Run objects for the full size were not attempted: "
        "numba typed dicts of 35M entries on a 2-core machine shared with other jobs); "
        "*convert* is building ranx's Runs from the frame (not part of fuse).",
        "",
        f"Load average (`/proc/loadavg`) at start / end: {start} / {end}.",
        "",
        "| tool | case | queries | rows in | rows out | seconds (median / min) | CPU s | "
        "convert s | RSS with input MB | peak RSS MB |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    groups: dict = {}
    for r in rows:
        if "error" in r:
            out.append(f"| {r['tool']} | {r['case']} | failed: {r['error']} |")
            continue
        groups.setdefault((r["tool"], r["case"], r["queries"]), []).append(r)
    for (tool, case, q), rs in groups.items():
        secs = sorted(x["seconds"] for x in rs)
        med = float(np.median(secs))
        conv = f"{np.median([x['convert'] for x in rs]):.1f}" if "convert" in rs[0] else "–"
        out.append(
            f"| {tool} | {case} | {q:,} | {rs[0]['rows_in']:,} | {rs[0]['rows_out']:,} | "
            f"{med:.2f} / {secs[0]:.2f} | {np.median([x['cpu'] for x in rs]):.2f} | {conv} | "
            f"{max(x['rss_input_mb'] for x in rs):.0f} | {max(x['peak_rss_mb'] for x in rs):.0f} |"
        )
    return out


if __name__ == "__main__":
    os.environ.setdefault("POLARS_MAX_THREADS", "2")
    main()
