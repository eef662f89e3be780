"""Slices (``by=`` on evaluate and compare): every per-slice number equals the same
function run on the run and qrels filtered to that slice's queries; the family-wide
correction equals statsmodels' ``multipletests``; the minimum detectable Δ equals a
root of scipy's noncentral t power written here."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from conftest import shared_path
from hypothesis import given, settings
from hypothesis import strategies as st

import searcheval_frames as sef
from searcheval_frames.errors import (
    DuplicateRowsError,
    InvalidOptionError,
    MissingColumnError,
    SearchEvalError,
    SearchEvalWarning,
)

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "data" / "example"
RUNS = [str(EXAMPLE / "runs" / f"{n}.run") for n in ("bm25", "bm25-rerank", "lsi")]
QRELS = str(EXAMPLE / "qrels.txt")
WORDS = pl.col("query").str.split(" ").list.len()
LENGTH = (pl.when(WORDS <= 3).then(pl.lit("1-3")).when(WORDS <= 5).then(pl.lit("4-5"))
          .otherwise(pl.lit("6+")).alias("length"))
MEASURES = ["nDCG@10", "P@5", "AP", "RR", "NumRel", "GMAP"]


def quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kw)


def filtered(obj: pl.DataFrame, ids: list[str]) -> pl.DataFrame:
    return obj.filter(pl.col("query_id").is_in(ids))


def check_evaluate_by(run: pl.DataFrame, qrels: pl.DataFrame, queries: pl.DataFrame, by,
                      measures, **options) -> int:
    """Each slice's value == evaluate on the filtered run and qrels; returns the count."""
    got = quiet(sef.evaluate, run, qrels, measures, queries=queries, by=by, **options)
    keys = queries.select("query_id", by if isinstance(by, pl.Expr) else pl.col(by))
    name = keys.columns[1]
    checked = 0
    for (value,), ids in keys.group_by(name):
        ids_l = ids["query_id"].to_list()
        sub_q = filtered(qrels, ids_l)
        if sub_q.height == 0:
            assert got.filter(pl.col(name) == value).height == 0
            continue
        try:
            want = quiet(sef.evaluate, filtered(run, ids_l), sub_q, [*measures, "NumQ"],
                         **options)
        except SearchEvalError:  # the filtered run alone has nothing to evaluate
            continue
        mine = got.filter(pl.col(name) == value)
        for r, m, v in want.iter_rows():
            if m == "NumQ":
                assert mine.filter(pl.col("run") == r)["n_queries"].unique().item() == v
                continue
            row = mine.filter(pl.col("run") == r, pl.col("measure") == m)
            assert row["value"].item() == pytest.approx(v, rel=1e-12, abs=1e-15), (value, r, m)
            checked += 1
    return checked


def test_evaluate_by_length_on_the_bundled_set():
    q = sef.read_queries(EXAMPLE / "queries.tsv")
    run, qrels = sef.read_run(RUNS), sef.read_qrels(QRELS)
    assert check_evaluate_by(run, qrels, q, LENGTH, MEASURES) == 3 * 3 * len(MEASURES)
    got = sef.evaluate(RUNS, QRELS, ["P@5"], queries=q, by=LENGTH)
    assert got.columns == ["run", "length", "measure", "n_queries", "value"]
    assert got.filter(pl.col("run") == "bm25")["n_queries"].sum() == 38


def test_evaluate_by_pandas_in_pandas_out_and_per_query():
    import pandas as pd

    q = sef.read_queries(EXAMPLE / "queries.tsv").with_columns(LENGTH).to_pandas()
    run = sef.read_run(RUNS[0]).to_pandas()
    got = quiet(sef.evaluate, run, sef.read_qrels(QRELS).to_pandas(), "P@5", queries=q,
                by="length")
    assert isinstance(got, pd.DataFrame) and set(got["length"]) == {"1-3", "4-5", "6+"}
    pq = quiet(sef.evaluate, run, QRELS, "P@5", queries=q, by="length", per_query=True)
    assert list(pq.columns) == ["run", "query_id", "measure", "value", "length"]
    assert len(pq) == 38


@pytest.mark.parametrize("year", ["dl19", "dl20"])
def test_evaluate_by_length_on_trec_dl(year):
    folder = shared_path("trec_dl_passage")
    topics = folder / ("topics.dl19-passage.txt" if year == "dl19" else "topics.dl20.txt")
    q = pl.read_csv(topics, separator="\t", has_header=False, new_columns=["query_id", "query"],
                    schema_overrides={"query_id": pl.String}, quote_char=None)
    qrels = sef.read_qrels(folder / f"qrels.{year}-passage.txt")
    run = sef.read_run([folder / "runs" / f"run.{year}-passage.{s}.txt"
                        for s in ("bm25", "splade-pp-ed", "tasb")], name_from="file")
    n = check_evaluate_by(run, qrels, q, LENGTH, ["nDCG@10", "AP", "R@100", "RR"],
                          relevance_level=2)
    assert n == 3 * 3 * 4


