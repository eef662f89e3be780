"""sef.evaluate / compare / leaderboard reach the structured comparisons (issue #35) and the
traffic-weighted means (issue #34) through keywords: replicate=, dataset=, weights=.

Oracles: the direct entry points (compare_replicates, compare_datasets,
leaderboard_replicates, leaderboard_datasets, weighted_summary, weighted_compare), the
runs and qrels filtered to one dataset by hand, and numpy's weighted average.
"""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest
from conftest import DATA

import searcheval_frames as sef
from searcheval_frames.analysis.weighted import weighted_compare
from searcheval_frames.core.weights import weighted_summary
from searcheval_frames.errors import InvalidOptionError, SearchEvalWarning, UnknownOptionError

S = DATA / "structured"
EX = DATA / "example"


@pytest.fixture(scope="module")
def structured():
    runs = pl.read_csv(S / "runs.csv", schema_overrides={"query_id": pl.String,
                                                          "seed": pl.String})
    qrels = pl.read_csv(S / "qrels.csv", schema_overrides={"query_id": pl.String})
    return runs, qrels


def _quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SearchEvalWarning)  # two datasets: rough interval
        return fn(*args, **kw)


def test_compare_with_replicate_is_compare_replicates(structured):
    runs, qrels = structured
    kw = dict(baseline="bm25", replicate="seed", method="bootstrap", n_resamples=300, seed=3)
    got = sef.compare(runs, qrels, ["nDCG@10", "P@5"], **kw).to_polars()
    want = sef.compare_replicates(runs, qrels, ["nDCG@10", "P@5"], **kw).to_polars()
    assert got.equals(want)
    assert set(got["verdict"]) <= {"reliably better", "reliably worse", "not distinguishable",
                                   "cannot be tested"}


def test_compare_and_leaderboard_with_dataset_are_the_dataset_functions(structured):
    runs, qrels = structured
    first = runs.filter(pl.col("seed") == "0").drop("seed")
    kw = dict(dataset="collection", n_resamples=300, seed=1)
    got = _quiet(sef.compare, first, qrels, ["nDCG@10"], baseline="bm25", **kw)
    want = _quiet(sef.compare_datasets, first, qrels, ["nDCG@10"], baseline="bm25", **kw)
    assert got.to_polars().equals(want.to_polars())
    lb = _quiet(sef.leaderboard, first, qrels, "nDCG@10", aggregate="borda", **kw)
    lb2 = _quiet(sef.leaderboard_datasets, first, qrels, "nDCG@10", aggregate="borda", **kw)
    assert lb.to_polars().equals(lb2.to_polars())


def test_leaderboard_with_replicate_is_leaderboard_replicates(structured):
    runs, qrels = structured
    kw = dict(replicate="seed", method="bootstrap", n_resamples=200, seed=0)
    got = sef.leaderboard(runs, qrels, "nDCG@10", **kw).to_polars()
    assert got.equals(sef.leaderboard_replicates(runs, qrels, "nDCG@10", **kw).to_polars())


def test_evaluate_with_dataset_is_evaluate_of_each_dataset_alone(structured):
    runs, qrels = structured
    first = runs.filter(pl.col("seed") == "0").drop("seed")
    got = sef.evaluate(first, qrels, ["nDCG@10", "AP"], dataset="collection")
    assert got.columns == ["run", "collection", "measure", "n_queries", "value"]
    for name in ("docs", "help"):  # the two query sets share query ids
        alone = sef.evaluate(first.filter(pl.col("collection") == name).drop("collection"),
                             qrels.filter(pl.col("collection") == name).drop("collection"),
                             ["nDCG@10", "AP"])
        mine = got.filter(pl.col("collection") == name).drop("collection", "n_queries")
        assert mine.sort("run", "measure").equals(alone.sort("run", "measure"))
    pq = sef.evaluate(first.to_pandas(), qrels.to_pandas(), ["AP"], dataset="collection",
                      per_query=True)
    assert type(pq).__module__.startswith("pandas")
    assert len(pq) == got.filter(pl.col("measure") == "AP")["n_queries"].sum()
    assert sef.evaluate_datasets(first, qrels, ["AP"], dataset="collection").equals(
        sef.evaluate(first, qrels, ["AP"], dataset="collection"))


