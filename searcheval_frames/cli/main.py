"""The ``searcheval`` command: trec_eval's habits, dataframe-friendly output.

Examples
--------
::

    searcheval qrels.txt bm25.run                      # trec_eval's default measures
    searcheval qrels.txt bm25.run dense.run -m nDCG@10 -m P.5,10 -m map
    searcheval -q -c -m all_trec --format trec_eval qrels.txt bm25.run
    searcheval report qrels.txt bm25.run rerank.run --baseline bm25 -o report/

Exit codes: 0 success, 1 bad input (unreadable or malformed file, unknown
measure, nothing to evaluate), 2 bad command line.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import polars as pl

from ..errors import InvalidOptionError, SearchEvalError
from ._common import (
    EXIT_INPUT,
    EXIT_OK,
    EXIT_USAGE,
    add_columns_argument,
    one_line,
    os_error_line,
    read_runs,
)

if TYPE_CHECKING:
    pass

__all__ = ["build_parser", "main"]


_DESCRIPTION = """\
Evaluate search runs against relevance judgments (qrels), like trec_eval.

QRELS is a judgments file (TREC `qid 0 docno relevance`, CSV/TSV with a header,
Parquet or JSON Lines; .gz allowed). Each RUN is a ranked result file (TREC
`qid Q0 docno rank score tag`, or a table with query_id/doc_id/score columns).
Several runs are compared in one table (runs x measures)."""

_EPILOG = """\
measures (-m, repeatable):
  trec_eval spellings   map  P.5,10  ndcg_cut.10  recall.100  success.1,5,10
                        recip_rank  Rprec  bpref  iprec_at_recall  num_rel_ret
                        official (default set)  all_trec (everything implemented)
  searcheval names      nDCG@10  P@5  AP  RR@10  R@100  Judged@10  P(rel=2)@5
                        (comma-separated lists work: -m nDCG@10,RR,AP)
  `searcheval --list-measures` lists them all.

