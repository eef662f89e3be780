"""evaluate(ties=...): the tie policies against independent oracles (issue #22).

* ``"trec_eval"``: the default, the same frame as before (trec_eval's own outputs are
  checked in test_trec_eval_expected.py);
* ``"given_order"``: ranx per query (ranx keeps the given order of tied documents in
  queries of at most 15 documents: numba's quicksort is an insertion sort there);
* ``"bounds"``: a slow reference that evaluates every order of every tie group.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import polars as pl
import pytest
from conftest import shared_path
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import searcheval_frames as sef
from searcheval_frames.errors import InvalidOptionError

MEASURES = ["P@1", "P@3", "R@5", "RR", "AP", "nDCG@3", "nDCG"]


@st.composite
def tied_runs(draw, max_docs: int = 15, queries: int = 3, max_label: int = 3):
    """Runs whose scores come from a few values (many ties) and qrels with at least one
    relevant document per query (ranx and trec_eval differ on queries without any)."""
    run_rows, qrels_rows = [], []
    for q in range(draw(st.integers(1, queries))):
        qid = f"q{q}"
        n = draw(st.integers(1, max_docs))
        docs = draw(st.permutations([f"d{i}" for i in range(n)]))
        scores = draw(st.lists(st.sampled_from([0.5, 1.0, 2.0]), min_size=n, max_size=n))
        run_rows += [(qid, d, s) for d, s in zip(docs, scores, strict=True)]
        labels = draw(st.lists(st.integers(0, max_label), min_size=n, max_size=n))
        labels[draw(st.integers(0, n - 1))] = max(1, max_label)  # one relevant at least
        judged = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        qrels_rows += [(qid, d, lab) for d, lab, j, in zip(docs, labels, judged, strict=True)
                       if j or lab >= 1]
    run = pl.DataFrame(run_rows, schema=["query_id", "doc_id", "score"], orient="row")
    qrels = pl.DataFrame(qrels_rows, schema=["query_id", "doc_id", "relevance"], orient="row")
    return run, qrels


def _ranx_per_query(run: pl.DataFrame, qrels: pl.DataFrame, metrics: list[str]) -> dict:
    from ranx import Qrels, Run, evaluate

    q: dict = {}
    for qid, did, rel in qrels.iter_rows():
        q.setdefault(qid, {})[did] = rel
    r: dict = {}
    for qid, did, score in run.iter_rows():  # insertion order = the run's row order
        r.setdefault(qid, {})[did] = score
    rq, rr = Qrels(q), Run(r)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        evaluate(rq, rr, metrics, make_comparable=True)
    return {m: dict(rr.scores[m]) for m in metrics}


RANX = {"P@1": "precision@1", "P@3": "precision@3", "R@5": "recall@5", "RR": "mrr",
        "AP": "map", "nDCG@3": "ndcg@3", "nDCG": "ndcg"}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tied_runs(), st.sampled_from([1, 2]))
def test_given_order_is_ranx_per_query(data, level):
    run, qrels = data
    ours = sef.evaluate(run, qrels, MEASURES, per_query=True, ties="given_order",
                        relevance_level=level)
    metrics = [RANX[m] + (f"-l{level}" if m not in ("nDCG@3", "nDCG") else "")
               for m in MEASURES]
    theirs = _ranx_per_query(run, qrels, metrics)
    checked = 0
    for m, rm in zip(MEASURES, metrics, strict=True):
        for qid, value in ours.filter(pl.col("measure") == m).select("query_id", "value").rows():
            assert value == pytest.approx(theirs[rm][qid], abs=1e-12), (m, qid)
            checked += 1
    assert checked == len(MEASURES) * run.get_column("query_id").n_unique()


def test_given_order_uses_the_rank_column_then_row_order():
    qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a"], "relevance": [1]})
    rows = pl.DataFrame({"query_id": "q", "doc_id": ["b", "a"], "score": [1.0, 1.0]})
    # trec_eval: doc_id descending puts b first; the given order too; rank 1 for a wins
    assert sef.evaluate(rows, qrels, "RR", ties="given_order")["value"][0] == 0.5
    ranked = rows.with_columns(rank=pl.Series([2, 1]))
    assert sef.evaluate(ranked, qrels, "RR", ties="given_order")["value"][0] == 1.0
    assert sef.evaluate(rows.reverse(), qrels, "RR", ties="given_order")["value"][0] == 1.0
    assert sef.evaluate(rows.reverse(), qrels, "RR")["value"][0] == 0.5


def _slow_bounds(run: pl.DataFrame, qrels: pl.DataFrame, measures: list[str]) -> pl.DataFrame:
    """min and max per (query, measure) over every order of every tie group: each order is
    a run of its own, evaluated in the given order."""
    parts = []
    for (qid,), docs in run.group_by(["query_id"], maintain_order=True):
        groups = [g.get_column("doc_id").to_list()
                  for _, g in docs.sort("score", descending=True, maintain_order=True)
                  .group_by("score", maintain_order=True)]
        for i, perm in enumerate(itertools.product(*(itertools.permutations(g)
                                                     for g in groups))):
            flat = [d for g in perm for d in g]
            parts.append(pl.DataFrame({"run": f"p{i}", "query_id": qid, "doc_id": flat,
                                       "score": -np.arange(len(flat), dtype=float)}))
    every = pl.concat(parts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (most orders lack the other queries)
        pq = sef.evaluate(every, qrels, measures, per_query=True, ties="given_order",
                          missing="skip")
    return pq.group_by("query_id", "measure").agg(pl.col("value").min().alias("low"),
                                                  pl.col("value").max().alias("high"))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tied_runs(max_docs=6, queries=2))
def test_bounds_are_the_extremes_over_all_tie_orders(data):
    run, qrels = data
    got = sef.evaluate(run, qrels, MEASURES, per_query=True, ties="bounds")
    plain = sef.evaluate(run, qrels, MEASURES, per_query=True)
    assert got.select("run", "query_id", "measure", "value").equals(plain)
    ref = _slow_bounds(run, qrels, MEASURES)
    joined = got.join(ref, on=["query_id", "measure"], suffix="_ref")
    assert joined.height == got.height
    for row in joined.iter_rows(named=True):
        assert row["low"] == pytest.approx(row["low_ref"], abs=1e-12), row
        assert row["high"] == pytest.approx(row["high_ref"], abs=1e-12), row
        assert row["low"] <= row["value"] + 1e-12 and row["value"] <= row["high"] + 1e-12
        assert row["tie_spread"] == pytest.approx(row["high"] - row["low"])


def test_bounds_on_trec_dl_2019():
    """A real run: the default value sits inside the bounds, and untied queries have no
    spread; the default path is unchanged."""
    qrels = sef.read_qrels(shared_path("trec_dl_passage", "qrels.dl19-passage.txt"))
    run = sef.read_run(shared_path("trec_dl_passage", "runs", "run.dl19-passage.bm25.txt"))
    default = sef.evaluate(run, qrels, ["nDCG@10", "AP"], per_query=True, relevance_level=2)
    same = sef.evaluate(run, qrels, ["nDCG@10", "AP"], per_query=True, relevance_level=2,
                        ties="trec_eval")
    assert default.equals(same)
    b = sef.evaluate(run, qrels, ["nDCG@10", "AP"], per_query=True, relevance_level=2,
                     ties="bounds")
    assert b.select(default.columns).equals(default)
    assert (b["low"] <= b["value"] + 1e-12).all() and (b["value"] <= b["high"] + 1e-12).all()


def test_ties_option_is_checked():
    run = {"q": {"a": 1.0}}
    with pytest.raises(InvalidOptionError, match="ties='random'"):
        sef.evaluate(run, {"q": {"a": 1}}, "P@1", ties="random")
