"""Issue #35: comparisons with replicates (seeds) and datasets, variance components.

Oracles: statsmodels ``MixedLM`` called directly on the same formula; R lme4's published
REML fit of the Dyestuff data; slow loops over bootstrap samples with the same seed;
statsmodels ``anova_lm``; hand-computed Borda counts and mean ranks; scipy's paired
t-test and statsmodels' Holm; ``sef.evaluate`` on filtered frames. Hypothesis: a
difference that one seed reverses is never "reliably better".
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import searcheval_frames as sef
from searcheval_frames.analysis.structured.aggregate import aggregate
from searcheval_frames.analysis.structured.bootstrap import dataset_means, replicate_deltas
from searcheval_frames.analysis.structured.mixed import fit_mixed
from searcheval_frames.errors import IdMismatchError, InvalidOptionError, MissingColumnError

smf = pytest.importorskip("statsmodels.formula.api")
sm = pytest.importorskip("statsmodels.api")


def replicate_values(shift: dict[str, float], n_seeds: int = 3, n_queries: int = 30,
                     seed_sd: float = 0.02, noise: float = 0.05, rng_seed: int = 0,
                     ) -> pl.DataFrame:
    rng = np.random.default_rng(rng_seed)
    base = rng.uniform(0.2, 0.8, n_queries)
    rows = []
    for s, d in shift.items():
        for r in range(n_seeds):
            off = rng.normal(0, seed_sd)
            rows += [{"run": s, "seed": str(r), "query_id": f"q{q:02d}", "measure": "nDCG@10",
                      "value": float(base[q] + d + off + rng.normal(0, noise))}
                     for q in range(n_queries)]
    return pl.DataFrame(rows)


# --------------------------------------------------------------------------- mixed model
def _direct_fit(pair: pl.DataFrame) -> tuple[object, pd.DataFrame]:
    df = pair.to_pandas()
    df["rs"] = df["run"] + ":" + df["seed"]
    df["qs"] = df["run"] + ":" + df["query_id"]
    df["g"] = 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # statsmodels' boundary / retry warnings
        fit = smf.mixedlm("value ~ C(run, Treatment(reference='bm25'))", df, groups="g",
                          re_formula="0", vc_formula={"q": "0 + C(query_id)",
                                                      "qs": "0 + C(qs)",
                                                      "rs": "0 + C(rs)"}).fit(reml=True)
    return fit, df


def test_reml_criterion_and_fit_equal_statsmodels_called_directly() -> None:
    from searcheval_frames.analysis.structured import reml as R

    pq = replicate_values({"bm25": 0.0, "dense": 0.06, "hybrid": 0.03}, seed_sd=0.03)
    pair = pq.filter(pl.col("run").is_in(["bm25", "dense"]))
    direct, df = _direct_fit(pair)
    y = df["value"].to_numpy()
    X = np.column_stack([np.ones(y.size), (df["run"] == "dense").to_numpy(float)])
    codes = [pl.Series(df[c]).rank("dense").cast(pl.Int64).to_numpy() - 1
             for c in ("query_id", "qs", "rs")]
    ours = R.reml(y, X, codes)
    # the same objective: our REML deviance at statsmodels' estimate is its -2 llf
    names = list(direct.model.exog_vc.names)
    vc = np.array([direct.vcomp[names.index(k)] for k in ("q", "qs", "rs")])
    theta = np.sqrt(vc / direct.scale)
    assert R.criterion(y, X, codes, theta) == pytest.approx(-2 * direct.llf, abs=1e-6)
    # and an optimum at least as good (the criterion is flat: parameters agree to 1e-3)
    assert ours["deviance"] <= -2 * direct.llf + 1e-6
    np.testing.assert_allclose(ours["variances"], [*vc, direct.scale], rtol=2e-3, atol=1e-7)
    np.testing.assert_allclose(ours["beta"], direct.fe_params.to_numpy(), atol=1e-6)
    np.testing.assert_allclose(np.sqrt(np.diag(ours["cov_beta"])), direct.bse_fe.to_numpy(),
                               rtol=1e-3)


def test_compare_replicates_statsmodels_engine_equals_statsmodels_called_directly() -> None:
    from scipy import stats

    pq = replicate_values({"bm25": 0.0, "dense": 0.06}, seed_sd=0.03)
    direct, _ = _direct_fit(pq)
    fit = fit_mixed(pq.with_columns(pl.concat_str(["run", "seed"], separator=":").alias("rs"),
                                    pl.concat_str(["run", "query_id"], separator=":")
                                    .alias("qs")),
                    fixed="run", random=["query_id", "qs", "rs"], reference="bm25",
                    engine="statsmodels")
    key = "C(run, Treatment(reference='bm25'))[T.dense]"
    assert fit.effects["dense"] == pytest.approx(direct.fe_params[key], abs=1e-6)
    assert fit.se["dense"] == pytest.approx(direct.bse_fe[key], abs=1e-6)
    names = list(direct.model.exog_vc.names)
    for ours, theirs in (("query_id", "q"), ("qs", "qs"), ("rs", "rs")):
        assert fit.variances[ours] == pytest.approx(direct.vcomp[names.index(theirs)], abs=1e-6)
    assert fit.variances["residual"] == pytest.approx(direct.scale, abs=1e-6)
    row = sef.compare_replicates(per_query=pq, baseline="bm25",
                                 replicate="seed").to_polars().row(0, named=True)
    assert row["df"] >= 1
    assert row["p_value"] == pytest.approx(2 * stats.t.sf(abs(row["delta"] / row["se"]),
                                                          row["df"]), abs=1e-9)
    assert row["se"] == pytest.approx(direct.bse_fe[key], rel=2e-3)


# Davies (ed.), "Statistical Methods in Research and Production" (1947): yield of
# dyestuff (grams of standard colour) in 5 preparations from each of 6 batches; the
# data set `Dyestuff` of R's lme4. D. Bates, "lme4: Mixed-effects modeling with R"
# (2010), ch. 1, model fm01 <- lmer(Yield ~ 1 + (1|Batch), Dyestuff) (REML) prints:
#   Random effects:  Batch (Intercept) Variance 1764.0 Std.Dev. 42.001
#                    Residual          Variance 2451.3 Std.Dev. 49.510
#   Fixed effects:   (Intercept) Estimate 1527.50 Std. Error 19.38
DYESTUFF = {"A": [1545, 1440, 1440, 1520, 1580], "B": [1540, 1555, 1490, 1560, 1495],
            "C": [1595, 1550, 1605, 1510, 1560], "D": [1445, 1440, 1595, 1465, 1545],
            "E": [1595, 1630, 1515, 1635, 1625], "F": [1520, 1455, 1450, 1480, 1445]}


@pytest.mark.parametrize("engine", ["numpy", "statsmodels"])
def test_mixed_model_reproduces_lme4_dyestuff(engine: str) -> None:
    frame = pl.DataFrame({"value": [float(v) for vs in DYESTUFF.values() for v in vs],
                          "batch": [b for b, vs in DYESTUFF.items() for _ in vs]})
    fit = fit_mixed(frame, fixed=None, random=["batch"], engine=engine)
    # balanced one-way design: REML = the ANOVA estimates (MS_B - MS_E)/5 and MS_E
    Y = frame["value"].to_numpy().reshape(6, 5)
    ms_e = ((Y - Y.mean(axis=1, keepdims=True)) ** 2).sum() / 24
    ms_b = 5 * ((Y.mean(axis=1) - Y.mean()) ** 2).sum() / 5
    tol = 1e-5 if engine == "numpy" else 1e-4  # statsmodels stops earlier
    assert fit.variances["batch"] == pytest.approx((ms_b - ms_e) / 5, rel=tol)
    assert fit.variances["residual"] == pytest.approx(ms_e, rel=tol)
    assert fit.intercept == pytest.approx(1527.50, abs=0.005)
    assert np.sqrt(fit.variances["batch"]) == pytest.approx(42.001, abs=0.005)
    assert np.sqrt(fit.variances["residual"]) == pytest.approx(49.510, abs=0.005)
    assert fit.variances["batch"] == pytest.approx(1764.0, rel=2e-4)
    assert fit.variances["residual"] == pytest.approx(2451.3, rel=2e-4)


# --------------------------------------------------------------------------- bootstrap
def test_hierarchical_bootstrap_equals_a_slow_loop_with_the_same_seed() -> None:
    rng = np.random.default_rng(5)
    V, W = rng.uniform(size=(3, 17)), rng.uniform(size=(2, 17))
    fast = replicate_deltas(V, W, 700, np.random.default_rng(11))
    g_q, g_s, g_b = np.random.default_rng(11).spawn(3)
    q = g_q.integers(0, 17, (700, 17))
    rs, rb = g_s.integers(0, 3, (700, 3)), g_b.integers(0, 2, (700, 2))
    slow = [V[rs[b]][:, q[b]].mean() - W[rb[b]][:, q[b]].mean() for b in range(700)]
    np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12)


def test_two_stage_bootstrap_equals_a_slow_loop_with_the_same_seed() -> None:
    rng = np.random.default_rng(6)
    mats = [rng.uniform(size=(n, 3)) for n in (5, 9, 4)]
    fast = dataset_means(mats, 300, np.random.default_rng(2))
    g_sets, *g_q = np.random.default_rng(2).spawn(4)
    picked = g_sets.integers(0, 3, (300, 3))
    slow = np.empty((300, 3, 3))
    # draws per dataset in sample order (each dataset's generator serves its slots in turn)
    for d, X in enumerate(mats):
        for b, j in zip(*np.nonzero(picked == d), strict=True):
            idx = g_q[d].integers(0, X.shape[0], X.shape[0])
            slow[b, j] = X[idx].mean(axis=0)
    np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12)


# --------------------------------------------------------------------------- ANOVA
def _pd(pq: pl.DataFrame) -> pd.DataFrame:
    return pq.to_pandas()


@pytest.mark.parametrize("replicated", [False, True])
def test_anova_equals_statsmodels_anova_lm(replicated: bool) -> None:
    pq = replicate_values({"a": 0.0, "b": 0.04, "c": 0.1}, n_seeds=3 if replicated else 1,
                          n_queries=12, rng_seed=3)
    vc = sef.variance_components(per_query=pq, factors=["system", "query"])
    formula = "value ~ C(run) * C(query_id)" if replicated else "value ~ C(run) + C(query_id)"
    table = sm.stats.anova_lm(smf.ols(formula, _pd(pq)).fit(), typ=1)
    ours = vc.to_polars()
    names = {"system": "C(run)", "query": "C(query_id)", "system:query": "C(run):C(query_id)",
             "residual": "Residual"}
    for term, theirs in names.items():
        if term not in ours["term"].to_list():
            assert not replicated and term == "system:query"
            continue
        row = ours.filter(pl.col("term") == term).row(0, named=True)
        assert row["ss"] == pytest.approx(table.loc[theirs, "sum_sq"], rel=1e-9, abs=1e-12)
        assert row["df"] == table.loc[theirs, "df"]
        if term != "residual":
            assert row["f"] == pytest.approx(table.loc[theirs, "F"], rel=1e-9)
            assert row["p_value"] == pytest.approx(table.loc[theirs, "PR(>F)"], rel=1e-7,
                                                   abs=1e-15)


def test_variance_components_anova_and_reml_agree_when_positive() -> None:
    # balanced data with clearly positive components: REML = ANOVA (Searle et al. 1992)
    pq = replicate_values({"a": 0.0, "b": 0.05, "c": 0.15}, n_seeds=1, n_queries=25,
                          rng_seed=4)
    anova = sef.variance_components(per_query=pq, factors=["system", "query"]).to_polars()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reml = sef.variance_components(per_query=pq, factors=["system", "query"],
                                       method="reml").to_polars()
    for term in ("system", "query", "residual"):
        a = anova.filter(pl.col("term") == term)["variance"][0]
        r = reml.filter(pl.col("term") == term)["variance"][0]
        assert r == pytest.approx(a, rel=2e-3)
    assert sef.variance_components(per_query=pq, factors=["system", "query"]).dominant() \
        == "query"


# --------------------------------------------------------------------------- aggregates
def test_borda_and_mean_rank_by_hand() -> None:
    # three datasets x four systems; by hand:
    #  d1: 0.5 0.7 0.6 0.1 -> ranks 3 1 2 4 ; d2: 0.4 0.4 0.2 0.3 -> 1.5 1.5 4 3
    #  d3: 0.9 0.1 0.5 0.5 -> 1 4 2.5 2.5
    M = np.array([[0.5, 0.7, 0.6, 0.1], [0.4, 0.4, 0.2, 0.3], [0.9, 0.1, 0.5, 0.5]])
    assert aggregate(M, "mean_rank").tolist() == pytest.approx(
        [(3 + 1.5 + 1) / 3, (1 + 1.5 + 4) / 3, (2 + 4 + 2.5) / 3, (4 + 3 + 2.5) / 3])
    # Borda: systems beaten + half a point per tie
    assert aggregate(M, "borda").tolist() == [1 + 2.5 + 3, 3 + 2.5 + 0, 2 + 0 + 1.5,
                                              0 + 1 + 1.5]
    assert aggregate(M, "macro").tolist() == pytest.approx(M.mean(axis=0).tolist())


# --------------------------------------------------------------------------- replicates
def test_flat_verdict_is_compare_on_seed_averaged_values() -> None:
    pq = replicate_values({"bm25": 0.0, "dense": 0.05, "hybrid": 0.01}, rng_seed=7)
    res = sef.compare_replicates(per_query=pq, baseline="bm25", replicate="seed",
                                 method="bootstrap", n_resamples=500).to_polars()
    flat = pq.group_by("run", "query_id", "measure").agg(pl.col("value").mean())
    cmp = sef.compare(per_query=flat, baseline="bm25", ci_method="test").to_polars()
    for run in ("dense", "hybrid"):
        ours = res.filter(pl.col("run") == run).row(0, named=True)
        theirs = cmp.filter(pl.col("run") == run).row(0, named=True)
        assert ours["flat_p_adjusted"] == pytest.approx(theirs["p_adjusted"], rel=1e-12)
        assert ours["flat_ci_low"] == pytest.approx(theirs["ci_low"], rel=1e-12)
        assert ours["delta"] == pytest.approx(theirs["delta"], abs=1e-12)


def test_one_lucky_seed_is_not_reliably_better_but_flat_says_so() -> None:
    # dense is better only because of seed 2; seeds 0 and 1 are below the baseline
    rng = np.random.default_rng(1)
    base = rng.uniform(0.2, 0.8, 40)
    rows = [{"run": "bm25", "seed": "0", "query_id": f"q{q}", "measure": "P@5",
             "value": float(base[q])} for q in range(40)]
    for r, off in enumerate((-0.01, -0.005, 0.12)):
        rows += [{"run": "dense", "seed": str(r), "query_id": f"q{q}", "measure": "P@5",
                  "value": float(base[q] + off + rng.normal(0, 0.02))} for q in range(40)]
    pq = pl.DataFrame(rows)
    for method in ("mixed", "bootstrap"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            row = sef.compare_replicates(per_query=pq, baseline="bm25", replicate="seed",
                                         method=method, n_resamples=2000).to_polars().row(
                0, named=True)
        assert row["flat_verdict"] == "reliably better"
        assert row["verdict"] == "not distinguishable"
        assert row["seed_min_delta"] < 0 < row["seed_max_delta"]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.03, 0.3), st.integers(2, 4),
       st.sampled_from(["mixed", "bootstrap"]))
def test_a_difference_one_seed_reverses_is_never_reliably_better(
        seed: int, lift: float, n_seeds: int, method: str) -> None:
    rng = np.random.default_rng(seed)
    n = 20
    base = rng.uniform(0.1, 0.9, n)
    rows = []
    for r in range(n_seeds):
        rows += [{"run": "a", "seed": str(r), "query_id": f"q{q}", "measure": "m",
                  "value": float(base[q] + rng.normal(0, 0.01))} for q in range(n)]
        # system b: one seed far ahead, the others slightly behind a
        off = lift if r == 0 else -0.02
        rows += [{"run": "b", "seed": str(r), "query_id": f"q{q}", "measure": "m",
                  "value": float(base[q] + off + rng.normal(0, 0.01))} for q in range(n)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        row = sef.compare_replicates(per_query=pl.DataFrame(rows), baseline="a",
                                     replicate="seed", method=method,
                                     n_resamples=300).to_polars().row(0, named=True)
    assert row["seed_min_delta"] < 0
    assert row["verdict"] != "reliably better"


def test_one_replicate_per_system_cannot_be_tested() -> None:
    pq = replicate_values({"a": 0.0, "b": 0.1}, n_seeds=1)
    row = sef.compare_replicates(per_query=pq, baseline="a", replicate="seed").to_polars().row(
        0, named=True)
    assert row["verdict"] == "cannot be tested"
    assert row["flat_verdict"] == "reliably better"


def test_replicates_from_runs_and_qrels_and_pandas_out() -> None:
    rng = np.random.default_rng(2)
    qrels = pl.DataFrame([(f"q{q}", f"d{d}", int(d < 3)) for q in range(8) for d in range(10)],
                         schema=["query_id", "doc_id", "relevance"], orient="row")
    runs = pl.DataFrame([(s, str(r), f"q{q}", f"d{d}",
                          float(rng.uniform()) + (0.5 * (d < 3) if s == "b" else 0))
                         for s in ("a", "b") for r in range(3) for q in range(8)
                         for d in range(10)],
                        schema=["run", "seed", "query_id", "doc_id", "score"], orient="row")
    res = sef.compare_replicates(runs.to_pandas(), qrels.to_pandas(), ["P@3"], baseline="a",
                                 replicate="seed", method="bootstrap", n_resamples=300)
    assert isinstance(res.frame, pd.DataFrame)
    seed1 = runs.filter(pl.col("seed") == "1").drop("seed")
    ev = sef.evaluate(seed1, qrels, ["P@3"]).to_dict(as_series=False)
    reps = res.to_polars("replicates").filter(pl.col("replicate") == "1")
    assert sorted(reps["mean"].to_list()) == pytest.approx(sorted(ev["value"]))


def test_structured_errors_name_the_fix() -> None:
    pq = replicate_values({"a": 0.0, "b": 0.1})
    with pytest.raises(MissingColumnError, match="replicate='repeat'"):
        sef.compare_replicates(per_query=pq, baseline="a", replicate="repeat")
    with pytest.raises(InvalidOptionError, match="no such run"):
        sef.compare_replicates(per_query=pq, baseline="zzz", replicate="seed")
    with pytest.raises(InvalidOptionError, match="method"):
        sef.compare_replicates(per_query=pq, baseline="a", replicate="seed", method="lmm")
    from searcheval_frames.errors import UnknownOptionError

    with pytest.raises(UnknownOptionError, match="did you mean method"):
        sef.compare_replicates(per_query=pq, baseline="a", replicate="seed", methd="mixed")
    with pytest.raises(UnknownOptionError, match="did you mean aggregate"):
        sef.compare_datasets(per_query=dataset_values(5), baseline="bm25",
                             dataset="collection", agregate="borda")
    with pytest.raises(UnknownOptionError, match="did you mean factors"):
        sef.variance_components(per_query=pq, factor=["query", "system"])
    gappy = pq.filter(~((pl.col("run") == "b") & (pl.col("seed") == "1")
                        & (pl.col("query_id") == "q03")))
    with pytest.raises(IdMismatchError, match="missing"):
        sef.compare_replicates(per_query=gappy, baseline="a", replicate="seed",
                               missing="error")
    with pytest.warns(UserWarning, match="scores them 0"):
        sef.compare_replicates(per_query=gappy, baseline="a", replicate="seed",
                               method="bootstrap", n_resamples=100)


# --------------------------------------------------------------------------- datasets
def dataset_values(n_sets: int = 3, rng_seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(rng_seed)
    rows = []
    for d in range(n_sets):
        base = rng.uniform(0.2, 0.7, 15 + 5 * d)
        for s, lift in (("bm25", 0.0), ("dense", 0.08 * (d % 2)), ("tiny", 0.01)):
            rows += [{"run": s, "collection": f"set{d}", "query_id": f"q{q}",
                      "measure": "nDCG@10", "value": float(b + lift + rng.normal(0, 0.05))}
                     for q, b in enumerate(base)]
    return pl.DataFrame(rows)


def test_per_dataset_rows_are_t_tests_holm_over_datasets() -> None:
    from scipy import stats
    from statsmodels.stats.multitest import multipletests

    pq = dataset_values(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = sef.compare_datasets(per_query=pq, baseline="bm25", dataset="collection",
                                   n_resamples=300, mixed=False).to_polars()
    raw = []
    for r in res.iter_rows(named=True):
        sub = pq.filter(pl.col("collection") == r["collection"])
        x = sub.filter(pl.col("run") == r["run"]).sort("query_id")["value"].to_numpy()
        y = sub.filter(pl.col("run") == "bm25").sort("query_id")["value"].to_numpy()
        raw.append(stats.ttest_rel(x, y).pvalue)
    assert res["p_value"].to_list() == pytest.approx(raw, rel=1e-9)
    holm = multipletests(raw, method="holm")[1]
    assert res["p_adjusted"].to_list() == pytest.approx(list(holm), rel=1e-9)


def test_query_ids_repeat_across_datasets() -> None:
    qrels = pl.DataFrame({"ds": ["x", "y"], "query_id": ["q1", "q1"], "doc_id": ["d1", "d1"],
                          "relevance": [1, 0]})
    runs = pl.DataFrame({"ds": ["x", "y"], "query_id": ["q1", "q1"], "doc_id": ["d1", "d1"],
                         "score": [1.0, 1.0]})
    out = sef.evaluate_datasets(runs, qrels, ["P@1"], dataset="ds")
    assert out.select("ds", "value").rows() == [("x", 1.0), ("y", 0.0)]


def test_evaluate_datasets_equals_evaluate_per_dataset() -> None:
    rng = np.random.default_rng(8)
    qrels = pl.DataFrame([(ds, f"q{q}", f"d{d}", int(rng.integers(0, 3)))
                          for ds in ("a", "b") for q in range(6) for d in range(9)],
                         schema=["ds", "query_id", "doc_id", "relevance"], orient="row")
    runs = pl.DataFrame([(ds, s, f"q{q}", f"d{d}", float(rng.uniform()))
                         for ds in ("a", "b") for s in ("r1", "r2") for q in range(6)
                         for d in range(9)],
                        schema=["ds", "run", "query_id", "doc_id", "score"], orient="row")
    ours = sef.evaluate_datasets(runs, qrels, ["nDCG@5", "AP"], dataset="ds")
    for ds in ("a", "b"):
        ev = sef.evaluate(runs.filter(pl.col("ds") == ds).drop("ds"),
                          qrels.filter(pl.col("ds") == ds).drop("ds"), ["nDCG@5", "AP"])
        got = ours.filter(pl.col("ds") == ds).select("run", "measure", "value")
        assert got.sort("run", "measure").rows() == ev.sort("run", "measure").rows()


def test_dataset_aggregate_and_leaderboard() -> None:
    pq = dataset_values(6, rng_seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = sef.compare_datasets(per_query=pq, baseline="bm25", dataset="collection",
                                   aggregate="macro", n_resamples=400)
        lb = sef.leaderboard_datasets(per_query=pq, measure="nDCG@10", dataset="collection",
                                      aggregate="mean_rank", n_resamples=400)
    agg = res.to_polars("aggregate")
    means = pq.group_by("run", "collection").agg(pl.col("value").mean()).group_by("run").agg(
        pl.col("value").mean())
    for run, value in means.iter_rows():
        assert agg.filter(pl.col("run") == run)["value"][0] == pytest.approx(value, abs=1e-12)
    frame = lb.to_polars()
    assert frame["rank"].to_list() == [1, 2, 3]
    assert all(lo <= hi for lo, hi in zip(frame["rank_low"], frame["rank_high"], strict=True))
    assert res.to_polars("mixed")["run"].to_list() == ["dense", "tiny"]
    pairs = lb.to_polars("pairs")
    for r in pairs.iter_rows(named=True):  # a significant pair never shares a letter
        if r["significant"]:
            ga = frame.filter(pl.col("run") == r["run_a"])["group"][0]
            gb = frame.filter(pl.col("run") == r["run_b"])["group"][0]
            assert not set(ga) & set(gb)


def test_few_datasets_warn() -> None:
    with pytest.warns(UserWarning, match="only 2 datasets"):
        sef.compare_datasets(per_query=dataset_values(2), baseline="bm25",
                             dataset="collection", n_resamples=100, mixed=False)


def test_leaderboard_replicates_pairs_and_letters() -> None:
    pq = replicate_values({"a": 0.0, "b": 0.08, "c": 0.09, "d": 0.2}, rng_seed=9)
    lb = sef.leaderboard_replicates(per_query=pq, measure="nDCG@10", replicate="seed",
                                    method="bootstrap", n_resamples=500)
    pairs = lb.to_polars("pairs")
    assert pairs.height == 6
    # Holm over the six pairs: the structured p-values, adjusted as one family
    from statsmodels.stats.multitest import multipletests

    raw = pairs["p_value"].to_numpy()
    assert pairs["p_adjusted"].to_list() == pytest.approx(list(multipletests(raw, method="holm")[1]))
    frame = lb.to_polars()
    assert frame["run"].to_list()[0] == "d"
    groups = dict(frame.select("run", "group").iter_rows())
    for a, b, v in pairs.select("run", "baseline", "verdict").iter_rows():
        assert bool(set(groups[a]) & set(groups[b])) != v.startswith("reliably")


def test_figure_data_equal_the_results() -> None:
    from searcheval_frames.figures.structured import (
        DatasetForestDisplay,
        ReplicateStripDisplay,
        VarianceComponentsDisplay,
    )

    pq = replicate_values({"a": 0.0, "b": 0.05}, rng_seed=2)
    res = sef.compare_replicates(per_query=pq, baseline="a", replicate="seed",
                                 method="bootstrap", n_resamples=200)
    strip = ReplicateStripDisplay.from_comparison(res)
    seed_means = pq.group_by("run", "seed").agg(pl.col("value").mean()).sort("run", "seed")
    assert strip.frame.sort("run", "replicate")["mean"].to_list() == pytest.approx(
        seed_means["value"].to_list())
    ds = dataset_values(5)
    dc = sef.compare_datasets(per_query=ds, baseline="bm25", dataset="collection",
                              n_resamples=200, mixed=False)
    forest = DatasetForestDisplay.from_comparison(dc)
    assert forest.frame["delta"].to_list()[:-2] == dc.to_polars()["delta"].to_list()
    agg = dc.to_polars("aggregate").filter(pl.col("run") != "bm25")
    assert forest.frame["delta"].to_list()[-2:] == agg["delta"].to_list()
    vc = sef.variance_components(per_query=pq, factors=["query", "system", "seed"])
    bars = VarianceComponentsDisplay.from_components(vc)
    assert sum(bars.frame["share"]) == pytest.approx(1.0)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ax = forest.plot().ax_
    assert len(forest.points_) == forest.frame.height
    plt.close(ax.figure)
    ax = strip.plot().ax_
    assert len(strip.dots_) == 2 and len(strip.bars_) == 2
    plt.close(ax.figure)


def test_dataset_mixed_model_equals_statsmodels() -> None:
    from searcheval_frames.analysis.structured import reml as R

    pq = dataset_values(4, rng_seed=3)
    df = pq.to_pandas()
    df["qd"] = df["collection"] + ":" + df["query_id"]
    df["g"] = 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        direct = smf.mixedlm("value ~ C(run, Treatment(reference='bm25'))", df, groups="g",
                             re_formula="0", vc_formula={"d": "0 + C(collection)",
                                                         "qd": "0 + C(qd)"}).fit(reml=True)
        res = sef.compare_datasets(per_query=pq, baseline="bm25", dataset="collection",
                                   n_resamples=100).to_polars("mixed")
    y = df["value"].to_numpy()
    X = np.column_stack([np.ones(y.size), (df["run"] == "dense").to_numpy(float),
                         (df["run"] == "tiny").to_numpy(float)])
    codes = [pl.Series(df[c]).rank("dense").cast(pl.Int64).to_numpy() - 1
             for c in ("collection", "qd")]
    names = list(direct.model.exog_vc.names)
    vc = np.array([direct.vcomp[names.index(k)] for k in ("d", "qd")])
    assert R.criterion(y, X, codes, np.sqrt(vc / direct.scale)) == pytest.approx(
        -2 * direct.llf, abs=1e-6)
    for run in ("dense", "tiny"):
        key = f"C(run, Treatment(reference='bm25'))[T.{run}]"
        row = res.filter(pl.col("run") == run).row(0, named=True)
        assert row["delta"] == pytest.approx(direct.fe_params[key], abs=1e-6)
        assert row["se"] == pytest.approx(direct.bse_fe[key], rel=2e-3)
    row = res.row(0, named=True)
    assert row["var_query"] == pytest.approx(vc[1], rel=2e-3)
    assert row["var_residual"] == pytest.approx(direct.scale, rel=2e-3)


def test_replicate_means_equal_a_slow_loop_with_the_same_seed() -> None:
    from searcheval_frames.analysis.structured.bootstrap import replicate_means

    rng = np.random.default_rng(7)
    mats = [rng.uniform(size=(r, 11)) for r in (3, 1, 4)]
    fast = replicate_means(mats, 250, np.random.default_rng(3))
    g_q, *g_s = np.random.default_rng(3).spawn(4)
    q = g_q.integers(0, 11, (250, 11))
    draws = [g.integers(0, m.shape[0], (250, m.shape[0])) for g, m in zip(g_s, mats,
                                                                          strict=True)]
    slow = np.array([[m[d[b]][:, q[b]].mean() for m, d in zip(mats, draws, strict=True)]
                     for b in range(250)])
    np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12)