examples:
  searcheval qrels.txt bm25.run
  searcheval qrels.txt runs/*.run -m nDCG@10 -m P.10 -m map --format markdown
  searcheval -q -c -m all_trec --format trec_eval qrels.txt bm25.run > bm25.eval
  searcheval report qrels.txt bm25.run rerank.run --baseline bm25 -o report/
                        (a before/after report: see `searcheval report --help`)

exit codes: 0 ok, 1 bad input (file, measure or data), 2 bad command line."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``searcheval`` (exposed for documentation and tests)."""
    from ..version import __version__

    p = argparse.ArgumentParser(
        prog="searcheval",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("qrels", metavar="QRELS", nargs="?", help="relevance judgments file")
    p.add_argument("runs", metavar="RUN", nargs="*", help="one or more run files")
    p.add_argument("-m", "--measure", action="append", metavar="MEASURE", dest="measures",
                   help="measure(s) to compute (default: trec_eval's official set)")
    p.add_argument("-q", "--per-query", action="store_true",
                   help="also print one value per query (then the 'all' summary)")
    p.add_argument("-c", "--complete", action="store_true",
                   help="average over all queries in QRELS; queries a run lacks score 0 "
                        "(without -c only queries in both count)")
    p.add_argument("-l", "--level", type=int, default=1, metavar="LEVEL",
                   help="minimum relevance that counts as relevant (default 1)")
    p.add_argument("-M", "--depth", type=int, default=None, metavar="DEPTH",
                   help="keep only the top DEPTH documents of each query")
    p.add_argument("-J", "--judged-only", action="store_true",
                   help="drop unjudged documents before measuring")
    p.add_argument("-R", "--rel-format", choices=["qrels", "qrels_jg", "prefs", "qrels_prefs"],
                   default="qrels",
                   help="qrels_jg: the qrels' second column is a judgment group; use with "
                        "-m qrels_jg (measures averaged over groups), as trec_eval -R qrels_jg. "
                        "prefs ('qid jg jsg docno level' preference judgments) or qrels_prefs "
                        "(qrels read as preferences): -m all_prefs, as trec_eval")
    p.add_argument("-Z", "--zscores", metavar="FILE", default=None,
                   help="print z-scores against the per-query means and deviations in FILE "
                        "('qid measure mean stddev' lines), as trec_eval -Z")
    p.add_argument("-f", "--format", default="table",
                   choices=["table", "tsv", "csv", "json", "markdown", "trec_eval"],
                   help="output format (default: table; trec_eval = byte-identical to "
                        "trec_eval's output)")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="write the output to FILE instead of the screen")
    p.add_argument("--digits", type=int, default=4,
                   help="decimals in table/markdown output (default 4)")
    p.add_argument("--name-from", choices=["tag", "file"], default="tag",
                   help="run names from the tag column (default) or the file names")
    add_columns_argument(p)
    p.add_argument("--compat", choices=["trec_eval-10", "trec_eval-9"],
                   default="trec_eval-10",
                   help="trec_eval version to agree with (9 = pytrec_eval; differs only "
                        "in iprec_at_recall/11pt_avg)")
    p.add_argument("--plugin", metavar="FILE.py", action="append",
                   help="a Python file registering custom measures with @sef.measure "
                        "(repeatable; also the 'searcheval_frames.measures' entry points)")
    p.add_argument("--list-measures", action="store_true",
                   help="list the available measures and exit")
    p.add_argument("--version", action="version", version=f"searcheval {__version__}")
    return p


def _fmt(v: float | None, integer: bool, digits: int) -> str:
    if v is None:
        return ""
    if integer:
        return str(round(v))
    return f"{v:.{digits}f}"


def _wide(agg: pl.DataFrame, pq: pl.DataFrame | None, requests: Sequence,
          runs: list[str]) -> pl.DataFrame:
    """runs (x queries) x measures, in request order; the summary row has query 'all'."""
    names = [r.name for r in requests if r.measure is not None]
    rows = agg.with_columns(pl.lit("all").alias("query_id"))
    if pq is not None:
        rows = pl.concat([pq.select("run", "query_id", "measure", "value"),
                          rows.select("run", "query_id", "measure", "value")])
    wide = rows.pivot(on="measure", index=["run", "query_id"], values="value",
                      aggregate_function="first")
    for n in names:
        if n not in wide.columns:
            wide = wide.with_columns(pl.lit(None, pl.Float64).alias(n))
    order = {r: i for i, r in enumerate(runs)}
    wide = wide.with_columns(
        pl.col("run").replace_strict(order, return_dtype=pl.Int64).alias("_r"),
        (pl.col("query_id") == "all").alias("_all"),
        pl.col("query_id").cast(pl.Binary).alias("_q"),
    ).sort("_r", "_all", "_q").drop("_r", "_all", "_q")
    keep = ["run", "query_id"] if pq is not None else ["run"]
    return wide.select(*keep, *names)


def _render(fmt: str, agg: pl.DataFrame, pq: pl.DataFrame | None, requests: Sequence,
            runs: list[str], digits: int, strings: pl.DataFrame | None = None,
            zscore: bool = False) -> str:
    from .trec_eval import format_trec_eval

    if fmt == "trec_eval":
        return format_trec_eval(agg, requests, pq, strings, zscore=zscore)
    # tables keep the user's -m order (trec_eval's own order only for --format trec_eval)
    reqs = sorted((r for r in requests if r.measure is not None), key=lambda r: r.seq)
    integer = {r.name: r.integer for r in reqs}
    if fmt == "json":
        rows = agg.with_columns(pl.lit("all").alias("query_id"))
        if pq is not None:
            rows = pl.concat([pq.select("run", "query_id", "measure", "value"),
                              rows.select("run", "query_id", "measure", "value")])
        recs = rows.select("run", "query_id", "measure", "value").to_dicts()
        if pq is None:
            for r in recs:
                del r["query_id"]
        return json.dumps(recs, indent=1) + "\n"
    wide = _wide(agg, pq, reqs, runs)
    if fmt in ("csv", "tsv"):
        return wide.write_csv(separator="," if fmt == "csv" else "\t")
    header = wide.columns
    body = [[str(v) if c in ("run", "query_id") else _fmt(v, integer.get(c, False), digits)
             for c, v in zip(header, row, strict=True)] for row in wide.iter_rows()]
    if fmt == "markdown":
        align = ["---" if c in ("run", "query_id") else "---:" for c in header]
        lines = ["| " + " | ".join(r) + " |" for r in [header, align, *body]]
        return "\n".join(lines) + "\n"
    widths = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(header)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.ljust(w) if h in ("run", "query_id") else c.rjust(w)
            for c, w, h in zip(cells, widths, header, strict=True)
        ).rstrip()

    out = [line(header), line(["-" * w for w in widths])] + [line(r) for r in body]
    return "\n".join(out) + "\n"


def _list_measures(out: TextIO) -> None:
    from ..measures import list_measures

    table = list_measures()
    cols = [c for c in ("family", "example", "trec_eval", "summary") if c in table.columns]
    rows = [[str(v) if v is not None else "" for v in r] for r in table.select(cols).iter_rows()]
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(cols)]
    out.write("  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)).rstrip() + "\n")
    for r in rows:
        out.write("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() + "\n")


def run_cli(args: argparse.Namespace, out: TextIO) -> int:
    """Evaluate as the parsed command line says; returns the exit code."""
    from ..core._inputs import by_subtopic, flat_qrels
    from ..core.evaluate import evaluate_frames
    from ..io import read_qrels
    from ..measures import parse_measures
    from ..options import EvalOptions
    from .trec_eval import expand_measures

    if args.rel_format in ("prefs", "qrels_prefs"):
        from .prefs import run_prefs

        return run_prefs(args, out)
    exp = expand_measures(args.measures, args.compat)
    if exp.skipped:
        print("searcheval: note: not implemented, left out: " + ", ".join(exp.skipped),
              file=sys.stderr)
    qrels_jg = None
    if args.rel_format == "qrels_jg":
        from .qrels_jg import read_qrels_jg

        qrels_jg = read_qrels_jg(args.qrels)
        qrels = qrels_jg.unique(["query_id", "doc_id"], keep="first").drop("jg")
    else:
        # diversity measures read the qrels' second column as the subtopic (ndeval's format)
        qrels = read_qrels(args.qrels, columns=args.columns, subtopics=any(
            by_subtopic(r.measure) for r in exp.requests if r.measure is not None))
    names = [r.name for r in exp.requests if r.measure is not None]
    if not names and any(r.family == "relstring" for r in exp.requests):
        names = ["NumRet"]  # relstring alone: evaluate something to know the queries
    if not names:
        raise InvalidOptionError("no measure to compute besides runid; add -m MEASURE")
    opts: dict[str, Any] = dict(
        relevance_level=args.level, missing="zero" if args.complete else "skip",
        depth=args.depth, judged_only=args.judged_only, compat=args.compat)
    EvalOptions(func="searcheval", **opts)
    measures = parse_measures(names, duplicates="drop")
    run, blocks = read_runs(args.runs, args.name_from, flat_qrels(qrels), args.columns)
    runs = run.get_column("run").unique(maintain_order=True).to_list()
    agg: pl.DataFrame | None
    pq: pl.DataFrame | None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if qrels_jg is not None:
            from .qrels_jg import evaluate_jg

            agg, pq = evaluate_jg(run, qrels_jg, exp.requests, **opts)
            pq = pq if args.per_query or args.zscores else None
        else:
            agg = evaluate_frames(run, qrels, measures, blocks=blocks, **opts)
            pq = (evaluate_frames(run, qrels, measures, per_query=True, blocks=blocks, **opts)
                  if args.per_query or args.zscores else None)
    if pq is not None and args.complete and args.compat == "trec_eval-9":
        # trec_eval 9 prints per-query lines only for the queries a run has
        present = run.select("run", "query_id").unique()
        pq = pq.join(present, on=["run", "query_id"], how="semi")
    for w in caught:
        msg = " ".join(str(w.message).split())
        if args.complete and "missing" in msg.lower():
            continue  # -c asked for exactly that
        print(f"searcheval: warning: {msg}", file=sys.stderr)
    requests = exp.requests
    if args.zscores:
        from .zscore import apply_zscores, read_zscores

        assert pq is not None  # computed above whenever -Z is given
        agg, pq = apply_zscores(pq, requests, read_zscores(args.zscores))
        pq = pq if args.per_query else None
    strings = None
    if args.format == "trec_eval" and pq is not None and any(
            r.family == "relstring" for r in requests):
        from .relstring import relstrings

        strings = relstrings(run, qrels, requests, pq, depth=args.depth, blocks=blocks,
                             judged_only=args.judged_only, compat=args.compat)
    if args.format == "trec_eval" and len(runs) > 1 and all(r.family != "runid" for r in requests):
        # one block per run, like running trec_eval once per file: say which run it is
        from .trec_eval import MeasureRequest

        requests = [MeasureRequest(None, "runid", (0, 0.0, 0), "runid"), *requests]
    out.write(_render(args.format, agg, pq, requests, runs, args.digits, strings,
                      zscore=bool(args.zscores)))
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``searcheval`` console script.

    Parameters
    ----------
    argv
        Arguments without the program name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit code: 0 success, 1 bad input, 2 bad command line.

    Examples
    --------
    >>> main(["--version"])  # doctest: +SKIP
    searcheval 0.1.0
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    try:  # custom measures: --plugin FILE and the entry point group, for every subcommand
        from .plugins import load_plugins

        argv = load_plugins(argv)
    except SearchEvalError as exc:
        print(f"searcheval: error: {one_line(exc)}", file=sys.stderr)
        return EXIT_INPUT
    if argv[:1] == ["report"]:  # `searcheval report QRELS RUN...`: the main job
        from .report import main as report_main

        return report_main(argv[1:])
    if argv[:1] == ["check"]:  # `searcheval check QRELS RUN...`: findings before numbers
        from .check import main as check_main

        return check_main(argv[1:])
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help/--version (0) or usage error (2)
        return int(exc.code or 0)
    if args.list_measures:
        _list_measures(sys.stdout)
        return EXIT_OK
    if args.qrels is None or not args.runs:
        parser.print_usage(sys.stderr)
        print("searcheval: error: give a qrels file and at least one run file, e.g. "
              "`searcheval qrels.txt bm25.run` (see --help)", file=sys.stderr)
        return EXIT_USAGE
    if args.depth is not None and args.depth < 1:
        print("searcheval: error: -M DEPTH must be a positive number of documents, e.g. -M 100",
              file=sys.stderr)
        return EXIT_USAGE
    try:
        if args.output:
            buf = io.StringIO()
            code = run_cli(args, buf)
            from ..io import atomic_write

            data = buf.getvalue().encode()
            atomic_write(Path(args.output), lambda fh: fh.write(data))
            return code
        return run_cli(args, sys.stdout)
    except SearchEvalError as exc:
        print(f"searcheval: error: {one_line(exc)}", file=sys.stderr)
        return EXIT_INPUT
    except BrokenPipeError:  # `searcheval ... | head`
        return EXIT_OK
    except OSError as exc:  # any other OSError (permission denied, a full disk ...)
        print(f"searcheval: error: {os_error_line(exc)}", file=sys.stderr)
        return EXIT_INPUT
