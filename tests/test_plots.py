"""Plots: rendered with Agg, content checked (lines, bars, labels, annotations,
limits), compared with baseline PNGs, and run on the real TREC DL runs."""

from __future__ import annotations

import doctest
import struct
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import make_baseline_images as baseline
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import polars as pl
import pytest
from conftest import REPO, shared_path
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.colors import to_hex
from matplotlib.testing.compare import compare_images

import searcheval_frames as sef
from searcheval_frames.errors import (
    InvalidOptionError,
    MissingColumnError,
    SearchEvalWarning,
)
from searcheval_frames.figures import bars, distributions, export, pr, style, tradeoff

IMAGE_TOL = 3.0  # RMS over 0-255 pixel values


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
    return sef.evaluate(run, qrels, ["P@5", "nDCG@10", "AP"], per_query=True)


def _texts(ax) -> list[str]:
    return [t.get_text() for t in ax.texts]


# --------------------------------------------------------------------------- pr_curve
def test_pr_curve_lines_limits_and_data(synth):
    run, qrels = synth
    ax = sef.pr_curve(run, qrels, relevance_level=2, per_query_lines=True)
    assert [line.get_label() for line in ax.lines] == ["bm25", "bm25-rerank", "dense"]
    data = sef.pr_curve_data(run, qrels, relevance_level=2)
    for line in ax.lines:
        cur = data.filter(pl.col("run") == line.get_label())
        assert np.allclose(line.get_xdata(), cur["recall"].to_numpy())
        assert np.allclose(line.get_ydata(), cur["precision"].to_numpy())
        assert len(line.get_xdata()) == 11
    colls = [c for c in ax.collections if isinstance(c, LineCollection)]
    assert len(colls) == 3
    assert all(len(c.get_segments()) == 12 for c in colls)  # one faint line per query
    assert all(c.get_alpha() < 0.5 for c in colls)
    assert ax.get_xlim() == (0.0, 1.0) and ax.get_ylim() == (0.0, 1.02)
    assert ax.get_xlabel() == "Recall" and "precision" in ax.get_ylabel().lower()
    assert "label ≥ 2" in ax.get_title()
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["bm25", "bm25-rerank", "dense"]
    # Okabe-Ito colours, in order
    assert [to_hex(line.get_color()).upper() for line in ax.lines] == list(style.PALETTE[:3])


def test_pr_curve_from_data_pandas_and_polars_agree(synth):
    run, qrels = synth
    a = sef.pr_curve(run, qrels, show_runs=["dense", "bm25"], levels="all")
    assert [line.get_label() for line in a.lines] == ["dense", "bm25"]
    assert a.lines[0].get_marker() in (None, "None", "")  # many levels: no markers
    data = sef.pr_curve_data(run.to_pandas(), qrels.to_pandas(), levels="all")
    assert isinstance(data, pd.DataFrame)
    b = sef.PRCurveDisplay.from_curves(data, runs=["dense", "bm25"]).plot().ax_
    for la, lb in zip(a.lines, b.lines, strict=True):
        assert np.allclose(la.get_ydata(), lb.get_ydata())
    # per-query 11-point data: the mean is recomputed
    pq = sef.pr_curve_data(run, qrels, per_query=True)
    c = sef.PRCurveDisplay.from_curves(pq).plot(per_query_lines=True).ax_
    agg = sef.pr_curve_data(run, qrels)
    assert np.allclose(c.lines[0].get_ydata(), agg.filter(pl.col("run") == "bm25")["precision"])
    # per-query 'all' curves have no common levels: clear error
    with pytest.raises(InvalidOptionError, match="recall levels"):
        sef.PRCurveDisplay.from_curves(sef.pr_curve_data(run, qrels, levels="all", per_query=True))
    with pytest.raises(InvalidOptionError, match="per_query_lines"):
        sef.PRCurveDisplay.from_curves(agg).plot(per_query_lines=True)
    with pytest.raises(MissingColumnError, match="recall"):
        sef.PRCurveDisplay.from_curves(pl.DataFrame({"run": ["a"], "x": [1.0]}))
    with pytest.raises(InvalidOptionError, match="runs="):
        sef.pr_curve(run, qrels, show_runs=["nope"])


