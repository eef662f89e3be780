"""trec_eval's preference evaluation (``-R prefs`` / ``-R qrels_prefs``, ``-m all_prefs``).

The judgments are read with :mod:`searcheval_frames.io.prefs` and the 14 measures computed
by :func:`searcheval_frames.measures.prefs.evaluate_prefs`; only those measures (and
``runid``, ``num_q``) are defined with these judgment formats, as in trec_eval. Measure
sets: ``all_prefs`` (all 14) and ``prefs`` (trec_eval's short set); single names such as
``-m prefs_simp`` work too. Output as trec_eval prints it, with ``--format trec_eval``.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import TextIO

import polars as pl

from ..errors import IdMismatchError, InvalidOptionError, UnknownMeasureError
from ..measures.prefs import PREFS_COUNTS, PREFS_MEASURES
from ._common import EXIT_OK, read_runs
from .trec_eval import MeasureRequest

__all__ = ["prefs_requests", "run_prefs"]

#: trec_eval's measure sets for preferences (measures.c)
SETS = {
    "all_prefs": ("runid", "num_q", *PREFS_MEASURES),
    "prefs": ("runid", "num_q", *PREFS_MEASURES[:6]),
}
_ORDER = ("runid", "num_q", *PREFS_MEASURES)


@dataclass(frozen=True)
class _Named:
    """Stands in for a Measure in a request: format_trec_eval needs only ``name``."""

    name: str


def prefs_requests(specs: list[str] | None) -> list[MeasureRequest]:
    """Turn ``-m`` options into requests, in trec_eval's print order.

    Examples
    --------
    >>> [r.label for r in prefs_requests(["prefs_simp", "num_q"])]
    ['num_q', 'prefs_simp']
    """
    names: set[str] = set()
    for spec in specs or ["all_prefs"]:
        for part in (p.strip() for p in spec.split(",")):
            if part in SETS:
                names.update(SETS[part])
            elif part in _ORDER:
                names.add(part)
            elif part:
                raise UnknownMeasureError(
                    f"with -R prefs / qrels_prefs only the preference measures are defined "
                    f"(as in trec_eval), not {part!r}; use -m all_prefs, -m prefs or names "
                    f"such as prefs_simp, or ordinary qrels for other measures")
    out = []
    for i, n in enumerate(x for x in _ORDER if x in names):
        m = None if n == "runid" else _Named(n)
        out.append(MeasureRequest(m, n, (i, 0.0, 0), n, integer=n in PREFS_COUNTS
                                  or n == "num_q", seq=i))
    return out


def run_prefs(args: argparse.Namespace, out: TextIO) -> int:
    """Evaluate preference judgments as trec_eval ``-R prefs`` / ``-R qrels_prefs`` does."""
    from ..io.prefs import read_prefs, read_qrels_prefs
    from ..measures.prefs import evaluate_prefs

    requests = prefs_requests(args.measures)
    if args.format != "trec_eval":
        raise InvalidOptionError("preference judgments (-R prefs / qrels_prefs) are printed "
                              "as trec_eval does: add --format trec_eval")
    for flag, given in (("-c", args.complete), ("-J", args.judged_only),
                        ("-Z", bool(args.zscores)), ("-l", args.level != 1)):
        if given:
            raise InvalidOptionError(f"{flag} is not supported with -R {args.rel_format} (the "
                                  "preference measures have no such option here); drop it")
    reader = read_prefs if args.rel_format == "prefs" else read_qrels_prefs
    prefs = reader(args.qrels)
    flat = prefs.select("query_id", "doc_id", pl.col("rel_level").alias("relevance"))
    run, _ = read_runs(args.runs, args.name_from, flat)
    pq = evaluate_prefs(run, prefs, depth=args.depth)
    queries = pq.select("run", "query_id").unique()
    if queries.height == 0:
        raise IdMismatchError(
            "no query of the run has preference judgments; check that the query ids of "
            f"{args.qrels} and the run match")
    sums = pq.group_by("run", "measure").agg(pl.col("value").sum().alias("s"),
                                             pl.col("value").mean().alias("m"))
    agg = sums.select("run", "measure", pl.when(pl.col("measure").is_in(list(PREFS_COUNTS)))
                      .then(pl.col("s")).otherwise(pl.col("m")).alias("value"))
    nq = queries.group_by("run").agg(pl.len().cast(pl.Float64).alias("value")) \
        .with_columns(pl.lit("num_q").alias("measure"))
    runs = run.get_column("run").unique(maintain_order=True).to_list()
    agg = pl.concat([agg, nq.select("run", "measure", "value")])
    agg = pl.DataFrame({"run": runs}).join(agg, on="run", how="left", maintain_order="left")
    if len(runs) > 1 and all(r.family != "runid" for r in requests):
        requests = [MeasureRequest(None, "runid", (-1, 0.0, 0), "runid"), *requests]
    from .trec_eval import format_trec_eval

    out.write(format_trec_eval(agg, requests, pq if args.per_query else None))
    return EXIT_OK