def test_evaluate_with_dataset_refuses_a_missing_column(structured):
    runs, qrels = structured
    with pytest.raises(Exception, match="has no column 'corpus'"):
        sef.evaluate(runs, qrels, ["AP"], dataset="corpus")


def _sample():
    log = pl.read_csv(EX / "query_log.tsv", separator="\t")
    return sef.sample_queries(log, 12, method="pptss", seed=0)


def _runs_for(sample):
    """The bundled bm25 and rerank runs on the sampled queries' ids (ids q01..q12 of the
    bundled set stand for the sample's queries: the numbers only need shared ids)."""
    runs = sef.read_run([EX / "runs" / "bm25.run", EX / "runs" / "bm25-rerank.run"])
    ids = sorted(runs["query_id"].unique().to_list())[: sample.frame.height]
    mapping = dict(zip(ids, sample.frame["query_id"].to_list(), strict=True))
    qrels = sef.read_qrels(EX / "qrels.txt").filter(pl.col("query_id").is_in(ids))
    rename = pl.col("query_id").replace_strict(mapping)
    return (runs.filter(pl.col("query_id").is_in(ids)).with_columns(rename),
            qrels.with_columns(rename))


def test_evaluate_with_weights_is_numpys_weighted_average_beside_the_mean():
    sample = _sample()
    runs, qrels = _runs_for(sample)
    got = sef.evaluate(runs, qrels, ["nDCG@10"], weights=sample)
    pq = sef.evaluate(runs, qrels, ["nDCG@10"], per_query=True)
    w = dict(zip(sample.frame["query_id"], sample.frame["weight"], strict=True))
    for row in got.iter_rows(named=True):
        sub = pq.filter(pl.col("run") == row["run"])
        y = sub["value"].to_numpy()
        ws = np.array([w[q] for q in sub["query_id"]])
        assert row["weighted_value"] == pytest.approx(np.average(y, weights=ws), rel=1e-12)
        assert row["value"] == pytest.approx(y.mean(), rel=1e-12)
        assert row["ci_low"] <= row["weighted_value"] <= row["ci_high"]
    assert got.equals(weighted_summary(pq, sample, summary=sef.evaluate(runs, qrels,
                                                                        ["nDCG@10"])))
    each = sef.evaluate(runs, qrels, ["nDCG@10"], weights=sample, per_query=True)
    assert each["weight"].null_count() == 0


def test_compare_with_weights_adds_the_weighted_delta():
    sample = _sample()
    runs, qrels = _runs_for(sample)
    cmp = sef.compare(runs, qrels, ["nDCG@10"], baseline="bm25", weights=sample)
    plain = sef.compare(runs, qrels, ["nDCG@10"], baseline="bm25")
    assert cmp.to_polars().equals(plain.to_polars())  # the verdicts do not move
    assert plain.weighted is None
    assert cmp.weighted is not None and cmp.weighted.equals(
        weighted_compare(plain.per_query, sample, baseline=["bm25"]))


def test_weights_and_by_do_not_combine():
    sample = _sample()
    runs, qrels = _runs_for(sample)
    with pytest.raises(InvalidOptionError, match="weights"):
        sef.evaluate(runs, qrels, ["P@5"], weights=sample, by="stratum",
                     queries=sample.frame)


def test_a_misspelt_structured_option_names_the_closest(structured):
    runs, qrels = structured
    with pytest.raises(UnknownOptionError, match="did you mean method"):
        sef.compare(runs, qrels, ["P@5"], baseline="bm25", replicate="seed", methd="mixed")
    with pytest.raises(UnknownOptionError, match="did you mean aggregate"):
        sef.leaderboard(runs, qrels, "P@5", dataset="collection", agregate="borda")
