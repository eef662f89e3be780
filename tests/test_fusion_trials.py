"""optimize_fusion's trials table holds only the columns that were searched, and each
row's ``train`` score is what sef.evaluate gives for sef.fuse with that row's settings."""

from __future__ import annotations

import polars as pl
import pytest
from conftest import REPO

import searcheval_frames as sef

DATA = REPO / "data" / "example"


@pytest.fixture(scope="module")
def pair_and_qrels():
    runs = sef.read_run([DATA / "runs" / "bm25.run", DATA / "runs" / "lsi.run"])
    return runs, sef.read_qrels(DATA / "qrels.txt")


def _check_rows(search, pair, qrels, train, method, rows):
    for r in rows:
        kw = {"norm": search.params["norm"], "depth": search.params.get("depth")}
        if "k" in r:
            kw["k"] = r["k"]
        if "bm25" in r:
            kw["weights"] = {"bm25": r["bm25"], "lsi": r["lsi"]}
        fused = sef.fuse(pair, method, **{a: b for a, b in kw.items() if b is not None})
        got = sef.evaluate(fused.filter(pl.col("query_id").is_in(train)),
                           qrels.filter(pl.col("query_id").is_in(train)), "nDCG@10")
        assert abs(got["value"][0] - r["train"]) < 1e-9, (r, got)


def test_wsum_trials_have_no_k_column(pair_and_qrels):
    pair, qrels = pair_and_qrels
    train = sorted(qrels["query_id"].unique())[::2]
    best = sef.optimize_fusion(pair, qrels, "nDCG@10", "wsum", norm="min-max", grid=0.25,
                               train_queries=train)
    assert best.trials.columns == ["bm25", "lsi", "train"]
    assert best.trials.null_count().sum_horizontal().item() == 0
    assert best.trials["train"].is_sorted(descending=True)
    _check_rows(best, pair, qrels, train, "wsum", best.trials.head(3).iter_rows(named=True))


def test_rrf_trials_have_k_and_weights_only_when_tuned(pair_and_qrels):
    pair, qrels = pair_and_qrels
    train = sorted(qrels["query_id"].unique())[::2]
    only_k = sef.optimize_fusion(pair, qrels, "nDCG@10", "rrf", k=[10, 60],
                                 train_queries=train)
    assert only_k.trials.columns == ["k", "train"]
    assert sorted(only_k.trials["k"].to_list()) == [10.0, 60.0]
    _check_rows(only_k, pair, qrels, train, "rrf", only_k.trials.iter_rows(named=True))
    both = sef.optimize_fusion(pair, qrels, "nDCG@10", "rrf", k=[60], grid=0.5,
                               train_queries=train)
    assert both.trials.columns == ["k", "bm25", "lsi", "train"]
    assert both.trials.null_count().sum_horizontal().item() == 0
