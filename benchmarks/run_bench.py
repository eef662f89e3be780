"""Time searcheval_frames against pytrec_eval and ranx on the MS MARCO-dev-like run.

Every (tool, scenario) runs in its own fresh subprocess, ``--repeats`` times
(default 3), round robin (all contenders once, then all again, ...) so that the
shared machine's slow spells fall on every tool alike; we report the median and
the minimum over processes. Peak memory
is the process's own peak RSS (``resource.getrusage(RUSAGE_SELF).ru_maxrss``)
at the end, absolute; the RSS peak right after the imports is reported too.

Scenarios
---------
``file``
    End to end in a fresh process, from the TREC run and qrels files to the six
    means: read + parse + evaluate (+ numba JIT for ranx). Imports are not timed
    (their RSS is the baseline column).
``memory``
    The input is already in memory (untimed): a polars frame for
    searcheval_frames, a pandas frame for searcheval_frames (pandas) and ranx
    (``Qrels.from_df``/``Run.from_df`` are timed, they are part of the call a
    pandas user makes), a dict of dicts for pytrec_eval. The first call in the
    process is timed on its own (ranx compiles with numba here), then
    ``--warm`` more calls (median reported).

Usage::

    python benchmarks/make_data.py && python benchmarks/run_bench.py
    python benchmarks/run_bench.py --repeats 1 --tools sef   # quick look

Writes ``benchmarks/RESULTS.md`` (unless ``--no-write``).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import gc
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = HERE / "_work"
RUN = WORK / "run.trec"
QRELS = WORK / "qrels.trec"

SEF_MEASURES = ["P@10", "R@100", "R@1000", "RR@10", "nDCG@10", "AP"]
RANX_MEASURES = ["precision@10", "recall@100", "recall@1000", "mrr@10", "ndcg@10", "map"]
PYTREC_MEASURES = ["P_10", "recall_100", "recall_1000", "recip_rank", "ndcg_cut_10", "map"]
LABELS = SEF_MEASURES  # row labels of the agreement table

CONTENDERS = [
    ("sef", "file"),
    ("sef", "memory"),
    ("sef-pandas", "memory"),
    ("pytrec_eval", "file"),
    ("pytrec_eval", "memory"),
    ("ranx", "file"),
    ("ranx", "memory"),
]
TOOL_LABEL = {
    "sef": "searcheval_frames",
    "sef-pandas": "searcheval_frames (pandas in)",
    "pytrec_eval": "pytrec_eval",
    "ranx": "ranx",
}


def _cpu_s() -> float:
    """User + system CPU seconds of this process so far (all threads)."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def _rss_mb() -> float:
    """Peak RSS of this process so far, in MB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# =========================================================================== workers
def _pytrec_parse_run(path: Path) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    with open(path) as fh:
        for line in fh:
            qid, _, docid, _, score, _ = line.split()
            run.setdefault(qid, {})[docid] = float(score)
    return run


def _pytrec_parse_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with open(path) as fh:
        for line in fh:
            qid, _, docid, rel = line.split()
            qrels.setdefault(qid, {})[docid] = int(rel)
    return qrels


def _pytrec_means(per_q: dict[str, dict[str, float]]) -> dict[str, float]:
    n = len(per_q)
    return {
        label: sum(v[m] for v in per_q.values()) / n
        for label, m in zip(LABELS, PYTREC_MEASURES, strict=True)
    }


def worker(tool: str, scenario: str, warm: int) -> dict:
    """Run one contender once in this (fresh) process; return timings and means."""
    phases: dict[str, float] = {}
    if tool in ("sef", "sef-pandas"):
        import polars as pl

        import searcheval_frames as sef
        from searcheval_frames import evaluate as _ev  # noqa: F401
        from searcheval_frames import io as sef_io  # noqa: F401  (import cost not timed)

        if tool == "sef-pandas":
            import pandas as pd
    elif tool == "pytrec_eval":
        import pytrec_eval
    elif tool == "ranx":
        import pandas as pd  # noqa: F401
        import ranx
    base = _rss_mb()

    def sef_means(res) -> dict[str, float]:
        if not isinstance(res, pl.DataFrame):
            res = pl.from_pandas(res)
        return dict(zip(res["measure"].to_list(), res["value"].to_list(), strict=True))

    first = None
    warm_times: list[float] = []
    input_rss = None
    cpu0 = _cpu_s()
    if scenario == "file":
        t0 = time.perf_counter()
        if tool == "sef":
            # one call with the file paths, as a user (or the CLI) does: the files are
            # read and validated line by line by sef.io, then evaluated (no separate phase)
            t1 = t0
            res = sef.evaluate(str(RUN), str(QRELS), SEF_MEASURES)
            means = sef_means(res)
        elif tool == "pytrec_eval":
            run = _pytrec_parse_run(RUN)
            qrels = _pytrec_parse_qrels(QRELS)
            t1 = time.perf_counter()
            ev = pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC_MEASURES))
            means = _pytrec_means(ev.evaluate(run))
        elif tool == "ranx":
            qrels = ranx.Qrels.from_file(str(QRELS), kind="trec")
            run = ranx.Run.from_file(str(RUN), kind="trec")
            t1 = time.perf_counter()
            raw = ranx.evaluate(qrels, run, RANX_MEASURES)
            means = dict(zip(LABELS, (float(raw[m]) for m in RANX_MEASURES), strict=True))
        else:
            raise SystemExit(f"no file scenario for {tool}")
        t2 = time.perf_counter()
        total = t2 - t0
        phases = {"read": t1 - t0, "evaluate": t2 - t1}
    else:
        # ---- build the in-memory input (not timed)
        if tool == "sef":
            run_in = pl.read_csv(RUN, separator=" ", has_header=False,
                                 new_columns=["query_id", "q0", "doc_id", "rank", "score", "tag"],
                                 schema_overrides={"query_id": pl.String, "doc_id": pl.String}
                                 ).select("query_id", "doc_id", "score")
            qrels_in = pl.read_csv(QRELS, separator=" ", has_header=False,
                                   new_columns=["query_id", "it", "doc_id", "relevance"],
                                   schema_overrides={"query_id": pl.String, "doc_id": pl.String}
                                   ).select("query_id", "doc_id", "relevance")
        elif tool in ("sef-pandas", "ranx"):
            import polars as pl

            run_in = pl.read_csv(RUN, separator=" ", has_header=False,
                                 new_columns=["q_id", "q0", "doc_id", "rank", "score", "tag"],
                                 schema_overrides={"q_id": pl.String, "doc_id": pl.String}
                                 ).select("q_id", "doc_id", "score").to_pandas()
            qrels_in = pl.read_csv(QRELS, separator=" ", has_header=False,
                                   new_columns=["q_id", "it", "doc_id", "score"],
                                   schema_overrides={"q_id": pl.String, "doc_id": pl.String}
                                   ).select("q_id", "doc_id", "score").to_pandas()
            if tool == "ranx":  # ranx asserts object dtype; pandas 3 defaults to "str"
                for df in (run_in, qrels_in):
                    for c in ("q_id", "doc_id"):
                        df[c] = df[c].astype(object)
            if tool == "sef-pandas":
                run_in = run_in.rename(columns={"q_id": "query_id"})
                qrels_in = qrels_in.rename(columns={"q_id": "query_id", "score": "relevance"})
        elif tool == "pytrec_eval":
            run_in = _pytrec_parse_run(RUN)
            qrels_in = _pytrec_parse_qrels(QRELS)
        gc.collect()
        input_rss = _rss_mb()
        cpu0 = _cpu_s()

        def call() -> dict[str, float]:
            if tool in ("sef", "sef-pandas"):
                return sef_means(sef.evaluate(run_in, qrels_in, SEF_MEASURES))
            if tool == "pytrec_eval":
                ev = pytrec_eval.RelevanceEvaluator(qrels_in, set(PYTREC_MEASURES))
                return _pytrec_means(ev.evaluate(run_in))
            q = ranx.Qrels.from_df(qrels_in, q_id_col="q_id", doc_id_col="doc_id",
                                   score_col="score")
            r = ranx.Run.from_df(run_in, q_id_col="q_id", doc_id_col="doc_id",
                                 score_col="score")
            raw = ranx.evaluate(q, r, RANX_MEASURES)
            return dict(zip(LABELS, (float(raw[m]) for m in RANX_MEASURES), strict=True))

        for i in range(1 + warm):
            t0 = time.perf_counter()
            means = call()
            dt = time.perf_counter() - t0
            if i == 0:
                first = dt
                cpu_first = _cpu_s() - cpu0
            else:
                warm_times.append(dt)
        total = first
    cpu = cpu_first if scenario != "file" else _cpu_s() - cpu0
    return {
        "cpu": cpu,
        "tool": tool,
        "scenario": scenario,
        "seconds": total,
        "first": first,
        "warm": warm_times,
        "phases": phases,
        "rss_base_mb": base,
        "rss_input_mb": input_rss,
        "rss_peak_mb": _rss_mb(),
        "means": means,
    }


def agreement_worker() -> dict:
    """Per-query values of all three tools in one process; count disagreements."""
    import numpy as np
    import polars as pl
    import pytrec_eval
    import ranx

    import searcheval_frames as sef

    run = sef.read_run(RUN)
    qrels = sef.read_qrels(QRELS)
    extra = ["RR"]
    out: dict = {"means": {}, "diff_queries": {}}
    per_q = {}
    for compat in ("trec_eval-10", "trec_eval-9"):
        res = sef.evaluate(run, qrels, SEF_MEASURES + extra, per_query=True, compat=compat)
        wide = res.pivot(on="measure", index="query_id", values="value").sort("query_id")
        per_q[compat] = wide
        out["means"][f"sef[{compat}]"] = {m: float(wide[m].mean()) for m in SEF_MEASURES + extra}
    qids = per_q["trec_eval-10"]["query_id"].to_list()

    pr = _pytrec_parse_run(RUN)
    pq = _pytrec_parse_qrels(QRELS)
    pt = pytrec_eval.RelevanceEvaluator(pq, set(PYTREC_MEASURES)).evaluate(pr)
    pt_cols = {label: np.array([pt[q][m] for q in qids])
               for label, m in zip(LABELS, PYTREC_MEASURES, strict=True)}
    pt_cols["RR"] = pt_cols.pop("RR@10")  # pytrec_eval has no RR@10: recip_rank is RR
    out["means"]["pytrec_eval"] = {k: float(v.mean()) for k, v in pt_cols.items()}

    rq = ranx.Qrels.from_dict(pq)
    rr = ranx.Run.from_dict(pr)
    ranx.evaluate(rq, rr, RANX_MEASURES, return_mean=False)
    rx_cols = {}
    for label, m in zip(LABELS, RANX_MEASURES, strict=True):
        scores = rr.scores[m]
        rx_cols[label] = np.array([scores[q] for q in qids])
    out["means"]["ranx"] = {k: float(v.mean()) for k, v in rx_cols.items()}

    def n_diff(a: np.ndarray, b: np.ndarray) -> int:
        return int((np.abs(a - b) > 1e-9).sum())

    for name, cols, ref in (("pytrec_eval vs sef[trec_eval-9]", pt_cols, "trec_eval-9"),
                            ("pytrec_eval vs sef[trec_eval-10]", pt_cols, "trec_eval-10"),
                            ("ranx vs sef[trec_eval-10]", rx_cols, "trec_eval-10")):
        wide = per_q[ref]
        out["diff_queries"][name] = {
            k: n_diff(v, wide[k].to_numpy()) for k, v in cols.items()
        }
    # ties: how many queries have tied scores among their top 1000 / involving a judged doc
    ties = run.group_by("query_id").agg((pl.col("score").n_unique() < pl.len()).alias("t"))
    out["queries_with_ties"] = int(ties["t"].sum())
    judged = run.join(qrels, on=["query_id", "doc_id"])
    tj = judged.join(run, on=["query_id", "score"]).filter(
        pl.col("doc_id") != pl.col("doc_id_right"))
    out["judged_docs_with_tied_score"] = int(tj.select("query_id", "doc_id").unique().height)
    out["n_queries"] = len(qids)
    return out


# =========================================================================== driver
def _spawn(args: list[str]) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), *args]
    env = dict(os.environ)
    env.setdefault("PYTHONWARNINGS", "ignore")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _machine() -> dict[str, str]:
    import importlib.metadata as md

    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram = "?"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                ram = f"{int(line.split()[1]) / 1024**2:.1f} GB"
                break
    except OSError:
        pass
    vers = {}
    for pkg in ("searcheval_frames", "polars", "pyarrow", "pandas", "numpy", "pytrec_eval-terrier",
                "ranx", "numba"):
        try:
            vers[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            vers[pkg] = "not installed"
    return {
        "nproc": str(os.cpu_count()),
        "affinity": str(len(os.sched_getaffinity(0))) if hasattr(os, "sched_getaffinity") else "?",
        "cpu": cpu,
        "ram": ram,
        "python": platform.python_version(),
        "platform": platform.platform(),
        **vers,
    }


def _load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def _fmt(x: float | None, nd: int = 2) -> str:
    return "–" if x is None else f"{x:.{nd}f}"


def _summarise(results: dict[tuple[str, str], list[dict]]) -> dict[tuple[str, str], dict]:
    summ = {}
    for key, runs in results.items():
        secs = [r["seconds"] for r in runs]
        warm = [statistics.median(r["warm"]) for r in runs if r["warm"]]
        summ[key] = {
            "median": statistics.median(secs),
            "min": min(secs),
            "cpu": statistics.median(r["cpu"] for r in runs),
            "warm_median": statistics.median(warm) if warm else None,
            "warm_min": min(warm) if warm else None,
            "rss_peak": statistics.median(r["rss_peak_mb"] for r in runs),
            "rss_base": statistics.median(r["rss_base_mb"] for r in runs),
            "rss_input": (statistics.median(r["rss_input_mb"] for r in runs)
                          if runs[0]["rss_input_mb"] is not None else None),
            "phases": {k: statistics.median(r["phases"][k] for r in runs)
                       for k in runs[0]["phases"]},
            "means": runs[0]["means"],
            "n": len(runs),
        }
    return summ


def write_results(summ: dict, agree: dict | None, machine: dict, args: argparse.Namespace,
                  path: Path) -> str:
    lines = [
        "# Benchmark results",
        "",
        "Generated by `python benchmarks/run_bench.py` "
        f"on {_dt.datetime.now().strftime('%Y-%m-%d %H:%M')} "
        f"({args.repeats} fresh process(es) per row"
        f"{f', {args.repeats_ranx} for ranx' if args.repeats_ranx else ''}, run round robin, {args.warm} warm call(s) per memory "
        "process). Do not edit by hand.",
        "",
        "## Machine",
        "",
        f"- CPU: {machine['cpu']}, nproc = {machine['nproc']} "
        f"(usable: {machine['affinity']}), RAM {machine['ram']}",
        f"- {machine['platform']}, Python {machine['python']}",
        "- " + ", ".join(f"{k} {v}" for k, v in machine.items()
                         if k not in ("nproc", "affinity", "cpu", "ram", "python", "platform")),
        "",
        "## Data",
        "",
        "`benchmarks/make_data.py` (seeded): 6,980 queries x 1,000 passages = 6,980,000 run "
        "lines (MS MARCO-like integer ids, BM25-like scores with 4 decimals), 7,437 qrels "
        "lines (label 1, ~1.07 per query).",
        "Measures: P@10, R@100, R@1000, RR@10, nDCG@10, AP "
        "(ranx: precision@10, recall@100, recall@1000, mrr@10, ndcg@10, map; pytrec_eval: "
        "P_10, recall_100, recall_1000, **recip_rank** (pytrec_eval has no RR@10), "
        "ndcg_cut_10, map).",
        "",
        "## Timings",
        "",
        "Seconds are wall-clock, median / min over fresh processes. *file*: read both files "
        "and evaluate, in a fresh process (ranx: includes numba JIT). *memory, first*: first "
        "evaluate call on in-memory input in a fresh process (ranx: from_df + JIT); "
        "*memory, warm*: later calls. Peak RSS is the absolute peak of the process "
        "(`ru_maxrss`); *after imports* is the peak before any data is touched; "
        "*input* is the peak after building the in-memory input (before timing). "
        "*CPU s* is user + system time of the timed part (median; all threads).",
        "",
        f"Load average when the benchmark started / ended: {args.load_start} / "
        f"{_load()} (the machine is shared; with load above the core count wall-clock "
        "times are inflated, CPU seconds much less so).",
        "",
        "| tool | scenario | seconds (median / min) | CPU s | warm call (median / min) | "
        "read / evaluate | peak RSS MB | after imports MB | input MB |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for (tool, scen), s in summ.items():
        ph = s["phases"]
        phase = f"{ph['read']:.2f} / {ph['evaluate']:.2f}" if ph else "–"
        scen_l = "file" if scen == "file" else "memory, first"
        warm = (f"{_fmt(s['warm_median'])} / {_fmt(s['warm_min'])}"
                if s["warm_median"] is not None else "–")
        lines.append(
            f"| {TOOL_LABEL[tool]} | {scen_l} | {_fmt(s['median'])} / {_fmt(s['min'])} "
            f"| {_fmt(s['cpu'])} | {warm} "
            f"| {phase} | {s['rss_peak']:.0f} | {s['rss_base']:.0f} | "
            f"{_fmt(s['rss_input'], 0)} |"
        )
    # speed-ups
    lines += ["", "## Speed-up of searcheval_frames (median time of peer / median time of sef)",
              "", "| scenario | vs pytrec_eval | vs ranx | peak RSS sef / pytrec_eval / ranx (MB) |",
              "|---|---|---|---|"]

    def su(scen: str, peer: str, warm: bool = False, me: str = "sef") -> str:
        a, b = summ.get((me, scen)), summ.get((peer, scen))
        if not a or not b:
            return "–"
        ka = "warm_median" if warm else "median"
        if a[ka] is None or b[ka] is None:
            return "–"
        return f"{b[ka] / a[ka]:.1f}x"

    for scen, warm, label in (("file", False, "file, end to end"),
                              ("memory", False, "memory, first call"),
                              ("memory", True, "memory, warm call")):
        rss = " / ".join(_fmt(summ[(t, scen)]["rss_peak"], 0) if (t, scen) in summ else "–"
                         for t in ("sef", "pytrec_eval", "ranx"))
        lines.append(f"| {label} | {su(scen, 'pytrec_eval', warm)} | {su(scen, 'ranx', warm)} "
                     f"| {rss} |")
    if ("sef-pandas", "memory") in summ:
        lines.append(
            f"| memory, pandas in (first / warm) | "
            f"{su('memory', 'pytrec_eval', False, 'sef-pandas')} / "
            f"{su('memory', 'pytrec_eval', True, 'sef-pandas')} | "
            f"{su('memory', 'ranx', False, 'sef-pandas')} / "
            f"{su('memory', 'ranx', True, 'sef-pandas')} | – |")
    tgt = []
    f_sef, f_pt, f_rx = (summ.get((t, "file")) for t in ("sef", "pytrec_eval", "ranx"))
    if f_sef and f_pt and f_rx:
        tgt = [
            "",
            "Targets (issue 2, on a 2-core machine, end to end from file): >= 8x pytrec_eval "
            f"→ **{f_pt['median'] / f_sef['median']:.1f}x** "
            f"({'met' if f_pt['median'] / f_sef['median'] >= 8 else 'NOT met'}); >= 15x ranx → "
            f"**{f_rx['median'] / f_sef['median']:.1f}x** "
            f"({'met' if f_rx['median'] / f_sef['median'] >= 15 else 'NOT met'}); peak RSS below "
            f"pytrec_eval → **{f_sef['rss_peak']:.0f} MB vs {f_pt['rss_peak']:.0f} MB** "
            f"({'met' if f_sef['rss_peak'] < f_pt['rss_peak'] else 'NOT met'}).",
        ]
    lines += tgt
    # agreement
    lines += ["", "## Agreement (means over the 6,980 queries)", ""]
    tools = [t for t in ("sef", "pytrec_eval", "ranx") if (t, "file") in summ]
    if tools:
        lines += ["From the timed *file* runs:", "",
                  "| measure | " + " | ".join(TOOL_LABEL[t] for t in tools) + " |",
                  "|---|" + "---|" * len(tools)]
        for m in LABELS:
            cells = [f"{summ[(t, 'file')]['means'][m]:.6f}" for t in tools]
            lines.append(f"| {m}{' (pytrec_eval: RR, no cutoff)' if m == 'RR@10' else ''} | "
                         + " | ".join(cells) + " |")
    if agree:
        names = list(agree["means"])
        lines += ["", "Per-query check (`--agree`, all tools in one process; pytrec_eval's "
                  "`recip_rank` is compared with RR, ranx's `mrr@10` with RR@10):", "",
                  "| measure | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
        for m in [*LABELS, "RR"]:
            cells = [f"{agree['means'][n][m]:.6f}" if m in agree["means"][n] else "–"
                     for n in names]
            lines.append(f"| {m} | " + " | ".join(cells) + " |")
        lines += ["", f"Queries (of {agree['n_queries']}) whose value differs by more than "
                  "1e-9:", "", "| comparison | " + " | ".join([*LABELS, "RR"]) + " |",
                  "|---|" + "---|" * (len(LABELS) + 1)]
        for name, d in agree["diff_queries"].items():
            lines.append(f"| {name} | " + " | ".join(str(d.get(m, "–"))
                                                       for m in [*LABELS, "RR"]) + " |")
        lines += [
            "",
            f"Ties: {agree['queries_with_ties']} queries have tied scores somewhere in their "
            f"1,000 results; {agree['judged_docs_with_tied_score']} judged retrieved documents "
            "share their score with another document of the same query. trec_eval (and "
            "searcheval_frames) break ties by doc id descending; pytrec_eval (trec_eval 9) "
            "orders by float32 scores, hence `compat=\"trec_eval-9\"`; ranx breaks ties "
            "differently (see the per-query counts above).",
        ]
    text = "\n".join(lines) + "\n"
    # this script writes the head of the file; the sections the other scripts write
    # (report, fusion, out of core, two steps, notes) follow it and are kept
    old = path.read_text() if path.exists() else ""
    cuts = [i for m in ("\n## Report (", "\n## Fusion (", "\n<!-- ") if (i := old.find(m)) >= 0]
    path.write_text(text + (old[min(cuts):] if cuts else ""))
    return text


def main() -> None:
    ap = argparse.ArgumentParser(description="searcheval_frames vs pytrec_eval vs ranx")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--repeats-ranx", type=int, default=None,
                    help="fresh processes per ranx row (default: --repeats; ranx is slow)")
    ap.add_argument("--warm", type=int, default=2, help="warm calls per memory process")
    ap.add_argument("--tools", default="sef,sef-pandas,pytrec_eval,ranx")
    ap.add_argument("--scenarios", default="file,memory")
    ap.add_argument("--no-agree", action="store_true", help="skip the per-query agreement check")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    ap.add_argument("--worker", nargs=2, metavar=("TOOL", "SCENARIO"), help=argparse.SUPPRESS)
    ap.add_argument("--agree-worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.worker:
        print(json.dumps(worker(*args.worker, warm=args.warm)))
        return
    if args.agree_worker:
        print(json.dumps(agreement_worker()))
        return
    if not RUN.exists() or not QRELS.exists():
        raise SystemExit(f"{RUN} missing: run `python benchmarks/make_data.py` first")

    args.load_start = _load()
    tools = args.tools.split(",")
    scens = args.scenarios.split(",")
    results: dict[tuple[str, str], list[dict]] = {}
    # round robin (every contender once, then again ...), so that a slow spell of the
    # shared machine hits all tools alike instead of one tool's repeats
    plan = []
    for tool, scen in CONTENDERS:
        if tool not in tools or scen not in scens:
            continue
        reps = args.repeats_ranx if tool == "ranx" and args.repeats_ranx else args.repeats
        plan += [(rep, tool, scen) for rep in range(reps)]
    for rep, tool, scen in sorted(plan, key=lambda t: t[0]):
        r = _spawn(["--worker", tool, scen, "--warm", str(args.warm)])
        results.setdefault((tool, scen), []).append(r)
        warm = f" warm {statistics.median(r['warm']):.2f}s" if r["warm"] else ""
        print(f"{tool:12s} {scen:7s} #{rep + 1}: {r['seconds']:7.2f} s "
              f"(cpu {r['cpu']:.2f} s){warm}  "
              f"phases {json.dumps({k: round(v, 2) for k, v in r['phases'].items()})}  "
              f"peak {r['rss_peak_mb']:.0f} MB (imports {r['rss_base_mb']:.0f} MB)",
              flush=True)
    agree = None
    if not args.no_agree:
        print("agreement check ...", flush=True)
        agree = _spawn(["--agree-worker"])
        print(json.dumps(agree, indent=1))
    summ = _summarise(results)
    out = args.out if not args.no_write else Path(os.devnull)
    print(write_results(summ, agree, _machine(), args, out))


if __name__ == "__main__":
    main()
