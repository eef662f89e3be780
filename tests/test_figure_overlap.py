"""No text on text, no text off the figure: every figure helper on data of every shape.

Each figure helper is a :class:`FigureCase` in :data:`CASES`; each is drawn at the size
the report and the notebooks use (the helpers' default 6.4 x 4 inch figure, 110 dpi)
on the shapes of :data:`SHAPES` — 2 and 12 runs, 3 and 14 measures, 5 and 2,000
queries, 4- and 80-character names, values near 0 and near 1 (a pairwise covering
design: every pair of two factors' levels appears in some shape). The check asks
matplotlib's renderer for every drawn text's window extent and fails on a pair that
intersects or a text that leaves the figure.

To guard a new figure, append one case::

    CASES.append(FigureCase("leaderboard", lambda d: sef.leaderboard_plot(d.comparison)))
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import polars as pl
import pytest
from matplotlib.text import Text

import searcheval_frames as sef
from searcheval_frames.errors import SearchEvalWarning

DPI = 110  # the report's PNG resolution per inch of figure (save_figure is asked for 2x)
MEASURES = ["P@5", "P@10", "P@20", "R@10", "R@100", "RR", "nDCG@5", "nDCG@10", "nDCG@20",
            "AP", "AP@100", "Rprec", "bpref", "success@10"]
_WORDS = ("hybrid", "retrieval", "dense", "sparse", "rerank", "cross", "encoder", "colbert",
          "splade", "expansion", "query", "passage", "chunked", "minilm", "distilled", "v2")


def _long_name(i: int, length: int, rng: np.random.Generator) -> str:
    if length <= 4:
        return f"s{i:03d}"[:length]
    words = []
    while len("-".join(words)) < length:
        words.append(str(rng.choice(_WORDS)))
    return (f"{i:02d}-" + "-".join(words))[:length]


@dataclass(frozen=True)
class Shape:
    n_runs: int
    n_measures: int
    n_queries: int
    name_len: int
    level: str  # "low": values near 0, "high": near 1

    def __str__(self) -> str:
        return (f"{self.n_runs}runs-{self.n_measures}m-{self.n_queries}q-"
                f"{self.name_len}ch-{self.level}")


@dataclass
class Data:
    """The inputs of every figure for one shape (built lazily, once)."""

    shape: Shape

    @cached_property
    def runs(self) -> list[str]:
        rng = np.random.default_rng(1)
        return [_long_name(i, self.shape.name_len, rng) for i in range(self.shape.n_runs)]

    @cached_property
    def queries(self) -> list[str]:
        s = self.shape
        if s.name_len <= 4:
            return [f"{q:03d}"[-4:] for q in range(s.n_queries)]
        rng = np.random.default_rng(2)
        return ["what is " + _long_name(q, s.name_len - 9, rng) + "?" for q in range(s.n_queries)]

    @cached_property
    def measures(self) -> list[str]:
        return MEASURES[: self.shape.n_measures]

    @cached_property
    def per_query(self) -> pl.DataFrame:
        s = self.shape
        rng = np.random.default_rng(3)
        a, b = (8.0, 1.2) if s.level == "high" else (1.0, 14.0)
        rows = []
        for i, r in enumerate(self.runs):
            for m in self.measures:
                v = rng.beta(a + 0.1 * i, b, size=s.n_queries)
                rows.append(pl.DataFrame({"run": r, "query_id": self.queries, "measure": m,
                                          "value": v}))
        return pl.concat(rows)

    @cached_property
    def summary(self) -> pl.DataFrame:
        return self.per_query.group_by(["run", "measure"], maintain_order=True).agg(
            pl.col("value").mean())

    @cached_property
    def comparison(self) -> Any:
        return sef.compare(per_query=self.per_query, baseline=self.runs[0], ci_method="t")

    @cached_property
    def run_qrels(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        s = self.shape
        rng = np.random.default_rng(4)
        docs = [f"d{j}" for j in range(30)]
        p = 0.85 if s.level == "high" else 0.04
        labels = rng.random((s.n_queries, 30)) < p
        labels[:, 0] = True  # every query has a relevant document
        qrels = pl.DataFrame({
            "query_id": np.repeat(self.queries, 30), "doc_id": docs * s.n_queries,
            "relevance": labels.ravel().astype(int)})
        parts = []
        for r in self.runs:
            picks = np.argsort(rng.random((s.n_queries, 30)), axis=1)[:, :20]
            parts.append(pl.DataFrame({
                "query_id": np.repeat(self.queries, 20),
                "doc_id": [docs[j] for j in picks.ravel()],
                "score": np.tile(np.arange(20, 0, -1, dtype=float), s.n_queries),
                "run": r}))
        return pl.concat(parts), qrels

    def two(self) -> pl.DataFrame:
        return self.per_query.filter(pl.col("run").is_in(self.runs[:2]),
                                     pl.col("measure") == self.measures[0])


@dataclass(frozen=True)
class FigureCase:
    name: str
    draw: Callable[[Data], Any]  # -> Axes


def _pair_power(d: Data) -> Any:
    return sef.power_curve(per_query=d.per_query.filter(pl.col("measure") == d.measures[0]),
                           baseline=d.runs[0])


def _slice_forest(d: Data) -> Any:
    queries = pl.DataFrame({"query_id": d.queries,
                            "bucket": [f"slice {i % 3}" for i in range(len(d.queries))]})
    # three slices: with fewer than 9 queries one has under 3, which compare says it
    # cannot test (the figure must still draw it)
    small = (pytest.warns(SearchEvalWarning, match="cannot be tested")
             if len(d.queries) < 9 else contextlib.nullcontext())
    with small:
        return sef.slice_forest(sef.compare(per_query=d.two(), baseline=d.runs[0], queries=queries,
                                            by="bucket", ci_method="t", min_queries=2))


def _latency(d: Data) -> Any:
    """Quality against latency: lognormal client times per run (some runs 100x slower)."""
    rng = np.random.default_rng(5)
    lat = pl.concat([pl.DataFrame({"run": r, "query_id": d.queries,
                                   "seconds": rng.lognormal(-6 + 2.5 * (i % 3), 0.8,
                                                            len(d.queries))})
                     for i, r in enumerate(d.runs)])
    return sef.latency_plot(lat, d.summary, measure=d.measures[0])


def _sweep(d: Data) -> Any:
    """A sweep of k1 (5 points) with one line per run name as a second knob; some points
    short of labels (hollow markers and the labelled-share panel)."""
    from searcheval_frames.sweeps import SweepResult

    rng = np.random.default_rng(6)
    xs = [0.3, 0.6, 0.9, 1.2, 1.5]
    rows = [(f"p{i}-{j}", x, r, float(v), float(lab))
            for i, r in enumerate(d.runs) for j, (x, v, lab) in enumerate(zip(
                xs, rng.beta(8, 2, 5) if d.shape.level == "high" else rng.beta(1, 14, 5),
                rng.uniform(0.7, 1.0, 5), strict=True))]
    m = d.measures[0]
    table = pl.DataFrame(rows, schema=["run", "k1", "variant", m, "labelled"], orient="row")
    table = table.with_columns(below_min_judged=pl.col("labelled") < 0.9)
    res = SweepResult(table, ["k1", "variant"], [m], 20, 0.9, {}, pl.DataFrame(),
                      pl.DataFrame())
    return sef.sweep_plot(res)
def _replicates(d: Data) -> Any:
    import warnings

    rng = np.random.default_rng(6)
    base = d.per_query.filter(pl.col("measure") == d.measures[0])
    pq = pl.concat([base.with_columns(pl.lit(str(r)).alias("seed"),
                                      pl.col("value") + rng.normal(0, 0.02, base.height))
                    for r in range(3)])
    with warnings.catch_warnings():  # (few queries: some rows cannot be tested)
        warnings.simplefilter("ignore")
        return sef.compare_replicates(per_query=pq, baseline=d.runs[0], replicate="seed",
                                      method="bootstrap", n_resamples=50)


def _datasets(d: Data) -> Any:
    import warnings

    qs = {q: f"set {i % 3}" for i, q in enumerate(d.queries)}
    pq = d.two().with_columns(pl.col("query_id").replace_strict(qs).alias("collection"))
    with warnings.catch_warnings():  # (three datasets: the rough-interval warning)
        warnings.simplefilter("ignore")
        return sef.compare_datasets(per_query=pq, baseline=d.runs[0], dataset="collection",
                                    n_resamples=50, mixed=False)


def _variance(d: Data) -> Any:
    return sef.variance_plot(sef.variance_components(
        per_query=d.per_query.filter(pl.col("measure") == d.measures[0]),
        factors=["query", "system"]))


CASES: list[FigureCase] = [
    FigureCase("bars_evaluate", lambda d: sef.benchmark_bars(d.summary)),
    FigureCase("bars_compare", lambda d: sef.benchmark_bars(d.comparison)),
    FigureCase("per_query_delta", lambda d: sef.per_query_delta(per_query=d.two(),
                                                                baseline=d.runs[0])),
    FigureCase("tradeoff", lambda d: sef.tradeoff_curve(*d.run_qrels, k=20)),
    FigureCase("pr_curve", lambda d: sef.pr_curve(*d.run_qrels)),
    FigureCase("distribution", lambda d: sef.metric_distribution(per_query=d.per_query,
                                                                 measure=d.measures[0])),
    FigureCase("power", _pair_power),
    FigureCase("stability", lambda d: sef.stability_curve(per_query=d.per_query,
                                                          measure=d.measures, n_samples=20)),
    FigureCase("leaderboard", lambda d: sef.leaderboard_plot(sef.leaderboard(per_query=d.per_query,
                                                                             measure=d.measures[0],
                                                                             test="tukey_hsd",
                                                                             n_resamples=200,
                                                                             seed=0))),
    FigureCase("slice_forest", _slice_forest),
    FigureCase("latency", _latency),
    FigureCase("sweep", _sweep),
    FigureCase("replicate_strip", lambda d: sef.replicate_strip(_replicates(d))),
    FigureCase("dataset_forest", lambda d: sef.dataset_forest(_datasets(d))),
    FigureCase("variance_components", _variance),
]

_DESIGN = ["00000", "11111", "00111", "11001", "01010", "10100"]  # pairwise covering
SHAPES = [Shape(*(lv[int(c)] for lv, c in zip(
    ((2, 12), (3, 14), (5, 2000), (4, 80), ("high", "low")), row, strict=True)))
    for row in _DESIGN]
# and the report's own shapes: a before/after on six measures and TREC DL 2019's 43
# queries with seven systems
SHAPES += [Shape(2, 6, 43, 20, "high"), Shape(7, 6, 43, 24, "low")]


def _tick_texts(ax: Any) -> list[Text]:
    out = []
    for axis, lim in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
        lo, hi = min(lim), max(lim)
        span = (hi - lo) or 1.0
        for minor in (False, True):
            ticks = axis.get_minor_ticks() if minor else axis.get_major_ticks()
            locs = axis.get_minorticklocs() if minor else axis.get_majorticklocs()
            for tick, loc in zip(ticks, locs, strict=False):
                if lo - 1e-9 * span <= loc <= hi + 1e-9 * span and tick.get_visible():
                    out += [t for t in (tick.label1, tick.label2) if t.get_visible()]
        out.append(axis.get_offset_text())
        out.append(axis.label)
    return out


def drawn_texts(fig: Any) -> list[Text]:
    """Every text the figure draws (titles, labels, tick labels, notes, legends)."""
    texts: list[Text] = list(fig.texts)
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        texts += [*list(ax.texts), ax.title, ax._left_title, ax._right_title]
        texts += _tick_texts(ax)
        leg = ax.get_legend()
        if leg is not None and leg.get_visible():
            texts += [*list(leg.get_texts()), leg.get_title()]
    if fig.legends:
        for leg in fig.legends:
            texts += list(leg.get_texts())
    return [t for t in texts if t.get_visible() and t.get_text().strip()]


def text_problems(fig: Any, tol: float = 0.5) -> tuple[list[tuple[str, str]], list[str]]:
    """-> (pairs of texts whose boxes intersect, texts not inside the figure)."""
    fig.set_dpi(DPI)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in drawn_texts(fig)]
    W, H = fig.bbox.width, fig.bbox.height
    outside = [s for s, b in boxes
               if b.x0 < -tol or b.y0 < -tol or b.x1 > W + tol or b.y1 > H + tol]
    overlaps = []
    for (s1, b1), (s2, b2) in itertools.combinations(boxes, 2):
        w = min(b1.x1, b2.x1) - max(b1.x0, b2.x0)
        h = min(b1.y1, b2.y1) - max(b1.y0, b2.y0)
        if w > tol and h > tol:
            overlaps.append((s1, s2))
    return overlaps, outside


_DATA: dict[Shape, Data] = {}


def _data(shape: Shape) -> Data:
    if shape not in _DATA:
        _DATA[shape] = Data(shape)
    return _DATA[shape]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_no_text_overlaps_or_leaves_the_figure(case: FigureCase, shape: Shape) -> None:
    ax = case.draw(_data(shape))
    try:
        overlaps, outside = text_problems(ax.figure)
    finally:
        plt.close(ax.figure)
    assert not overlaps, f"{case.name} on {shape}: {len(overlaps)} overlapping text pairs, " \
        f"e.g. {overlaps[:3]}"
    assert not outside, f"{case.name} on {shape}: {len(outside)} texts leave the figure, " \
        f"e.g. {outside[:3]}"


def test_the_checker_sees_an_overlap_and_a_text_outside() -> None:
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.text(0.5, 0.5, "one label here")
    ax.text(0.52, 0.5, "another label")
    ax.text(1.5, 0.5, "far off to the right", transform=ax.transAxes)
    overlaps, outside = text_problems(fig)
    plt.close(fig)
    assert ("one label here", "another label") in overlaps
    assert outside == ["far off to the right"]


def test_the_design_covers_every_pair_of_levels() -> None:
    rows = [tuple(int(c) for c in r) for r in _DESIGN]
    for i, j in itertools.combinations(range(5), 2):
        assert {(r[i], r[j]) for r in rows} == {(0, 0), (0, 1), (1, 0), (1, 1)}


def _crossings(ax: Any, texts: list[Text]) -> list[str]:
    """Notes whose box a drawn line passes through (lines sampled densely on screen)."""
    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    hit = []
    for t in texts:
        box = t.get_window_extent(renderer)
        for line in ax.lines:
            if line.get_linestyle() in ("None", "", " ") or not line.get_visible():
                continue
            xy = line.get_transform().transform(line.get_xydata())
            x = np.interp(np.linspace(0, len(xy) - 1, 40 * len(xy)), np.arange(len(xy)), xy[:, 0])
            y = np.interp(np.linspace(0, len(xy) - 1, 40 * len(xy)), np.arange(len(xy)), xy[:, 1])
            if np.any((x > box.x0 + 1) & (x < box.x1 - 1) & (y > box.y0 + 1) & (y < box.y1 - 1)):
                hit.append(t.get_text())
                break
    return hit


@pytest.mark.parametrize("shape", [s for s in SHAPES if s.n_runs <= 3], ids=str)
def test_tradeoff_notes_keep_off_the_curves(shape: Shape) -> None:
    """The P@k / R@k values at the mark sit where their own curves are not (P above its
    falling line, R below its rising line)."""
    ax = sef.tradeoff_curve(*_data(shape).run_qrels, k=20)
    try:
        # the dotted mark line itself is crossed by design; the curves are the rest
        marks = [ln for ln in ax.lines if ln.get_linestyle() == ":"]
        for ln in marks:
            ln.set_visible(False)
        hit = _crossings(ax, list(ax.texts))
    finally:
        plt.close(ax.figure)
    assert not hit, f"{shape}: notes on a curve: {hit}"
