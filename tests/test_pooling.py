"""Pools, coverage, holes and metric bounds (searcheval_frames.evalset.pooling)."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import pandas as pd
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import searcheval_frames as sef
from searcheval_frames.errors import SearchEvalError

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "data" / "example"


# --------------------------------------------------------------------------- helpers
def reference_top(run_rows: list[tuple[str, str, str, float]], k: int) -> dict:
    """{(run, query): [doc, ...]} top-k by score desc, doc_id desc (pure Python)."""
    by: dict[tuple[str, str], list[tuple[float, str]]] = {}
    for run, q, d, s in run_rows:
        by.setdefault((run, q), []).append((s, d))
    return {key: [d for s, d in sorted(v, reverse=True)[:k]] for key, v in by.items()}


def frame(rows: list[tuple[str, str, str, float]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=["run", "query_id", "doc_id", "score"], orient="row")


def read_trec_run(path: Path) -> pl.DataFrame:
    return pl.read_csv(
        path,
        separator=" ",
        has_header=False,
        new_columns=["query_id", "q0", "doc_id", "rank", "score", "run"],
        schema_overrides={"query_id": pl.String, "doc_id": pl.String},
    ).drop("q0")


def example_runs() -> pl.DataFrame:
    if not EXAMPLE.exists():
        pytest.skip("data/example not present")
    return pl.concat(
        [
            read_trec_run(EXAMPLE / "runs" / f"{n}.run")
            for n in ("bm25", "bm25-rerank", "tfidf", "bm25-prf")
        ]
    )


def example_qrels() -> pl.DataFrame:
    return pl.read_csv(
        EXAMPLE / "qrels.txt",
        separator=" ",
        has_header=False,
        new_columns=["query_id", "iter", "doc_id", "relevance"],
        schema_overrides={"query_id": pl.String, "doc_id": pl.String},
    ).drop("iter")


runs_strategy = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "c"]),
        st.sampled_from(["q1", "q2", "q3"]),
        st.sampled_from([f"d{i}" for i in range(12)]),
        st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, 3.0]),  # many ties on purpose
    ),
    min_size=1,
    max_size=80,
    unique_by=lambda t: (t[0], t[1], t[2]),
)


# --------------------------------------------------------------------------- pool
def test_pool_hand_example_with_provenance() -> None:
    runs = frame(
        [
            ("a", "q1", "d1", 3.0),
            ("a", "q1", "d2", 2.0),
            ("a", "q1", "d3", 1.0),
            ("b", "q1", "d3", 9.0),
            ("b", "q1", "d4", 8.0),
            ("b", "q1", "d1", 7.0),
            ("b", "q2", "d9", 1.0),
        ]
    )
    p = sef.pool(runs, depth=2)
    assert p.columns == ["query_id", "doc_id", "priority", "best_rank", "n_runs", "runs"]
    rows = {(r["query_id"], r["doc_id"]): r for r in p.to_dicts()}
    assert set(rows) == {("q1", "d1"), ("q1", "d2"), ("q1", "d3"), ("q1", "d4"), ("q2", "d9")}
    assert rows[("q1", "d1")]["runs"] == ["a"]  # b has d1 at rank 3 only
    assert rows[("q1", "d3")]["best_rank"] == 1 and rows[("q1", "d3")]["runs"] == ["b"]
    assert rows[("q1", "d4")]["best_rank"] == 2
    # judge first: best rank, then retrieved by more runs, then doc id
    assert p.filter(pl.col("query_id") == "q1")["doc_id"].to_list() == ["d1", "d3", "d2", "d4"]
    assert p.filter(pl.col("query_id") == "q1")["priority"].to_list() == [1, 2, 3, 4]

    p3 = sef.pool(runs, depth=3)
    d1 = p3.filter(pl.col("doc_id") == "d1").row(0, named=True)
    assert d1["runs"] == ["a", "b"] and d1["n_runs"] == 2 and d1["best_rank"] == 1


def test_pool_skips_judged_documents_of_that_query_only() -> None:
    runs = {"a": {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d1": 2.0, "d2": 1.0}}}
    qrels = {"q1": {"d1": 0, "d2": -1}}  # negative = judged but unusable: still judged
    p = sef.pool(runs, depth=5, qrels=qrels)
    assert p.select("query_id", "doc_id").rows() == [("q2", "d1"), ("q2", "d2")]


def test_pool_ignores_input_rank_and_breaks_ties_by_doc_id_descending() -> None:
    run = pl.DataFrame(
        {
            "query_id": ["q1"] * 3,
            "doc_id": ["d1", "d2", "d3"],
            "score": [1.0, 1.0, 0.5],
            "rank": [1, 2, 3],
        }
    )
    # trec_eval order: equal scores -> doc_id descending, so d2 is first, rank ignored
    p = sef.pool(run, depth=1)
    assert p["doc_id"].to_list() == ["d2"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=runs_strategy, k=st.integers(1, 6), judged_frac=st.floats(0, 1), seed=st.integers(0, 99)
)
def test_pool_property_every_topk_document_once_nothing_judged(rows, k, judged_frac, seed) -> None:
    import random

    rng = random.Random(seed)
    pairs = sorted({(q, d) for _, q, d, _ in rows})
    judged = [p for p in pairs if rng.random() < judged_frac]
    qrels = (
        pl.DataFrame(judged, schema=["query_id", "doc_id"], orient="row").with_columns(
            pl.lit(1).alias("relevance")
        )
        if judged
        else None
    )
    p = sef.pool(frame(rows), depth=k, qrels=qrels)
    got = set(zip(p["query_id"], p["doc_id"], strict=True))
    assert len(got) == p.height  # nothing twice
    top = reference_top(rows, k)
    expected = {(q, d) for (_, q), docs in top.items() for d in docs} - set(judged)
    assert got == expected  # every top-k doc of every run, minus the judged ones
    # provenance
    for r in p.to_dicts():
        having = sorted(
            run for (run, q), docs in top.items() if q == r["query_id"] and r["doc_id"] in docs
        )
        assert r["runs"] == having and r["n_runs"] == len(having)
        best = min(top[(run, r["query_id"])].index(r["doc_id"]) + 1 for run in having)
        assert r["best_rank"] == best
    # priorities are 1..n per query
    for (_,), part in p.group_by(["query_id"]):
        assert sorted(part["priority"].to_list()) == list(range(1, part.height + 1))


def test_pool_rrf_and_rbp_weights_and_budget() -> None:
    runs = frame(
        [
            ("a", "q1", "d1", 3.0),
            ("a", "q1", "d2", 2.0),
            ("a", "q1", "d3", 1.0),
            ("b", "q1", "d3", 9.0),
            ("b", "q1", "d2", 8.0),
            ("b", "q1", "d4", 7.0),
        ]
    )
    rrf = sef.pool(runs, depth=3, method="rrf", rrf_k=60)
    w = dict(zip(rrf["doc_id"], rrf["weight"], strict=True))
    assert w["d2"] == pytest.approx(1 / 62 + 1 / 62)
    assert w["d3"] == pytest.approx(1 / 63 + 1 / 61)
    assert w["d1"] == pytest.approx(1 / 61)
    assert rrf["doc_id"].to_list() == ["d3", "d2", "d1", "d4"]  # weight descending

    rbp = sef.pool(runs, depth=3, method="rbp", rbp_p=0.5)
    w = dict(zip(rbp["doc_id"], rbp["weight"], strict=True))
    assert w["d3"] == pytest.approx(0.5 * 0.25 + 0.5)
    assert w["d2"] == pytest.approx(0.5 * 0.5 * 2)
    assert w["d4"] == pytest.approx(0.5 * 0.25)

    capped = sef.pool(runs, depth=3, method="rrf", max_per_query=2)
    assert capped["doc_id"].to_list() == ["d3", "d2"]
    assert sef.pool(runs, depth=3, max_per_query=1).height == 1


def test_pool_pandas_in_pandas_out() -> None:
    df = pd.DataFrame({"qid": ["q1", "q1"], "docno": ["a", "b"], "score": [1.0, 2.0]})
    out = sef.pool(df, depth=1)
    assert isinstance(out, pd.DataFrame)
    assert out["doc_id"].tolist() == ["b"]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"depth": 0}, "depth=0"),
        ({"depth": 2.5}, "depth=2.5"),
        ({"method": "borda"}, "method='borda'"),
        ({"method": "rbp", "rbp_p": 1.0}, "rbp_p"),
        ({"max_per_query": 0}, "max_per_query"),
    ],
)
def test_pool_bad_arguments(kwargs, match) -> None:
    with pytest.raises(SearchEvalError, match=match):
        sef.pool({"q1": {"d1": 1.0}}, **kwargs)


# --------------------------------------------------------------------------- coverage / holes
def test_coverage_and_holes_hand_example() -> None:
    runs = frame(
        [
            ("a", "q1", "d1", 3.0),
            ("a", "q1", "d2", 2.0),
            ("a", "q1", "d3", 1.0),
            ("a", "q2", "d1", 1.0),
            ("b", "q1", "d3", 9.0),
        ]
    )
    qrels = {"q1": {"d1": 1, "d3": 0}, "q2": {"d7": 1}}
    cov = sef.coverage(runs, qrels, depth=2, per_query=True)
    got = {(r["run"], r["query_id"]): r for r in cov.to_dicts()}
    assert got[("a", "q1")]["judged"] == 1 and got[("a", "q1")]["holes"] == 1
    assert got[("a", "q1")]["judged_at_k"] == 0.5
    assert got[("a", "q2")]["retrieved"] == 1 and got[("a", "q2")]["holes"] == 1
    assert got[("b", "q1")]["judged_at_k"] == 0.5  # 1 judged of k=2 (only 1 retrieved)
    agg = sef.coverage(runs, qrels, depth=2)
    a = agg.filter(pl.col("run") == "a").row(0, named=True)
    assert a["queries"] == 2 and a["queries_with_holes"] == 2 and a["holes"] == 2
    assert a["judged_at_k"] == pytest.approx((0.5 + 0.0) / 2)
    h = sef.holes(runs, qrels, depth=2)
    assert h.select("run", "query_id", "rank", "doc_id").rows() == [
        ("a", "q1", 2, "d2"),
        ("a", "q2", 1, "d1"),
    ]


@settings(max_examples=60, deadline=None)
@given(rows=runs_strategy, k=st.integers(1, 6), seed=st.integers(0, 99))
def test_coverage_matches_holes_and_judged_at_k(rows, k, seed) -> None:
    import random

    rng = random.Random(seed)
    pairs = sorted({(q, d) for _, q, d, _ in rows})
    judged = [(q, d, rng.choice([0, 1, 2])) for q, d in pairs if rng.random() < 0.5]
    if not judged:
        judged = [(pairs[0][0], "not-retrieved", 1)]
    qrels = pl.DataFrame(judged, schema=["query_id", "doc_id", "relevance"], orient="row")
    cov = sef.coverage(frame(rows), qrels, depth=k, per_query=True)
    h = sef.holes(frame(rows), qrels, depth=k)
    assert (cov["judged"] + cov["holes"] == cov["retrieved"]).all()
    assert int(cov["holes"].sum()) == h.height
    top = reference_top(rows, k)
    jset = {(q, d) for q, d, _ in judged}
    for r in cov.to_dicts():
        docs = top[(r["run"], r["query_id"])]
        assert r["judged"] == sum((r["query_id"], d) in jset for d in docs)
        assert r["judged_at_k"] == pytest.approx(r["judged"] / k)


def test_coverage_agrees_with_evaluate_judged_at_k_on_example_data() -> None:
    runs = example_runs()
    qrels = example_qrels()
    cov = sef.coverage(runs, qrels, depth=10)
    ev = sef.evaluate(runs, qrels, ["Judged@10"])
    ours = dict(zip(cov["run"], cov["judged_at_k"], strict=True))
    theirs = dict(zip(ev["run"], ev["value"], strict=True))
    assert ours.keys() == theirs.keys()
    for run in ours:
        assert ours[run] == pytest.approx(theirs[run], abs=1e-12)
    # the "new system" has holes, the pooled ones none in their top-20
    cov20 = sef.coverage(runs, qrels, depth=20)
    holes = dict(zip(cov20["run"], cov20["holes"], strict=True))
    assert holes["bm25-prf"] > 0
    assert holes["bm25"] == holes["bm25-rerank"] == holes["tfidf"] == 0


# --------------------------------------------------------------------------- bounds
def test_metric_bounds_hand_example() -> None:
    run = {"q1": {"d1": 4.0, "d2": 3.0, "d3": 2.0, "d4": 1.0}}
    qrels = {"q1": {"d1": 0, "d3": 2}}
    b = sef.metric_bounds(run, qrels, ["P@2", "RR", "NumRelRet"], per_query=True)
    got = {r["measure"]: r for r in b.to_dicts()}
    assert got["P@2"]["if_nonrelevant"] == 0.0 and got["P@2"]["if_relevant"] == 0.5
    assert got["P@2"]["holes"] == 1  # d2 only, within the cutoff
    assert got["RR"]["if_nonrelevant"] == pytest.approx(1 / 3)
    assert got["RR"]["if_relevant"] == 0.5
    assert got["NumRelRet"]["if_relevant"] == 3.0 and got["NumRelRet"]["holes"] == 2
    assert all(r["lower"] <= r["upper"] for r in got.values())


def test_metric_bounds_aggregate_mean_and_sums() -> None:
    run = {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d5": 2.0, "d6": 1.0}}
    qrels = {"q1": {"d1": 1}, "q2": {"d5": 1, "d6": 1}}
    b = sef.metric_bounds(run, qrels, ["P@2", "NumRelRet"])
    got = {r["measure"]: r for r in b.to_dicts()}
    assert got["P@2"]["if_nonrelevant"] == pytest.approx((0.5 + 1.0) / 2)
    assert got["P@2"]["if_relevant"] == pytest.approx(1.0)
    assert got["NumRelRet"]["if_nonrelevant"] == 3.0  # a sum, as in trec_eval
    assert got["NumRelRet"]["if_relevant"] == 4.0
    assert got["P@2"]["holes"] == 1


def test_metric_bounds_grade_and_warnings() -> None:
    run = {"q1": {"d1": 2.0, "d2": 1.0}, "q9": {"d1": 1.0}}
    qrels = {"q1": {"d1": 1}}
    with pytest.warns(UserWarning, match="no label at all"):
        b = sef.metric_bounds(run, qrels, ["P@2"], per_query=True)
    assert b["query_id"].to_list() == ["q1"]
    with pytest.raises(SearchEvalError, match="grade=0"):
        sef.metric_bounds({"q1": {"d1": 1.0}}, qrels, ["P@1"], grade=0)
    with pytest.raises(SearchEvalError, match="no relevant label"):
        sef.metric_bounds({"q1": {"d1": 1.0}}, {"q1": {"d1": 0}}, ["P@1"])
    # graded: P(rel=2)@2 only moves if the filled grade reaches 2
    graded = {"q1": {"d1": 2, "d7": 1}}
    up = sef.metric_bounds({"q1": {"d1": 2.0, "d2": 1.0}}, graded, ["P(rel=2)@2"], grade=1)
    assert up["width"].item() == 0.0
    up = sef.metric_bounds({"q1": {"d1": 2.0, "d2": 1.0}}, graded, ["P(rel=2)@2"])
    assert up["if_relevant"].item() == 1.0


@settings(max_examples=12, deadline=None)
@given(hide=st.floats(0.05, 0.6), seed=st.integers(0, 10_000))
def test_metric_bounds_contain_the_truth_on_example_data(hide, seed) -> None:
    """Hide labels; the full-label value of P@10 / Success@10 / RR lies within the bounds."""
    runs = example_runs().filter(pl.col("run").is_in(["bm25-prf", "tfidf"]))
    full = example_qrels()
    partial = full.sample(fraction=1 - hide, seed=seed)
    partial = partial.filter(pl.col("relevance") >= 0)
    measures = ["P@10", "Success@10", "RR", "P@5"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = sef.metric_bounds(runs, partial, measures, per_query=True)
        truth = sef.evaluate(runs, full, measures, per_query=True)
    joined = b.join(truth, on=["run", "query_id", "measure"], how="inner")
    assert joined.height == b.height
    bad = joined.filter(
        (pl.col("value") < pl.col("lower") - 1e-12) | (pl.col("value") > pl.col("upper") + 1e-12)
    )
    assert bad.height == 0, bad


def test_metric_bounds_example_new_system() -> None:
    runs = example_runs()
    qrels = example_qrels()
    b = sef.metric_bounds(runs, qrels, ["nDCG@10", "P@10"])
    widths = {(r["run"], r["measure"]): r["width"] for r in b.to_dicts()}
    assert widths[("bm25", "P@10")] == 0.0  # pooled system: fully judged top-10
    assert widths[("bm25-prf", "P@10")] > 0.0  # the new system has holes
    low = sef.evaluate(runs, qrels, ["nDCG@10"])
    lows = dict(zip(low["run"], low["value"], strict=True))
    for (run, measure), _ in widths.items():
        if measure == "nDCG@10":
            row = b.filter((pl.col("run") == run) & (pl.col("measure") == measure))
            assert math.isclose(row["if_nonrelevant"].item(), lows[run], abs_tol=1e-12)
