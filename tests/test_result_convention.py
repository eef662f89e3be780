"""Issue #19: every public result exposes ``.frame`` in the caller's frame kind (pandas
in, pandas out; polars in, polars out), tuple unpacking of the NamedTuple results keeps
working; ``compare`` decides its input in one place (runs + qrels, or per-query values).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import searcheval_frames as sef
from searcheval_frames.errors import (
    InsufficientDataError,
    InvalidOptionError,
    LabelConflictError,
    SearchEvalError,
)


def per_query(n_queries: int = 12, runs: int = 3, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    base = rng.uniform(0, 1, n_queries)
    return pl.DataFrame({
        "run": [f"r{j}" for j in range(runs) for _ in range(n_queries)],
        "query_id": [f"q{i:02d}" for _ in range(runs) for i in range(n_queries)],
        "measure": "nDCG@10",
        "value": np.concatenate([np.clip(base + rng.normal(0.05 * j, 0.1, n_queries), 0, 1)
                                 for j in range(runs)]),
    })


def labels() -> pl.DataFrame:
    return pl.DataFrame({
        "query_id": ["q1", "q1", "q1", "q1", "q2", "q2"],
        "doc_id": ["d1", "d2", "d1", "d2", "d3", "d3"],
        "relevance": [1, 0, 1, 2, 0, 1],
        "assessor": ["ann", "ann", "bob", "bob", "ann", "bob"],
    })


def runs_and_qrels() -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = np.random.default_rng(3)
    rows = [(r, f"q{q}", f"d{d}", float(rng.uniform()))
            for r in ("bm25", "dense") for q in range(6) for d in range(8)]
    runs = pl.DataFrame(rows, schema=["run", "query_id", "doc_id", "score"], orient="row")
    qrels = pl.DataFrame([(f"q{q}", f"d{d}", int(rng.integers(0, 3)))
                          for q in range(6) for d in range(8)],
                         schema=["query_id", "doc_id", "relevance"], orient="row")
    return runs, qrels


def kind_of(frame: object) -> str:
    return "pandas" if isinstance(frame, pd.DataFrame) else (
        "polars" if isinstance(frame, pl.DataFrame) else type(frame).__name__)


def results(data: pl.DataFrame | pd.DataFrame, lab: pl.DataFrame | pd.DataFrame,
            runs: pl.DataFrame | pd.DataFrame, qrels: pl.DataFrame) -> dict[str, object]:
    return {
        "discriminative_power": sef.discriminative_power(per_query=data, n_resamples=200),
        "stability": sef.stability(per_query=data, sizes=[4], n_samples=20),
        "merge_labels": sef.merge_labels(lab, policy="max"),
        "agreement": sef.agreement(lab),
        "optimize_fusion": sef.optimize_fusion(runs, qrels, "nDCG@5", "wsum", grid=0.5),
        "compare": sef.compare(per_query=data, baseline="r0"),
    }


@pytest.mark.parametrize("to", ["polars", "pandas"])
def test_frame_is_in_the_callers_kind(to):
    pq, lab = per_query(), labels()
    runs, qrels = runs_and_qrels()
    if to == "pandas":
        pq, lab, runs = pq.to_pandas(), lab.to_pandas(), runs.to_pandas()
    for name, res in results(pq, lab, runs, qrels).items():
        assert kind_of(res.frame) == to, name  # type: ignore[attr-defined]


def test_frames_agree_across_kinds():
    pq, lab = per_query(), labels()
    runs, qrels = runs_and_qrels()
    a = results(pq, lab, runs, qrels)
    b = results(pq.to_pandas(), lab.to_pandas(), runs.to_pandas(), qrels)
    for name in a:
        try:
            assert_frame_equal(a[name].frame, pl.from_pandas(b[name].frame),  # type: ignore[attr-defined]
                               check_dtypes=False)
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}") from None


def test_named_tuples_unpack_and_frame_is_their_main_frame():
    pq = per_query()
    dp = sef.discriminative_power(per_query=pq, n_resamples=200)
    summary, asl = dp
    assert summary is dp.frame and asl is dp.asl
    st = sef.stability(per_query=pq, sizes=[4], n_samples=20)
    summary, swaps = st
    assert summary is st.frame and swaps is st.swaps
    merged = sef.merge_labels(labels(), policy="max")
    qrels, conflicts = merged
    assert qrels is merged.frame and conflicts is merged.conflicts
    assert merged.frame.columns == ["query_id", "doc_id", "relevance"]


def test_fusion_search_frame_follows_runs_and_trials_stay_polars():
    runs, qrels = runs_and_qrels()
    best = sef.optimize_fusion(runs.to_pandas(), qrels, "nDCG@5", "wsum", grid=0.5)
    assert isinstance(best.frame, pd.DataFrame) and len(best.frame) == 1
    assert best.to_polars().row(0, named=True)["train"] == best.train_score
    assert isinstance(best.trials, pl.DataFrame)


# --------------------------------------------------------------------------- compare's input
def test_compare_per_query_keyword_and_constructors_equal_the_positional_call():
    pq = per_query()
    want = sef.compare(per_query=pq, baseline="r0").to_polars()
    assert_frame_equal(sef.compare(per_query=pq, baseline="r0").to_polars(), want)
    assert_frame_equal(sef.Comparison.from_per_query(pq, "r0").to_polars(), want)


def test_compare_runs_three_ways_equal():
    runs, qrels = runs_and_qrels()
    want = sef.compare(runs, qrels, ["P@5", "nDCG@5"], baseline="bm25").to_polars()
    got = sef.compare(runs=runs, qrels=qrels, measures=["P@5", "nDCG@5"], baseline="bm25")
    assert_frame_equal(got.to_polars(), want)
    got = sef.Comparison.from_runs(runs, qrels, ["P@5", "nDCG@5"], "bm25")
    assert_frame_equal(got.to_polars(), want)
    # and the per-query values of the same evaluation give the same comparison
    pq = sef.evaluate(runs, qrels, ["P@5", "nDCG@5"], per_query=True)
    assert_frame_equal(sef.compare(per_query=pq, baseline="bm25").to_polars(), want)


@pytest.mark.parametrize(("call", "match"), [
    (lambda pq, runs, q: sef.compare(per_query=pq, qrels=q, measures=["P@5"]),
     r"per_query= holds values already evaluated"),
    (lambda pq, runs, q: sef.compare(pq, per_query=pq), r"per_query= holds values already"),
    (lambda pq, runs, q: sef.compare(runs=runs, per_query=pq), r"per_query= holds values"),
    (lambda pq, runs, q: sef.compare(runs=runs), r"pass runs and qrels"),
    (lambda pq, runs, q: sef.compare(), r"pass runs and qrels"),
    (lambda pq, runs, q: sef.compare(runs, qrels=q), r"pass the measures to evaluate"),
])
def test_compare_refuses_contradictory_inputs(call, match):
    runs, qrels = runs_and_qrels()
    with pytest.raises(InvalidOptionError, match=match):
        call(per_query(), runs, qrels)


def test_compare_keeps_the_per_query_input_kind():
    pq = per_query()
    assert isinstance(sef.compare(per_query=pq.to_pandas(), baseline="r0").frame, pd.DataFrame)
    runs, qrels = runs_and_qrels()
    cmp = sef.compare(runs.to_pandas(), qrels, "P@5", baseline="bm25")
    assert isinstance(cmp.frame, pd.DataFrame)


# --------------------------------------------------------------------------- error classes
def test_errors_name_their_cause():
    one = per_query(runs=1)
    with pytest.raises(InsufficientDataError, match="at least two runs"):
        sef.compare(per_query=one)
    with pytest.raises(LabelConflictError, match="different labels"):
        sef.merge_labels(labels())
    with pytest.raises(InvalidOptionError, match="baseline='nope'"):
        sef.compare(per_query=per_query(), baseline="nope")
    assert issubclass(InsufficientDataError, SearchEvalError)
    assert issubclass(LabelConflictError, ValueError)
