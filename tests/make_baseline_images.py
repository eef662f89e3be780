"""Figures compared pixel by pixel in tests/test_plots.py, and the script that makes their baselines.

Run ``python tests/make_baseline_images.py`` after an intended change of a plot
and look at the new PNGs in ``tests/baseline_images/`` before committing them.
The data are synthetic and made with :class:`random.Random` (a stream that is
stable across Python versions), so the images do not depend on ``data/``.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib as mpl
import matplotlib.pyplot as plt
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import searcheval_frames as sef

BASELINE_DIR = Path(__file__).resolve().parent / "baseline_images"
DPI = 72
#: Deterministic rendering: fixed font, sizes and hash salt; no user style.
RC: dict[str, Any] = {
    "font.family": "DejaVu Sans",
    "font.size": 10.0,
    "svg.hashsalt": "searcheval_frames",
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
    "text.hinting": "default",
    "axes.unicode_minus": True,
}


@contextmanager
def fixed_style():
    with mpl.rc_context():
        mpl.rcdefaults()
        mpl.rcParams.update(RC)
        yield


def synthetic() -> tuple[pl.DataFrame, pl.DataFrame]:
    """12 queries, 3 systems of increasing quality, graded labels 0-3."""
    rng = random.Random(20240601)
    qrels_rows, run_rows = [], []
    for q in range(1, 13):
        qid = f"q{q:02d}"
        labels = {f"d{d:02d}": rng.choice([0, 0, 0, 0, 1, 1, 2, 3]) for d in range(30)}
        qrels_rows += [(qid, d, g) for d, g in labels.items() if rng.random() < 0.8]
        for name, skill in (("bm25", 0.6), ("bm25-rerank", 1.2), ("dense", 1.8)):
            for d, g in labels.items():
                run_rows.append((name, qid, d, round(skill * g + rng.gauss(0, 1.2), 4)))
    qrels = pl.DataFrame(qrels_rows, schema=["query_id", "doc_id", "relevance"], orient="row")
    run = pl.DataFrame(run_rows, schema=["run", "query_id", "doc_id", "score"], orient="row")
    return run, qrels


def fig_pr_curve() -> Any:
    run, qrels = synthetic()
    return sef.pr_curve(run, qrels, per_query_lines=True, relevance_level=2)


def fig_tradeoff_curve() -> Any:
    run, qrels = synthetic()
    return sef.tradeoff_curve(run.filter(pl.col("run") != "bm25-rerank"), qrels, mark_k=5)


def fig_benchmark_bars() -> Any:
    run, qrels = synthetic()
    res = sef.evaluate(run.filter(pl.col("run") != "bm25-rerank"), qrels,
                       ["P@5", "nDCG@10", "RR", "AP"], relevance_level=2)
    return sef.benchmark_bars(res)


def comparison_frame() -> pl.DataFrame:
    """A hand-made frame shaped like compare()'s (compare itself is tested elsewhere)."""
    return pl.DataFrame({
        "run": ["after", "after", "other", "other"],
        "baseline": "before",
        "measure": ["P@5", "nDCG@10"] * 2,
        "mean": [0.78, 0.61, 0.66, 0.49],
        "baseline_mean": [0.65, 0.52, 0.65, 0.52],
        "delta": [0.13, 0.09, 0.01, -0.03],
        "delta_pct": [20.0, 17.3, 1.5, -5.8],
        "ci_low": [0.05, -0.01, -0.06, -0.09],
        "ci_high": [0.21, 0.18, 0.08, 0.02],
        "significant": [True, False, False, False],
    })


def fig_benchmark_bars_comparison() -> Any:
    return sef.benchmark_bars(comparison_frame())


def fig_per_query_delta() -> Any:
    run, qrels = synthetic()
    pq = sef.evaluate(run, qrels, ["nDCG@10"], per_query=True)
    return sef.per_query_delta(per_query=pq, baseline="bm25", run="dense")


def fig_metric_distribution() -> Any:
    run, qrels = synthetic()
    pq = sef.evaluate(run, qrels, ["AP"], per_query=True)
    return sef.metric_distribution(per_query=pq)


FIGURES: dict[str, Callable[[], Any]] = {
    "pr_curve": fig_pr_curve,
    "tradeoff_curve": fig_tradeoff_curve,
    "benchmark_bars": fig_benchmark_bars,
    "benchmark_bars_comparison": fig_benchmark_bars_comparison,
    "per_query_delta": fig_per_query_delta,
    "metric_distribution": fig_metric_distribution,
}


def render(name: str, path: Path) -> Path:
    """Draw figure ``name`` with the fixed style and save it as a PNG at ``path``."""
    with fixed_style():
        ax = FIGURES[name]()
        try:
            sef.save_figure(ax, path, dpi=DPI)
        finally:
            plt.close(ax.figure)
    return path


def main() -> None:
    BASELINE_DIR.mkdir(exist_ok=True)
    for name in FIGURES:
        print(render(name, BASELINE_DIR / f"{name}.png"))


if __name__ == "__main__":
    main()
