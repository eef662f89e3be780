"""``searcheval check QRELS RUN...``: sef.check for CI pipelines.

Prints the findings (one summary line, then one block per finding) and exits with 0
when there is no error, 1 when there is one (or a warning, with ``--strict``), 2 for a
bad command line. A file that cannot be read is itself a finding (``unreadable_*``);
any other problem is one line on stderr, as for ``searcheval``.

>>> from searcheval_frames.cli.check import build_parser
>>> build_parser().parse_args(["q.txt", "a.run", "-m", "P@10", "--strict"]).strict
True
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..errors import SearchEvalError
from ._common import EXIT_INPUT, EXIT_OK, EXIT_USAGE, one_line, os_error_line

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``searcheval check``."""
    p = argparse.ArgumentParser(
        prog="searcheval check",
        description="Check runs and qrels for what makes evaluation numbers silently "
                    "wrong (duplicates, id mismatches, ties at cutoffs, relevance level, "
                    "...). Exit codes: 0 no error, 1 errors (or warnings with --strict), "
                    "2 bad command line.")
    p.add_argument("qrels", help="the qrels file")
    p.add_argument("runs", nargs="+", help="one or more run files")
    p.add_argument("-m", "--measure", action="append", default=[],
                   help="a measure you will compute (repeat or comma-separate), e.g. nDCG@10")
    p.add_argument("-l", "--relevance-level", type=int, default=None,
                   help="the relevance level you will use (trec_eval -l)")
    p.add_argument("-M", "--depth", type=int, default=None, help="the depth (trec_eval -M)")
    p.add_argument("-q", "--queries", default=None, help="the query set file")
    p.add_argument("--scale", default=None, help="the label scale as LO,HI, e.g. 0,3")
    p.add_argument("--name-from", choices=("tag", "file"), default="file",
                   help="name runs after their files (default) or their tags")
    p.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``searcheval check``; returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:
        return int(exc.code or 0)
    scale = None
    if args.scale is not None:
        try:
            lo, hi = (int(x) for x in args.scale.split(","))
            scale = (lo, hi)
        except ValueError:
            print("searcheval check: error: --scale is LO,HI, e.g. --scale 0,3", file=sys.stderr)
            return EXIT_USAGE
    measures = [m.strip() for ms in args.measure for m in ms.split(",") if m.strip()]
    try:
        from ..analysis.check import check
        from ..io import read_run

        try:
            run = read_run(args.runs, name_from=args.name_from)
        except SearchEvalError:
            run = args.runs  # check reports it as unreadable_run
        findings = check(run, args.qrels, queries=args.queries, measures=measures or None,
                         relevance_level=args.relevance_level, scale=scale, depth=args.depth)
    except SearchEvalError as exc:
        print(f"searcheval check: error: {one_line(exc)}", file=sys.stderr)
        return EXIT_INPUT
    except OSError as exc:
        print(f"searcheval check: error: {os_error_line(exc)}", file=sys.stderr)
        return EXIT_INPUT
    print(findings.to_text())
    if not findings.ok or (args.strict and findings.warnings):
        return EXIT_INPUT
    return EXIT_OK
