"""DCG@k, DCG(gain=exp)@k and Judged (no cutoff), value by value per query.

* DCG@k / DCG(gain=exp)@k   ranx ``dcg@k`` / ``dcg_burges@k`` and scikit-learn's
  ``dcg_score(ignore_ties=True)`` (linear gains) on tie-free runs (scores replaced by
  the position in our order: ranx and scikit-learn break ties their own way);
* Judged                    ir_measures' ``Judged`` (its own Python provider), fed in
  our order; ir_measures counts every qrels row as judged, we count labels >= 0 (as
  trec_eval and our Judged@k), so its qrels get the negative rows removed.

Real data: TREC DL 2019/2020 passage (7 published runs each, labels 0-3), Cranfield
(labels -1..4) and Vaswani (binary), plus hypothesis-generated runs with ties, -1 labels
and queries missing on either side.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter

import numpy as np
import polars as pl
import pytest
from conftest import shared_path
from hypothesis import HealthCheck, given, settings
from trec_files import collections, read_trec_qrels, read_trec_run

import searcheval_frames as sef
from searcheval_frames.core.evaluate import evaluate_frames
from searcheval_frames.errors import SearchEvalWarning
from searcheval_frames.measures import parse_measure

TOL = 1e-9
COMPARED: Counter = Counter()
MAXDIFF: dict[str, float] = {}
DL_RUNS = ["bm25", "bm25-rm3", "splade-pp-ed", "tasb", "openai-ada2", "repllama",
           "bm25-minilm-rerank"]
SMALL_RUNS = ["bm25", "minilm", "bm25-minilm-rerank"]


@pytest.fixture(scope="module", autouse=True)
def _report_counts():
    yield
    for name, n in sorted(COMPARED.items()):
        print(f"[oracle total] {name}: {n} values, max |diff| {MAXDIFF.get(name, 0.0):.3g}")


def collection(name: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    if name.startswith("dl"):
        d = shared_path("trec_dl_passage")
        year = name[2:]
        qrels = read_trec_qrels(d / f"qrels.dl{year}-passage.txt")
        files = [(r, d / "runs" / f"run.dl{year}-passage.{r}.txt") for r in DL_RUNS]
    else:
        d = shared_path(name)
        short = {"cranfield": "cranfield", "vaswani_npl": "vaswani"}[name]
        qrels = read_trec_qrels(d / ("qrels.cranfield.txt" if short == "cranfield" else "qrels"))
        files = [(r, d / "runs" / f"run.{short}.{r}.txt") for r in SMALL_RUNS]
    run = pl.concat([read_trec_run(p).with_columns(pl.lit(r).alias("run")) for r, p in files])
    return run, qrels


COLLECTIONS = ["dl19", "dl20", "cranfield", "vaswani_npl"]


def ours(run: pl.DataFrame, qrels: pl.DataFrame, names: list[str]) -> dict:
    ms = [parse_measure(n) for n in names]
    by_name = {m.name: n for m, n in zip(ms, names, strict=True)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = evaluate_frames(run, qrels, ms, per_query=True, missing="skip")
    return {(r, q, by_name[m]): v for r, q, m, v in out.iter_rows()}


def tie_free(run: pl.DataFrame) -> pl.DataFrame:
    """Our order (score desc, doc_id desc), scores replaced by n + 1 - position."""
    return run.sort(["run", "query_id", "score", "doc_id"],
                    descending=[False, False, True, True]).with_columns(
        (pl.len() - pl.int_range(pl.len())).over("run").cast(pl.Float64).alias("score"))


def record(label: str, mine: float, ref: float, bad: list, key) -> None:
    COMPARED[label] += 1
    diff = abs(mine - ref)
    MAXDIFF[label] = max(MAXDIFF.get(label, 0.0), diff)
    if not math.isclose(mine, ref, rel_tol=0.0, abs_tol=TOL):
        bad.append((key, ref, mine))


def nested(df: pl.DataFrame) -> dict:
    out: dict = {}
    for qid, did, v in df.iter_rows():
        out.setdefault(qid, {})[did] = v
    return out


# ----------------------------------------------------------------------------- DCG
DCG_PAIRS = [("DCG@10", "dcg@10"), ("DCG@5", "dcg@5"), ("DCG@100", "dcg@100"),
             ("DCG(gain=exp)@10", "dcg_burges@10"), ("DCG(gain=exp)@20", "dcg_burges@20")]


def check_dcg_ranx(run: pl.DataFrame, qrels: pl.DataFrame) -> int:
    ranx = pytest.importorskip("ranx")
    run = tie_free(run)
    mine = ours(run, qrels, [a for a, _ in DCG_PAIRS])
    # ranx keeps its qrels' labels; non-positive labels gain nothing in either. ranx wants
    # the same queries on both sides, each with a positive label
    positive = qrels.filter(pl.col("relevance") > 0)
    both = set(positive["query_id"]) & set(run["query_id"])
    if not both:
        return 0
    positive = positive.filter(pl.col("query_id").is_in(both))
    run = run.filter(pl.col("query_id").is_in(both))
    q = ranx.Qrels.from_dict(nested(positive))
    bad: list = []
    n = 0
    for (name,), part in run.group_by(["run"], maintain_order=True):
        r = ranx.Run.from_dict(nested(part.select("query_id", "doc_id", "score")))
        ranx.evaluate(q, r, [b for _, b in DCG_PAIRS], return_mean=False, make_comparable=True)
        for a, b in DCG_PAIRS:
            for qid, ref in r.scores[b].items():
                if qid not in set(part["query_id"]):
                    continue  # make_comparable's empty ranking for a query the run lacks
                n += 1
                record(f"{a.split('@')[0]} vs ranx {b.split('@')[0]}", mine[(name, qid, a)],
                       ref, bad, (name, qid, a))
    assert not bad, f"{len(bad)} of {n} differ: {bad[:5]}"
    return n


def check_dcg_sklearn(run: pl.DataFrame, qrels: pl.DataFrame, ks=(5, 10, 100)) -> int:
    """scikit-learn's dcg_score over each query's retrieved documents (labels of the
    unjudged = 0, negative labels clipped to 0 as here), tie-free scores."""
    from sklearn.metrics import dcg_score

    run = tie_free(run)
    mine = ours(run, qrels, [f"DCG@{k}" for k in ks] + ["DCG"])
    labelled = run.join(qrels, on=["query_id", "doc_id"], how="left").with_columns(
        pl.col("relevance").fill_null(0).clip(lower_bound=0))
    have = set(qrels["query_id"])
    bad: list = []
    n = 0
    for (name, qid), part in labelled.group_by(["run", "query_id"], maintain_order=True):
        if qid not in have:
            continue
        y = np.asarray([part["relevance"].to_numpy()], dtype=float)
        s = np.asarray([part["score"].to_numpy()], dtype=float)
        for k in (*ks, None):
            if y.shape[1] < 2:  # scikit-learn refuses one document; DCG is then the gain
                ref = float(y[0, 0]) if (k is None or k >= 1) else 0.0
            else:
                ref = float(dcg_score(y, s, k=k, ignore_ties=True))
            key = "DCG" if k is None else f"DCG@{k}"
            n += 1
            record("DCG vs sklearn dcg_score", mine[(name, qid, key)], ref, bad, (name, qid, key))
    assert not bad, f"{len(bad)} of {n} differ: {bad[:5]}"
    return n


@pytest.mark.shared
@pytest.mark.parametrize("coll", COLLECTIONS)
def test_dcg_real(coll):
    run, qrels = collection(coll)
    n = check_dcg_ranx(run, qrels) + check_dcg_sklearn(run, qrels)
    print(f"[oracle] DCG {coll}: {n}")
    assert n >= 3 * 30 * 5


def test_dcg_by_hand_and_names():
    run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c", "d"],
                        "score": [4.0, 3.0, 2.0, 1.0]})
    qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c", "e"],
                          "relevance": [3, -1, 1, 2]})
    got = dict(sef.evaluate(run, qrels, ["DCG@2", "DCG@3", "DCG", "dcg_burges@3",
                                         "DCG(gain={1:5})@3"]).select("measure", "value")
               .iter_rows())
    assert got["DCG@2"] == 3.0  # b's -1 gains nothing
    assert got["DCG@3"] == pytest.approx(3.0 + 1 / math.log2(4), abs=1e-15)
    assert got["DCG"] == got["DCG@3"]  # d is unjudged
    assert got["DCG(gain=exp)@3"] == pytest.approx(7.0 + 1 / math.log2(4), abs=1e-15)
    assert got["DCG(gain={1:5})@3"] == pytest.approx(3.0 + 5 / math.log2(4), abs=1e-15)
    for text in ["DCG@10", "DCG(gain=exp)@10", "DCG(gain={0:0,1:1,2:3})@5", "DCG"]:
        assert parse_measure(parse_measure(text).name).name == parse_measure(text).name


def test_sklearn_averages_ties_we_do_not():
    """The documented difference: scikit-learn's default averages the gains of tied
    documents; we rank ties by doc_id descending (trec_eval)."""
    from sklearn.metrics import dcg_score

    run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 2.0]})
    qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "relevance": [2, 0, 1]})
    mine = sef.evaluate(run, qrels, ["DCG@3"])["value"][0]
    assert mine == pytest.approx(2 + 1 / math.log2(3), abs=1e-15)  # c (larger id) first
    avg = dcg_score([[2, 0, 1]], [[3, 2, 2]])
    assert avg == pytest.approx(2 + 0.5 / math.log2(3) + 0.5 / math.log2(4), abs=1e-12)
    assert mine != pytest.approx(avg)


# ----------------------------------------------------------------------------- Judged
def check_judged(run: pl.DataFrame, qrels: pl.DataFrame) -> int:
    ir_measures = pytest.importorskip("ir_measures")
    mine = ours(run, qrels, ["Judged", "Judged@10"])
    usable = qrels.filter(pl.col("relevance") >= 0)
    q = [ir_measures.Qrel(a, b, int(c)) for a, b, c in usable.iter_rows()]
    bad: list = []
    n = 0
    ordered = run.sort(["run", "query_id", "score", "doc_id"],
                       descending=[False, False, True, True])
    for (name,), part in ordered.group_by(["run"], maintain_order=True):
        docs = [ir_measures.ScoredDoc(a, b, c) for a, b, c in
                part.select("query_id", "doc_id", "score").iter_rows()]
        for met in ir_measures.judged.iter_calc([ir_measures.Judged], q, docs):
            if (name, met.query_id, "Judged") not in mine:
                continue  # a query whose only labels are negative: ir_measures lacks it
            n += 1
            record("Judged vs ir_measures Judged", mine[(name, met.query_id, "Judged")],
                   met.value, bad, (name, met.query_id))
    assert not bad, f"{len(bad)} of {n} differ: {bad[:5]}"
    # every query of ours that has a usable label was compared
    return n


@pytest.mark.shared
@pytest.mark.parametrize("coll", COLLECTIONS)
def test_judged_real(coll):
    run, qrels = collection(coll)
    n = check_judged(run, qrels)
    print(f"[oracle] Judged {coll}: {n}")
    assert n >= 3 * 30


def test_judged_by_hand():
    run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c", "d"],
                        "score": [4.0, 3.0, 2.0, 1.0]})
    qrels = pl.DataFrame({"query_id": ["q", "q", "q", "r"], "doc_id": ["a", "b", "c", "x"],
                          "relevance": [0, -1, 2, 1]})
    with pytest.warns(SearchEvalWarning, match="no results for 1 of 2"):
        got = sef.evaluate(run, qrels, ["Judged", "Judged@2", "Judged@10"], per_query=True,
                           missing="zero")
    vals = {(q, m): v for _, q, m, v in got.iter_rows()}
    assert vals[("q", "Judged")] == 0.5  # a and c of four; b's -1 counts as unjudged
    assert vals[("q", "Judged@2")] == 0.5
    assert vals[("q", "Judged@10")] == 0.2  # divides by k, unlike ir_measures' Judged@k
    assert vals[("r", "Judged")] == 0.0  # nothing retrieved
    assert parse_measure("judged").name == "Judged"


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=collections())
def test_random_dcg_and_judged(data):
    run, qrels = data
    if not set(run["query_id"]) & set(qrels["query_id"]):
        return
    check_dcg_ranx(run, qrels)
    check_dcg_sklearn(run, qrels, ks=(1, 3, 5))
    if qrels.filter(pl.col("relevance") >= 0).height:
        check_judged(run, qrels)
