"""How unjudged documents ("holes") count: the per-query values behind
``compare(..., unjudged=...)``.

* ``"nonrelevant"``: only human labels; a hole counts as non-relevant (trec_eval).
* ``"relevant"``: only human labels, and every hole a compared run retrieved within a
  measure's cutoff (all retrieved for measures without one), in a query with human
  labels, counts as relevant at grade ``max(1, relevance_level)``: the optimistic bound.
* ``"judge"``: human labels and the automatic judge's labels (rows whose ``source``
  starts with ``"judge:"``, e.g. from :func:`~searcheval_frames.fill_holes`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from ..core.evaluate import evaluate
from ..errors import InvalidOptionError
from ..frames import input_kind, is_path, to_native
from ..measures import parse_measure
from ..options import check_choice
from ._inputs import qrels_pl, runs_pl
from .pairs import CompareInput

__all__ = ["UNJUDGED", "split_sources", "unjudged_per_query", "with_unjudged"]

UNJUDGED = ("nonrelevant", "relevant", "judge")


def split_sources(qrels: Any) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(human labels, judge labels) as canonical qrels; judge rows have ``source`` 'judge:*'."""
    obj = getattr(qrels, "frame", qrels)
    if not is_path(obj) and not isinstance(obj, Mapping) and not isinstance(obj, pl.DataFrame):
        obj = pl.from_pandas(obj) if hasattr(obj, "iloc") else pl.from_arrow(obj)
    if isinstance(obj, pl.DataFrame) and "source" in obj.columns:
        is_judge = pl.col("source").cast(pl.String).str.starts_with("judge:").fill_null(False)
        human, auto = obj.filter(~is_judge), obj.filter(is_judge)
        empty = pl.DataFrame(schema={"query_id": pl.String, "doc_id": pl.String,
                                     "relevance": pl.Int64})
        return (qrels_pl(human.drop("source")) if human.height else empty,
                qrels_pl(auto.drop("source")) if auto.height else empty)
    q = qrels_pl(obj)
    return q, q.clear()


def _holes_as_relevant(runs: pl.DataFrame, human: pl.DataFrame, depth: int | None,
                       grade: int) -> pl.DataFrame:
    ranked = runs.sort(["run", "query_id", "score", "doc_id"],
                       descending=[False, False, True, True])
    if depth is not None:
        ranked = ranked.filter(pl.int_range(pl.len()).over(["run", "query_id"]) < depth)
    judged_q = human.select("query_id").unique()
    holes = (ranked.select("query_id", "doc_id").unique()
             .join(judged_q, on="query_id", how="semi")
             .join(human, on=["query_id", "doc_id"], how="anti")
             .with_columns(pl.lit(grade, pl.Int64).alias("relevance")))
    return pl.concat([human, holes.select(human.columns)])


def unjudged_per_query(
    runs: Any,
    qrels: Any,
    measures: str | Sequence[str],
    unjudged: str,
    evaluate_options: Mapping[str, Any],
) -> Any:
    """Per-query values (``run, query_id, measure, value``, the runs' frame kind)."""
    if unjudged not in UNJUDGED:  # checked by the caller; a guard for direct use
        raise InvalidOptionError(f"unjudged={unjudged!r}: use one of {UNJUDGED}")
    kind = input_kind(runs)
    r = runs_pl(runs)
    human, auto = split_sources(qrels)
    mlist = [measures] if isinstance(measures, str) else list(measures)
    if unjudged == "judge":
        both = pl.concat([human, auto.join(human, on=["query_id", "doc_id"], how="anti")])
        return to_native(evaluate(r, both, mlist, per_query=True, **evaluate_options), kind)
    if unjudged == "nonrelevant":
        return to_native(evaluate(r, human, mlist, per_query=True, **evaluate_options), kind)
    grade = max(1, int(evaluate_options.get("relevance_level", 1) or 1))
    by_depth: dict[int | None, list[str]] = {}
    for m in mlist:
        cutoff = parse_measure(m).cutoff
        by_depth.setdefault(int(cutoff) if cutoff is not None else None, []).append(m)
    parts = [evaluate(r, _holes_as_relevant(r, human, depth, grade), ms, per_query=True,
                      **evaluate_options) for depth, ms in by_depth.items()]
    return to_native(pl.concat(parts), kind)


def with_unjudged(inp: CompareInput, measures: Any, unjudged: str,
                  evaluate_options: Mapping[str, Any]) -> CompareInput:
    """``compare``'s hook: its input (runs + qrels) as per-query values for ``unjudged``.

    Document in :func:`~searcheval_frames.compare`: ``"nonrelevant"``, ``"relevant"`` or
    ``"judge"`` (see this module); needs runs, ``qrels=`` and ``measures=``. The evaluate
    options (``compare``'s ``**evaluate_options`` dict) are used here and then emptied:
    ``compare`` goes on with per-query values, to which they do not apply.
    """
    check_choice("compare", "unjudged", unjudged, UNJUDGED, example="unjudged='judge'")
    if inp.kind != "runs" or measures is None:
        raise InvalidOptionError("compare(unjudged=...): pass runs, qrels and measures, e.g. "
                                 "compare(runs, qrels, ['nDCG@10'], unjudged='judge')")
    out = unjudged_per_query(inp.data, inp.qrels, measures, unjudged, dict(evaluate_options))
    if isinstance(evaluate_options, dict):
        evaluate_options.clear()
    return CompareInput("per_query", out)
