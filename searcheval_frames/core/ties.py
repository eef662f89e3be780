"""Tie policies: how documents with equal scores are ordered before measuring.

trec_eval breaks a tie of scores by document id (descending), so a run's value can
depend on how its documents happen to be named (trec_eval#22, pytrec_eval#53; a constant
scorer scored MRR@10 = 1.0 in mteb#5092). :func:`~searcheval_frames.evaluate` makes the
policy visible with ``ties=``:

* ``"trec_eval"`` (default): score descending, then ``doc_id`` descending; exactly the
  numbers of trec_eval (nothing here runs).
* ``"given_order"``: score descending, then the run's own order: its ``rank`` column when
  it has one, else its row order (as ranx, which sorts each query's documents by score
  with a stable sort of small queries).
* ``"bounds"``: the trec_eval value plus the pessimistic (``low``) and optimistic
  (``high``) value of every query over all orders of its tied documents, and their
  difference ``tie_spread``. Within a tie the optimistic order puts the highest label
  first, the pessimistic order the lowest (unjudged and negative labels count as 0);
  for measures that grow when a more relevant document moves up (P, R, AP, RR, nDCG,
  success, ...) these are the exact extremes (by the rearrangement inequality:
  :math:`\\sum_i g_{\\pi(i)} d_i` with decreasing discounts :math:`d_i` is largest with
  gains in decreasing order and smallest in increasing order).

Each policy is a new score column (``-position`` in the chosen order), so the measures
run unchanged. Reference: Cabanac et al., "Tie-breaker: using language models to
quantify gain and risk", SIGIR 2010; McSherry & Najork, "Computing information retrieval
performance measures efficiently in the presence of tied scores", ECIR 2008.

>>> import polars as pl
>>> run = pl.DataFrame({"run": "r", "query_id": "q", "doc_id": ["a", "b", "c"],
...                     "score": [1.0, 1.0, 2.0]})
>>> given_order(run).get_column("score").to_list()
[-1.0, -2.0, -0.0]
"""

from __future__ import annotations

import polars as pl

__all__ = ["BOUND_COLUMNS", "TIES", "given_order", "tie_broken", "with_bounds"]

TIES = ("trec_eval", "given_order", "bounds")
#: The columns ``ties="bounds"`` adds to evaluate's result.
BOUND_COLUMNS = ("low", "high", "tie_spread")
_KEYS = ["run", "query_id"]


def _rescored(run: pl.DataFrame, by: list[str], descending: list[bool]) -> pl.DataFrame:
    """The run with ``score = -position`` in the order ``by`` within each (run, query),
    rows kept in their order."""
    df = run.with_row_index("_row")
    ordered = df.sort(["run", "query_id", *by], descending=[False, False, *descending],
                      maintain_order=True)
    ordered = ordered.with_columns(
        (-pl.int_range(pl.len()).over(_KEYS)).cast(pl.Float64).alias("score"))
    return ordered.sort("_row").drop("_row")


def given_order(run: pl.DataFrame) -> pl.DataFrame:
    """Ties broken by the run's ``rank`` column, else by its row order (``ties="given_order"``)."""
    if "rank" in run.columns:
        return _rescored(run, ["score", "rank"], [True, False])
    out = _rescored(run.with_row_index("_order"), ["score", "_order"], [True, False])
    return out.drop("_order")


def tie_broken(run: pl.DataFrame, qrels: pl.DataFrame, optimistic: bool) -> pl.DataFrame:
    """Ties broken by label, highest first (``optimistic``) or lowest first; unjudged and
    negative labels count as 0, and equal labels keep trec_eval's ``doc_id`` order."""
    labels = qrels.select("query_id", "doc_id", pl.col("relevance").clip(0).alias("_key"))
    df = run.join(labels, on=["query_id", "doc_id"], how="left", maintain_order="left")
    df = df.with_columns(pl.col("_key").fill_null(0))
    return _rescored(df, ["score", "_key", "doc_id"], [True, optimistic, True]).drop("_key")


def with_bounds(value: pl.DataFrame, low: pl.DataFrame, high: pl.DataFrame) -> pl.DataFrame:
    """evaluate's result with the ``low``, ``high`` and ``tie_spread`` columns."""
    keys = [c for c in value.columns if c != "value"]
    out = value.join(low.rename({"value": "low"}), on=keys, how="left", maintain_order="left")
    out = out.join(high.rename({"value": "high"}), on=keys, how="left", maintain_order="left")
    return out.with_columns((pl.col("high") - pl.col("low")).alias("tie_spread"))
