"""The report's leaderboard section and per-run headline (issue #26), on TREC DL 2019."""

from __future__ import annotations

import warnings

import polars as pl
import pytest
from conftest import shared_path

import searcheval_frames as sef

SYSTEMS = ["bm25", "bm25-rm3", "splade-pp-ed", "tasb"]


@pytest.fixture(scope="module")
def dl19():
    qrels = sef.read_qrels(shared_path("trec_dl_passage", "qrels.dl19-passage.txt"))
    runs = pl.concat([
        pl.DataFrame(sef.read_run(shared_path("trec_dl_passage", "runs",
                                              f"run.dl19-passage.{s}.txt"))).with_columns(
            pl.lit(s).alias("run"))
        for s in SYSTEMS
    ], how="diagonal_relaxed")
    return runs, qrels


@pytest.mark.shared
def test_more_than_two_runs_get_a_leaderboard_section_and_a_per_run_headline(dl19):
    runs, qrels = dl19
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = sef.report(runs, qrels, baseline="bm25", measures=["nDCG@10"], relevance_level=2,
                         n_resamples=1000, seed=0, progress=False)
    lb = rep.data.leaderboard
    assert lb is not None and lb.measure == "nDCG@10"
    # the same numbers as sef.leaderboard with the report's options
    pq = sef.evaluate(runs, qrels, ["nDCG@10"], per_query=True, relevance_level=2)
    ref = sef.leaderboard(per_query=pq, measure="nDCG@10", n_resamples=1000, seed=0,
                          progress=False)
    assert lb.to_polars().equals(ref.to_polars())
    head = rep.data.headline
    assert head.startswith("2 of 3 runs reliably better than bm25 on nDCG@10")
    assert "randomised Tukey HSD over all 4 runs" in head
    page = rep.to_html()
    assert 'id="leaderboard"' in page and "sef-leaderboard" in page
    assert page.index('id="verdicts"') < page.index('id="leaderboard"') < page.index('id="summary"')
    md = rep.to_markdown()
    assert "## Leaderboard on nDCG@10" in md and "| rank | run |" in md
    assert any(f.name == "leaderboard" for f in rep.data.figures)


@pytest.mark.shared
def test_two_runs_keep_the_pairwise_headline_and_no_section(dl19):
    runs, qrels = dl19
    two = runs.filter(pl.col("run").is_in(["bm25", "tasb"]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = sef.report(two, qrels, baseline="bm25", measures=["nDCG@10"], relevance_level=2,
                         figures=False, n_resamples=500, progress=False)
    assert rep.data.leaderboard is None
    assert 'id="leaderboard"' not in rep.to_html()
    assert "1 of 1 reliably better" in rep.data.headline


@pytest.mark.shared
def test_leaderboard_from_runs_and_qrels_equals_leaderboard_of_their_per_query_scores(dl19):
    runs, qrels = dl19
    a = sef.leaderboard(runs, qrels, measure="AP", relevance_level=2, test="tukey_hsd", seed=1)
    pq = sef.evaluate(runs, qrels, ["AP"], per_query=True, relevance_level=2)
    b = sef.leaderboard(per_query=pq, measure="AP", test="tukey_hsd", seed=1)
    assert a.to_polars().equals(b.to_polars()) and a._pairs.equals(b._pairs)
    assert a.n_queries == 43
