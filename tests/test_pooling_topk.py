"""The top-k rows of each query without ranking the run (evalset/_topk.py), against the
ranking itself: coverage and the report's check banner must not change (issue #25)."""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import searcheval_frames as sef
from searcheval_frames.core.ranking import ranked_rows
from searcheval_frames.evalset._topk import judged_in_top, top_mask
from searcheval_frames.frames import mark_checked, query_blocks, run_frame


def _run(rng: np.random.Generator, equal: bool, ties: bool) -> pl.DataFrame:
    rows = []
    for r in ("a", "b", "c"):
        for q in range(int(rng.integers(1, 6))):
            n = 12 if equal else int(rng.integers(1, 25))
            for d in rng.choice(40, size=n, replace=False):
                doc = f"d{d}" if rng.random() < 0.8 else f"D{d:03d}"  # byte order matters
                score = float(rng.integers(0, 4)) if ties else float(rng.normal())
                rows.append((r, f"q{q}", doc, score))
    return pl.DataFrame(rows, schema=["run", "query_id", "doc_id", "score"], orient="row")


@pytest.mark.parametrize("equal", [True, False])
@pytest.mark.parametrize("ties", [True, False])
def test_top_mask_is_the_rank_cut(equal, ties):
    rng = np.random.default_rng(11)
    for _ in range(40):
        run = _run(rng, equal, ties)
        for depth in (1, 2, 5, 12, 30):
            want = ranked_rows(run, depth).select("run", "query_id", "doc_id").sort(
                "run", "query_id", "doc_id")
            got = run.filter(pl.Series(top_mask(run, query_blocks(run), depth))).select(
                "run", "query_id", "doc_id").sort("run", "query_id", "doc_id")
            assert_frame_equal(got, want)


def test_coverage_is_counted_on_the_ranked_top_k():
    rng = np.random.default_rng(12)
    for i in range(30):
        run = _run(rng, i % 2 == 0, i % 3 != 0)
        qrels = pl.DataFrame([(f"q{q}", f"d{d}", int(rng.integers(-1, 3)))
                              for q in range(7) for d in range(0, 40, 3)],
                             schema=["query_id", "doc_id", "relevance"], orient="row")
        for depth in (1, 5, 20):
            top = ranked_rows(run, depth).join(
                qrels.select("query_id", "doc_id", pl.lit(1).alias("j")),
                on=["query_id", "doc_id"], how="left")
            want = top.group_by("run", "query_id").agg(
                pl.len().cast(pl.Int64).alias("retrieved"),
                pl.col("j").sum().cast(pl.Int64).alias("judged")).sort("run", "query_id")
            got = judged_in_top(run, qrels, depth, query_blocks(run)).sort("run", "query_id")
            assert_frame_equal(got, want)
            cov = sef.coverage(run.sample(fraction=1.0, shuffle=True, seed=i), qrels,
                               depth=depth, per_query=True)  # (a query split: the ranking)
            assert_frame_equal(sef.coverage(run, qrels, depth=depth, per_query=True), cov)


def test_check_of_a_validated_run_finds_what_it_finds_unvalidated():
    rng = np.random.default_rng(13)
    measures = ["P@5", "P@10", "nDCG@10", "AP", "RR@3"]
    for i in range(40):
        run = run_frame(_run(rng, i % 2 == 0, i % 3 != 0))
        qrels = pl.DataFrame([(f"q{q}", f"d{d}", int(rng.integers(0, 3)))
                              for q in range(7) for d in range(0, 40, 3)],
                             schema=["query_id", "doc_id", "relevance"], orient="row")
        want = sef.check(run.clone(), qrels, measures=measures).to_polars()
        validated = mark_checked(run.clone(), query_blocks(run))
        assert_frame_equal(sef.check(validated, qrels, measures=measures).to_polars(), want)
        assert want.height  # (ties at the cutoffs, queries without labels: found)


@pytest.mark.parametrize("family", sorted(__import__(
    "searcheval_frames.evalset._topk", fromlist=["TOP_ONLY"]).TOP_ONLY))
