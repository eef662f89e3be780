"""sef.stability (Kendall's τ to the full ranking, Voorhees-Buckley swap rates) against
scipy.stats.kendalltau, exhaustive enumeration of subsets and a hand-built swap case; the
power_curve / stability_curve figures rendered with Agg."""

from __future__ import annotations

import itertools
import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import polars as pl
import pytest
from matplotlib.collections import PathCollection, PolyCollection
from scipy import stats

import searcheval_frames as sef
from searcheval_frames.analysis.stability import Stability, kendall_tau_rows
from searcheval_frames.errors import InvalidOptionError, SearchEvalError


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def frame(matrix: np.ndarray, measure: str = "nDCG@10") -> pl.DataFrame:
    q, r = matrix.shape
    return pl.DataFrame({
        "run": [f"r{j}" for j in range(r) for _ in range(q)],
        "query_id": [f"q{i:03d}" for _ in range(r) for i in range(q)],
        "measure": measure,
        "value": matrix.T.ravel(),
    })


def random_matrix(q: int, r: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.uniform(0, 1, (q, 1)) * 0.5 + rng.normal(0, 0.15, (q, r)) + np.linspace(0, 0.1, r)


# --------------------------------------------------------------------------- Kendall's tau
def test_kendall_tau_rows_equals_scipy_on_random_rankings():
    rng = np.random.default_rng(1)
    for r in (2, 3, 7, 20):
        sub = rng.normal(size=(200, r))
        full = rng.normal(size=r)
        got = kendall_tau_rows(sub, full)
        want = [stats.kendalltau(row, full).statistic for row in sub]
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


def test_kendall_tau_rows_with_ties_is_tau_b():
    rng = np.random.default_rng(2)
    sub = rng.integers(0, 4, size=(300, 6)).astype(float)
    full = np.array([0.0, 1.0, 1.0, 2.0, 3.0, 3.0])
    got = kendall_tau_rows(sub, full)
    want = np.array([stats.kendalltau(row, full).statistic for row in sub])
    ok = ~np.isnan(want)  # a sample whose runs all tie: τ undefined in both
    np.testing.assert_allclose(got[ok], want[ok], rtol=1e-12)
    assert np.isnan(got[~ok]).all()


# --------------------------------------------------------------------------- stability
def test_full_size_gives_tau_one_and_columns():
    pq = frame(random_matrix(20, 4))
    summary, swaps = sef.stability(per_query=pq, sizes=[5, 20], n_samples=50)
    assert summary.columns == ["measure", "size", "n_samples", "n_queries", "n_runs",
                               "tau_mean", "tau_median", "tau_q05", "tau_q25", "tau_q75",
                               "tau_q95", "tau_min", "swap_rate"]
    last = summary.row(1, named=True)
    assert last["size"] == 20 and last["tau_mean"] == last["tau_min"] == 1.0
    assert last["swap_rate"] is None  # two disjoint subsets of 20 need 40 queries
    assert set(swaps["size"].to_list()) == {5}
    assert swaps["n_comparisons"].sum() == 50 * 6  # samples x run pairs


def exhaustive_tau(x: np.ndarray, s: int) -> float:
    full = x.mean(axis=0)
    taus = [stats.kendalltau(x[list(c)].mean(axis=0), full).statistic
            for c in itertools.combinations(range(x.shape[0]), s)]
    return float(np.mean(taus))


def test_mean_tau_agrees_with_exhaustive_enumeration():
    x = random_matrix(9, 4, seed=5)
    summary, _ = sef.stability(per_query=frame(x), sizes=[2, 3, 5], n_samples=4000, seed=7)
    for row in summary.iter_rows(named=True):
        exact = exhaustive_tau(x, row["size"])
        assert abs(row["tau_mean"] - exact) <= 4 / math.sqrt(4000), (row["size"], exact)


def test_swap_rate_hand_built():
    # two runs, differences b - a = +1, +1, -1, -1 over four queries. Disjoint subsets of
    # two: A = {q1, q2} or {q3, q4} (|Δ_A| = 1) always swap with B = the rest; the other
    # 4 of 6 choices have Δ_A = 0 (a tie, never a swap). Swap rate 1/3 overall.
    a = np.array([0.5, 0.5, 0.5, 0.5])
    x = np.column_stack([a, a + np.array([1.0, 1.0, -1.0, -1.0]) * 0.2])
    summary, swaps = sef.stability(per_query=frame(x), sizes=[2], n_samples=3000,
                                   bins=[0, 0.1, 0.5])
    rates = swaps.sort("bin")
    assert rates["delta_low"].to_list() == [0.0, 0.1]
    assert rates["delta_high"].to_list() == [0.1, math.inf]
    assert rates["swap_rate"].to_list() == [0.0, 1.0]
    assert rates["n_comparisons"].sum() == 3000
    assert abs(summary["swap_rate"][0] - 1 / 3) <= 4 * math.sqrt(2 / 9 / 3000)
    # on all queries the two runs tie: the ranking to compare with is undefined
    assert math.isnan(summary["tau_mean"][0]) and math.isnan(summary["tau_min"][0])


def test_swap_rate_agrees_with_exhaustive_enumeration():
    x = random_matrix(8, 3, seed=9)
    q, s = 8, 2
    swaps = comps = 0
    i, j = np.triu_indices(3, 1)
    for a_set in itertools.combinations(range(q), s):
        rest = [k for k in range(q) if k not in a_set]
        for b_set in itertools.combinations(rest, s):
            ma, mb = x[list(a_set)].mean(0), x[list(b_set)].mean(0)
            swaps += int(np.sum(np.sign(ma[i] - ma[j]) * np.sign(mb[i] - mb[j]) < 0))
            comps += len(i)
    exact = swaps / comps
    summary, _ = sef.stability(per_query=frame(x), sizes=[s], n_samples=5000, seed=3)
    assert abs(summary["swap_rate"][0] - exact) <= 4 * math.sqrt(exact * (1 - exact) / 5000)


def test_default_sizes_seed_and_kinds():
    pq = frame(random_matrix(38, 4))
    a, _ = sef.stability(per_query=pq, n_samples=100)
    sizes = a["size"].to_list()
    assert sizes == sorted(sizes) and sizes[-1] == 38 and len(sizes) == 10 and sizes[0] == 4
    b, _ = sef.stability(per_query=pq, n_samples=100)
    assert a.equals(b)
    c, _ = sef.stability(per_query=pq, n_samples=100, seed=1)
    assert not a.equals(c)
    summary, swaps = sef.stability(per_query=pq.to_pandas(), sizes=[5], n_samples=20)
    assert isinstance(summary, pd.DataFrame) and isinstance(swaps, pd.DataFrame)


def test_tau_grows_with_size_on_real_like_data():
    summary, _ = sef.stability(per_query=frame(random_matrix(60, 6, seed=4)),
                               sizes=[5, 15, 30, 50], n_samples=500)
    taus = summary["tau_mean"].to_list()
    assert taus == sorted(taus)
    rates = summary["swap_rate"].to_list()
    assert rates[0] > rates[2]


def test_quantile_columns_and_comparison_input():
    pq = frame(random_matrix(20, 3))
    summary, _ = sef.stability(per_query=pq, sizes=[6], n_samples=200,
                               quantiles=[0.025, 0.5, 0.975])
    assert {"tau_q2.5", "tau_q50", "tau_q97.5"} <= set(summary.columns)
    cmp = sef.compare(per_query=pq, baseline="r0")
    via_cmp, _ = sef.stability(per_query=cmp, sizes=[6], n_samples=200,
                               quantiles=[0.025, 0.5, 0.975])
    assert via_cmp.equals(summary)


@pytest.mark.parametrize(("option", "value"), [
    ("n_samples", 0), ("seed", -1), ("quantiles", [1.5]), ("bins", 0), ("bins", "ten"),
    ("sizes", 0), ("sizes", [3, 0.5]), ("missing", "fill"),
])
def test_stability_options(option, value):
    with pytest.raises(InvalidOptionError, match=rf"stability\({option}="):
        sef.stability(per_query=frame(random_matrix(10, 3)), **{option: value})


def test_stability_bad_input():
    pq = frame(random_matrix(10, 3))
    with pytest.raises(SearchEvalError, match=r"11 is more than the 10 queries"):
        sef.stability(per_query=pq, sizes=[5, 11])
    with pytest.raises(SearchEvalError, match="increasing"):
        sef.stability(per_query=pq, bins=[0.1, 0.05])
    with pytest.raises(SearchEvalError, match="at least two runs"):
        sef.stability(per_query=frame(random_matrix(10, 1)))
    with pytest.raises(SearchEvalError, match="at least 2"):
        sef.stability(per_query=frame(random_matrix(1, 3)))
    with pytest.raises(SearchEvalError, match="measure="):
        sef.stability(per_query=pq, measure="AP")


# --------------------------------------------------------------------------- figures
@pytest.fixture(scope="module")
def three_runs():
    return frame(random_matrix(30, 3, seed=12))


def test_power_curve_lines_markers_and_labels(three_runs):
    ax = sef.power_curve(per_query=three_runs, baseline="r0", n_points=25)
    labels = [line.get_label() for line in ax.lines]
    assert labels == ["r1 vs r0", "r2 vs r0", "now: 30 queries"]
    assert ax.get_yscale() == "log"
    assert "80% power" in ax.get_title() and "paired t-test" in ax.get_title()
    assert ax.get_xlabel() == "Δ nDCG@10 to detect (absolute)"
    points = [c for c in ax.collections if isinstance(c, PathCollection)]
    assert len(points) == 2
    pw = sef.power(per_query=three_runs, baseline="r0")
    for p, det in zip(points, pw["detectable_delta"].to_list(), strict=True):
        assert p.get_offsets()[0].tolist() == pytest.approx([det, 30])
    # the curves are the n_needed of sef.power, falling with Δ
    y = ax.lines[0].get_ydata()
    assert len(y) == 25 and np.all(np.diff(y) <= 0)
    assert ax.lines[2].get_ydata()[0] == 30


def test_power_curve_from_power_frame_and_given_ax(three_runs):
    data = sef.power(per_query=three_runs, delta=[0.02, 0.05, 0.1])
    _, ax0 = plt.subplots()
    ax = sef.power_curve(result=data, ax=ax0, title="", legend=False)
    assert ax is ax0 and ax.get_title() == "" and ax.get_legend() is None
    assert [line.get_label() for line in ax.lines][:3] == ["r1 vs r0", "r2 vs r0", "r2 vs r1"]
    assert len(ax.lines) == 4
    assert ax.lines[0].get_xdata().tolist() == [0.02, 0.05, 0.1]


def test_power_curve_errors(three_runs):
    two = pl.concat([three_runs, three_runs.with_columns(measure=pl.lit("AP"))])
    with pytest.raises(SearchEvalError, match="pass measure="):
        sef.power_curve(per_query=two)
    with pytest.raises(InvalidOptionError, match=r"power_curve\(n_points="):
        sef.power_curve(per_query=three_runs, n_points=1)
    with pytest.raises(InvalidOptionError, match=r"power_curve\(deltas="):
        sef.power_curve(per_query=three_runs, deltas=[0.1, -0.1])
    with pytest.raises(SearchEvalError, match="Axes"):
        sef.power_curve(per_query=three_runs, ax="left")


def test_stability_curve_lines_band_and_labels(three_runs):
    two = pl.concat([three_runs, three_runs.with_columns(measure=pl.lit("AP"),
                                                         value=pl.col("value") ** 2)])
    ax = sef.stability_curve(per_query=two, sizes=[3, 10, 20, 30], n_samples=200)
    assert [line.get_label() for line in ax.lines] == ["nDCG@10", "AP", "τ = 0.9"]
    bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(bands) == 2
    assert ax.lines[0].get_xdata().tolist() == [3, 10, 20, 30]
    assert ax.lines[0].get_ydata()[-1] == 1.0
    assert "5%–95% band" in ax.get_title() and "200" in ax.get_title()
    assert ax.get_ylim()[1] == pytest.approx(1.02)


def test_stability_curve_from_result_and_options(three_runs):
    res = sef.stability(per_query=three_runs, sizes=[5, 15], n_samples=100)
    assert isinstance(res, Stability)
    ax = sef.stability_curve(result=res, statistic="median", band=None, threshold=None)
    assert [line.get_label() for line in ax.lines] == ["nDCG@10"]
    assert not [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert ax.lines[0].get_ydata().tolist() == res.summary["tau_median"].to_list()
    ax = sef.stability_curve(result=res.summary.to_pandas(), band=(0.25, 0.75))
    assert len([c for c in ax.collections if isinstance(c, PolyCollection)]) == 1
    with pytest.raises(SearchEvalError, match="tau_q10"):
        sef.stability_curve(result=res, band=(0.1, 0.9))
    with pytest.raises(InvalidOptionError, match=r"stability_curve\(statistic="):
        sef.stability_curve(result=res, statistic="max")
    with pytest.raises(InvalidOptionError, match=r"stability_curve\(threshold="):
        sef.stability_curve(result=res, threshold=2)
    with pytest.raises(InvalidOptionError, match=r"stability_curve\(band="):
        sef.stability_curve(result=res, band=(0.1, 1.5))
    with pytest.raises(SearchEvalError, match="two quantiles"):
        sef.stability_curve(result=res, band=0.5)
    with pytest.raises(SearchEvalError, match="not in the data"):
        sef.stability_curve(result=res, measure="AP")


# --------------------------------------------------------------------------- issue 26
def test_tiny_query_sets_are_not_called_stable_or_discriminating():
    """Two queries: no p-value, no discriminative power, no τ (NaN with a warning)."""
    import math as _math
    import warnings as _w

    import polars as _pl

    import searcheval_frames as _sef

    pq = _pl.DataFrame({"run": ["a"] * 2 + ["b"] * 2 + ["c"] * 2, "query_id": ["1", "2"] * 3,
                        "measure": "P@1", "value": [0.0, 0.0, 1.0, 1.0, 0.0, 1.0]})
    with _w.catch_warnings(record=True) as caught:
        _w.simplefilter("always")
        summary, asl = _sef.discriminative_power(pq)
        st_summary, _swaps = _sef.stability(pq, sizes=[1, 2], n_samples=50)
    assert _math.isnan(summary["discriminative_power"][0])
    assert asl["p_value"].is_nan().all() and not asl["significant"].any()
    assert st_summary["tau_mean"].is_nan().all()
    text = " ".join(str(w.message) for w in caught)
    assert "too few queries" in text
    # an identical pair among enough queries: NaN for that pair ("all ties"), others tested
    pq2 = _pl.DataFrame({"run": ["a"] * 5 + ["b"] * 5 + ["c"] * 5,
                         "query_id": list("12345") * 3, "measure": "P@1",
                         "value": [.1, .2, .3, .4, .5] * 2 + [.6, .2, .9, .5, .8]})
    with _w.catch_warnings(record=True) as caught:
        _w.simplefilter("always")
        _s2, asl2 = _sef.discriminative_power(pq2)
    assert asl2.filter(_pl.col("p_value").is_nan()).height == 1
    assert any("all ties" in str(w.message) for w in caught)