@st.composite
def sliced_data(draw):
    n_q = draw(st.integers(2, 8))
    rows, labels, meta = [], [], []
    for qi in range(n_q):
        q = f"q{qi}"
        meta.append((q, draw(st.sampled_from(["a", "b", "c"]))))
        for run in ("x", "y"):
            if draw(st.booleans()) or qi == 0:
                docs = draw(st.lists(st.integers(0, 9), max_size=8, unique=True))
                rows += [(run, q, f"d{d}", float(draw(st.integers(0, 4)))) for d in docs]
        judged = draw(st.lists(st.integers(0, 9), min_size=0, max_size=6, unique=True))
        labels += [(q, f"d{d}", draw(st.integers(0, 3))) for d in judged]
    run = pl.DataFrame(rows, schema=["run", "query_id", "doc_id", "score"], orient="row")
    qrels = pl.DataFrame(labels, schema={"query_id": pl.String, "doc_id": pl.String,
                                          "relevance": pl.Int64}, orient="row")
    queries = pl.DataFrame(meta, schema=["query_id", "group"], orient="row")
    return run, qrels, queries


@settings(max_examples=50, deadline=None)
@given(sliced_data(), st.sampled_from(["zero", "skip"]))
def test_evaluate_by_equals_filtered_subsets_generated(data, missing):
    run, qrels, queries = data
    if run.height == 0 or qrels.height == 0:
        return
    try:
        quiet(sef.evaluate, run, qrels, "P@3", missing=missing)
    except SearchEvalError as exc:  # nothing to evaluate at all: the sliced call says the same
        with pytest.raises(type(exc)):
            quiet(sef.evaluate, run, qrels, "P@3", missing=missing, queries=queries, by="group")
        return
    check_evaluate_by(run, qrels, queries, "group", ["P@3", "nDCG@5", "AP", "GMAP"],
                      missing=missing)


def _t_detectable(n: int, sd: float, alpha: float = 0.05, target: float = 0.8) -> float:
    """Independent: the Δ whose two-sided paired t-test power is ``target`` (brentq)."""
    from scipy import optimize, stats

    crit = stats.t.ppf(1 - alpha / 2, n - 1)

    def gap(effect: float) -> float:  # effect = Δ / σ_d
        nc = np.sqrt(n) * effect
        lower = np.nan_to_num(stats.nct.cdf(-crit, n - 1, nc), nan=0.0)  # negligible tail
        return stats.nct.sf(crit, n - 1, nc) + lower - target

    return optimize.brentq(gap, 1e-9, 5.0, xtol=1e-14) * sd


@pytest.mark.parametrize("ci_method", ["t", "bca"])
def test_compare_by_equals_compare_on_each_slice(ci_method):
    from statsmodels.stats.multitest import multipletests

    q = sef.read_queries(EXAMPLE / "queries.tsv")
    measures = ["nDCG@10", "P@5", "AP"]
    with pytest.warns(SearchEvalWarning, match="needs"):
        s = sef.compare(runs=RUNS, qrels=QRELS, measures=measures, baseline="bm25",
                        queries=q, by=LENGTH, ci_method=ci_method, n_resamples=2000)
    f = s.to_polars()
    assert f.height == 3 * 2 * 3
    run, qrels = sef.read_run(RUNS), sef.read_qrels(QRELS)
    keys = q.select("query_id", LENGTH)
    cols = ["n_queries", "mean", "baseline_mean", "delta", "ci_low", "ci_high", "p_value",
            "wins", "ties", "losses", "effect_size"]
    checked = 0
    for (value,), ids in keys.group_by("length"):
        ids_l = ids["query_id"].to_list()
        want = quiet(sef.compare, runs=filtered(run, ids_l), qrels=filtered(qrels, ids_l),
                     measures=measures, baseline="bm25", ci_method=ci_method,
                     n_resamples=2000).to_polars()
        mine = f.filter(pl.col("length") == value).select("run", "measure", *cols)
        joined = want.select("run", "measure", *cols).join(mine, on=["run", "measure"])
        assert joined.height == want.height == 6
        for c in cols:
            np.testing.assert_allclose(joined[c].cast(pl.Float64),
                                       joined[f"{c}_right"].cast(pl.Float64),
                                       rtol=1e-12, atol=1e-15, err_msg=c)
            checked += joined.height
    assert checked == 3 * 6 * len(cols)
    # one family: Holm over all 18 slice x measure x pair tests (statsmodels oracle)
    # (a test that cannot be run — NaN p, issue 26 — is not in the family; it stays NaN)
    p = f["p_value"].to_numpy()
    ok = ~np.isnan(p)
    assert np.isnan(f["p_adjusted"].to_numpy()[~ok]).all()
    np.testing.assert_allclose(f["p_adjusted"].to_numpy()[ok],
                               multipletests(p[ok], method="holm")[1], rtol=1e-12)
    # minimum detectable delta: scipy's noncentral t, solved here
    pq = sef.evaluate(RUNS, QRELS, measures, per_query=True).join(keys, on="query_id")
    for r in f.filter(pl.col("detectable_delta").is_not_nan()).iter_rows(named=True):
        d = (pq.filter(pl.col("length") == r["length"], pl.col("measure") == r["measure"])
             .pivot(on="run", index="query_id", values="value"))
        diff = (d[r["run"]] - d[r["baseline"]]).to_numpy()
        want_d = _t_detectable(len(diff), float(np.std(diff, ddof=1)))
        assert r["detectable_delta"] == pytest.approx(want_d, rel=1e-6)
    assert (f["small"] == (f["n_queries"] < 20)).all() and f["small"].any() and s.wins["verdict"].is_in(
        ["better", "worse", "no reliable difference", "too few queries"]).all()


