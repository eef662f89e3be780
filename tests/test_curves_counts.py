"""P@k and R@k at every k (figures/curves.py) counted in a 2-D array against the former
polars formula (a cross join of queries and cutoffs, a join on four keys, a grouped
cumulative sum): bit-for-bit equal frames, per query and as means (issue #25)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import searcheval_frames as sef
from searcheval_frames.errors import SearchEvalWarning
from searcheval_frames.figures import curves

KEYS = ["run", "query_id"]


def _reference(run, qrels, k, per_query):
    """The computation the 2-D count replaced, written out once more."""
    table, relevant, _, run_df = curves._prepare(
        run, qrels, relevance_level=1, missing="zero", depth=None, judged_only=False,
        compat="trec_eval-10", columns=None, strategy="auto", progress=False, desc="",
        func="precision_recall_at_k")
    top, ks = curves._cutoffs(k, table)
    grid = table.select(*KEYS, "num_rel").join(
        pl.DataFrame({"k": pl.int_range(1, top + 1, eager=True, dtype=pl.Int64)}), how="cross")
    hits = relevant.filter(pl.col("rank") <= top).select(
        *KEYS, pl.col("rank").alias("k"), pl.lit(1, pl.Int64).alias("_hit"))
    counts = grid.join(hits, on=[*KEYS, "k"], how="left").sort([*KEYS, "k"]).with_columns(
        pl.col("_hit").fill_null(0).cum_sum().over(KEYS).alias("relevant_retrieved"))
    if ks is not None:
        counts = counts.filter(pl.col("k").is_in(ks))
    result = counts.select(
        *KEYS, "k", "relevant_retrieved",
        (pl.col("relevant_retrieved") / pl.col("k").cast(pl.Float64)).alias("precision"),
        pl.when(pl.col("num_rel") > 0)
        .then(pl.col("relevant_retrieved") / pl.col("num_rel").cast(pl.Float64))
        .otherwise(0.0).alias("recall"))
    if not per_query:
        result = result.group_by(["run", "k"]).agg(pl.col("precision").mean(),
                                                  pl.col("recall").mean())
        return curves._order(result, run_df, ["k"])
    return curves._order(result, run_df, ["query_id", "k"])


def _data(seed):
    rng = np.random.default_rng(seed)
    rows, labels = [], [("q00", "d0", 1)]
    for q in range(int(rng.integers(1, 30))):
        for d in range(20):
            if rng.random() < 0.5 and (q, d) != (0, 0):
                labels.append((f"q{q:02d}", f"d{d}", int(rng.integers(0, 3))))
    for r in ("zeta", "alpha", "mid"):  # (input order differs from name order)
        for q in rng.permutation(32)[: int(rng.integers(1, 32))]:
            n = int(rng.integers(1, 25))
            for d in rng.choice(20 if n <= 20 else 40, size=n, replace=False):
                rows.append((r, f"q{q:02d}", f"d{d}", float(rng.integers(0, 5))))  # ties
    run = pl.DataFrame(rows, schema=["run", "query_id", "doc_id", "score"], orient="row")
    qrels = pl.DataFrame(labels, orient="row", schema={
        "query_id": pl.String, "doc_id": pl.String, "relevance": pl.Int64})
    return run.sample(fraction=1.0, shuffle=True, seed=seed), qrels


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("k", [None, 5, [1, 3, 10], 40])
@pytest.mark.parametrize("per_query", [False, True])
def test_counts_equal_the_former_formula(seed, k, per_query):
    run, qrels = _data(seed)
    # the random runs miss labelled queries and retrieve unlabelled ones: both are said
    with pytest.warns(SearchEvalWarning, match="no results for|no relevance labels"):
        got = sef.precision_recall_at_k(run, qrels, k=k, per_query=per_query)
    with pytest.warns(SearchEvalWarning, match="no results for|no relevance labels"):
        expected = _reference(run, qrels, k, per_query)
    assert_frame_equal(got, expected, check_exact=True)