def test_top_only_families_read_the_top_k_only(family):
    """metric_bounds evaluates these on the run cut at their cutoff: the same numbers."""
    from searcheval_frames.evalset._topk import top_only
    from searcheval_frames.measures import parse_measure

    rng = np.random.default_rng(14)
    names = {"nDCG": ["nDCG@{k}", "nDCG(gain=exp)@{k}"], "P": ["P@{k}", "P(rel=2)@{k}"]}.get(
        family, [f"{family}@{{k}}"])
    for _ in range(15):
        run = _run(rng, False, True)
        qrels = pl.DataFrame([(f"q{q}", f"d{d}", int(rng.integers(-1, 4)))
                              for q in range(7) for d in range(0, 40, 2)],
                             schema=["query_id", "doc_id", "relevance"], orient="row")
        ranked = ranked_rows(run)
        for k in (1, 3, 10):
            ms = [n.format(k=k) for n in names]
            assert all(top_only(parse_measure(m)) for m in ms)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                full = sef.evaluate(run, qrels, ms, per_query=True)
                cut = sef.evaluate(ranked.filter(pl.col("rank") <= k).drop("rank"), qrels, ms,
                                   per_query=True)
            assert_frame_equal(pl.DataFrame(cut), pl.DataFrame(full), check_exact=True)


@pytest.mark.parametrize("measures", [
    ["P@5", "R@10", "nDCG@10", "AP", "RR", "ERR@5", "Rprec"],
    ["P@5", "P@2", "RR@3", "Success@2"],  # top-only and fill-free: cut runs, fewer groups
])
@pytest.mark.parametrize("depth", [None, 3])
def test_metric_bounds_equal_the_per_run_evaluations(measures, depth):
    """Every run's low scenario in one evaluation, cut runs for the top-only measures,
    fill-free measures in the deepest group: the bounds and holes stay those of one
    evaluation per run and measure on the whole ranking."""
    from searcheval_frames.measures import parse_measure

    rng = np.random.default_rng(15)
    for i in range(8):
        run = _run(rng, i % 2 == 0, i % 3 != 0)
        qrels = pl.DataFrame([(f"q{q}", f"d{d}", int(rng.integers(-1, 3)))
                              for q in range(7) for d in range(0, 40, 3)],
                             schema=["query_id", "doc_id", "relevance"], orient="row")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = pl.DataFrame(sef.metric_bounds(run, qrels, measures, per_query=True,
                                                 depth=depth))
            for per_query in (True, False):  # the caller's own evaluation: the same bounds
                own = sef.evaluate(run, qrels, [*measures, "P@1"], per_query=True)
                assert_frame_equal(
                    pl.DataFrame(sef.metric_bounds(run, qrels, measures, per_query=per_query,
                                                   depth=depth, values=own)),
                    pl.DataFrame(sef.metric_bounds(run, qrels, measures, per_query=per_query,
                                                   depth=depth)), check_exact=True)
            for (name,), part in run.group_by(["run"], maintain_order=True):
                gaps = ranked_rows(part).join(qrels, on=["query_id", "doc_id"], how="anti")
                for m in measures:
                    cut = [c for c in (parse_measure(m).cutoff, depth) if c is not None]
                    fill = gaps.filter(pl.col("rank") <= min(cut)) if cut else gaps
                    n = fill.group_by("query_id").agg(pl.len().alias("n"))
                    fill = fill.select("query_id", "doc_id", pl.lit(2, pl.Int64).alias("relevance"))
                    lo = pl.DataFrame(sef.evaluate(part, qrels, [m], per_query=True))
                    hi = pl.DataFrame(sef.evaluate(part, pl.concat([qrels, fill]), [m],
                                                   per_query=True))
                    mine = got.filter(pl.col("run") == name, pl.col("measure") == m).join(
                        lo.select("query_id", "value"), on="query_id").join(
                        hi.select("query_id", pl.col("value").alias("hi")), on="query_id").join(
                        n, on="query_id", how="left")
                    assert mine.height == lo.height
                    assert (mine["if_nonrelevant"] == mine["value"]).all()
                    assert (mine["if_relevant"] == mine["hi"]).all()
                    assert (mine["holes"] == mine["n"].fill_null(0)).all()
