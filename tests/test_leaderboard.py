"""leaderboard(): two-way ANOVA, Tukey HSD, randomised Tukey HSD, rank intervals, letters.

Oracles: statsmodels ``anova_lm`` on ``value ~ C(run) + C(query)``; statsmodels
``pairwise_tukeyhsd`` for the studentized-range arithmetic on a one-way design; scipy's
``studentized_range``; a slow reference of randomised Tukey HSD written here (a Python
loop of per-query shuffles); a naive query bootstrap of the ranks.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import polars as pl
import pytest
from conftest import shared_path
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats as sps

import searcheval_frames as sef
from searcheval_frames.analysis import leaderboard_stats as ls

NEURAL = ["bm25-minilm-rerank", "openai-ada2", "repllama", "splade-pp-ed", "tasb"]
SYSTEMS = ["bm25", "bm25-rm3", *NEURAL]


def long(X: np.ndarray, names: list[str] | None = None, measure: str = "m") -> pl.DataFrame:
    n, k = X.shape
    names = names or [f"r{j}" for j in range(k)]
    return pl.DataFrame({
        "run": [names[j] for j in range(k) for _ in range(n)],
        "query_id": [f"q{i:04d}" for _ in range(k) for i in range(n)],
        "measure": measure,
        "value": X.T.ravel(),
    })


def random_matrix(seed: int, n: int = 40, k: int = 5, spread: float = 0.08) -> np.ndarray:
    rng = np.random.default_rng(seed)
    topic = rng.random((n, 1)) * 0.6
    effect = np.linspace(0, spread * k, k)[None, :]
    return np.clip(topic + effect + rng.normal(0, 0.12, (n, k)), 0, 1)


@pytest.fixture(scope="module")
def dl19():
    return _dl("dl19")


def _dl(year: str) -> pl.DataFrame:
    qrels = sef.read_qrels(shared_path("trec_dl_passage", f"qrels.{year}-passage.txt"))
    runs = pl.concat([
        pl.DataFrame(sef.read_run(shared_path("trec_dl_passage", "runs",
                                              f"run.{year}-passage.{s}.txt"))).with_columns(
            pl.lit(s).alias("run"))
        for s in SYSTEMS
    ], how="diagonal_relaxed")
    return pl.DataFrame(sef.evaluate(runs, qrels, ["nDCG@10", "AP"], per_query=True,
                                     relevance_level=2))


# --------------------------------------------------------------------------- ANOVA
def _anova_lm(X: np.ndarray):
    import statsmodels.api as sm
    from statsmodels.formula.api import ols

    df = long(X).to_pandas()
    return sm.stats.anova_lm(ols("value ~ C(run) + C(query_id)", data=df).fit())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_anova_matches_statsmodels_on_random_designs(seed):
    X = random_matrix(seed, n=25 + seed * 10, k=3 + seed)
    ours = ls.anova_two_way(X)
    ref = _anova_lm(X)
    assert ours["SS_system"] == pytest.approx(ref.loc["C(run)", "sum_sq"], rel=1e-9)
    assert ours["SS_topic"] == pytest.approx(ref.loc["C(query_id)", "sum_sq"], rel=1e-9)
    assert ours["SS_E"] == pytest.approx(ref.loc["Residual", "sum_sq"], rel=1e-9)
    assert ours["df_E"] == ref.loc["Residual", "df"]
    assert ours["V_E"] == pytest.approx(ref.loc["Residual", "mean_sq"], rel=1e-9)
    assert ours["F_system"] == pytest.approx(ref.loc["C(run)", "F"], rel=1e-9)
    assert ours["p_system"] == pytest.approx(ref.loc["C(run)", "PR(>F)"], rel=1e-6, abs=1e-300)
    assert ours["F_topic"] == pytest.approx(ref.loc["C(query_id)", "F"], rel=1e-9)


@pytest.mark.shared
def test_anova_and_tukey_on_trec_dl19_match_statsmodels_and_scipy(dl19):
    lb = sef.leaderboard(per_query=dl19, measure="nDCG@10", test="tukey_hsd", seed=0)
    names = lb.to_polars().get_column("run").to_list()
    wide = (dl19.filter(pl.col("measure") == "nDCG@10")
            .pivot(on="run", index="query_id", values="value").sort("query_id"))
    X = wide.select(names).to_numpy()
    ref = _anova_lm(X)
    an = lb._anova.row(0, named=True)
    assert an["V_E"] == pytest.approx(ref.loc["Residual", "mean_sq"], rel=1e-9)
    assert an["F_system"] == pytest.approx(ref.loc["C(run)", "F"], rel=1e-9)
    n, k = X.shape
    q = sps.studentized_range.ppf(0.95, k, (k - 1) * (n - 1))
    assert an["tukey_moe"] == pytest.approx(q * math.sqrt(ref.loc["Residual", "mean_sq"] / n))
    means = dict(zip(names, X.mean(axis=0), strict=True))
    for r in lb._pairs.iter_rows(named=True):
        d = means[r["run_a"]] - means[r["run_b"]]
        p = sps.studentized_range.sf(abs(d) / math.sqrt(an["V_E"] / n), k, (k - 1) * (n - 1))
        assert r["p_value"] == pytest.approx(p, rel=1e-6, abs=1e-12)
        assert r["ci_high"] - r["ci_low"] == pytest.approx(2 * an["tukey_moe"], rel=1e-6)
        assert r["effect_size"] == pytest.approx(d / math.sqrt(an["V_E"]))
    # the five neural systems are each reliably better than bm25 and bm25-rm3
    sig = {(r["run_a"], r["run_b"]) for r in lb._pairs.iter_rows(named=True) if r["significant"]}
    for s in NEURAL:
        assert (s, "bm25") in sig and (s, "bm25-rm3") in sig


def test_tukey_studentized_range_arithmetic_matches_pairwise_tukeyhsd_one_way():
    from statsmodels.stats.multicomp import pairwise_tukeyhsd

    X = random_matrix(7, n=30, k=4)
    n, k = X.shape
    mse = float(((X - X.mean(axis=0)) ** 2).sum() / (k * (n - 1)))  # one-way residual
    p, margin = ls.tukey_hsd(X, mse, confidence=0.95, df=k * (n - 1))
    long_df = long(X).to_pandas()
    res = pairwise_tukeyhsd(long_df["value"], long_df["run"], alpha=0.05)
    for row, pv, lo, hi in zip(res._results_table.data[1:], res.pvalues, res.confint[:, 0],
                               res.confint[:, 1], strict=True):
        i, j = int(row[0][1:]), int(row[1][1:])
        assert p[i, j] == pytest.approx(pv, abs=1e-6)
        assert hi - lo == pytest.approx(2 * margin, rel=1e-6)


# --------------------------------------------------------------------------- randomised
def slow_randomized_tukey(X: np.ndarray, B: int, seed: int) -> np.ndarray:
    """Independent reference: a Python loop, one np.random.permutation per query."""
    rng = np.random.default_rng(seed)
    n, k = X.shape
    m = X.mean(axis=0)
    obs = np.abs(m[:, None] - m[None, :])
    hits = np.zeros((k, k))
    for _ in range(B):
        Y = np.array([X[i, rng.permutation(k)] for i in range(n)])
        ym = Y.mean(axis=0)
        hits += (ym.max() - ym.min()) >= obs - 1e-12
    return (hits + 1) / (B + 1)


@pytest.mark.parametrize("engine", ["auto", "numpy"])
def test_randomized_tukey_agrees_with_slow_reference_within_monte_carlo_error(engine):
    X = random_matrix(3, n=20, k=4, spread=0.05)
    B = 3000
    ref = slow_randomized_tukey(X, B, seed=11)
    ranges = ls.range_null(X, B, np.random.default_rng(5), engine=engine)
    m = X.mean(axis=0)
    ours = ls.randomized_p(ranges, np.abs(m[:, None] - m[None, :]))
    for i, j in itertools.combinations(range(4), 2):
        p = ref[i, j]
        se = math.sqrt(2 * max(p * (1 - p), 1e-4) / B)  # two independent estimates
        assert abs(ours[i, j] - p) < 4.5 * se + 1e-3, (i, j, ours[i, j], p)


def test_randomized_tukey_numba_and_numpy_engines_give_the_same_distribution():
    X = random_matrix(4, n=50, k=6)
    a = ls.range_null(X, 4000, np.random.default_rng(1), engine="auto")
    b = ls.range_null(X, 4000, np.random.default_rng(2), engine="numpy")
    assert sps.ks_2samp(a, b).pvalue > 0.001
    assert np.quantile(a, 0.95) == pytest.approx(np.quantile(b, 0.95), rel=0.06)


def test_randomized_tukey_is_reproducible_with_a_seed():
    pq = long(random_matrix(1))
    a = sef.leaderboard(per_query=pq, measure="m", seed=3, n_resamples=500, progress=False)
    b = sef.leaderboard(per_query=pq, measure="m", seed=3, n_resamples=500, progress=False)
    assert a._pairs.equals(b._pairs) and a.to_polars().equals(b.to_polars())


# --------------------------------------------------------------------------- invariants
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n=st.integers(3, 30), k=st.integers(2, 6),
       test=st.sampled_from(["tukey_hsd", "randomized_tukey_hsd", "holm"]),
       spread=st.floats(0.0, 0.2))
def test_interval_excludes_zero_iff_p_below_alpha(seed, n, k, test, spread):
    X = np.round(random_matrix(seed, n=n, k=k, spread=spread), 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lb = sef.leaderboard(per_query=long(X), measure="m", test=test, seed=seed, n_resamples=300,
                             progress=False)
    if lb.reason is not None:
        assert lb._pairs.get_column("p_value").is_nan().all()
        return
    for r in lb._pairs.iter_rows(named=True):
        excludes = r["ci_low"] > 0 or r["ci_high"] < 0
        if abs(r["ci_low"]) < 1e-12 or abs(r["ci_high"]) < 1e-12:
            continue  # 0 on the interval's end: floating point decides
        assert excludes == (r["p_value"] <= 0.05), r
        assert r["significant"] == excludes


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(2, 7))
def test_letters_share_a_letter_exactly_when_not_significant(seed, k):
    rng = np.random.default_rng(seed)
    m = np.sort(rng.random(k))[::-1]
    sig = np.abs(m[:, None] - m[None, :]) > 0.25  # a "threshold" family, like Tukey's
    out = ls.letters(list(range(k)), sig)
    for i, j in itertools.combinations(range(k), 2):
        assert bool(set(out[i]) & set(out[j])) == (not sig[i, j])


# --------------------------------------------------------------------------- ranks
def test_rank_intervals_and_p_best_match_a_naive_bootstrap():
    X = random_matrix(9, n=40, k=5, spread=0.02)
    ours = ls.rank_bootstrap(X, 4000, np.random.default_rng(0))
    rng = np.random.default_rng(1)
    n, _k = X.shape
    ranks = []
    for _ in range(4000):
        mb = X[rng.integers(0, n, n)].mean(axis=0)
        ranks.append(sps.rankdata(-mb, method="ordinal"))
    ranks = np.array(ranks)
    lo = np.quantile(ranks, 0.025, axis=0, method="lower")
    hi = np.quantile(ranks, 0.975, axis=0, method="higher")
    assert np.abs(ours["rank_low"] - lo).max() <= 1 and np.abs(ours["rank_high"] - hi).max() <= 1
    assert np.abs(ours["p_best"] - (ranks == 1).mean(axis=0)).max() < 0.04


# --------------------------------------------------------------------------- degenerate
def test_too_few_queries_or_no_spread_cannot_be_tested():
    X = np.array([[0.0, 1.0, 0.5], [0.0, 1.0, 0.5]])
    with pytest.warns(UserWarning, match="too few queries"):
        lb = sef.leaderboard(per_query=long(X), measure="m", seed=0)
    assert lb.reason == "too few queries"
    assert lb._pairs.get_column("p_value").is_nan().all()
    assert (lb.to_polars().get_column("group") == "cannot be tested").all()
    assert "cannot be tested" in lb.headline("r0")
    Y = np.array([[0.1, 0.3], [0.4, 0.6], [0.2, 0.4], [0.5, 0.7]])  # constant difference
    with pytest.warns(UserWarning, match="no spread"):
        lb = sef.leaderboard(per_query=long(Y), measure="m", seed=0)
    assert lb._pairs.get_column("p_value").is_nan().all()
    assert not lb._pairs.get_column("significant").any()


def test_pandas_in_pandas_out_and_html():
    pq = long(random_matrix(2)).to_pandas()
    lb = sef.leaderboard(per_query=pq, measure="m", test="tukey_hsd", seed=0)
    assert isinstance(lb.frame, pd.DataFrame) and isinstance(lb.pairs, pd.DataFrame)
    assert list(lb.frame.columns) == ["run", "mean", "ci_low", "ci_high", "rank", "rank_low",
                                      "rank_high", "p_best", "group"]
    html = lb._repr_html_()
    assert "<table" in html and "Tukey HSD" in html
    assert lb.frame["p_best"].sum() == pytest.approx(1.0)


def test_headline_speaks_per_run():
    X = random_matrix(0, n=60, k=4, spread=0.0)
    X[:, 2] += 0.3
    X[:, 3] += 0.3
    lb = sef.leaderboard(per_query=long(X, ["bm25", "rm3", "splade", "tasb"], "nDCG@10"),
                         measure="nDCG@10", test="tukey_hsd", seed=0)
    text = lb.headline("bm25")
    assert text.startswith("2 of 3 runs reliably better than bm25 on nDCG@10")
    assert "splade and tasb tied" in text or "tasb and splade tied" in text


# --------------------------------------------------------------------------- figure
def test_leaderboard_plot_draws_sorted_runs_intervals_ranks_and_letters():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    X = random_matrix(0, n=60, k=4, spread=0.0)
    X[:, 2] += 0.3
    X[:, 3] += 0.25
    lb = sef.leaderboard(per_query=long(X, ["bm25", "rm3", "splade", "tasb"]), measure="m",
                         test="tukey_hsd", seed=0)
    data = sef.leaderboard_plot_data(lb)
    assert data.get_column("run").to_list() == lb.to_polars().get_column("run").to_list()
    fig, ax = plt.subplots()
    assert sef.leaderboard_plot(lb, ax=ax) is ax
    by_height = [t.get_text() for _, t in sorted(zip(ax.get_yticks(), ax.get_yticklabels(),
                                                      strict=True), key=lambda p: p[0])]
    assert by_height == data.sort("y").get_column("run").to_list()
    assert by_height[-1] == lb.to_polars().row(0, named=True)["run"]  # best run on top
    bars = [ln for ln in ax.get_lines() if len(ln.get_xdata()) == 2]
    assert len(bars) == 4  # one comparison interval per run
    for ln, row in zip(bars, lb.to_polars().iter_rows(named=True), strict=True):
        assert list(ln.get_xdata()) == pytest.approx([row["ci_low"], row["ci_high"]])
    texts = [t.get_text() for t in ax.texts]
    assert len(texts) == 4 and all(t.startswith("rank ") for t in texts)
    assert {t.split()[-1] for t in texts} == set(lb.to_polars().get_column("group"))
    plt.close(fig)
    with pytest.raises(sef.errors.SearchEvalError, match=r"sef\.leaderboard"):
        sef.leaderboard_plot(lb.to_polars())


@pytest.mark.parametrize("name", [
    "searcheval_frames.analysis.inference", "searcheval_frames.analysis.leaderboard",
    "searcheval_frames.analysis.leaderboard_stats", "searcheval_frames.figures.leaderboard",
])
def test_docstring_examples_of_the_issue_26_modules(name):
    import doctest
    import importlib

    import matplotlib

    matplotlib.use("Agg")
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


def test_leaderboard_plot_of_an_untestable_board_shows_no_group_colour_or_bars():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    X = np.array([[0.0, 1.0, 0.5], [0.0, 1.0, 0.5]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lb = sef.leaderboard(per_query=long(X), measure="m", seed=0)
    fig, ax = plt.subplots()
    sef.leaderboard_plot(lb, ax=ax)
    assert not [ln for ln in ax.get_lines() if len(ln.get_xdata()) == 2]  # no intervals
    assert {ln.get_color() for ln in ax.get_lines()} == {"#999999"}
    assert all("cannot be tested" in t.get_text() for t in ax.texts)
    plt.close(fig)
