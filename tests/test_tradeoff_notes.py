"""The trade-off curve's P@k / R@k notes on the bundled example set: none sits on a tick
label (issue #31: ``R@10 = 0.74`` covered the ``0.8`` tick label), none leaves the figure,
none lies on a curve."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import pytest
from test_figure_overlap import _crossings, text_problems

import searcheval_frames as sef

matplotlib.use("Agg")
EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "example"


@pytest.fixture(scope="module")
def example():
    runs = sef.read_run(sorted((EXAMPLE / "runs").glob("*.run")))
    return runs, sef.read_qrels(EXAMPLE / "qrels.txt")


@pytest.mark.parametrize("names", [["bm25"], ["bm25", "bm25-rerank"], ["bm25", "lsi", "tfidf"]],
                         ids=len)
@pytest.mark.parametrize("k", [None, 20, 100])
def test_no_note_on_a_tick_label_or_a_curve(example, names, k):
    runs, qrels = example
    ax = sef.tradeoff_curve(runs.filter(runs["run"].is_in(names)), qrels, k=k)
    try:
        overlaps, outside = text_problems(ax.figure)
        for line in ax.lines:  # the dotted mark is crossed by design
            line.set_visible(line.get_linestyle() != ":")
        crossed = _crossings(ax, list(ax.texts))
    finally:
        plt.close(ax.figure)
    assert not overlaps, overlaps
    assert not outside, outside
    assert not crossed, crossed
    notes = [t for t in ax.texts if t.get_text().startswith(("P@10", "R@10"))]
    assert len(notes) == 2 * len(names)  # every value is still written


def test_the_values_written_are_the_means_at_the_mark(example):
    runs, qrels = example
    bm25 = runs.filter(runs["run"] == "bm25")
    ax = sef.tradeoff_curve(bm25, qrels)
    texts = sorted(t.get_text() for t in ax.texts)
    plt.close(ax.figure)
    want = sef.evaluate(bm25, qrels, ["P@10", "R@10"])["value"].to_list()
    assert texts == [f"P@10 = {want[0]:.2f}", f"R@10 = {want[1]:.2f}"]
