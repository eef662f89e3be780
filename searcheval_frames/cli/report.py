"""``searcheval report``: runs and qrels in, a report folder out (the main job).

Examples
--------
::

    searcheval report qrels.txt bm25.run rerank.run --baseline bm25 -o report/
    searcheval report qrels.txt runs/*.run --baseline bm25 -m nDCG@10 -m P.5,10 \\
        --queries queries.tsv --docs docs.jsonl -o report/
    searcheval report qrels.txt runs/*.run --queries queries.tsv --by intent -o report/

Exit codes: 0 success, 1 bad input (unreadable or malformed file, unknown measure
or run), 2 bad command line.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import warnings
from collections.abc import Sequence
from typing import Any

from ..errors import SearchEvalError
from ..optional import MissingDependencyError
from ._common import EXIT_INPUT, EXIT_OK, EXIT_USAGE, add_columns_argument
from ._common import one_line as _one_line
from ._common import read_runs as _read_runs

__all__ = ["build_parser", "main"]

_DESCRIPTION = """\
Write a before/after report of search runs: index.html (one self-contained page),
report.md with figures/*.png|svg, and provenance.json, into the folder given by -o.

It holds a verdict per measure computed from the confidence interval and the
corrected p-value, the runs x measures and before -> after tables, a trade-off
curve, before/after bars, per-query differences, judged coverage, the queries that
got worse and better with both ranked lists side by side, and provenance."""

_EPILOG = """\
examples:
  searcheval report data/example/qrels.txt data/example/runs/bm25.run \\
      data/example/runs/bm25-rerank.run --baseline bm25 \\
      --queries data/example/queries.tsv --docs data/example/docs.jsonl -o report/
  searcheval report qrels.txt bm25.run rerank.run --queries queries.tsv --by intent

exit codes: 0 ok, 1 bad input (file, measure, run name or data), 2 bad command line."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``searcheval report``."""
    p = argparse.ArgumentParser(
        prog="searcheval report", description=_DESCRIPTION, epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("qrels", metavar="QRELS", help="relevance judgments file")
    p.add_argument("runs", metavar="RUN", nargs="+", help="two or more run files")
    p.add_argument("-b", "--baseline", metavar="NAME",
                   help="the 'before' run (default: the first run)")
    p.add_argument("--run", metavar="NAME",
                   help="the 'after' run of the figures and examples (default: the only "
                        "other run, or the best on --focus)")
    p.add_argument("-m", "--measure", action="append", metavar="MEASURE", dest="measures",
                   help="measure(s), repeatable, our or trec_eval names (default: P@5 P@10 "
                        "R@10 RR nDCG@10 AP)")
    p.add_argument("--focus", metavar="MEASURE",
                   help="measure of the per-query analysis (default nDCG@10)")
    p.add_argument("--queries", metavar="FILE",
                   help="query texts and metadata (TSV, CSV, JSON Lines, ...): query_id, "
                        "query and any columns to slice by")
    p.add_argument("--by", metavar="COLUMN", action="append", dest="by",
                   help="add a 'By slice' section: the run against the baseline within each "
                        "value of this column of --queries (e.g. intent), p-values corrected "
                        "over all slice tests; with more than two runs also a leaderboard "
                        "per slice; repeatable")
    p.add_argument("--docs", metavar="FILE",
                   help="document titles: .jsonl/.csv/.tsv/.parquet with doc_id and title/text")
    p.add_argument("-o", "--output", metavar="DIR", default="report",
                   help="folder to write (default: report)")
    p.add_argument("--title", help="page title")
    p.add_argument("--depth", type=int, default=20,
                   help="k of Judged@k and of the trade-off curve (default 20)")
    p.add_argument("-k", "--ranks", type=int, default=10, dest="k",
                   help="ranks shown side by side (default 10)")
    p.add_argument("--examples", type=int, default=5, dest="n_examples",
                   help="how many biggest losses and wins to show (default 5)")
    p.add_argument("--test", default="t", help="t (default), wilcoxon, permutation or sign")
    p.add_argument("--correction", default="holm",
                   help="holm (default), bonferroni, bh, by or none")
    p.add_argument("--ci-method", default="auto", dest="ci_method",
                   help="auto (default: bca up to 2,000 queries, t above), bca, percentile, "
                        "basic or t (no resampling; fastest)")
    p.add_argument("--resamples", type=int, default=10_000, dest="n_resamples",
                   help="bootstrap / randomization resamples (default 10000)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("-l", "--level", type=int, default=None, dest="relevance_level",
                   help="minimum relevance that counts as relevant by P, R, RR and AP "
                        "(default 1; TREC DL passage qrels: 2); nDCG's gain is the label")
    add_columns_argument(p)
    p.add_argument("--min-judged", type=float, default=0.9, dest="min_judged",
                   help="judged share below which coverage is flagged (default 0.9)")
    p.add_argument("--no-figures", action="store_true", help="skip the figures")
    p.add_argument("--name-from", choices=["tag", "file"], default="tag",
                   help="run names from the tag column (default) or the file names")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="print only where the report is")
    return p


def _headline(rep: Any) -> str:
    from ..reporting.baseline import names_note, table

    shown = table(rep.data, "before_after",
                  ["before", "after", "delta", "ci", "p_adjusted", "wtl"])  # display names
    lines = [rep.data.headline, "", shown.to_markdown(legend=False), ""]
    if names_note(rep.data):
        lines += [names_note(rep.data), ""]
    lines += [f"  {v}" for v in rep.verdicts]
    return "\n".join(lines)


def run_report(args: argparse.Namespace, argv: Sequence[str]) -> int:
    """Make and save the report the parsed command line asks for; returns the exit code."""
    from ..io import read_qrels
    from ..reporting import report
    from ..reporting.provenance import file_record
    from .trec_eval import expand_measures

    measures = None
    if args.measures:
        exp = expand_measures(args.measures)
        measures = [r.name for r in sorted((r for r in exp.requests if r.measure is not None),
                                           key=lambda r: r.seq)]
    if args.columns:  # tables with the user's column names: one mapping for all files
        import polars as pl

        from ..io import read_run

        qrels = read_qrels(args.qrels, columns=args.columns)
        runs = pl.concat([pl.DataFrame(read_run(p, columns=args.columns)) for p in args.runs],
                         how="vertical_relaxed")
    else:
        qrels = read_qrels(args.qrels)
        runs, _ = _read_runs(args.runs, args.name_from, qrels)
    command = "searcheval report " + " ".join(shlex.quote(a) for a in argv)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rep = report(
            runs, qrels, baseline=args.baseline, run=args.run, measures=measures,
            focus=args.focus, queries=args.queries, docs=args.docs, depth=args.depth, k=args.k,
            n_examples=args.n_examples, title=args.title, test=args.test,
            correction=args.correction, ci_method=args.ci_method,
            n_resamples=args.n_resamples, seed=args.seed,
            relevance_level=args.relevance_level, min_judged=args.min_judged,
            figures=not args.no_figures, command=command,
            by=None if not args.by else args.by[0] if len(args.by) == 1 else args.by,
        )
    for w in caught:
        print(f"searcheval: warning: {' '.join(str(w.message).split())}", file=sys.stderr)
    # the report read frames; record the files they came from
    inputs = [r for r in rep.data.provenance["inputs"] if r["role"] not in ("run", "qrels")]
    rep.data.provenance["inputs"] = (
        [file_record(p, "run") for p in args.runs] + [file_record(args.qrels, "qrels")] + inputs
    )
    index = rep.save(args.output)
    print(f"searcheval: report written to {index}")
    if not args.quiet:
        print()
        print(_headline(rep))
    return EXIT_OK


def main(argv: Sequence[str]) -> int:
    """``searcheval report ...`` (``argv`` without the program name and ``report``)."""
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv))
    except SystemExit as exc:  # --help (0) or a usage error (2)
        return int(exc.code or 0)
    if len(args.runs) < 2:
        parser.print_usage(sys.stderr)
        print("searcheval report: error: give the qrels and at least two run files (a "
              "baseline and a run to compare), e.g. `searcheval report qrels.txt bm25.run "
              "rerank.run --baseline bm25`", file=sys.stderr)
        return EXIT_USAGE
    for flag, value in (("--depth", args.depth), ("-k", args.k), ("--resamples", args.n_resamples)):
        if value < 1:
            print(f"searcheval report: error: {flag} must be a positive number, e.g. "
                  f"{flag} {20 if flag == '--depth' else 10}", file=sys.stderr)
            return EXIT_USAGE
    if args.by and not args.queries:
        parser.print_usage(sys.stderr)
        print("searcheval report: error: --by needs --queries FILE, a query file with a "
              f"query_id column and the column to slice by, e.g. --queries queries.tsv "
              f"--by {args.by[0]}", file=sys.stderr)
        return EXIT_USAGE
    try:
        return run_report(args, argv)
    except SearchEvalError as exc:
        print(f"searcheval report: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_INPUT
    except MissingDependencyError as exc:  # e.g. scipy after a bare `pip install .`
        print(f"searcheval report: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:  # any other OSError: one line too (issue #22)
        from ._common import os_error_line

        print(f"searcheval report: error: {os_error_line(exc)}", file=sys.stderr)
        return EXIT_INPUT
