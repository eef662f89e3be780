"""sef.fill_holes and compare(unjudged=...): human labels win, only holes are judged, and
each treatment of holes equals an independent computation (pytrec_eval on qrels built
here by hand)."""

from __future__ import annotations

import glob

import numpy as np
import polars as pl
import pytest
import pytrec_eval
from conftest import DATA

import searcheval_frames as sef
from searcheval_frames.evalset.judges import holes_verdicts, overlap_grade

EX = DATA / "example"


@pytest.fixture(scope="module")
def runs():
    return sef.read_run(sorted(glob.glob(str(EX / "runs" / "*.run"))))


@pytest.fixture(scope="module")
def human():
    return sef.read_qrels(EX / "qrels.txt")


def _overlap(p):
    return p.with_columns(relevance=pl.struct("query", "text").map_elements(
        lambda r: overlap_grade(r["query"], r["text"]), return_dtype=pl.Int64))


@pytest.fixture(scope="module")
def filled(runs, human, tmp_path_factory):
    path = tmp_path_factory.mktemp("holes") / "judge.jsonl"
    return sef.fill_holes(runs, human, _overlap, depth=20, queries=EX / "queries.tsv",
                          docs=EX / "docs.jsonl", journal=path, progress=False)


def test_only_unjudged_pooled_pairs_are_judged_and_humans_win(runs, human, filled):
    top = (runs.sort(["run", "query_id", "score", "doc_id"], descending=[False, False, True, True])
           .group_by(["run", "query_id"], maintain_order=True).head(20)
           .select("query_id", "doc_id").unique())
    want_holes = top.join(human, on=["query_id", "doc_id"], how="anti")
    f = filled.frame
    judged = f.filter(pl.col("source") != "human").select("query_id", "doc_id")
    assert judged.sort(pl.all()).equals(want_holes.sort(pl.all()))
    assert filled.holes == want_holes.height and filled.filled == want_holes.height
    kept = f.filter(pl.col("source") == "human").select("query_id", "doc_id", "relevance")
    assert kept.sort(pl.all()).equals(human.select(kept.columns).sort(pl.all()))
    assert f.select("query_id", "doc_id").is_duplicated().sum() == 0
    assert set(f["source"]) == {"human", "judge:_overlap"}


def test_a_second_fill_calls_nothing_and_keeps_human_labels(runs, filled, tmp_path):
    again = sef.fill_holes(runs, filled.frame, _overlap, depth=20, queries=EX / "queries.tsv",
                           docs=EX / "docs.jsonl", journal=filled.judged.journal,
                           progress=False)
    assert again.judged.calls == 0
    assert again.frame.sort(pl.all()).equals(filled.frame.sort(pl.all()))


def _trec(run_df, qrels_rows, measures):
    qrels = {}
    for q, d, r in qrels_rows:
        qrels.setdefault(q, {})[d] = int(r)
    out = {}
    for name, g in run_df.group_by("run"):
        run = {}
        for q, d, s in g.select("query_id", "doc_id", "score").iter_rows():
            run.setdefault(q, {})[d] = float(s)
        ev = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
        out[name[0]] = ev
    return out


def test_compare_unjudged_relevant_equals_pytrec_eval_with_holes_filled_by_hand(runs, human,
                                                                                 filled):
    c = sef.compare(runs, filled.frame, ["nDCG@10", "AP"], baseline="bm25", unjudged="relevant",
                    n_resamples=10)
    pq = c.per_query
    human_rows = set(human.select("query_id", "doc_id").iter_rows())
    judged_q = set(human["query_id"])
    for measure, trec, depth in (("nDCG@10", "ndcg_cut_10", 10), ("AP", "map", None)):
        rows = list(human.iter_rows())
        added = set()
        for name, g in runs.group_by(["run", "query_id"]):
            g = g.sort(["score", "doc_id"], descending=[True, True])
            for d in g["doc_id"].to_list()[: depth or len(g)]:
                key = (name[1], d)
                if key not in human_rows and name[1] in judged_q and key not in added:
                    added.add(key)
                    rows.append((name[1], d, 1))
        ref = _trec(runs, rows, {trec.split("_cut")[0] + ("_cut" if depth else "")})
        for run, q, v in pq.filter(pl.col("measure") == measure).select(
                "run", "query_id", "value").iter_rows():
            assert v == pytest.approx(ref[run][q][trec], abs=1e-12), (measure, run, q)


def test_compare_nonrelevant_and_judge_equal_compare_on_the_plain_qrels(runs, human, filled):
    opts = dict(measures=["nDCG@10", "P@10"], n_resamples=50)
    a = sef.compare(runs, filled.frame, baseline="bm25", unjudged="nonrelevant", **opts)
    b = sef.compare(runs, human, baseline="bm25", **opts)
    assert a.frame.equals(b.frame)
    c = sef.compare(runs, filled.frame, baseline="bm25", unjudged="judge", **opts)
    d = sef.compare(runs, filled.frame.drop("source"), baseline="bm25", **opts)
    assert c.frame.equals(d.frame)
    assert not np.allclose(a.frame["delta"].to_numpy(), c.frame["delta"].to_numpy())


def test_holes_verdicts_lists_each_treatment(runs, filled):
    v = holes_verdicts(runs, filled.frame, ["nDCG@10", "AP"], baseline="bm25", n_resamples=50)
    assert v.height == 10
    assert set(v["nonrelevant"]) | set(v["relevant"]) | set(v["judge"]) <= {"better", "worse",
                                                                            "n.s."}
    want = (v["nonrelevant"] != v["relevant"]) | (v["nonrelevant"] != v["judge"])
    assert v["changed"].to_list() == want.to_list()


def test_unjudged_option_is_checked(runs, human):
    with pytest.raises(sef.InvalidOptionError, match="unjudged"):
        sef.compare(runs, human, ["P@5"], baseline="bm25", unjudged="ignore")
    with pytest.raises(sef.SearchEvalError, match="unjudged"):
        sef.compare(per_query=sef.evaluate(runs, human, ["P@5"], per_query=True),
                    baseline="bm25", unjudged="judge")
