"""compare(): pairing, statistics per run x measure, corrections, inputs, real TREC DL runs."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import polars as pl
import pytest
from conftest import REPO, shared_path
from scipy import stats as sps

import searcheval_frames as sef
from searcheval_frames.analysis import stats
from searcheval_frames.analysis.compare import FRAME_COLUMNS, Comparison
from searcheval_frames.errors import (
    DuplicateRowsError,
    IdMismatchError,
    InvalidScoreError,
    MissingColumnError,
    SearchEvalError,
    SearchEvalWarning,
)


def long_frame(values: dict[str, dict[str, list[float]]], queries: list[str] | None = None):
    """{measure: {run: [per-query values]}} -> long polars frame."""
    rows = []
    for measure, per_run in values.items():
        for run, vals in per_run.items():
            qs = queries or [f"q{i}" for i in range(len(vals))]
            rows += [(run, q, measure, float(v)) for q, v in zip(qs, vals, strict=True)]
    return pl.DataFrame(rows, schema=["run", "query_id", "measure", "value"], orient="row")


def random_frame(n_queries=30, runs=("base", "a", "b"), measures=("P@5", "nDCG@10"), seed=0):
    rng = np.random.default_rng(seed)
    values = {}
    for m in measures:
        base = rng.random(n_queries)
        values[m] = {r: np.clip(base + i * 0.05 + rng.normal(0, 0.15, n_queries), 0, 1)
                     for i, r in enumerate(runs)}
    return long_frame(values)


# --------------------------------------------------------------------------- values
def test_hand_computed_before_after():
    pq = long_frame({"P@5": {"before": [0.6, 0.4, 0.8, 0.8], "after": [0.8, 0.6, 0.8, 1.0]}})
    cmp = sef.compare(per_query=pq, baseline="before", test="t", correction="none")
    assert isinstance(cmp, Comparison)
    row = cmp.to_polars().row(0, named=True)
    assert list(cmp.to_polars().columns) == list(FRAME_COLUMNS)
    assert (row["run"], row["baseline"], row["measure"]) == ("after", "before", "P@5")
    assert row["mean"] == pytest.approx(0.8) and row["baseline_mean"] == pytest.approx(0.65)
    assert row["delta"] == pytest.approx(0.15)
    assert row["delta_pct"] == pytest.approx(0.15 / 0.65 * 100)
    assert (row["wins"], row["ties"], row["losses"]) == (3, 1, 0)
    # d = (0.2, 0.2, 0, 0.2): mean 0.15, sd 0.1 -> d_z 1.5, t = 3, df 3
    assert row["effect_size"] == pytest.approx(1.5)
    assert row["p_value"] == pytest.approx(2 * sps.t.sf(3.0, 3))
    assert row["p_adjusted"] == row["p_value"]
    assert row["n_queries"] == 4


def test_each_test_matches_scipy_on_the_pivoted_data():
    pq = random_frame()
    for test, fn in [
        ("t", lambda x, y: sps.ttest_rel(x, y).pvalue),
        ("wilcoxon", lambda x, y: sps.wilcoxon(x, y).pvalue),
    ]:
        out = sef.compare(per_query=pq, baseline="base", test=test, correction="none").to_polars()
        for row in out.iter_rows(named=True):
            sub = pq.filter(pl.col("measure") == row["measure"]).sort("query_id")
            x = sub.filter(pl.col("run") == row["run"])["value"].to_numpy()
            y = sub.filter(pl.col("run") == "base")["value"].to_numpy()
            assert row["p_value"] == pytest.approx(fn(x, y))
            assert row["mean"] == pytest.approx(x.mean())
            assert row["effect_size"] == pytest.approx((x - y).mean() / (x - y).std(ddof=1))
            assert row["ci_low"] < row["delta"] < row["ci_high"]


def test_seeded_resampling_is_reproducible_and_pair_local():
    pq = random_frame()
    kw = {"baseline": "base", "test": "permutation", "n_resamples": 2000, "seed": 42,
          "correction": "none"}  # intervals are matched to the correction, so none here
    a = sef.compare(per_query=pq, **kw).to_polars()
    b = sef.compare(per_query=pq, **kw).to_polars()
    assert a.equals(b)
    c = sef.compare(per_query=pq, **{**kw, "seed": 43}).to_polars()
    assert not a.select("ci_low").equals(c.select("ci_low"))
    # dropping run "b" leaves the (a, base) numbers unchanged
    only_a = sef.compare(per_query=pq.filter(pl.col("run") != "b"), **kw).to_polars()
    cols = ["measure", "p_value", "ci_low", "ci_high"]
    assert only_a.select(cols).equals(a.filter(pl.col("run") == "a").select(cols))


def test_correction_changes_significance_where_it_should():
    # one run, three measures, differences m_k + e with a fixed +-1 pattern e, so that
    # the paired t-test p-values are exactly 0.01, 0.03 and 0.04.
    n = 20
    e = np.array([1.0, -1.0] * (n // 2))
    se = e.std(ddof=1) / math.sqrt(n)
    values = {}
    for name, p in [("M1", 0.01), ("M2", 0.03), ("M3", 0.04)]:
        m = sps.t.isf(p / 2, n - 1) * se
        base = np.full(n, 0.5)
        values[name] = {"base": base, "new": base + 0.1 * (m + e)}
    pq = long_frame(values)
    raw = sef.compare(per_query=pq, baseline="base", correction="none").to_polars()
    assert raw["p_value"].to_list() == pytest.approx([0.01, 0.03, 0.04])
    expected = {"none": [True] * 3, "bh": [True] * 3, "holm": [True, False, False],
                "bonferroni": [True, False, False]}
    for correction, sig in expected.items():
        out = sef.compare(per_query=pq, baseline="base", correction=correction).to_polars()
        assert out["significant"].to_list() == sig, correction
        assert out["p_adjusted"].to_numpy() == pytest.approx(
            stats.adjust_pvalues(raw["p_value"].to_numpy(), correction)
        )
    # per-measure families have one test each: nothing to correct
    per_measure = sef.compare(per_query=pq, baseline="base", correction="holm", family="measure")
    assert per_measure.to_polars()["significant"].to_list() == [True] * 3


def test_several_baselines_and_all_pairs():
    pq = random_frame(runs=("r1", "r2", "r3", "r4"), measures=("AP",))
    two = sef.compare(per_query=pq, baseline=["r1", "r2"]).to_polars()
    pairs = set(zip(two["run"], two["baseline"], strict=True))
    assert pairs == {("r2", "r1"), ("r3", "r1"), ("r4", "r1"), ("r3", "r2"), ("r4", "r2")}
    allp = sef.compare(per_query=pq, pairs="all", correction="bonferroni")
    frame = allp.to_polars()
    assert frame.height == 6
    assert frame["p_adjusted"].to_numpy() == pytest.approx(
        np.minimum(1, frame["p_value"].to_numpy() * 6)
    )
    assert allp.runs == ["r1", "r2", "r3", "r4"]


# --------------------------------------------------------------------------- pairing
def gappy():
    pq = long_frame({"RR": {"a": [1.0, 0.5, 0.25], "b": [1.0, 1.0, 1.0]}}, ["q1", "q2", "q3"])
    return pq.filter(~((pl.col("run") == "b") & (pl.col("query_id") == "q3")))


def test_missing_zero_fills_and_names_the_queries():
    with pytest.warns(UserWarning, match="'q3'"):
        row = sef.compare(per_query=gappy(), baseline="a", missing="zero").to_polars().row(
            0, named=True)
    assert row["n_queries"] == 3
    assert row["mean"] == pytest.approx(2 / 3)  # (1 + 1 + 0) / 3
    assert row["baseline_mean"] == pytest.approx(1.75 / 3)


def test_missing_skip_drops_from_both_sides():
    with pytest.warns(UserWarning, match="'q3'"), \
            pytest.warns(SearchEvalWarning, match="cannot be tested.*too few queries, 2"):
        cmp = sef.compare(per_query=gappy(), baseline="a", missing="skip")
    row = cmp.to_polars().row(0, named=True)
    assert row["n_queries"] == 2
    assert row["baseline_mean"] == pytest.approx(0.75)  # q3 left the baseline too
    assert row["mean"] == pytest.approx(1.0)
    assert sorted(cmp.per_query["query_id"].unique()) == ["q1", "q2"]


def test_missing_error_raises_with_rows():
    with pytest.raises(IdMismatchError, match="q3"):
        sef.compare(per_query=gappy(), baseline="a", missing="error")


def test_complete_input_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sef.compare(per_query=random_frame(), baseline="base")


# --------------------------------------------------------------------------- inputs
def test_pandas_in_pandas_out_and_aliases():
    pq = random_frame().rename({"run": "system", "query_id": "qid", "measure": "metric"})
    pdf = pq.to_pandas()
    cmp = sef.compare(per_query=pdf, baseline="base")
    assert isinstance(cmp.frame, pd.DataFrame)
    assert isinstance(cmp.to_polars(), pl.DataFrame)
    assert list(cmp.frame.columns) == list(FRAME_COLUMNS)
    assert isinstance(sef.compare(per_query=pq, baseline="base").frame, pl.DataFrame)
    renamed = pq.rename({"value": "v"})
    out = sef.compare(per_query=renamed, baseline="base", columns={"value": "v"})
    assert out.to_polars().equals(cmp.to_polars())


def test_dict_of_per_query_frames_and_measure_selection():
    pq = random_frame()
    parts = {r: pq.filter(pl.col("run") == r).drop("run") for r in ("base", "a", "b")}
    cmp = sef.compare(per_query=parts, baseline="base", measures=["nDCG@10"])
    assert cmp.measures == ["nDCG@10"]
    full = sef.compare(per_query=pq, baseline="base", measures="nDCG@10").to_polars()
    assert cmp.to_polars().equals(full)


def test_default_baseline_is_the_first_run_with_a_warning_naming_it():
    with pytest.warns(SearchEvalWarning, match="no baseline= given; using 'base'.*'a', 'b'"):
        cmp = sef.compare(per_query=random_frame())
    assert cmp.baselines == ["base"]


def test_bad_input_raises_clear_errors():
    pq = random_frame()
    with pytest.raises(SearchEvalError, match=r"baseline='bm25'.*runs are"):
        sef.compare(per_query=pq, baseline="bm25")
    with pytest.raises(MissingColumnError, match="measure"):
        sef.compare(per_query=pq.drop("measure"))
    with pytest.raises(DuplicateRowsError, match="repeat"):
        sef.compare(per_query=pl.concat([pq, pq.head(2)]))
    with pytest.raises(InvalidScoreError, match="NaN"):
        sef.compare(per_query=pq.with_columns(pl.when(pl.col("query_id") == "q1").then(float("nan"))
                                    .otherwise(pl.col("value")).alias("value")))
    with pytest.raises(SearchEvalError, match="two runs"):
        sef.compare(per_query=pq.filter(pl.col("run") == "a"))
    with pytest.raises(SearchEvalError, match="measures="):
        sef.compare(per_query=pq, measures=["MAP"])
    with pytest.raises(SearchEvalError, match="test="):
        sef.compare(per_query=pq, test="z")
    with pytest.raises(SearchEvalError, match="missing="):
        sef.compare(per_query=pq, missing="drop")
    with pytest.raises(SearchEvalError, match="qrels"):
        sef.compare(runs=pq)


def test_sef_compare_stays_the_function_after_importing_the_module():
    import importlib

    importlib.import_module("searcheval_frames.analysis.compare")
    from searcheval_frames.analysis.compare import compare as fn

    assert sef.compare.__wrapped__ is fn  # (sef's checks unknown keywords around it)
    assert isinstance(sef.compare(per_query=random_frame(), baseline="base"), Comparison)


def test_runs_and_qrels_mode_matches_per_query_mode():
    run = pl.DataFrame({
        "run": ["x"] * 4 + ["y"] * 4,
        "query_id": ["1", "1", "2", "2"] * 2,
        "doc_id": ["d1", "d2", "d3", "d4"] * 2,
        "score": [2.0, 1.0, 2.0, 1.0, 1.0, 2.0, 1.0, 2.0],
    })
    qrels = pl.DataFrame({"query_id": ["1", "2", "3"], "doc_id": ["d2", "d4", "d9"],
                          "relevance": [1, 1, 1]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # query 3 has no results: scored 0
        cmp = sef.compare(run, qrels, baseline="x", measures=["RR", "P@1"])
        pq = sef.evaluate(run, qrels, ["RR", "P@1"], per_query=True)
    direct = sef.compare(per_query=pq, baseline="x")
    assert cmp.to_polars().equals(direct.to_polars())
    row = cmp.to_polars().filter(pl.col("measure") == "RR").row(0, named=True)
    assert row["n_queries"] == 3
    assert row["mean"] == pytest.approx(2 / 3) and row["baseline_mean"] == pytest.approx(1 / 3)


# --------------------------------------------------------------------------- real data
NEURAL = ["splade-pp-ed", "tasb", "openai-ada2", "repllama", "bm25-minilm-rerank"]


def read_trec_run(path) -> pl.DataFrame:
    return pl.read_csv(
        path, separator=" ", has_header=False,
        new_columns=["query_id", "q0", "doc_id", "rank", "score", "run"],
        schema_overrides={"query_id": pl.String, "doc_id": pl.String, "score": pl.Float64},
    ).select("query_id", "doc_id", "score")


def read_trec_qrels(path) -> pl.DataFrame:
    return pl.read_csv(
        path, separator=" ", has_header=False,
        new_columns=["query_id", "q0", "doc_id", "relevance"],
        schema_overrides={"query_id": pl.String, "doc_id": pl.String},
    ).select("query_id", "doc_id", "relevance")


@pytest.mark.shared
@pytest.mark.parametrize("year", ["dl19", "dl20"])
def test_trec_dl_neural_gaps_are_significant_rm3_is_not(year):
    qrels = read_trec_qrels(shared_path("trec_dl_passage", f"qrels.{year}-passage.txt"))
    runs = {
        name: read_trec_run(shared_path("trec_dl_passage", "runs", f"run.{year}-passage.{name}.txt"))
        for name in ["bm25", "bm25-rm3", *NEURAL]
    }
    cmp = sef.compare(runs, qrels, baseline="bm25", measures=["nDCG@10"], seed=1)
    out = {r["run"]: r for r in cmp.to_polars().iter_rows(named=True)}
    for name in NEURAL:
        assert out[name]["significant"], name
        assert out[name]["p_adjusted"] < 0.005, name
        assert out[name]["delta"] > 0.1 and out[name]["ci_low"] > 0, name
        assert out[name]["wins"] > 2 * out[name]["losses"], name
    rm3 = out["bm25-rm3"]
    assert not rm3["significant"]
    assert rm3["p_value"] > 0.3
    assert rm3["ci_low"] < 0 < rm3["ci_high"]
    assert abs(rm3["delta"]) < 0.02

    # oracle: scipy on the per-query nDCG@10 of pytrec_eval (reference file)
    ref = json.loads(shared_path("trec_dl_passage", "reference.pytrec_eval.json").read_text())
    per = {
        e["run"].split(".")[-2]: e["per_query"]
        for e in ref["evaluations"]
        if e["qrels"].startswith(f"qrels.{year}") and e["relevance_level"] == 1
    }
    qids = sorted(per["bm25"])
    base = np.array([per["bm25"][q]["ndcg_cut_10"] for q in qids])
    for name in ["bm25-rm3", *NEURAL]:
        x = np.array([per[name][q]["ndcg_cut_10"] for q in qids])
        assert out[name]["p_value"] == pytest.approx(sps.ttest_rel(x, base).pvalue, rel=1e-6)
        assert out[name]["mean"] == pytest.approx(x.mean(), abs=1e-12)

    # other tests agree on the verdicts
    for test in ("wilcoxon", "permutation"):
        other = sef.compare(runs, qrels, baseline="bm25", measures=["nDCG@10"],
                            test=test, n_resamples=5000)
        sig = dict(zip(other.to_polars()["run"], other.to_polars()["significant"], strict=True))
        assert all(sig[n] for n in NEURAL) and not sig["bm25-rm3"], test


# --------------------------------------------------------------------------- notebook
@pytest.mark.slow
def test_notebook_02_compare_systems_executes():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    path = REPO / "notebooks" / "02_compare_systems.ipynb"
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, "commit without outputs"
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "error"]
    assert not errors


# --------------------------------------------------------------------------- issue 26
def test_two_queries_from_0_to_1_cannot_be_tested_not_p_zero():
    """The issue's case: P@1 goes 0 -> 1 on two queries. The t-test used to say p = 0 and
    significant with CI [1, 1]; now p and the interval are NaN with a reason."""
    pq = long_frame({"P@1": {"a": [0.0, 0.0], "b": [1.0, 1.0]}})
    for test in ["t", "wilcoxon", "sign", "permutation"]:
        with pytest.warns(UserWarning, match="cannot be tested"):
            row = sef.compare(per_query=pq, baseline="a", test=test).to_polars().row(0, named=True)
        assert math.isnan(row["p_value"]) and math.isnan(row["ci_low"]), test
        assert not row["significant"] and row["reason"] == "too few queries"
    one = long_frame({"P@1": {"a": [0.2], "b": [0.7]}})
    with pytest.warns(UserWarning):
        row = sef.compare(per_query=one, baseline="a").to_polars().row(0, named=True)
    assert math.isnan(row["ci_low"]) and math.isnan(row["ci_high"])  # no zero-width CI
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        md = sef.compare(per_query=pq, baseline="a").to_markdown(layout="before_after",
                                                        columns=["delta", "ci", "p_adjusted"])
    assert "cannot be tested (too few queries)" in md


@pytest.mark.parametrize("test", ["t", "permutation", "wilcoxon", "sign"])
@pytest.mark.parametrize("correction", ["none", "holm", "bonferroni", "bh"])
def test_compare_interval_excludes_zero_iff_adjusted_p_below_alpha(test, correction):
    rng = np.random.default_rng(hash((test, correction)) % 2**32)
    n = 40
    runs = {"base": rng.random(n)}
    for j, shift in enumerate([0.0, 0.05, 0.1, 0.15, 0.2, 0.3]):
        runs[f"r{j}"] = np.clip(runs["base"] + shift + rng.normal(0, 0.25, n), 0, 1).round(1)
    pq = long_frame({"m": {k: list(v) for k, v in runs.items()}})
    fr = sef.compare(per_query=pq, baseline="base", test=test, correction=correction, seed=1,
                     n_resamples=2000).to_polars()
    agree = 0
    for r in fr.iter_rows(named=True):
        if min(abs(r["ci_low"]), abs(r["ci_high"])) < 1e-12:
            continue  # 0 exactly on an end
        excludes = r["ci_low"] > 0 or r["ci_high"] < 0
        assert excludes == (r["p_adjusted"] <= 0.05), r
        agree += 1
    assert agree >= 4


def test_compare_tukey_correction_is_the_leaderboards_tukey_hsd():
    rng = np.random.default_rng(5)
    vals = {f"s{j}": list(np.clip(rng.random(30) * 0.5 + 0.1 * j, 0, 1)) for j in range(4)}
    pq = long_frame({"m": vals})
    cmp = sef.compare(per_query=pq, baseline="s0", pairs="all", correction="tukey").to_polars()
    lb = sef.leaderboard(per_query=pq, measure="m", test="tukey_hsd", seed=0)
    ref = {frozenset((r["run_a"], r["run_b"])): r for r in lb._pairs.iter_rows(named=True)}
    assert cmp.height == 6
    for r in cmp.iter_rows(named=True):
        o = ref[frozenset((r["run"], r["baseline"]))]
        assert r["p_adjusted"] == pytest.approx(o["p_value"], rel=1e-9)
        assert r["ci_high"] - r["ci_low"] == pytest.approx(o["ci_high"] - o["ci_low"])
        assert r["significant"] == o["significant"]
    cmp = sef.compare(per_query=pq, baseline="s0", pairs="all", correction="tukey")
    assert "Tukey" in cmp.describe_method()


from hypothesis import given as _given  # noqa: E402
from hypothesis import settings as _settings  # noqa: E402
from hypothesis import strategies as _hst  # noqa: E402


@_settings(max_examples=40, deadline=None)
@_given(n=_hst.integers(1, 6), data=_hst.data(),
        test=_hst.sampled_from(["t", "wilcoxon", "sign", "permutation"]))
def test_degenerate_comparisons_never_look_certain(n, data, test):
    """Hypothesis, on tiny P@1-like frames (values 0, 0.5, 1): a row is either tested
    (finite p, an interval of positive width) or has a reason and NaN p and interval and
    is not significant; never p = 0 with a zero-width interval."""
    vals = _hst.lists(_hst.sampled_from([0.0, 0.5, 1.0]), min_size=n, max_size=n)
    pq = long_frame({"P@1": {"a": data.draw(vals), "b": data.draw(vals), "c": data.draw(vals)}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fr = sef.compare(per_query=pq, baseline="a", test=test, n_resamples=500).to_polars()
    for r in fr.iter_rows(named=True):
        if r["reason"] is None:
            assert 0 <= r["p_value"] <= 1 and r["ci_high"] > r["ci_low"], r
        elif r["reason"] != "interval not found":
            assert math.isnan(r["p_value"]) and math.isnan(r["ci_low"]), r
            assert not r["significant"]
        assert not (r["p_value"] == 0 and r["ci_low"] == r["ci_high"])