def test_pr_curve_into_given_axes(synth):
    run, qrels = synth
    _fig, (ax1, ax2) = plt.subplots(1, 2)
    out = sef.pr_curve(run, qrels, ax=ax2, title="", legend=False,
                       colors={"bm25": "#000000"})
    assert out is ax2 and not ax1.lines and len(ax2.lines) == 3
    assert ax2.get_title() == "" and ax2.get_legend() is None
    assert to_hex(ax2.lines[0].get_color()) == "#000000"
    with pytest.raises(InvalidOptionError, match="ax="):
        sef.pr_curve(run, qrels, ax="left")


# --------------------------------------------------------------------------- tradeoff
def test_tradeoff_curve_single_run_marks_k():
    # the seed's system 2: ten results, three relevant at the top
    run = {"q": {d: 1.0 - i / 10 for i, d in enumerate("ABCXYZUVWT")}}
    qrels = {"q": {"A": 1, "B": 1, "C": 1}}
    ax = sef.tradeoff_curve(run, qrels, mark_k=3)
    p_line, r_line = ax.lines[0], ax.lines[1]
    assert p_line.get_label() == "run P@k" and r_line.get_label() == "run R@k"
    assert list(p_line.get_xdata()) == list(range(1, 11))
    assert np.allclose(p_line.get_ydata()[[2, 9]], [1.0, 0.3])
    assert np.allclose(r_line.get_ydata()[[2, 9]], [1.0, 1.0])
    assert r_line.get_linestyle() == "--"
    assert _texts(ax) == ["P@3 = 1.00", "R@3 = 1.00"]
    vlines = [ln for ln in ax.lines if ln.get_linestyle() == ":"]
    assert len(vlines) == 1 and list(vlines[0].get_xdata()) == [3, 3]
    # P@3 = R@3 = 1.00: the labels stack above 1, and the axis makes room there
    assert ax.get_xscale() == "linear" and ax.get_ylim()[0] == 0.0
    tops = [t.get_position()[1] for t in ax.texts]
    assert min(tops) > 1.0 and ax.get_ylim()[1] > max(tops)
    assert list(ax.get_yticks()) == pytest.approx([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["Precision@k", "Recall@k"]
    with pytest.raises(InvalidOptionError, match="mark_k"):
        sef.tradeoff_curve(run, qrels, mark_k=11)


def test_tradeoff_curve_many_runs_and_data_input(synth):
    run, qrels = synth
    ax = sef.tradeoff_curve(run, qrels, mark_k=None, k=20)
    assert len(ax.lines) == 6 and not ax.texts
    assert ax.get_xlim()[1] <= 21
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["bm25", "bm25-rerank", "dense", "precision@k", "recall@k"]
    data = sef.precision_recall_at_k(run.to_pandas(), qrels, k=20)
    ax2 = sef.TradeoffDisplay.from_curves(data).plot(mark_k=10).ax_
    for a, b in zip(ax.lines, ax2.lines[:6], strict=False):
        assert np.allclose(a.get_ydata(), b.get_ydata())
    assert len(_texts(ax2)) == 6  # three runs: P and R values each
    big = {"q": {f"d{i:04d}": -float(i) for i in range(300)}}
    ax3 = sef.tradeoff_curve(big, {"q": {"d0001": 1}})
    assert ax3.get_xscale() == "log"


# --------------------------------------------------------------------------- bars
def test_benchmark_bars_before_after_labels():
    res = pl.DataFrame({
        "run": ["before", "before", "after", "after"],
        "measure": ["P@5", "RR", "P@5", "RR"],
        "value": [0.65, 0.5, 0.78, 0.45],
    })
    auto = sef.benchmark_bars(res)  # the deltas would not fit between upright bars
    assert all(b.get_width() > 0 for b in auto.containers[0])
    assert "0.78  +0.13 (+20%)" in _texts(auto)
    ax = sef.benchmark_bars(res, orientation="vertical")
    assert [c.get_label() for c in ax.containers] == ["before", "after"]
    assert [len(c) for c in ax.containers] == [2, 2]
    heights = [[b.get_height() for b in c] for c in ax.containers]
    assert np.allclose(heights, [[0.65, 0.5], [0.78, 0.45]])
    assert _texts(ax) == ["0.65", "0.50", "0.78\n+0.13 (+20%)", "0.45\n-0.05 (-10%)"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["P@5", "RR"]
    assert ax.get_ylim()[1] > 0.78 * 1.1  # room for the labels
    # pandas in: the same picture; another baseline flips the deltas
    ax2 = sef.benchmark_bars(res.to_pandas(), baseline="after", digits=3, pct_digits=1,
                             orientation="vertical")
    assert [c.get_label() for c in ax2.containers] == ["after", "before"]
    assert "0.650\n-0.130 (-16.7%)" in _texts(ax2)


def test_benchmark_bars_orientation_and_selection(per_query, synth):
    run, qrels = synth
    agg = sef.evaluate(run, qrels, ["P@5", "nDCG@10", "AP", "RR"])
    ax = sef.benchmark_bars(agg)  # 3 runs x 4 measures: horizontal
    assert all(b.get_width() > 0 for b in ax.containers[0])
    assert [t.get_text() for t in ax.get_yticklabels()] == ["P@5", "nDCG@10", "AP", "RR"]
    assert sum("(+" in t or "(-" in t for t in _texts(ax)) == 8  # deltas of 2 runs x 4
    ax = sef.benchmark_bars(agg, show_runs=["dense", "bm25"], measures=["AP"],
                            orientation="vertical", value_labels=False, deltas=False)
    assert [c.get_label() for c in ax.containers] == ["dense", "bm25"] and not ax.texts
    with pytest.raises(InvalidOptionError, match="per-query"):
        sef.benchmark_bars(per_query)
    with pytest.raises(InvalidOptionError, match="measures="):
        sef.benchmark_bars(agg, measures=["MAP@5"])
    with pytest.raises(InvalidOptionError, match="orientation"):
        sef.benchmark_bars(agg, orientation="diagonal")
    with pytest.raises(MissingColumnError):
        sef.benchmark_bars(pl.DataFrame({"system": ["a"], "score": [1.0]}))


def test_benchmark_bars_comparison_frame_ci_and_significance():
    frame = baseline.comparison_frame().filter(pl.col("run") == "after")
    ax = sef.benchmark_bars(frame, orientation="vertical")
    assert [c.get_label() for c in ax.containers if hasattr(c, "patches")] == ["before", "after"]
    texts = _texts(ax)
    assert "0.78\n+0.13 (+20%) *" in texts and "0.61\n+0.09 (+17%)" in texts
    assert "0.65" in texts and "0.52" in texts
    # CI of the difference, drawn at baseline + [ci_low, ci_high]
    err = [c for c in ax.containers if type(c).__name__ == "ErrorbarContainer"]
    assert len(err) == 1
    segs = err[0].lines[2][0].get_segments()
    assert np.allclose([s[:, 1] for s in segs], [[0.70, 0.86], [0.51, 0.70]])
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[-2:] == ["* significant", "error bar: CI of the difference"]
    plain = sef.benchmark_bars(frame, significance=False, ci=False)  # auto: horizontal
    assert "0.78  +0.13 (+20%)" in _texts(plain)
    assert not [c for c in plain.containers if type(c).__name__ == "ErrorbarContainer"]
    with pytest.raises(InvalidOptionError, match="baseline"):
        sef.benchmark_bars(frame, baseline="after")


def test_benchmark_bars_with_compare_object(per_query):
    pytest.importorskip("scipy")
    cmp = sef.compare(per_query=per_query, baseline="bm25", n_resamples=500)
    ax = sef.benchmark_bars(cmp)
    frame = cmp.to_polars()
    labels = [c.get_label() for c in ax.containers if hasattr(c, "patches")]
    assert labels == cmp.runs
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(f"p ≤ {cmp.alpha:g}" in t for t in legend)
    n_sig = int(frame["significant"].sum())
    assert sum(t.endswith(" *") for t in _texts(ax)) == n_sig
    for row in frame.iter_rows(named=True):
        want = style.delta_label(row["delta"], row["delta_pct"])
        assert any(want in t for t in _texts(ax))


def test_delta_label_format():
    assert style.delta_label(0.13, 20.0) == "+0.13 (+20%)"
    # no "-0.00", and no "+0.00 (-2%)": what rounds to zero gets a digit more, zero is 0
    assert style.delta_label(-0.001, -0.2) == "-0.001 (-0.2%)"
    assert style.delta_label(-0.004, -1.5) == "-0.004 (-2%)"
    assert style.delta_label(0.0, 0.0) == "0.00 (0%)"
    assert style.delta_label(0.05, float("nan")) == "+0.05"


# --------------------------------------------------------------------------- per query
def test_per_query_delta_sorted_wins_and_losses(per_query):
    ax = sef.per_query_delta(per_query=per_query, baseline="bm25", run="dense", measure="AP")
    wide = per_query.filter(pl.col("measure") == "AP").pivot(
        on="run", index="query_id", values="value")
    want = sorted((wide["dense"] - wide["bm25"]).to_list(), reverse=True)
    bars = ax.containers[0]
    heights = [b.get_height() for b in bars]
    assert np.allclose(heights, want)
    colours = [to_hex(b.get_facecolor()).upper() for b in bars]
    for h, c in zip(heights, colours, strict=True):
        assert c == (style.WIN if h > 1e-9 else style.LOSS if h < -1e-9 else style.TIE)
    wins, losses = sum(h > 1e-9 for h in heights), sum(h < -1e-9 for h in heights)
    summary = next(t for t in _texts(ax) if t.startswith("wins"))
    assert f"wins {wins} · ties {12 - wins - losses} · losses {losses}" in summary
    assert ax.get_ylim()[0] < min(heights) and ax.get_ylim()[1] > max(heights)
    assert [t.get_text() for t in ax.get_xticklabels()] == wide.sort("query_id").join(
        pl.DataFrame({"query_id": wide["query_id"], "d": wide["dense"] - wide["bm25"]}),
        on="query_id").sort(["d", "query_id"], descending=[True, False])["query_id"].to_list()
    assert "dense − bm25" in ax.get_title()


def test_per_query_delta_choices_and_missing_queries():
    pq = pd.DataFrame({
        "run": ["a", "a", "a", "b", "b", "c"], "query_id": ["1", "2", "3", "1", "2", "1"],
        "measure": "RR", "value": [0.5, 1.0, 0.2, 1.0, 0.5, 0.0],
    })
    with pytest.raises(InvalidOptionError, match="run="):
        sef.per_query_delta(per_query=pq)
    with pytest.warns(SearchEvalWarning, match="'3'"):
        ax = sef.per_query_delta(per_query=pq, run="b", annotate=1)
    assert np.allclose([b.get_height() for b in ax.containers[0]], [0.5, -0.2, -0.5])
    # best win and worst loss named, in the notes of the empty corners
    assert "biggest wins\n1  +0.50" in _texts(ax) and "biggest losses\n2  -0.50" in _texts(ax)
    with pytest.raises(InvalidOptionError, match="baseline"):
        sef.per_query_delta(per_query=pq, baseline="z", run="b")
    renamed = pq.rename(columns={"value": "score_value"})
    with pytest.raises(MissingColumnError, match="value"):
        sef.per_query_delta(per_query=renamed, run="b")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SearchEvalWarning)
        ax = sef.per_query_delta(per_query=renamed, run="b", columns={"value": "score_value"},
                                 query_labels=False)
    assert not ax.get_xticks().size


# --------------------------------------------------------------------------- distribution
def test_metric_distribution_box_strip_means(per_query):
    ax = sef.metric_distribution(per_query=per_query, measure="nDCG@10")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["bm25", "bm25-rerank", "dense"]
    strips = [c for c in ax.collections if isinstance(c, PathCollection) and c.get_label() != "mean"]
    assert [len(c.get_offsets()) for c in strips] == [12, 12, 12]
    means = next(c for c in ax.collections if c.get_label() == "mean")
    want = per_query.filter(pl.col("measure") == "nDCG@10").group_by(
        "run", maintain_order=True).agg(pl.col("value").mean())["value"].to_numpy()
    assert np.allclose(means.get_offsets()[:, 1], want)
    assert len(ax.patches) == 3  # boxes
    assert ax.get_ylim() == (-0.03, 1.03)
    # strip values are the per-query values
    vals = per_query.filter((pl.col("measure") == "nDCG@10") & (pl.col("run") == "dense"))
    assert sorted(strips[2].get_offsets()[:, 1]) == pytest.approx(sorted(vals["value"]))
    box = sef.metric_distribution(per_query=per_query.to_pandas(), measure="AP", kind="box",
                                  show_means=False)
    assert not [c for c in box.collections if isinstance(c, PathCollection)]
    with pytest.raises(InvalidOptionError, match="measure="):
        sef.metric_distribution(per_query=per_query)
    with pytest.raises(InvalidOptionError, match="kind"):
        sef.metric_distribution(per_query=per_query, measure="AP", kind="violin")


def test_metric_distribution_is_reproducible(per_query):
    a = sef.metric_distribution(per_query=per_query, measure="AP", kind="strip")
    b = sef.metric_distribution(per_query=per_query, measure="AP", kind="strip")
    assert np.array_equal(a.collections[0].get_offsets(), b.collections[0].get_offsets())


# --------------------------------------------------------------------------- saving
def _png_size(path: Path) -> tuple[int, int]:
    with open(path, "rb") as fh:
        head = fh.read(24)
    return struct.unpack(">II", head[16:24])


def test_save_figure_formats_dpi_and_reproducibility(tmp_path, synth):
    run, qrels = synth
    ax = sef.pr_curve(run, qrels)
    out = sef.save_figure(ax, tmp_path / "figs" / "pr", formats=["png", "svg", "pdf"])
    assert [p.name for p in out] == ["pr.png", "pr.svg", "pr.pdf"]
    assert out[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert out[1].read_text().lstrip().startswith("<?xml")
    assert out[2].read_bytes()[:5] == b"%PDF-"
    lo = sef.save_figure(ax.figure, tmp_path / "lo.png", dpi=50)[0]
    hi = sef.save_figure(ax, tmp_path / "hi.png", dpi=150)[0]
    w_lo, _ = _png_size(lo)
    w_hi, _ = _png_size(hi)
    assert 2.7 < w_hi / w_lo < 3.3
    again = sef.save_figure(ax, tmp_path / "again", formats=["png", "svg", "pdf"])
    for a, b in zip(out, again, strict=True):
        assert a.read_bytes() == b.read_bytes(), a.suffix
    assert "<dc:date>" not in out[1].read_text()
    with pytest.raises(InvalidOptionError, match="format"):
        sef.save_figure(ax, tmp_path / "x.gif")
    with pytest.raises(InvalidOptionError, match="formats"):
        sef.save_figure(ax, tmp_path / "x", formats=["tiff"])
    with pytest.raises(InvalidOptionError, match="dpi"):
        sef.save_figure(ax, tmp_path / "x.png", dpi=0)
    with pytest.raises(InvalidOptionError, match="Figure or Axes"):
        sef.save_figure("figure", tmp_path / "x.png")
    with pytest.raises(InvalidOptionError, match=r"save_figure\(formats=\[\]\)"):
        sef.save_figure(ax, tmp_path / "x", formats=[])


@pytest.mark.parametrize("module", [style, pr, tradeoff, bars, distributions, export])
def test_doctests(module):
    assert doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE).failed == 0


# --------------------------------------------------------------------------- images
@pytest.mark.parametrize("name", list(baseline.FIGURES))
def test_matches_baseline_image(name, tmp_path):
    expected = baseline.BASELINE_DIR / f"{name}.png"
    actual = baseline.render(name, tmp_path / f"{name}.png")
    result = compare_images(str(expected), str(actual), tol=IMAGE_TOL)
    assert result is None, (
        f"{name}: {result}\nIf the change is intended, run python tests/make_baseline_images.py "
        "and look at the new image before committing it."
    )


# --------------------------------------------------------------------------- TREC DL
SYSTEMS = ["bm25", "bm25-rm3", "splade-pp-ed", "tasb", "openai-ada2", "repllama"]


@pytest.fixture(scope="module")
def trec_dl():
    from searcheval_frames.io import read_qrels, read_run

    qrels = read_qrels(shared_path("trec_dl_passage", "qrels.dl19-passage.txt"))
    paths = [shared_path("trec_dl_passage", "runs", f"run.dl19-passage.{s}.txt") for s in SYSTEMS]
    return read_run(paths, name=SYSTEMS), qrels


@pytest.mark.shared
def test_trec_dl_plots(trec_dl, tmp_path):
    run, qrels = trec_dl
    ax = sef.pr_curve(run, qrels, relevance_level=2, per_query_lines=True)
    assert [line.get_label() for line in ax.lines] == SYSTEMS
    assert [len(c.get_segments()) for c in ax.collections] == [43] * 6
    ax = sef.tradeoff_curve(run, qrels, relevance_level=2)
    assert ax.get_xscale() == "log" and ax.get_xlim()[1] == 1000  # repllama is 1000 deep
    assert len([ln for ln in ax.lines if ln.get_linestyle() == "--"]) == 6
    ms = ["nDCG@10", "AP", "RR@10", "R@100"]
    agg = sef.evaluate(run, qrels, ms, relevance_level=2)
    ax = sef.benchmark_bars(agg, baseline="bm25")
    assert [c.get_label() for c in ax.containers] == SYSTEMS
    assert sum(len(c) for c in ax.containers) == 24
    ndcg = agg.filter((pl.col("run") == "tasb") & (pl.col("measure") == "nDCG@10"))["value"][0]
    base = agg.filter((pl.col("run") == "bm25") & (pl.col("measure") == "nDCG@10"))["value"][0]
    assert any(style.delta_label(ndcg - base, (ndcg - base) / base * 100) in t for t in _texts(ax))
    pq = sef.evaluate(run, qrels, ms, relevance_level=2, per_query=True)
    ax = sef.per_query_delta(per_query=pq, baseline="bm25", run="splade-pp-ed", measure="nDCG@10")
    assert len(ax.containers[0]) == 43
    ax = sef.metric_distribution(per_query=pq, measure="AP")
    assert len(ax.get_xticklabels()) == 6
    assert sef.save_figure(ax, tmp_path / "ap.svg")[0].stat().st_size > 1000


# --------------------------------------------------------------------------- notebook
@pytest.mark.slow
def test_notebook_runs(tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    path = REPO / "notebooks" / "03_plots.ipynb"
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.execution_count is None and not cell.outputs, "commit without outputs"
    monkeypatch.setenv("SEARCHEVAL_FIGURES", str(tmp_path / "figures"))
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3",
        resources={"metadata": {"path": str(REPO / "notebooks")}},
    )
    client.execute()
    exported = sorted(p.name for p in (tmp_path / "figures").iterdir())
    for stem in ("pr_curve", "tradeoff", "benchmark", "per_query_delta", "distribution"):
        assert any(name.startswith(stem) for name in exported), exported
    assert {Path(n).suffix for n in exported} >= {".png", ".svg", ".pdf"}
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) >= 5


def test_per_query_delta_draws_areas_for_thousands_of_queries():
    """Above BARS_UP_TO queries the differences are drawn as two filled areas (fast)."""
    import numpy as np
    from matplotlib.collections import PolyCollection

    from searcheval_frames.figures import distributions

    rng = np.random.default_rng(0)
    n = distributions.BARS_UP_TO + 100
    vals = rng.random(2 * n)
    pq = pl.DataFrame({"run": ["a"] * n + ["b"] * n,
                       "query_id": [f"q{i}" for i in range(n)] * 2,
                       "measure": "AP", "value": vals})
    ax = sef.per_query_delta(per_query=pq, baseline="a")
    polys = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(ax.patches) == 0 and len(polys) == 2
    delta = vals[n:] - vals[:n]
    wins, losses = int((delta > 1e-9).sum()), int((delta < -1e-9).sum())
    assert any(f"wins {wins}" in t.get_text() and f"losses {losses}" in t.get_text()
               for t in ax.texts)
    plt.close(ax.figure)
