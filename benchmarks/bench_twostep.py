"""The two-step path against the one-call path, pytrec_eval and ranx, end to end.

``run = sef.read_run(path); sef.evaluate(run, qrels, ...)`` should cost what
``sef.evaluate(path, qrels_path, ...)`` costs (the reader records the frames it
checked, so evaluate does not check them again). Contenders, each in a fresh
process, round robin, at 2M and 7M run lines (``benchmarks/make_data.py``):

* ``sef-path``: ``sef.evaluate(run_path, qrels_path, M)``;
* ``sef-twostep``: ``sef.read_run`` + ``sef.read_qrels`` + ``sef.evaluate`` on the frames;
* ``pytrec_eval``: Python line loop into dicts + ``RelevanceEvaluator.evaluate`` + means;
* ``ranx``: ``Qrels.from_file`` / ``Run.from_file`` + ``evaluate`` (with numba's JIT);
* from Parquet (``run.parquet``, ``qrels.parquet`` written from the same data):
  ``sef-path-pq``, ``sef-twostep-pq`` (``sef.read_run(run.parquet)``),
  ``sef-polars-pq`` (``pl.read_parquet`` + ``sef.evaluate`` on the frame) and
  ``pytrec_eval-pq`` (``pl.read_parquet`` + dicts built row by row + evaluate).

Usage::

    python benchmarks/make_data.py --out benchmarks/_work/7m
    python benchmarks/make_data.py --queries 2000 --out benchmarks/_work/2m
    python benchmarks/bench_twostep.py [--repeats 3] [--repeats-ranx 2] [--no-write]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_scale import _load, _rss_mb, write_section  # noqa: E402
from run_bench import (  # noqa: E402
    LABELS,
    PYTREC_MEASURES,
    RANX_MEASURES,
    SEF_MEASURES,
    _pytrec_means,
    _pytrec_parse_qrels,
    _pytrec_parse_run,
)

WORK = HERE / "_work"
SIZES = {"2M": WORK / "2m", "7M": WORK / "7m"}
TOOLS = ["sef-path", "sef-twostep", "pytrec_eval", "ranx", "floor-csv", "sef-path-pq",
         "sef-twostep-pq", "sef-polars-pq", "pytrec_eval-pq", "floor-pq", "sef-memory"]
#: polars' bare parse of the three columns evaluate needs (the floor of a polars reader)
FLOOR_SCHEMA = {"query_id": "String", "q0": "String", "doc_id": "String", "rank": "Int64",
                "score": "Float64", "tag": "String"}


def floor_parse(path: Path):
    import polars as pl

    schema = {k: getattr(pl, v) for k, v in FLOOR_SCHEMA.items()}
    return pl.scan_csv(path, separator=" ", has_header=False, schema=schema,
                       quote_char=None).select("query_id", "doc_id", "score").collect()


def worker(tool: str, folder: Path) -> dict:
    run_trec, qrels_trec = folder / "run.trec", folder / "qrels.trec"
    run_pq, qrels_pq = folder / "run.parquet", folder / "qrels.parquet"
    if tool.startswith(("sef", "floor")):
        import polars as pl

        import searcheval_frames as sef
        from searcheval_frames import io as _io  # noqa: F401  (import cost not timed)
        from searcheval_frames.core import partitioned as _p  # noqa: F401
    elif tool.startswith("pytrec_eval"):
        import polars as pl
        import pytrec_eval
    else:
        import ranx
    base = _rss_mb()
    if tool == "sef-memory":  # the input is in memory already (not timed): the floor's frame
        run_mem = floor_parse(run_trec)
        qrels_mem = sef.read_qrels(qrels_trec)
    t0 = time.perf_counter()
    cpu0 = sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
    if tool in ("sef-path", "sef-path-pq"):
        run_p, qrels_p = (run_trec, qrels_trec) if tool == "sef-path" else (run_pq, qrels_pq)
        res = sef.evaluate(str(run_p), str(qrels_p), SEF_MEASURES)
        means = dict(zip(res["measure"], res["value"], strict=True))
    elif tool in ("sef-twostep", "sef-twostep-pq"):
        run_p, qrels_p = (run_trec, qrels_trec) if tool == "sef-twostep" else (run_pq, qrels_pq)
        run = sef.read_run(run_p)
        qrels = sef.read_qrels(qrels_p)
        res = sef.evaluate(run, qrels, SEF_MEASURES)
        means = dict(zip(res["measure"], res["value"], strict=True))
    elif tool == "sef-memory":
        res = sef.evaluate(run_mem, qrels_mem, SEF_MEASURES)
        means = dict(zip(res["measure"], res["value"], strict=True))
    elif tool == "sef-polars-pq":
        res = sef.evaluate(pl.read_parquet(run_pq), pl.read_parquet(qrels_pq), SEF_MEASURES)
        means = dict(zip(res["measure"], res["value"], strict=True))
    elif tool == "pytrec_eval":
        run = _pytrec_parse_run(run_trec)
        qrels = _pytrec_parse_qrels(qrels_trec)
        ev = pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC_MEASURES))
        means = _pytrec_means(ev.evaluate(run))
    elif tool == "pytrec_eval-pq":
        run_df = pl.read_parquet(run_pq)
        qrels_df = pl.read_parquet(qrels_pq)
        run = {}
        for q, d, s in zip(run_df["query_id"].to_list(), run_df["doc_id"].to_list(),
                           run_df["score"].to_list(), strict=True):
            run.setdefault(q, {})[d] = s
        qrels = {}
        for q, d, r in qrels_df.select("query_id", "doc_id", "relevance").iter_rows():
            qrels.setdefault(q, {})[d] = r
        ev = pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC_MEASURES))
        means = _pytrec_means(ev.evaluate(run))
    elif tool == "floor-csv":  # only polars' parse of the three columns evaluate needs
        means = {"rows": floor_parse(run_trec).height}
    elif tool == "floor-pq":  # only polars' read of the Parquet run
        means = {"rows": pl.read_parquet(run_pq).height}
    elif tool == "ranx":
        qrels = ranx.Qrels.from_file(str(qrels_trec), kind="trec")
        run = ranx.Run.from_file(str(run_trec), kind="trec")
        raw = ranx.evaluate(qrels, run, RANX_MEASURES)
        means = dict(zip(LABELS, (float(raw[m]) for m in RANX_MEASURES), strict=True))
    else:
        raise SystemExit(f"unknown tool {tool}")
    secs = time.perf_counter() - t0
    cpu = sum(resource.getrusage(resource.RUSAGE_SELF)[:2]) - cpu0
    return {"tool": tool, "seconds": secs, "cpu": cpu, "rss_peak_mb": _rss_mb(),
            "rss_base_mb": base,
            "means": {k: float(v) for k, v in means.items()}}


def _spawn(tool: str, folder: Path) -> dict:
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", tool,
                           str(folder)], capture_output=True, text=True, env=env)
    if proc.returncode:
        raise RuntimeError(f"{tool}: {proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def to_parquet(folder: Path) -> None:
    """run.parquet / qrels.parquet with the data of the TREC files (canonical columns)."""
    import searcheval_frames as sef

    if not (folder / "run.parquet").exists():
        sef.read_run(folder / "run.trec").drop("rank").write_parquet(folder / "run.parquet")
    if not (folder / "qrels.parquet").exists():
        sef.read_qrels(folder / "qrels.trec").write_parquet(folder / "qrels.parquet")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--worker", nargs=2, metavar=("TOOL", "FOLDER"), help=argparse.SUPPRESS)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--repeats-ranx", type=int, default=2)
    ap.add_argument("--sizes", default="2M,7M")
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args()
    if a.worker:
        print(json.dumps(worker(a.worker[0], Path(a.worker[1]))))
        return
    sizes = a.sizes.split(",")
    tools = a.tools.split(",")
    for s in sizes:
        to_parquet(SIZES[s])
    load_start = _load()
    results: dict[tuple[str, str], list[dict]] = {}
    reps = max(a.repeats, a.repeats_ranx)
    for rep in range(reps):  # round robin: every contender once, then again
        for s in sizes:
            for tool in tools:
                if rep >= (a.repeats_ranx if tool == "ranx" else a.repeats):
                    continue
                r = _spawn(tool, SIZES[s])
                r["load"] = _load()
                results.setdefault((s, tool), []).append(r)
                print(f"{s} {tool:15s} #{rep + 1}: {r['seconds']:6.2f} s  peak "
                      f"{r['rss_peak_mb']:.0f} MB  load {r['load']}", flush=True)
        if not a.no_write:  # after every round, so that an interrupted run leaves a table
            report(results, sizes, tools, a, load_start, rep + 1)


def report(results: dict, sizes: list[str], tools: list[str], a: argparse.Namespace,
           load_start: str, rounds: int) -> None:
    load_end = _load()
    med = {k: statistics.median(x["seconds"] for x in v) for k, v in results.items()}
    rss = {k: statistics.median(x["rss_peak_mb"] for x in v) for k, v in results.items()}
    cpu = {k: statistics.median(x["cpu"] for x in v) for k, v in results.items()}
    lines = [
        "## Two steps (`read_run`, then `evaluate`) vs one call, pytrec_eval and ranx",
        "",
        "Generated by `python benchmarks/bench_twostep.py` on "
        f"{time.strftime('%Y-%m-%d %H:%M')} UTC: each contender in a fresh process, round "
        f"robin, {rounds} round(s) done of {a.repeats} planned ({a.repeats_ranx} for ranx); "
        "median wall "
        "seconds from the files to the six means (imports not timed) and median peak RSS "
        "(`VmHWM`, absolute). Data: `make_data.py` with 2,000 and 6,980 queries x 1,000 "
        "documents; the Parquet files hold the same rows (canonical columns).",
        "",
        f"Load average at the start / end: {load_start} / {load_end} (2 cores shared with "
        "other jobs; with load above 2, wall times are inflated).",
        "",
        "| rows | contender | seconds (median) | CPU s (median) | peak RSS MB | x pytrec_eval "
        "| x ranx | x pytrec_eval, CPU s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for s in sizes:
        for tool in tools:
            k = (s, tool)
            if k not in med:
                continue
            ref_pt = med.get((s, "pytrec_eval-pq" if tool.endswith("-pq") else "pytrec_eval"))
            ref_rx = med.get((s, "ranx"))
            ours = tool.startswith(("sef", "floor"))
            x_pt = f"{ref_pt / med[k]:.1f}x" if ref_pt and ours else "–"
            x_rx = (f"{ref_rx / med[k]:.1f}x" if ref_rx and ours
                    and not tool.endswith("-pq") else "–")
            ref_cpu = cpu.get((s, "pytrec_eval-pq" if tool.endswith("-pq") else "pytrec_eval"))
            x_cpu = f"{ref_cpu / cpu[k]:.1f}x" if ref_cpu and ours else "–"
            lines.append(f"| {s} | {tool} | {med[k]:.2f} | {cpu[k]:.2f} | {rss[k]:.0f} | "
                         f"{x_pt} | {x_rx} | {x_cpu} |")
    lines += ["", "*floor-csv* is polars' parse of the three columns evaluate needs (query, "
              "document, score) and nothing else: no check, no evaluation; *floor-pq* is "
              "`pl.read_parquet` of the run. They bound what any polars-based reader can "
              "reach here:", ""]
    for s in sizes:
        for floor, ref in (("floor-csv", "pytrec_eval"), ("floor-pq", "pytrec_eval-pq")):
            if (s, floor) in med and (s, ref) in med:
                lines.append(f"- {s}: {floor} {med[(s, floor)]:.2f} s = "
                             f"{med[(s, ref)] / med[(s, floor)]:.1f}x {ref}"
                             + (f", {med[(s, 'ranx')] / med[(s, floor)]:.1f}x ranx"
                                if floor == "floor-csv" and (s, "ranx") in med else ""))
    lines += ["", "Two steps / one call (median seconds; goal <= 1.10):", ""]
    for s in sizes:
        for suffix, label in (("", "TREC file"), ("-pq", "Parquet")):
            one, two = med.get((s, f"sef-path{suffix}")), med.get((s, f"sef-twostep{suffix}"))
            if one and two:
                lines.append(f"- {s}, {label}: {two:.2f} s / {one:.2f} s = **{two / one:.2f}**")
        pol, one = med.get((s, "sef-polars-pq")), med.get((s, "sef-path-pq"))
        if pol and one:
            lines.append(f"- {s}, Parquet with `pl.read_parquet` as the first step: "
                         f"{pol:.2f} s / {one:.2f} s = **{pol / one:.2f}**")
    lines += ["", "Goals (TREC file, both sef paths): >= 10x pytrec_eval, >= 25x ranx; "
              ">= 15x pytrec_eval from Parquet; peak RSS <= 0.5x pytrec_eval's:", ""]
    for s in sizes:
        pt, rx, ptq = (med.get((s, t)) for t in ("pytrec_eval", "ranx", "pytrec_eval-pq"))
        for tool in ("sef-path", "sef-twostep", "sef-path-pq", "sef-twostep-pq",
                     "sef-polars-pq"):
            k = (s, tool)
            if k not in med:
                continue
            if tool.endswith("-pq") and ptq:
                ok = ptq / med[k] >= 15
                lines.append(f"- {s} {tool}: {ptq / med[k]:.1f}x pytrec_eval (Parquet) "
                             f"{'met' if ok else '**missed**'}; RSS {rss[k]:.0f} vs "
                             f"{rss[(s, 'pytrec_eval-pq')]:.0f} MB = "
                             f"{rss[k] / rss[(s, 'pytrec_eval-pq')]:.2f}x")
            elif pt and rx:
                ok = pt / med[k] >= 10 and rx / med[k] >= 25
                lines.append(f"- {s} {tool}: {pt / med[k]:.1f}x pytrec_eval, "
                             f"{rx / med[k]:.1f}x ranx {'met' if ok else '**missed**'}; RSS "
                             f"{rss[k]:.0f} vs {rss[(s, 'pytrec_eval')]:.0f} MB = "
                             f"{rss[k] / rss[(s, 'pytrec_eval')]:.2f}x")
    write_section("\n".join(lines), HERE / "RESULTS.md", "twostep")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
