"""sef.power: hand-computed cases, statsmodels' TTestPower as oracle, simulation checks
that the reported power is achieved, vectorised tests equal to paired_test, options and
bad input; sef.discriminative_power against compare() and a naive bootstrap."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import polars as pl
import pytest
from scipy import stats

import searcheval_frames as sef
from searcheval_frames.analysis.paired import pooled_sd, row_pvalues
from searcheval_frames.analysis.power import _detectable, _n_needed, t_power
from searcheval_frames.analysis.stability import bootstrap_asl
from searcheval_frames.analysis.stats import paired_test
from searcheval_frames.errors import InvalidOptionError, SearchEvalError, SearchEvalWarning


def frame(values: dict[str, list[float]], measure: str = "nDCG@10") -> pl.DataFrame:
    n = len(next(iter(values.values())))
    return pl.DataFrame({
        "run": [r for r in values for _ in range(n)],
        "query_id": [f"q{i:03d}" for _ in values for i in range(n)],
        "measure": measure,
        "value": [v for vs in values.values() for v in vs],
    })


def normal_runs(n: int, delta: float, sd: float, seed: int = 0, runs: int = 2) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.2, 0.6, n)
    vals = {"base": base.tolist()}
    for k in range(1, runs):
        vals[f"sys{k}"] = (base + rng.normal(delta * k, sd, n)).tolist()
    return frame(vals)


@pytest.fixture(scope="module")
def small():
    # differences b - a = [0.2, 0.0, 0.4, 0.2]: mean 0.2, sd sqrt(0.08 / 3)
    return frame({"a": [0.2, 0.4, 0.4, 0.6], "b": [0.4, 0.4, 0.8, 0.8]}, "P@5")


# --------------------------------------------------------------------------- hand-computed
def test_observed_delta_sd_and_columns(small):
    out = sef.power(per_query=small, baseline="a", delta=0.1)
    row = out.row(0, named=True)
    assert list(out.columns) == [
        "run", "baseline", "measure", "test", "method", "alpha", "target_power", "n_observed",
        "observed_delta", "sd", "n_queries", "detectable_delta", "delta", "achieved_power",
        "n_needed"]
    assert (row["run"], row["baseline"], row["measure"]) == ("b", "a", "P@5")
    assert row["observed_delta"] == pytest.approx(0.2)
    assert row["sd"] == pytest.approx(math.sqrt(0.08 / 3))
    assert row["n_observed"] == row["n_queries"] == 4
    # power at n = 4 for Δ = 0.1 is the noncentral t with 3 df, λ = 2 · 0.1 / sd
    lam = 2 * 0.1 / math.sqrt(0.08 / 3)
    crit = stats.t.ppf(0.975, 3)
    assert row["achieved_power"] == pytest.approx(
        stats.nct.sf(crit, 3, lam) + stats.nct.cdf(-crit, 3, lam), rel=1e-12)


def test_zero_delta_has_power_alpha_and_no_n(small):
    row = sef.power(per_query=small, baseline="a", delta=0.0, alpha=0.1).row(0, named=True)
    assert row["achieved_power"] == pytest.approx(0.1, abs=1e-12)
    assert row["n_needed"] is None


def test_n_needed_is_the_smallest_n_reaching_the_target():
    for e in (0.05, 0.2, 0.5, 1.0, 3.0, 8.0):
        n = int(_n_needed(np.array([e]), 0.05, 0.8, "two-sided")[0])
        assert t_power(e, n, 0.05) >= 0.8
        assert n == 2 or t_power(e, n - 1, 0.05) < 0.8
        # Nagata's closed form (Sakai 2016) is within a couple of queries
        z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
        approx = (z / e) ** 2 + stats.norm.ppf(0.975) ** 2 / 2
        if n > 5:
            assert abs(n - approx) <= 2


def test_n_needed_monotone_in_delta_and_detectable_monotone_in_n():
    need = _n_needed(np.linspace(0.02, 6, 300), 0.05, 0.8, "two-sided")
    assert np.all(np.diff(need) <= 0)
    det = _detectable(np.arange(2, 400, dtype=float), 0.05, 0.8, "two-sided")
    assert np.all(np.diff(det) < 0)


def test_pooled_sd_hand_computed():
    x = np.array([[0.1, 0.3, 0.2], [0.4, 0.4, 0.7], [0.3, 0.8, 0.4]])
    resid = x - x.mean(1, keepdims=True) - x.mean(0, keepdims=True) + x.mean()
    v_e = (resid**2).sum() / (2 * 2)
    assert pooled_sd(x) == pytest.approx(math.sqrt(2 * v_e))
    # two runs: 2 V_E is exactly the variance of the differences
    two = x[:, :2]
    assert pooled_sd(two) == pytest.approx(np.std(two[:, 0] - two[:, 1], ddof=1))


def test_sd_pooled_and_planned():
    pq = normal_runs(30, 0.03, 0.1, runs=3)
    pooled = sef.power(per_query=pq, baseline="base", sd="pooled")
    wide = pq.pivot(on="run", index="query_id", values="value").select("base", "sys1", "sys2")
    assert pooled["sd"].to_list() == pytest.approx([pooled_sd(wide.to_numpy())] * 2)
    planned = sef.power(per_query=pq, baseline="base", sd=0.25, delta=0.05)
    assert planned["sd"].to_list() == [0.25, 0.25]
    n = int(_n_needed(np.array([0.05 / 0.25]), 0.05, 0.8, "two-sided")[0])
    assert planned["n_needed"].to_list() == [n, n]


def test_one_sided():
    pq = normal_runs(40, -0.05, 0.1)
    less = sef.power(per_query=pq, alternative="less").row(0, named=True)
    greater = sef.power(per_query=pq, alternative="greater").row(0, named=True)
    assert less["observed_delta"] < 0
    assert less["detectable_delta"] < 0 < greater["detectable_delta"]
    assert less["detectable_delta"] == pytest.approx(-greater["detectable_delta"])
    assert less["n_needed"] is not None and greater["n_needed"] is None
    assert greater["achieved_power"] < 0.05


def test_n_queries_and_delta_lists():
    pq = normal_runs(25, 0.04, 0.1)
    out = sef.power(per_query=pq, delta=[0.02, 0.05], n_queries=[10, 50, 200])
    assert out.height == 6
    det = out.unique("n_queries").sort("n_queries")["detectable_delta"].to_list()
    assert det[0] > det[1] > det[2]
    for row in out.iter_rows(named=True):
        assert row["achieved_power"] == pytest.approx(
            float(t_power(row["delta"] / row["sd"], row["n_queries"], 0.05)))
    by_delta = out.unique("delta").sort("delta")["n_needed"].to_list()
    assert by_delta[0] > by_delta[1]


# --------------------------------------------------------------------------- statsmodels
def quad_power(effect: float, n: int, alpha: float, alternative: str) -> float:
    """Independent oracle: P(t' >= c) = E_V[P(Z >= c sqrt(V/df) - λ)], V ~ χ²(df),
    integrated over the quantiles u of V (v = F⁻¹(u), so the integrand is smooth)."""
    from scipy.integrate import quad

    df, lam = n - 1, effect * math.sqrt(n)
    level = alpha / 2 if alternative == "two-sided" else alpha
    c = stats.t.ppf(1 - level, df)

    def upper(nc: float) -> float:
        return quad(lambda u: stats.norm.sf(c * math.sqrt(stats.chi2.ppf(u, df) / df) - nc),
                    0, 1, epsabs=1e-13, epsrel=1e-10, limit=400)[0]

    if alternative == "greater":
        return upper(lam)
    if alternative == "less":
        return upper(-lam)
    return upper(lam) + upper(-lam)


def test_t_power_against_numerical_integration():
    for effect, n, alpha, alt in [(0.3, 10, 0.05, "two-sided"), (0.7, 100, 0.01, "two-sided"),
                                  (1.5, 30, 0.05, "greater"), (-0.4, 12, 0.1, "less"),
                                  (3.4, 6, 0.05, "two-sided"), (0.05, 500, 0.05, "two-sided")]:
        assert float(t_power(effect, n, alpha, alt)) == pytest.approx(
            quad_power(effect, n, alpha, alt), rel=1e-8, abs=1e-12)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_agrees_with_statsmodels_ttestpower(alternative):
    smp = pytest.importorskip("statsmodels.stats.power")
    tp = smp.TTestPower()
    sm_alt = {"two-sided": "two-sided", "greater": "larger", "less": "smaller"}[alternative]
    sign = -1.0 if alternative == "less" else 1.0
    checked = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for alpha in (0.01, 0.05, 0.1):
            for target in (0.5, 0.8, 0.9):
                for effect in (0.1, 0.2, 0.35, 0.5, 0.8, 1.2):
                    n_sm = tp.solve_power(effect_size=sign * effect, alpha=alpha, power=target,
                                          alternative=sm_alt)
                    ours = int(_n_needed(np.array([sign * effect]), alpha, target,
                                         alternative)[0])
                    assert ours == math.ceil(n_sm - 1e-9), (alpha, target, effect)
                    checked += 1
                for n in (5, 10, 38, 100):
                    e_sm = tp.solve_power(nobs=n, alpha=alpha, power=target,
                                          alternative=sm_alt)
                    ours_e = float(_detectable(np.array([float(n)]), alpha, target,
                                               alternative)[0])
                    assert ours_e == pytest.approx(abs(e_sm), rel=2e-5)
                    # statsmodels' root finder stops early; ours hits the target exactly
                    assert float(t_power(sign * ours_e, n, alpha, alternative)) == \
                        pytest.approx(target, abs=1e-9)
                    for effect in (0.0, 0.1, 0.3, 0.7):
                        p_sm = tp.power(effect_size=sign * effect, nobs=n, alpha=alpha,
                                        alternative=sm_alt)
                        if math.isnan(p_sm):  # scipy's nct fails deep in a tail: integrate
                            p_sm = quad_power(sign * effect, n, alpha, alternative)
                        assert float(t_power(sign * effect, n, alpha, alternative)) == \
                            pytest.approx(p_sm, rel=1e-10, abs=1e-12)
                        checked += 1
    assert checked == 3 * 3 * (6 + 4 * 4)


def test_power_frame_agrees_with_statsmodels_end_to_end():
    smp = pytest.importorskip("statsmodels.stats.power")
    pq = normal_runs(38, 0.03, 0.08, seed=3, runs=4)
    out = sef.power(per_query=pq, baseline="base", delta=0.02)
    for row in out.iter_rows(named=True):
        e = 0.02 / row["sd"]
        n_sm = smp.TTestPower().solve_power(effect_size=e, alpha=0.05, power=0.8)
        assert row["n_needed"] == math.ceil(n_sm - 1e-9)
        assert row["achieved_power"] == pytest.approx(
            smp.TTestPower().power(effect_size=e, nobs=38, alpha=0.05), rel=1e-10)
        e_sm = smp.TTestPower().solve_power(nobs=38, alpha=0.05, power=0.8)
        assert row["detectable_delta"] == pytest.approx(e_sm * row["sd"], rel=2e-5)


# --------------------------------------------------------------------------- simulation
@pytest.mark.parametrize(("delta", "sd", "alpha", "target"),
                         [(0.03, 0.1, 0.05, 0.8), (0.1, 0.15, 0.01, 0.9), (0.02, 0.05, 0.05, 0.5)])
def test_reported_power_is_achieved(delta, sd, alpha, target):
    """2,000 simulated query sets of normal differences with the reported n."""
    pq = normal_runs(60, delta, sd, seed=11)
    row = sef.power(per_query=pq, delta=delta, alpha=alpha, power=target).row(0, named=True)
    n = row["n_needed"]
    at_n = sef.power(per_query=pq, delta=delta, alpha=alpha, power=target,
                     n_queries=n).row(0, named=True)["achieved_power"]
    assert at_n >= target
    rng = np.random.default_rng(42)
    d = rng.normal(delta, row["sd"], size=(2000, n))
    rejected = np.mean(stats.ttest_1samp(d, 0.0, axis=1).pvalue <= alpha)
    assert abs(rejected - at_n) <= 0.03, (rejected, at_n, n)


def test_simulation_t_agrees_with_analytic_on_normal_differences():
    pq = normal_runs(400, 0.02, 0.1, seed=5)
    kw = dict(delta=0.02, n_queries=60, seed=1)
    ana = sef.power(per_query=pq, **kw).row(0, named=True)
    sim = sef.power(per_query=pq, method="simulation", n_sim=2000, **kw).row(0, named=True)
    assert sim["method"] == "simulation"
    assert abs(sim["achieved_power"] - ana["achieved_power"]) <= 0.03
    assert sim["detectable_delta"] == pytest.approx(ana["detectable_delta"], rel=0.08)
    assert abs(sim["n_needed"] - ana["n_needed"]) <= 0.1 * ana["n_needed"]


@pytest.mark.parametrize("test", ["wilcoxon", "permutation", "sign"])
def test_simulation_other_tests(test):
    pq = normal_runs(50, 0.04, 0.1, seed=8)
    kw = dict(method="simulation", test=test, n_sim=500, n_resamples=200, seed=3)
    a = sef.power(per_query=pq, **kw)
    assert a.equals(sef.power(per_query=pq, **kw))  # reproducible with a seed
    row = a.row(0, named=True)
    assert row["test"] == test and 0 <= row["achieved_power"] <= 1
    assert row["n_needed"] is not None and row["n_needed"] >= 2
    # on normal differences the queries needed scale with 1 / (asymptotic relative
    # efficiency vs the t-test): Wilcoxon 3/π, sign 2/π, randomization 1
    are = {"wilcoxon": 3 / math.pi, "sign": 2 / math.pi, "permutation": 1.0}[test]
    ratio = row["n_needed"] / sef.power(per_query=pq).row(0, named=True)["n_needed"]
    assert 0.7 / are <= ratio <= 1.5 / are


def test_simulation_keeps_tied_queries_tied():
    # many exact ties (the same top documents): the Wilcoxon power must not jump at the
    # observed delta (it did when the ties were shifted to tiny non-zero differences)
    rng = np.random.default_rng(4)
    d = np.concatenate([np.zeros(15), rng.normal(0.06, 0.08, 25)])
    base = rng.uniform(0.2, 0.6, 40)
    pq = frame({"a": base.tolist(), "b": (base + d).tolist()})
    obs = float(d.mean())
    p = sef.power(per_query=pq, delta=[obs * 0.98, obs, obs * 1.02], method="simulation",
                  test="wilcoxon", n_sim=1000)["achieved_power"].to_list()
    assert p[0] <= p[1] + 0.02 and p[1] <= p[2] + 0.02


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("test", ["t", "wilcoxon", "sign"])
def test_row_pvalues_equal_paired_test(test, alternative):
    rng = np.random.default_rng(7)
    d = np.round(rng.normal(0.05, 0.2, (120, 15)), 1)  # ties and zeros
    d[0] = 0.0
    got = row_pvalues(d, test, alternative)
    want = [paired_test(row, np.zeros(15), test, alternative=alternative) for row in d]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


def test_row_pvalues_permutation_close_to_paired_test():
    # 14 queries: paired_test enumerates all 2**14 sign patterns (exact p-value); ours is
    # Monte Carlo with B flips, so it must be within a few standard errors of it
    rng = np.random.default_rng(9)
    d = rng.normal(0.05, 0.2, (15, 14))
    b = 20_000
    got = row_pvalues(d, "permutation", n_resamples=b, rng=np.random.default_rng(1))
    exact = np.array([paired_test(row, np.zeros(14), "permutation", n_resamples=b)
                      for row in d])
    q = np.clip(exact / 2, 1e-4, 0.5)
    se = 2 * np.sqrt(q * (1 - q) / b)
    assert np.all(np.abs(got - exact) <= 4.5 * se + 1e-4)


# --------------------------------------------------------------------------- inputs
def test_comparison_input_pandas_output_and_all_pairs():
    pq = normal_runs(30, 0.03, 0.1, runs=3)
    cmp = sef.compare(per_query=pq, baseline="base")
    a = sef.power(per_query=cmp)
    b = sef.power(per_query=pq, baseline="base")
    assert a.select("run", "baseline", "n_needed").equals(b.select("run", "baseline", "n_needed"))
    out = sef.power(per_query=pq.to_pandas())
    assert isinstance(out, pd.DataFrame)
    assert list(zip(out["run"], out["baseline"], strict=True)) == [
        ("sys1", "base"), ("sys2", "base"), ("sys2", "sys1")]


def test_measure_selection_and_canonical_names():
    pq = pl.concat([normal_runs(20, 0.03, 0.1), normal_runs(20, 0.03, 0.1).with_columns(
        measure=pl.lit("AP"))])
    assert sef.power(per_query=pq)["measure"].to_list() == ["nDCG@10", "AP"]
    assert sef.power(per_query=pq, measure="ndcg_cut_10")["measure"].to_list() == ["nDCG@10"]


def test_zero_spread_warns_and_gives_nan():
    pq = frame({"a": [0.1, 0.2, 0.3], "b": [0.2, 0.3, 0.4]})
    with pytest.warns(SearchEvalWarning, match="no spread"):
        row = sef.power(per_query=pq).row(0, named=True)
    assert math.isnan(row["sd"]) and math.isnan(row["achieved_power"])
    assert row["n_needed"] is None


def test_bad_input_messages():
    one = frame({"a": [0.1, 0.2, 0.3]})
    with pytest.raises(SearchEvalError, match=r"at least two runs.*only"):
        sef.power(per_query=one)
    tiny = frame({"a": [0.1], "b": [0.2]})
    with pytest.raises(SearchEvalError, match="at least 2"):
        sef.power(per_query=tiny)
    pq = normal_runs(10, 0.03, 0.1)
    with pytest.raises(SearchEvalError, match=r"'P@7'.*measures are"):
        sef.power(per_query=pq, measure="P@7")
    with pytest.raises(SearchEvalError, match=r"baseline='bm25'.*runs are.*baseline=None"):
        sef.power(per_query=pq, baseline="bm25")
    with pytest.raises(SearchEvalError, match="method='simulation'"):
        sef.power(per_query=pq, test="wilcoxon")
    with pytest.raises(SearchEvalError, match="no runs given; pass runs, qrels"):
        sef.power(per_query=None)


@pytest.mark.parametrize(("option", "value"), [
    ("alpha", 0), ("alpha", 1), ("alpha", "0.05"), ("power", 0.05), ("power", 1.0),
    ("power", 0.01), ("test", "z"), ("method", "exact"), ("alternative", "both"),
    ("sd", "mean"), ("sd", -0.1), ("sd", 0), ("delta", "big"), ("delta", []),
    ("delta", float("nan")), ("n_queries", 1), ("n_queries", [10, 1]), ("n_queries", 2.5),
    ("n_sim", 10), ("n_resamples", 1), ("seed", -1), ("seed", 1.5), ("missing", "drop"),
])
def test_power_options(option, value):
    pq = normal_runs(10, 0.03, 0.1)
    with pytest.raises(InvalidOptionError, match=rf"power\({option}="):
        sef.power(per_query=pq, **{option: value})


# --------------------------------------------------------------------------- discriminative power
def test_discriminative_power_matches_compare_pvalues():
    pq = normal_runs(30, 0.03, 0.1, runs=4)
    for test in ("t", "wilcoxon", "randomization"):
        summary, asl = sef.discriminative_power(per_query=pq, test=test, n_resamples=2000)
        cmp = sef.compare(per_query=pq, pairs="all", correction="none", test=test,
                          n_resamples=2000)
        ref = cmp.to_polars().select("run", "baseline", pl.col("p_value").alias("ref"))
        joined = asl.join(ref, on=["run", "baseline"])
        assert joined.height == asl.height == 6
        np.testing.assert_allclose(joined["p_value"], joined["ref"], rtol=1e-12)
        assert asl["rank"].to_list() == [1, 2, 3, 4, 5, 6]
        assert asl["p_value"].is_sorted()
        n_sig = int((asl["p_value"] <= 0.05).sum())
        assert summary.row(0, named=True)["n_significant"] == n_sig
        assert summary["discriminative_power"][0] == pytest.approx(n_sig / 6)


def test_discriminative_power_hand_case():
    # b - a: all +0.2 but one (t-test significant), c - a and c - b: no systematic change
    pq = frame({"a": [0.2, 0.4, 0.4, 0.6, 0.3, 0.5], "b": [0.4, 0.6, 0.6, 0.8, 0.5, 0.6],
                "c": [0.4, 0.2, 0.6, 0.4, 0.5, 0.3]})
    summary, asl = sef.discriminative_power(per_query=pq)
    assert summary.select("n_runs", "n_queries", "n_pairs", "n_significant").row(0) == (
        3, 6, 3, 1)
    assert asl.row(0, named=True)["run"] == "b" and asl.row(0, named=True)["baseline"] == "a"
    assert asl["significant"].to_list() == [True, False, False]


def test_bootstrap_asl_equals_naive_loop():
    rng = np.random.default_rng(5)
    d = rng.normal(0.03, 0.1, (4, 20))
    d[3] = 0.0
    idx = rng.integers(0, 20, size=(3000, 20))
    naive = []
    for row in d:
        if not row.any():
            naive.append(1.0)
            continue
        t_obs = abs(row.mean() / (row.std(ddof=1) / math.sqrt(20)))
        w = row - row.mean()
        star = w[idx]
        t = np.abs(star.mean(1) / (star.std(1, ddof=1) / math.sqrt(20)))
        naive.append(float(np.mean(t >= t_obs)))
    np.testing.assert_allclose(bootstrap_asl(d, idx), naive, atol=1e-12)
    # and it is close to the t-test's p-value on normal data
    p_t = [stats.ttest_1samp(row, 0).pvalue for row in d[:3]]
    np.testing.assert_allclose(bootstrap_asl(d[:3], idx), p_t, atol=0.03)


def test_discriminative_power_bootstrap_and_comparison_input():
    pq = normal_runs(25, 0.04, 0.1, runs=3)
    s1, a1 = sef.discriminative_power(per_query=pq, test="bootstrap", n_resamples=1000, seed=4)
    s2, _ = sef.discriminative_power(per_query=sef.compare(per_query=pq, baseline="sys1"),
                                     test="bootstrap", n_resamples=1000, seed=4)
    assert s1.equals(s2)
    assert a1.height == 3 and s1["test"][0] == "bootstrap"
    s3, a3 = sef.discriminative_power(per_query=pq.to_pandas())
    assert isinstance(s3, pd.DataFrame) and isinstance(a3, pd.DataFrame)


@pytest.mark.parametrize(("option", "value"), [
    ("test", "bayes"), ("alpha", 1.5), ("n_resamples", 10), ("seed", -2), ("missing", "x"),
])
def test_discriminative_power_options(option, value):
    pq = normal_runs(10, 0.03, 0.1, runs=3)
    with pytest.raises(InvalidOptionError, match=rf"discriminative_power\({option}="):
        sef.discriminative_power(per_query=pq, **{option: value})


def test_discriminative_power_bad_input():
    with pytest.raises(SearchEvalError, match="at least two runs"):
        sef.discriminative_power(per_query=frame({"a": [0.1, 0.2]}))
    with pytest.raises(SearchEvalError, match="measure="):
        sef.discriminative_power(per_query=normal_runs(5, 0.1, 0.1), measures="XYZ")


@pytest.mark.parametrize("name", ["searcheval_frames.analysis.power",
                                  "searcheval_frames.analysis.paired",
                                  "searcheval_frames.analysis.stability",
                                  "searcheval_frames.figures.power_plots"])
def test_docstring_examples(name):
    import doctest
    import importlib

    import matplotlib

    matplotlib.use("Agg")
    result = doctest.testmod(importlib.import_module(name),
                             optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.shared
def test_trec_dl_runs_against_statsmodels_and_compare():
    from conftest import shared_path
    from trec_files import read_trec_qrels, read_trec_run

    smp = pytest.importorskip("statsmodels.stats.power")
    d = shared_path("trec_dl_passage")
    names = ["bm25", "bm25-rm3", "splade-pp-ed", "tasb", "openai-ada2", "repllama",
             "bm25-minilm-rerank"]
    qrels = read_trec_qrels(d / "qrels.dl19-passage.txt")
    run = pl.concat([read_trec_run(d / "runs" / f"run.dl19-passage.{n}.txt")
                     .with_columns(pl.lit(n).alias("run")) for n in names])
    pq = sef.evaluate(run, qrels, ["nDCG@10"], per_query=True)
    out = sef.power(per_query=pq, baseline="bm25", delta=0.02)
    assert out.height == 6 and set(out["n_observed"]) == {43}
    for row in out.iter_rows(named=True):
        e = 0.02 / row["sd"]
        assert row["n_needed"] == math.ceil(
            smp.TTestPower().solve_power(effect_size=e, alpha=0.05, power=0.8) - 1e-9)
    summary, asl = sef.discriminative_power(per_query=pq)
    assert summary["n_pairs"][0] == 21
    ref = sef.compare(per_query=pq, pairs="all", correction="none").to_polars()
    joined = asl.join(ref.select("run", "baseline", pl.col("p_value").alias("ref")),
                      on=["run", "baseline"])
    assert joined.height == 21
    np.testing.assert_allclose(joined["p_value"], joined["ref"], rtol=1e-12)


def test_readme_power_sentence_is_sef_power_on_the_bundled_set():
    """Issue #26: README, report and sef.power say the same thing, naming the quantity."""
    import glob

    import polars as _pl
    from conftest import REPO as root

    from searcheval_frames.analysis.power import power_sentence
    runs = sef.read_run(sorted(glob.glob(str(root / "data" / "example" / "runs" / "*.run"))))
    qrels = sef.read_qrels(root / "data" / "example" / "qrels.txt")
    pq = _pl.DataFrame(sef.evaluate(runs, qrels, ["nDCG@10"], per_query=True)).filter(
        _pl.col("run").is_in(["bm25", "bm25-rerank"]))
    row = sef.power(per_query=pq, baseline="bm25", measure="nDCG@10").row(0, named=True)
    assert power_sentence(row) in (root / "README.md").read_text()
