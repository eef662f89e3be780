"""The report's data banner: sef.check's findings, and a note when ties move a headline mean.

:func:`banner` runs :func:`~searcheval_frames.check` on the report's inputs and returns one
summary line plus one line per error or warning; :func:`tie_note` evaluates the two runs
the report is about with ``ties="bounds"`` and says so when the mean of the focus measure
could move by more than :data:`TIE_THRESHOLD` with another order of tied documents.

>>> import polars as pl
>>> run = pl.DataFrame({"run": ["a", "a", "b", "b"], "query_id": "q1",
...                     "doc_id": ["d1", "d2", "d1", "d2"], "score": [1.0, 1.0, 2.0, 1.0]})
>>> qrels = pl.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "relevance": [1]})
>>> tie_note(run, qrels, "RR", ["a", "b"], relevance_level=1)[:40]
'Ties move a headline mean: a scores RR ='
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import polars as pl

from ..analysis.check import check
from ..core.evaluate import evaluate
from ..core.results import summarize
from ..core.ties import with_bounds
from ..frames import checked_blocks, mark_checked

__all__ = ["TIE_THRESHOLD", "banner", "tie_note"]

#: How far (absolute) the mean of the focus measure may move with the order of ties
#: before the report says so.
TIE_THRESHOLD = 0.005


def banner(run: pl.DataFrame, qrels: pl.DataFrame, measures: Any,
           relevance_level: int, *, chosen: bool = True) -> list[str]:
    """sef.check's summary line and its errors and warnings, one line each (empty when
    it found nothing to warn about); ``chosen``: the caller passed ``relevance_level``
    (else it is the default, which sef.check questions more)."""
    found = check(run, qrels, measures=measures,
                  relevance_level=relevance_level if chosen else None)
    rows = found.to_polars().filter(pl.col("severity") != "info")
    if rows.height == 0:
        return []
    return [found.summary()] + [f"{r['code']}: {r['message']} Fix: {r['fix']}"
                                for r in rows.iter_rows(named=True)]


def tie_note(run: pl.DataFrame, qrels: pl.DataFrame, focus: str, runs: list[str], *,
             relevance_level: int, threshold: float = TIE_THRESHOLD,
             per_query: pl.DataFrame | None = None) -> str:
    """A sentence when, for one of ``runs``, the mean of ``focus`` ranges over more than
    ``threshold`` across the orders of tied documents; else ''.

    ``per_query``: evaluate's per-query values of ``runs`` on ``focus`` when the caller
    has them (the report's one evaluation). Only queries with two equal scores can move
    (every order of a query without ties is trec_eval's), so only their rows are
    evaluated with ``ties="bounds"``; the other queries keep their trec_eval value as
    low and high, and the means are aggregated as evaluate aggregates them.
    """
    pair = run.lazy().filter(pl.col("run").is_in(runs))  # (only the columns each step reads)
    found = _tied_blocks(run, runs)
    if found is None:
        tied = (pair.group_by("run", "query_id")
                .agg((pl.col("score").n_unique() < pl.len()).alias("_tied"))
                .filter(pl.col("_tied")).drop("_tied").collect())
    else:
        tied, rows = found
    if tied.height == 0:  # no equal scores: low = value = high for every query
        return ""
    if found is None:
        rows = pair.join(tied.lazy(), on=["run", "query_id"], how="semi",
                         maintain_order="left").collect()
    checked = checked_blocks(run)[0]  # rows of a checked run are checked (not validated again)
    if checked:
        rows = mark_checked(rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if per_query is None:
            whole = pair.collect()
            per_query = pl.DataFrame(evaluate(mark_checked(whole) if checked else whole, qrels,
                                              [focus], per_query=True,
                                              relevance_level=relevance_level))
        # (the labels of those queries only: a query's value depends on its own labels)
        labels = qrels.join(tied.select("query_id").unique(), on="query_id", how="semi")
        moving = pl.DataFrame(evaluate(rows, labels, [focus], per_query=True,
                                       relevance_level=relevance_level, ties="bounds"))
    b = _bounds(per_query.filter(pl.col("run").is_in(runs), pl.col("measure") == focus),
                moving.join(tied, on=["run", "query_id"], how="semi"))
    moved = b.filter(pl.col("tie_spread") > threshold)
    if moved.height == 0:
        return ""
    parts = [f"{r['run']} scores {r['measure']} = {r['value']:.3f} with trec_eval's order "
             f"of ties (by document id) but anywhere from {r['low']:.3f} to {r['high']:.3f} "
             "over the orders of its tied documents" for r in moved.iter_rows(named=True)]
    return ("Ties move a headline mean: " + "; ".join(parts)
            + ". See evaluate(..., ties='bounds') or ties='given_order'.")


def _tied_blocks(run: pl.DataFrame, runs: list[str]) -> tuple[pl.DataFrame, pl.DataFrame] | None:
    """``(keys, rows)`` of the (run, query) blocks of ``runs`` that hold two equal scores,
    from a checked run's blocks of one length (a sort of each block's scores, no group_by
    on the ids); None when the blocks are not known or differ in length."""
    blocks = checked_blocks(run)[1]
    if blocks is None or run.height == 0:
        return None
    lengths = blocks.lengths
    if not (lengths == lengths[0]).all():
        return None
    width = int(lengths[0])
    mine = np.flatnonzero(blocks.keys.get_column("run").is_in(runs).to_numpy())
    scores = np.sort(run.get_column("score").to_numpy().reshape(lengths.size, width)[mine],
                     axis=1)
    tied = mine[(scores[:, 1:] == scores[:, :-1]).any(axis=1)]
    rows = (blocks.starts[tied][:, None] + np.arange(width)).ravel()
    return (blocks.keys[pl.Series(tied, dtype=pl.Int64)].select("run", "query_id"),
            run[pl.Series(rows, dtype=pl.Int64)])


def _bounds(values: pl.DataFrame, moving: pl.DataFrame) -> pl.DataFrame:
    """evaluate(..., ties="bounds")'s means from the per-query trec_eval ``values`` (run,
    query_id, measure, value) and the per-query ``low`` / ``high`` of the queries whose
    ties can move (``moving``): every other query is its own low and high."""
    keys = ["run", "query_id", "measure"]
    out = values.select(*keys, "value").join(
        moving.select(*keys, "low", "high"), on=keys, how="left", maintain_order="left")
    low, high = (summarize(out.select(*keys, pl.coalesce(c, "value").alias("value")))
                 for c in ("low", "high"))
    return with_bounds(summarize(out.select(*keys, "value")), low, high)
