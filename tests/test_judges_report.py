"""The judge calibration figure and the report's judge / holes sections, checked against
the numbers they show (sef.judge_agreement, holes_verdicts) on the bundled example."""

from __future__ import annotations

import glob

import matplotlib
import polars as pl
import pytest
from conftest import DATA

import searcheval_frames as sef
from searcheval_frames.evalset.judges import (
    holes_verdicts,
    judge_agreement_plot,
    judge_confusion_plot,
    judge_rank_plot,
    overlap_grade,
)

matplotlib.use("Agg")
EX = DATA / "example"


def _overlap(p):
    return p.with_columns(relevance=pl.struct("query", "text").map_elements(
        lambda r: overlap_grade(r["query"], r["text"]), return_dtype=pl.Int64))


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    runs = sef.read_run(sorted(glob.glob(str(EX / "runs" / "*.run"))))
    human = sef.read_qrels(EX / "qrels.txt")
    journal = tmp_path_factory.mktemp("rep") / "judge.jsonl"
    kw = dict(queries=EX / "queries.tsv", docs=EX / "docs.jsonl", journal=journal,
              progress=False)
    auto = sef.judge(human, _overlap, **kw)
    ag = sef.judge_agreement(runs, human, auto, docs=EX / "docs.jsonl", n_resamples=200)
    filled = sef.fill_holes(runs, human, _overlap, depth=20, **kw)
    return runs, human, ag, filled


def test_confusion_heatmap_shows_the_counts(setup):
    import matplotlib.pyplot as plt

    _, _, ag, _ = setup
    ax = judge_confusion_plot(ag)
    texts = [t.get_text() for t in ax.texts]
    want = [str(v) for row in ag.confusion.drop("human").rows() for v in row]
    assert texts == want  # row by row, human grade 0..3
    assert ax.get_xlabel() == "judge grade" and ax.get_ylabel() == "human grade"
    assert "κ=" in ax.get_title()
    plt.close(ax.figure)


def test_rank_scatter_places_each_run_at_its_two_ranks(setup):
    import matplotlib.pyplot as plt

    _, _, ag, _ = setup
    ax = judge_rank_plot(ag, "AP")
    pts = ax.collections[0].get_offsets()
    ranks = ag.rankings.filter(pl.col("measure") == "AP")
    assert [tuple(p) for p in pts] == list(ranks.select("human_rank", "judge_rank").iter_rows())
    assert sorted(t.get_text() for t in ax.texts) == sorted(ranks["run"].to_list())
    tau = ag.systems.filter(pl.col("measure") == "AP")["kendall_tau"][0]
    assert f"τ={tau:.2f}" in ax.get_title()
    assert ax.get_ylim()[0] > ax.get_ylim()[1]  # rank 1 at the top
    plt.close(ax.figure)
    axs = judge_agreement_plot(ag)
    assert len(axs) == 2 and axs[0].figure is axs[1].figure
    plt.close(axs[0].figure)
    with pytest.raises(sef.SearchEvalError, match="not in the agreement"):
        judge_rank_plot(ag, "RR")


def test_report_sections_show_the_agreement_and_the_holes(setup):
    runs, _, ag, filled = setup
    rep = sef.report(runs, filled.frame, baseline="bm25", judge_agreement=ag,
                     measures=["nDCG@10", "AP"], n_resamples=200)
    html, md = rep.to_html(), rep.to_markdown()
    for doc in (html, md):
        assert "Automatic judge: calibration" in doc
        assert "Holes: which verdicts depend on them" in doc
    kappa = ag.frame.filter(pl.col("statistic") == "cohen_kappa")["value"][0]
    assert f"Cohen's κ {kappa:.2f}" in md
    assert html.index('id="judge-calibration"') < html.index('id="holes"') < \
        html.index('id="provenance"')
    assert any(f.name == "judge-calibration" for f in rep.data.figures)
    v = holes_verdicts(runs, filled.frame, ["nDCG@10", "AP"], baseline="bm25", ci_method="t")
    assert f"{int(v['changed'].sum())} of {v.height} verdicts change" in md
    for run, measure, verdict in v.select("run", "measure", "relevant").iter_rows():
        assert f"| {run} | {measure} |" in md and verdict in md


def test_report_without_judges_has_no_judge_sections(setup):
    runs, human, _, _ = setup
    rep = sef.report(runs, human, baseline="bm25", measures=["P@5"], figures=False,
                     n_resamples=100)
    assert "Automatic judge" not in rep.to_html() and "Holes:" not in rep.to_markdown()
    with pytest.raises(sef.InvalidOptionError, match="judge_agreement"):
        sef.report(runs, human, baseline="bm25", measures=["P@5"], figures=False,
                   n_resamples=100, judge_agreement={"kappa": 1})
