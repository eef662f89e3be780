"""Traffic-weighted means (core/weights.py, analysis/weighted.py): numpy as the oracle of
the weighted mean, the linearisation variance as the oracle of the bootstrap's spread,
and the design (strata, certainty units) respected by the resampling."""

from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import searcheval_frames as sef
from searcheval_frames.analysis.weighted import weighted_compare
from searcheval_frames.core.weights import weighted_summary
from searcheval_frames.errors import IdMismatchError, InvalidOptionError, SearchEvalWarning


def _pq(values: dict[str, list[float]], measure="P@5"):
    n = len(next(iter(values.values())))
    return pl.DataFrame({"run": [r for r in values for _ in range(n)],
                         "query_id": [f"q{i}" for _ in values for i in range(n)],
                         "measure": measure,
                         "value": [v for vs in values.values() for v in vs]})


def _w(weights, **extra):
    return pl.DataFrame({"query_id": [f"q{i}" for i in range(len(weights))],
                         "weight": weights, **extra})


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0.01, 1000)), min_size=1, max_size=30))
def test_weighted_value_is_numpys_weighted_average(rows):
    y = [r[0] for r in rows]
    w = [r[1] for r in rows]
    out = weighted_summary(_pq({"a": y}), _w(w), n_resamples=100).row(0, named=True)
    assert out["weighted_value"] == pytest.approx(np.average(y, weights=w), rel=1e-12, abs=1e-12)
    assert out["value"] == pytest.approx(np.mean(y))
    assert out["n_queries"] == len(y)
    assert out["ci_low"] <= out["weighted_value"] + 1e-12 or len(y) == 1
    assert out["ci_low"] <= out["ci_high"]


def test_bootstrap_spread_matches_the_linearisation_variance():
    rng = np.random.default_rng(0)
    n = 400
    y = rng.random(n)
    w = rng.uniform(1, 50, n)
    out = weighted_summary(_pq({"a": y.tolist()}), _w(w.tolist()), n_resamples=4000, ci=0.6827,
                           seed=1).row(0, named=True)
    mean = np.average(y, weights=w)
    # Hajek's linearisation variance under with-replacement sampling (Sarndal et al. 5.7)
    se = np.sqrt(np.sum(w**2 * (y - mean) ** 2)) / w.sum()
    half = (out["ci_high"] - out["ci_low"]) / 2
    assert half == pytest.approx(se, rel=0.1)


def test_strata_and_certainty_units_are_resampled_as_drawn():
    y = [0.0] * 5 + [1.0] * 5 + [0.3, 0.9]
    w = [2.0] * 5 + [7.0] * 5 + [100.0, 100.0]
    strata = ["tail"] * 5 + ["head"] * 5 + ["top", "top"]
    pi = [0.5] * 10 + [1.0, 1.0]
    weights = _w(w, stratum=strata, inclusion_probability=pi)
    # within each stratum y is constant and the certainty units never move: no spread
    s = weighted_summary(_pq({"a": y}), weights, strata="stratum").row(0, named=True)
    assert s["ci_low"] == pytest.approx(s["weighted_value"])
    assert s["ci_high"] == pytest.approx(s["weighted_value"])
    # resampled over all of them, the spread is not zero
    s2 = weighted_summary(_pq({"a": y}), weights).row(0, named=True)
    assert s2["ci_high"] - s2["ci_low"] > 0.05
    # every query taken for certain (a "top" sample): no sampling error at all
    top = _w(w, inclusion_probability=[1.0] * 12)
    s3 = weighted_summary(_pq({"a": y}), top).row(0, named=True)
    assert s3["ci_low"] == s3["ci_high"] == pytest.approx(np.average(y, weights=w))


def test_weights_from_a_sample_a_column_or_a_dict_and_pandas():
    log = pl.DataFrame({"query": [f"t{i}" for i in range(30) for _ in range(30 - i)]})
    sample = sef.sample_queries(log, 10, "stratified", seed=2)
    ids = sample.frame["query_id"].to_list()
    rng = np.random.default_rng(3)
    y = rng.random(10)
    pq = pl.DataFrame({"run": "a", "query_id": ids, "measure": "nDCG@10", "value": y})
    w = sample.frame["weight"].to_numpy()
    want = np.average(y, weights=w)
    a = weighted_summary(pq, sample)
    b = weighted_summary(pq.to_pandas(), "weight", queries=sample.frame.to_pandas())
    c = weighted_summary(pq, dict(zip(ids, w.tolist(), strict=True)))
    for got in (a, b, c):
        assert got["weighted_value"][0] == pytest.approx(want)
    assert a["ci_low"][0] != b["ci_low"][0]  # the sample resamples within its strata
    assert isinstance(b, pl.DataFrame)