def test_compare_by_verdicts_on_trec_dl19():
    folder = shared_path("trec_dl_passage")
    q = pl.read_csv(folder / "topics.dl19-passage.txt", separator="\t", has_header=False,
                    new_columns=["query_id", "query"], schema_overrides={"query_id": pl.String},
                    quote_char=None)
    runs = [folder / "runs" / f"run.dl19-passage.{s}.txt" for s in ("bm25", "splade-pp-ed")]
    s = quiet(sef.compare, runs=sef.read_run(runs, name_from="file"),
              qrels=folder / "qrels.dl19-passage.txt", measures=["nDCG@10"],
              baseline="run.dl19-passage.bm25", queries=q, by=LENGTH, ci_method="t",
              relevance_level=2, min_queries=10)
    w = s.wins
    assert w.height == 3 and w["n_queries"].sum() == 43
    # a verdict of "better" needs the family-corrected test and the interval to agree
    for r in w.iter_rows(named=True):
        if r["verdict"] == "better":
            assert r["p_adjusted"] <= 0.05 and r["ci_low"] > 0
    assert "| length |" in s.to_markdown()


def test_slice_errors_say_what_to_do():
    q = sef.read_queries(EXAMPLE / "queries.tsv")
    with pytest.raises(MissingColumnError, match="no column 'intent'"):
        sef.evaluate(RUNS, QRELS, "P@5", queries=q, by="intent")
    with pytest.raises(InvalidOptionError, match=r"evaluate\(queries=None\): by= needs queries="):
        sef.evaluate(RUNS, QRELS, "P@5", by="intent")
    with pytest.raises(InvalidOptionError, match=r"evaluate\(by=None\): queries= is for slicing"):
        sef.evaluate(RUNS, QRELS, "P@5", queries=q)
    with pytest.raises(MissingColumnError, match="no 'query_id'"):
        sef.evaluate(RUNS, QRELS, "P@5", queries=q.rename({"query_id": "qid"}), by="query")
    with pytest.raises(DuplicateRowsError, match="one row per query_id"):
        sef.evaluate(RUNS, QRELS, "P@5", queries=pl.concat([q, q.head(1)]), by="query")
    with pytest.raises(InvalidOptionError, match=r"compare\(by=3\): must be a column"):
        sef.compare(runs=RUNS, qrels=QRELS, measures="P@5", queries=q, by=3)


def test_queries_without_metadata_form_a_null_slice_with_a_warning():
    q = sef.read_queries(EXAMPLE / "queries.tsv").with_columns(LENGTH).head(30)
    with pytest.warns(SearchEvalWarning, match="8 evaluated queries have no row"):
        got = sef.evaluate(RUNS[0], QRELS, "P@5", queries=q, by="length")
    assert got.filter(pl.col("length").is_null())["n_queries"].item() == 8


def _length_compare(**kw):
    q = sef.read_queries(EXAMPLE / "queries.tsv")
    return quiet(sef.compare, runs=RUNS, qrels=QRELS, measures=["nDCG@10", "P@5"],
                 baseline="bm25", queries=q, by=LENGTH, ci_method="t", **kw)


