"""``fill_holes``: judge only the unjudged pooled documents; human labels always win."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import polars as pl

from ...analysis._inputs import runs_pl
from ...analysis.compare import compare
from ...analysis.holes import split_sources
from ...frames import input_kind, to_native
from ...options import check_int
from ..pooling import pool
from .engine import JudgeResult, judge

__all__ = ["FilledQrels", "fill_holes", "holes_verdicts"]


@dataclass
class FilledQrels:
    """From :func:`fill_holes`: ``.frame`` = ``query_id, doc_id, relevance, source``.

    ``source`` is ``"human"`` for the labels given and ``"judge:<name>"`` for the filled
    holes; ``.judged`` is the :class:`JudgeResult` of the holes, ``.holes`` how many
    unjudged pooled pairs there were, ``.filled`` how many got a grade.
    """

    frame: Any
    judged: JudgeResult
    holes: int
    filled: int
    depth: int

    def __repr__(self) -> str:
        return (f"FilledQrels({self.holes} holes in the top-{self.depth} pool, {self.filled} "
                f"filled by judge:{self.judged.name}; {self.judged.calls} new calls)")


def fill_holes(
    runs: Any,
    qrels: Any,
    judge_fn: Any,
    *,
    depth: int = 20,
    queries: Any = None,
    docs: Any = None,
    journal: str | os.PathLike[str] = "labels/judge.jsonl",
    budget: int | None = None,
    progress: bool = True,
) -> FilledQrels:
    """Judge the documents the runs' top-``depth`` retrieved that no human labelled.

    The pool (:func:`~searcheval_frames.pool`) minus the human labels is judged with
    :func:`~searcheval_frames.judge` (journaled, cached); the result is the human labels
    (``source="human"``, they always win) plus the judge's labels of the holes
    (``source="judge:<name>"``). Pass it to ``sef.compare(..., unjudged="judge")``.

    Parameters
    ----------
    runs, qrels
        The runs and the human labels (a ``source`` column, e.g. from an earlier
        ``fill_holes``, is honoured: only non-judge rows count as human).
    judge_fn
        A judge function or :class:`~searcheval_frames.judges.OpenAICompatible`.
    depth, queries, docs, journal, budget, progress
        As for :func:`~searcheval_frames.pool` and :func:`~searcheval_frames.judge`.

    Examples
    --------
    >>> import tempfile, os, polars as pl, searcheval_frames as sef
    >>> runs = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
    >>> qrels = {"q1": {"d1": 1}}
    >>> def two(p):
    ...     return p.with_columns(relevance=pl.lit(2))
    >>> out = sef.fill_holes(runs, qrels, two, depth=2, queries={"q1": "x"},
    ...                      docs={"d1": "a", "d2": "b", "d3": "c"}, progress=False,
    ...                      journal=os.path.join(tempfile.mkdtemp(), "j.jsonl"))
    >>> out.frame.sort("doc_id").rows()
    [('q1', 'd1', 1, 'human'), ('q1', 'd2', 2, 'judge:two')]
    """
    depth = check_int("fill_holes", "depth", depth, minimum=1, example="depth=20")
    kind = input_kind(qrels) if not isinstance(qrels, dict) else input_kind(runs)
    human, _ = split_sources(qrels)
    r = runs_pl(runs)
    todo = pool(r, depth=depth, qrels=human)
    todo = todo.join(human.select("query_id").unique(), on="query_id", how="semi") \
        if human.height else todo
    res = judge(todo.select("query_id", "doc_id"), judge_fn, queries=queries, docs=docs,
                journal=journal, budget=budget, progress=progress)
    auto = res.to_polars().select("query_id", "doc_id", "relevance", "source")
    out = pl.concat([
        human.with_columns(pl.lit("human").alias("source")),
        auto.join(human, on=["query_id", "doc_id"], how="anti"),
    ])
    return FilledQrels(to_native(out, kind), res, todo.height, auto.height, depth)


def holes_verdicts(
    runs: Any,
    qrels: Any,
    measures: Any = ("nDCG@10", "AP"),
    *,
    baseline: str | None = None,
    **compare_options: Any,
) -> Any:
    """Each comparison's verdict under each way of counting holes, and which change.

    Runs :func:`~searcheval_frames.compare` three times (``unjudged="nonrelevant"``,
    ``"relevant"``, ``"judge"``) on qrels with a ``source`` column (from
    :func:`fill_holes`). Returns ``run, baseline, measure`` and per treatment its
    ``delta_*`` and verdict (``"better"``, ``"worse"``, ``"n.s."``), plus ``changed``.

    Examples
    --------
    >>> import polars as pl, searcheval_frames as sef
    >>> q = [str(i) for i in range(1, 7) for _ in range(3)]  # 6 queries, 3 documents each
    >>> b = [1.0, 0.0, 2.0, 1.0, 0.0, 2.0, 1.0, 0.0, 2.0, 2.0, 0.0, 1.0, 1.0, 2.0, 0.0,
    ...      1.0, 2.0, 0.0]
    >>> runs = pl.DataFrame({"run": ["a"] * 18 + ["b"] * 18, "query_id": q * 2,
    ...                      "doc_id": ["x", "y", "z"] * 12, "score": [3.0, 2.0, 1.0] * 6 + b})
    >>> qrels = pl.DataFrame({"query_id": q, "doc_id": ["x", "y", "z"] * 6,
    ...                       "relevance": [0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 1, 0, 0],
    ...                       "source": ["human", "judge:j", "judge:j"] * 6})
    >>> v = holes_verdicts(runs, qrels, ["RR"], baseline="a")
    >>> v.select("nonrelevant", "relevant", "judge", "changed").row(0)
    ('n.s.', 'n.s.', 'worse', True)
    """
    kind = input_kind(runs)
    frames = []
    for how in ("nonrelevant", "relevant", "judge"):
        c = compare(runs, qrels, measures, baseline=baseline, unjudged=how,
                    **compare_options).to_polars()
        verdict = (pl.when(~pl.col("significant")).then(pl.lit("n.s."))
                   .when(pl.col("delta") > 0).then(pl.lit("better")).otherwise(pl.lit("worse")))
        frames.append(c.select("run", "baseline", "measure", pl.col("delta").alias(f"delta_{how}"),
                               verdict.alias(how)))
    key = ["run", "baseline", "measure"]
    out = frames[0].join(frames[1], on=key, how="left").join(frames[2], on=key, how="left")
    out = out.with_columns(
        ((pl.col("nonrelevant") != pl.col("relevant")) | (pl.col("nonrelevant") != pl.col("judge"))
         ).alias("changed"))
    return to_native(out, kind)