def test_summary_values_and_non_mean_measures():
    pq = pl.concat([_pq({"a": [1.0, 3.0]}, "NumRet"), _pq({"a": [0.5, 0.1]}, "P@5")])
    summary = pl.DataFrame({"run": ["a", "a"], "measure": ["NumRet", "P@5"],
                            "value": [4.0, 0.3]})
    out = weighted_summary(pq, _w([1.0, 3.0]), summary=summary)
    rows = {r["measure"]: r for r in out.iter_rows(named=True)}
    assert rows["NumRet"]["value"] == 4.0 and rows["NumRet"]["weighted_value"] is None
    assert rows["P@5"]["weighted_value"] == pytest.approx(np.average([0.5, 0.1], weights=[1, 3]))


def test_bad_weights():
    pq = _pq({"a": [1.0, 0.0, 0.5]})
    with pytest.raises(IdMismatchError, match="have no weight"):
        weighted_summary(pq, _w([1.0, 2.0]))
    with pytest.warns(SearchEvalWarning, match="no values"):
        weighted_summary(_pq({"a": [1.0, 0.0]}), _w([1.0, 2.0, 3.0]))
    with pytest.raises(InvalidOptionError, match="not positive"):
        weighted_summary(pq, _w([1.0, 0.0, 2.0]))
    with pytest.raises(InvalidOptionError, match="needs queries="):
        weighted_summary(pq, "weight")
    with pytest.raises(InvalidOptionError, match="n_resamples"):
        weighted_summary(pq, _w([1.0, 1.0, 2.0]), n_resamples=5)


def test_weighted_compare_against_numpy():
    rng = np.random.default_rng(4)
    n = 50
    a, b, w = rng.random(n), rng.random(n), rng.uniform(1, 10, n)
    pq = pd.DataFrame({"run": ["base"] * n + ["new"] * n,
                       "query_id": [f"q{i}" for i in range(n)] * 2, "measure": "AP",
                       "value": np.concatenate([a, b])})
    out = weighted_compare(pq, _w(w.tolist()), baseline="base").row(0, named=True)
    assert out["run"] == "new" and out["baseline"] == "base"
    assert out["delta"] == pytest.approx(np.mean(b - a))
    assert out["weighted_delta"] == pytest.approx(np.average(b - a, weights=w))
    assert out["weighted_mean"] - out["weighted_baseline_mean"] == pytest.approx(
        out["weighted_delta"])
    assert out["ci_low"] < out["weighted_delta"] < out["ci_high"]


def test_weighted_compare_on_the_shared_queries_only():
    pq = pl.DataFrame({"run": ["a"] * 3 + ["b"] * 2, "query_id": ["q0", "q1", "q2", "q0", "q1"],
                       "measure": "P@5", "value": [0.0, 1.0, 0.5, 1.0, 1.0]})
    w = _w([1.0, 3.0, 5.0], stratum=["x", "y", "y"])
    out = weighted_compare(pq, w, strata="stratum", n_resamples=200).row(0, named=True)
    assert out["n_queries"] == 2
    assert out["weighted_delta"] == pytest.approx(np.average([1.0, 0.0], weights=[1, 3]))


def test_notes_say_what_the_interval_cannot_show():
    y = [0.2, 0.4, 0.9]
    one = _w([1.0, 2.0, 3.0], stratum=["a", "a", "b"])
    assert "one sampled query" in weighted_summary(_pq({"a": y}), one, strata="stratum")["note"][0]
    top = _w([1.0, 2.0, 3.0], inclusion_probability=[1.0, 1.0, 1.0])
    assert "certain" in weighted_summary(_pq({"a": y}), top)["note"][0]
    assert weighted_summary(_pq({"a": y}), _w([1.0, 2.0, 3.0]))["note"][0] == ""
