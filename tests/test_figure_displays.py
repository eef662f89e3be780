"""The figures' Displays (issue #19): data first (``from_*``), drawing apart (``plot``).

Each test reads what was drawn back from the artists the Display kept and checks it
against the Display's frame, and that frame against the function that computes the
numbers (``sef.compare``, ``sef.evaluate``, ``sef.pr_curve_data``, ``sef.power`` ...).
The public functions are thin wrappers: they must draw the same thing. The last tests
hold the house bounds for ``figures/`` (function length, private names, error classes).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import make_baseline_images as baseline
import matplotlib.pyplot as plt
import numpy as np
import polars as pl
import pytest
from conftest import REPO

import searcheval_frames as sef
from searcheval_frames.errors import InvalidOptionError, MissingColumnError
from searcheval_frames.figures.style import delta_label

FIGURES = REPO / "searcheval_frames" / "figures"


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def synth():
    return baseline.synthetic()


@pytest.fixture(scope="module")
def per_query(synth):
    run, qrels = synth
    return sef.evaluate(run, qrels, ["nDCG@10", "AP"], per_query=True)


def _same_frame(a: pl.DataFrame, b: pl.DataFrame) -> None:
    """Equal up to float rounding (polars sums in parallel: the last bit may differ)."""
    assert a.columns == b.columns and a.height == b.height
    for c in a.columns:
        if a.schema[c].is_float():
            assert np.allclose(a[c], b[c], rtol=0, atol=1e-12), c
        else:
            assert a[c].equals(b[c]), c


def _heights(container, horizontal: bool) -> list[float]:
    return [b.get_width() if horizontal else b.get_height() for b in container]


# --------------------------------------------------------------------------- bars
@pytest.mark.parametrize("orientation", ["vertical", "horizontal"])
def test_bars_from_comparison_draw_the_deltas_compare_computed(per_query, orientation):
    pytest.importorskip("scipy")
    cmp = sef.compare(per_query=per_query, baseline="bm25")
    d = sef.BenchmarkBarsDisplay.from_comparison(cmp).plot(orientation=orientation)
    horizontal = orientation == "horizontal"
    assert d.runs[0] == "bm25" and d.ax_ is d.figure_.axes[0]
    # one BarContainer per run; its bar lengths are the frame's values, run by run
    assert [c.get_label() for c in d.bars_] == d.runs
    for name, container in zip(d.runs, d.bars_, strict=True):
        want = d.frame.filter(pl.col("run") == name)["value"].to_list()
        assert np.allclose(_heights(container, horizontal), want)
    # the frame's Δ is compare's, not recomputed
    theirs = cmp.frame.filter(pl.col("baseline") == "bm25").select(
        "run", "measure", "delta", "delta_pct", "ci_low", "ci_high")
    ours = d.frame.filter(pl.col("run") != "bm25").select(theirs.columns)
    assert ours.sort(["run", "measure"]).equals(theirs.sort(["run", "measure"]))
    # and the text over each bar says that Δ
    texts = [t.get_text() for t in d.texts_]
    for row in theirs.iter_rows(named=True):
        label = delta_label(row["delta"], row["delta_pct"])
        assert any(label in t for t in texts), (label, texts)
    # the function draws the same bars
    ax = sef.benchmark_bars(cmp, orientation=orientation)
    drawn = [c for c in ax.containers if hasattr(c, "patches")]  # BarContainers
    assert len(drawn) == len(d.bars_)
    for mine, theirs_c in zip(d.bars_, drawn, strict=True):
        assert np.allclose(_heights(mine, horizontal), _heights(theirs_c, horizontal))


def test_bars_from_evaluation_values_and_deltas(synth):
    run, qrels = synth
    res = sef.evaluate(run, qrels, ["P@5", "AP"])
    d = sef.BenchmarkBarsDisplay.from_evaluation(res, baseline="dense")
    assert d.runs == ["dense", "bm25", "bm25-rerank"] and d.measures == ["P@5", "AP"]
    joined = d.frame.join(res.rename({"value": "v"}), on=["run", "measure"])
    assert np.allclose(joined["value"], joined["v"])
    base = res.filter(pl.col("run") == "dense").select("measure", pl.col("value").alias("b"))
    rows = d.frame.filter(pl.col("run") != "dense").join(base, on="measure")
    assert np.allclose(rows["delta"], rows["value"] - rows["b"])
    assert np.allclose(rows["delta_pct"], (rows["value"] - rows["b"]) / rows["b"] * 100)
    d.plot(orientation="vertical")
    for name, container in zip(d.runs, d.bars_, strict=True):
        want = d.frame.filter(pl.col("run") == name)["value"].to_list()
        assert np.allclose(_heights(container, False), want)
    ax = sef.benchmark_bars(res, baseline="dense", orientation="vertical")
    assert [t.get_text() for t in ax.texts] == [t.get_text() for t in d.texts_]


def test_bars_display_refuses_what_the_function_refuses(synth):
    run, qrels = synth
    res = sef.evaluate(run, qrels, ["P@5"])
    with pytest.raises(InvalidOptionError, match="measures="):
        sef.BenchmarkBarsDisplay.from_evaluation(res, measures=["AP"])
    with pytest.raises(InvalidOptionError, match=r"benchmark_bars\(orientation="):
        sef.BenchmarkBarsDisplay.from_evaluation(res).plot(orientation="diagonal")
    with pytest.raises(InvalidOptionError, match="ax="):
        sef.BenchmarkBarsDisplay.from_evaluation(res).plot(ax="left")
    with pytest.raises(MissingColumnError, match="baseline"):
        sef.BenchmarkBarsDisplay.from_comparison(res)


# --------------------------------------------------------------------------- curves
def test_pr_display_draws_pr_curve_data(synth):
    run, qrels = synth
    d = sef.PRCurveDisplay.from_run(run, qrels, relevance_level=2, per_query=True).plot()
    data = sef.pr_curve_data(run, qrels, relevance_level=2)
    _same_frame(d.curves, data)
    assert len(d.query_lines_) == len(d.runs) == 3  # per-query curves held: drawn
    for name, line in zip(d.runs, d.lines_, strict=True):
        assert line.get_label() == name
        assert np.allclose(line.get_ydata(), data.filter(pl.col("run") == name)["precision"])
    ax = sef.pr_curve(run, qrels, relevance_level=2, per_query_lines=True)
    assert ax.get_title() == d.ax_.get_title()
    for a, b in zip(ax.lines, d.lines_, strict=True):
        assert np.allclose(a.get_ydata(), b.get_ydata())


def test_pr_curve_frame_without_qrels_is_deprecated_but_draws_the_same(synth):
    run, qrels = synth
    data = sef.pr_curve_data(run, qrels, per_query=True)
    new = sef.PRCurveDisplay.from_curves(data).plot()
    with pytest.warns(FutureWarning, match=r"removed in 0\.3.*PRCurveDisplay\.from_curves"):
        old = sef.pr_curve(data)
    assert len(old.lines) == len(new.lines_) == 3
    for a, b in zip(old.lines, new.lines_, strict=True):
        assert a.get_label() == b.get_label()
        assert np.allclose(a.get_ydata(), b.get_ydata())
    assert old.get_title() == new.ax_.get_title()
    # the mean of the per-query curves is the run's curve
    agg = sef.pr_curve_data(run, qrels)
    assert np.allclose(new.curves.sort(["run", "recall"])["precision"],
                       agg.sort(["run", "recall"])["precision"])
    # runs and qrels: no warning
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        sef.pr_curve(run, qrels)


def test_tradeoff_display_and_its_deprecated_frame_path(synth):
    run, qrels = synth
    d = sef.TradeoffDisplay.from_run(run, qrels, k=20).plot(mark_k=5)
    data = sef.precision_recall_at_k(run, qrels, k=20)
    _same_frame(d.curves, data)
    for i, name in enumerate(d.runs):
        cur = data.filter(pl.col("run") == name)
        assert np.allclose(d.lines_[2 * i].get_ydata(), cur["precision"])
        assert np.allclose(d.lines_[2 * i + 1].get_ydata(), cur["recall"])
    assert [t.get_text() for t in d.texts_][:2] == [
        f"P@5 = {data.filter((pl.col('run') == d.runs[0]) & (pl.col('k') == 5))['precision'].item():.2f}",
        f"R@5 = {data.filter((pl.col('run') == d.runs[0]) & (pl.col('k') == 5))['recall'].item():.2f}",
    ]
    with pytest.warns(FutureWarning, match=r"removed in 0\.3.*TradeoffDisplay\.from_curves"):
        old = sef.tradeoff_curve(data, mark_k=5)
    for a, b in zip(old.lines, d.lines_, strict=False):
        assert np.allclose(a.get_ydata(), b.get_ydata())
    with pytest.raises(InvalidOptionError, match="mark_k"):
        d.plot(mark_k=21)


# --------------------------------------------------------------------------- per query
def test_per_query_delta_display_bars_are_the_paired_differences(per_query):
    d = sef.PerQueryDeltaDisplay.from_per_query(per_query, baseline="bm25", run="dense",
                                                measure="AP").plot()
    wide = per_query.filter(pl.col("measure") == "AP").pivot(
        on="run", index="query_id", values="value")
    want = wide.select("query_id", (pl.col("dense") - pl.col("bm25")).alias("d"))
    got = d.frame.join(want, on="query_id")
    assert np.allclose(got["delta"], got["d"])
    assert np.allclose([b.get_height() for b in d.bars_], d.frame["delta"])
    assert d.summary_.get_text().startswith("wins ")
    ax = sef.per_query_delta(per_query=per_query, baseline="bm25", run="dense", measure="AP")
    assert np.allclose([b.get_height() for b in ax.containers[0]], d.frame["delta"])


def test_metric_distribution_display_strips_and_means(per_query):
    d = sef.MetricDistributionDisplay.from_per_query(per_query, measure="AP").plot()
    assert d.runs == ["bm25", "bm25-rerank", "dense"]
    for name, strip in zip(d.runs, d.strips_, strict=True):
        values = d.frame.filter(pl.col("run") == name)["value"]
        assert np.allclose(strip.get_offsets()[:, 1], values)
    means = d.frame.group_by("run", maintain_order=True).agg(pl.col("value").mean())
    assert np.allclose(d.means_.get_offsets()[:, 1], means["value"])
    ax = sef.metric_distribution(per_query=per_query, measure="AP")
    assert [t.get_text() for t in ax.get_xticklabels()] == [
        t.get_text() for t in d.ax_.get_xticklabels()]


# --------------------------------------------------------------------------- power, slices
def test_power_curve_display_lines_are_powers_n_needed(per_query):
    pytest.importorskip("scipy")
    pq = per_query.filter(pl.col("measure") == "AP")
    d = sef.PowerCurveDisplay.from_per_query(pq, baseline="bm25", n_points=12).plot()
    for line in d.lines_:
        r, b = line.get_label().split(" vs ")
        part = d.frame.filter((pl.col("run") == r) & (pl.col("baseline") == b)
                              & pl.col("n_needed").is_not_null()).sort("delta")
        assert np.allclose(line.get_ydata(), part["n_needed"])
    frame = sef.power(per_query=pq, baseline="bm25", delta=[0.02, 0.05])
    e = sef.PowerCurveDisplay.from_power(frame).plot()
    assert np.allclose(e.lines_[0].get_xdata(), [0.02, 0.05])
    assert len(e.now_lines_) == 1


def test_stability_and_slice_displays(per_query):
    pytest.importorskip("scipy")
    res = sef.stability(per_query=per_query.filter(pl.col("measure") == "AP"), n_samples=50)
    d = sef.StabilityCurveDisplay.from_stability(res).plot()
    assert np.allclose(d.lines_[0].get_ydata(), res.summary.sort("size")["tau_mean"])
    assert len(d.bands_) == 1 and d.threshold_ is not None
    q = pl.DataFrame({"query_id": [f"q{i:02d}" for i in range(1, 13)], "kind": ["x", "y"] * 6})
    two = per_query.filter(pl.col("run").is_in(["bm25", "dense"]))
    s = sef.compare(per_query=two, baseline="bm25", queries=q, by="kind", ci_method="t",
                    min_queries=2)
    f = sef.SliceForestDisplay.from_comparison(s, "AP").plot()
    assert f.frame.equals(sef.slice_forest_data(s, "AP"))
    assert np.allclose([p.get_xdata()[0] for p in f.points_], f.frame["delta"])


def test_every_display_is_public_and_keeps_its_axes():
    names = [n for n in dir(sef) if n.endswith("Display")]
    assert set(names) >= {"BenchmarkBarsDisplay", "PRCurveDisplay", "TradeoffDisplay",
                          "PerQueryDeltaDisplay", "MetricDistributionDisplay",
                          "PowerCurveDisplay", "StabilityCurveDisplay", "SliceForestDisplay"}
    for n in names:
        cls = getattr(sef, n)
        assert [m for m in vars(cls) if m.startswith("from_")], n
        assert callable(cls.plot) and hasattr(cls, "ax_") and hasattr(cls, "figure_"), n
        assert Path(importlib.util.find_spec(cls.__module__).origin).parent == FIGURES