def test_slice_forest_draws_what_the_frame_says():
    import matplotlib

    matplotlib.use("Agg")
    s = _length_compare(correction="none")
    data = sef.slice_forest_data(s, "nDCG@10")
    assert data.height == 3 * 2 and set(data["measure"]) == {"nDCG@10"}
    ax = sef.slice_forest(s, "nDCG@10")
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == 6 and labels[0] == "length=1-3 (bm25-rerank)"
    dots = [ln for ln in ax.get_lines() if ln.get_marker() == "o"]
    assert len(dots) == 6
    filled = sum(1 for ln in dots if ln.get_markerfacecolor() != "white")
    assert filled == int(data["significant"].sum())
    for ln, r in zip(dots, data.iter_rows(named=True), strict=True):
        assert ln.get_xdata()[0] == pytest.approx(r["delta"])
    bands = [c for c in ax.collections]
    assert len(bands) == int(data["detectable_delta"].is_not_nan().sum())
    with pytest.raises(SearchEvalError, match="not compared"):
        sef.slice_forest_data(s, "AP")
    import matplotlib.pyplot as plt

    plt.close("all")


def test_report_by_slice_section_equals_compare_by(tmp_path):
    q = sef.read_queries(EXAMPLE / "queries.tsv")
    rep = quiet(sef.report, RUNS, QRELS, baseline="bm25", run="lsi", queries=q, by=LENGTH,
                measures=["nDCG@10", "P@5"], ci_method="t")
    section = rep.data.slices
    want = _length_compare()
    cols = ["length", "run", "baseline", "measure", "n_queries", "delta", "ci_low", "ci_high",
            "p_value", "p_adjusted", "detectable_delta"]
    got = section.comparison.to_polars().select(cols)
    exp = want.to_polars().select(cols)
    assert got.equals(exp)
    path = rep.save(tmp_path / "rep")
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "## By slice" in md and "| 6+ | lsi vs bm25 | nDCG@10 | 20 |" in md
    page = Path(path).read_text()
    assert 'id="slices"' in page and 'id="fig-slices"' in page
    assert (tmp_path / "rep" / "figures" / "slices.png").stat().st_size > 1000


def test_two_slice_columns_are_their_combinations():
    q = sef.read_queries(EXAMPLE / "queries.tsv").with_columns(
        (pl.col("query").str.contains("(?i)what|how")).alias("question"))
    run, qrels = sef.read_run(RUNS), sef.read_qrels(QRELS)
    got = quiet(sef.evaluate, run, qrels, ["nDCG@10", "AP"], queries=q, by=["question", LENGTH])
    assert got.columns[:3] == ["run", "question", "length"]
    keys = q.select("query_id", "question", LENGTH)
    n = 0
    for (question, length), ids in keys.group_by("question", "length"):
        ids_l = ids["query_id"].to_list()
        want = quiet(sef.evaluate, filtered(run, ids_l), filtered(qrels, ids_l),
                     ["nDCG@10", "AP"])
        mine = got.filter(pl.col("question") == question, pl.col("length") == length)
        assert mine.select("run", "measure", "value").equals(want), (question, length)
        n += 1
    assert n == keys.select("question", "length").unique().height >= 4


@st.composite
def paired_frame(draw):
    n = draw(st.integers(4, 30))
    values = st.sampled_from([0.0, 0.1, 0.2, 0.5, 0.8, 1.0])
    rows = [(r, f"q{i}", m, draw(values)) for r in ("a", "b", "c") for i in range(n)
            for m in ("P@5", "AP")]
    groups = [draw(st.sampled_from(["x", "y"])) for _ in range(n)]
    pq = pl.DataFrame(rows, schema=["run", "query_id", "measure", "value"], orient="row")
    return pq, pl.DataFrame({"query_id": [f"q{i}" for i in range(n)], "g": groups})


@settings(max_examples=15, deadline=None)
@given(paired_frame(), st.sampled_from(["t", "wilcoxon", "sign"]))
def test_compare_by_equals_compare_on_each_slice_generated(data, test):
    from statsmodels.stats.multitest import multipletests

    pq, q = data
    s = quiet(sef.compare, pq, "a", queries=q, by="g", ci_method="t", test=test)
    f = s.to_polars()
    for (g,), ids in q.group_by("g"):
        want = quiet(sef.compare, filtered(pq, ids["query_id"].to_list()), "a", ci_method="t",
                     test=test).to_polars()
        mine = f.filter(pl.col("g") == g).drop("g", "p_adjusted", "significant",
                                               "detectable_delta", "small")
        assert mine.drop_nans().equals(want.drop("p_adjusted", "significant").drop_nans())
    p = f["p_value"].to_numpy()
    ok = ~np.isnan(p)
    np.testing.assert_allclose(f["p_adjusted"].to_numpy()[ok],
                               multipletests(p[ok], method="holm")[1], rtol=1e-12)
    # family="measure": one Holm family per measure, over its slices and pairs
    per = quiet(sef.compare, pq, "a", queries=q, by="g", ci_method="t", test=test,
                family="measure").to_polars()
    for m in ("P@5", "AP"):
        sub = per.filter(pl.col("measure") == m, pl.col("p_value").is_not_nan())
        np.testing.assert_allclose(sub["p_adjusted"], multipletests(
            sub["p_value"].to_numpy(), method="holm")[1], rtol=1e-12)
