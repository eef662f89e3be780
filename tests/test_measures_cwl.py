"""C/W/L user models (INST, INSQ, BPM, SDCG) against cwl_eval through ir_measures' cwl_eval
provider, value by value per query.

cwl_eval keeps the order it is given among tied scores (a stable sort by score), so runs
keep their ties and are fed in our order (score descending, doc_id descending). Real data:
TREC DL 2019/2020 passage (7 published runs each, labels 0-3: max_rel=3 and the binary
max_rel=1), Cranfield (labels -1..4: max_rel=4) and Vaswani (binary); and hypothesis-
generated runs with ties, -1 labels and queries missing on either side.
"""

from __future__ import annotations

import logging
import math
import warnings
from collections import Counter

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from test_measures_dcg import collection
from test_oracle_ir_measures import collections, trec_order

import searcheval_frames as sef
from searcheval_frames.core.evaluate import evaluate_frames
from searcheval_frames.errors import UnknownMeasureError
from searcheval_frames.measures import parse_measure

ir_measures = pytest.importorskip("ir_measures")
pytest.importorskip("cwl")

TOL = 1e-9
COMPARED: Counter = Counter()
MAXDIFF: dict[str, float] = {}


@pytest.fixture(scope="module", autouse=True)
def _report_counts():
    logging.getLogger("ir_measures.cwl_eval").setLevel(logging.ERROR)
    yield
    for name, n in sorted(COMPARED.items()):
        print(f"[oracle total] {name} vs cwl_eval: {n} values, max |diff| "
              f"{MAXDIFF.get(name, 0.0):.3g}")


def pairs(max_rel: int) -> dict:
    """our name -> the ir_measures measure."""
    r = "" if max_rel == 1 else f",max_rel={max_rel}"
    rs = "" if max_rel == 1 else f"(max_rel={max_rel})"
    return {
        f"INST(T=1{r})": ir_measures.INST(T=1, max_rel=max_rel),
        f"INST(T=2.5{r})": ir_measures.INST(T=2.5, max_rel=max_rel),
        f"INSQ(T=1{r})": ir_measures.INSQ(T=1, max_rel=max_rel),
        f"INSQ(T=3{r})": ir_measures.INSQ(T=3, max_rel=max_rel),
        f"BPM(T=1{r})@1000": ir_measures.BPM(T=1, max_rel=max_rel) @ 1000,
        f"BPM(T=2{r},K=10)": ir_measures.BPM(T=2, max_rel=max_rel) @ 10,
        f"BPM(T=0.5{r})@3": ir_measures.BPM(T=0.5, max_rel=max_rel) @ 3,
        f"SDCG{rs}@10": ir_measures.SDCG(max_rel=max_rel) @ 10,
        f"SDCG{rs}@5": ir_measures.SDCG(max_rel=max_rel) @ 5,
    }


def check(run: pl.DataFrame, qrels: pl.DataFrame, max_rel: int) -> int:
    want = pairs(max_rel)
    ms = [parse_measure(n) for n in want]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = evaluate_frames(run, qrels, ms, per_query=True, missing="skip")
    by = {m.name: n for m, n in zip(ms, want, strict=True)}
    mine = {(r, q, by[m]): v for r, q, m, v in out.iter_rows()}
    q = [ir_measures.Qrel(a, b, int(c)) for a, b, c in
         qrels.select("query_id", "doc_id", "relevance").iter_rows()]
    n, bad = 0, []
    for (name,), part in trec_order(run).group_by(["run"], maintain_order=True):
        docs = [ir_measures.ScoredDoc(a, b, c) for a, b, c in
                part.select("query_id", "doc_id", "score").iter_rows()]
        in_run = set(part["query_id"])
        for ours_name, measure in want.items():
            fam = ours_name.split("(")[0].split("@")[0]
            for met in ir_measures.cwl_eval.iter_calc([measure], q, docs):
                if met.query_id not in in_run:
                    assert met.value == 0  # ir_measures' 0 for a query the run lacks
                    continue
                value = mine[(name, met.query_id, ours_name)]
                n += 1
                COMPARED[fam] += 1
                MAXDIFF[fam] = max(MAXDIFF.get(fam, 0.0), abs(value - met.value))
                if not math.isclose(value, met.value, rel_tol=0.0, abs_tol=TOL):
                    bad.append((name, met.query_id, ours_name, met.value, value))
    assert not bad, f"{len(bad)} of {n} differ: {bad[:5]}"
    return n


@pytest.mark.shared
@pytest.mark.parametrize(("coll", "max_rels"), [("dl19", (3, 1)), ("dl20", (3,)),
                                                 ("cranfield", (4,)), ("vaswani_npl", (1,))])
def test_cwl_real(coll, max_rels):
    run, qrels = collection(coll)
    n = sum(check(run, qrels, r) for r in max_rels)
    print(f"[oracle] C/W/L {coll}: {n}")
    assert n >= 9 * 3 * 30


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=collections())
def test_random_cwl(data):
    run, qrels = data
    if set(run["query_id"]) & set(qrels["query_id"]):
        check(run, qrels, 4)
        check(run, qrels, 1)


def test_by_hand_and_names():
    run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c", "d"],
                        "score": [4.0, 3.0, 2.0, 1.0]})
    qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "relevance": [0, 3, 1]})
    got = dict(sef.evaluate(run, qrels, ["BPM(T=1,max_rel=3)@10", "BPM(T=2,max_rel=3)@10",
                                         "SDCG(max_rel=3)@2", "INSQ(T=1,max_rel=3)"])
               .select("measure", "value").iter_rows())
    # T=1: b (gain 1) reached at rank 2 -> mean of 0, 1; T=2: never reached -> 4/3 over 10
    assert got["BPM(max_rel=3)@10"] == 0.5
    assert got["BPM(max_rel=3,t=2.0)@10"] == pytest.approx((1 + 1 / 3) / 10, abs=1e-15)
    assert got["SDCG(max_rel=3)@2"] == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)))
    z = sum((2 / (i + 1)) ** 2 for i in range(1, 1001))
    assert got["INSQ(max_rel=3)"] == pytest.approx(((2 / 3) ** 2 + (1 / 3) * (2 / 4) ** 2) / z)
    for text in ["INST(T=1)", "INSQ(T=1)", "BPM(T=1,K=1000)", "BPM(T=1)@1000", "SDCG@10",
                 "INST(T=2,max_rel=3)", "BPM(T=1,max_rel=4)@20"]:
        m = parse_measure(text)
        assert parse_measure(m.name) == m
    assert parse_measure("BPM(T=1,K=1000)") == parse_measure("bpm@1000")
    with pytest.raises(UnknownMeasureError, match="both set"):
        parse_measure("BPM(K=10)@20")
    with pytest.raises(UnknownMeasureError, match="min_rel must be below max_rel"):
        parse_measure("INST(min_rel=2,max_rel=2)")
    with pytest.raises(UnknownMeasureError, match="needs a cutoff"):
        parse_measure("SDCG")
