"""ERR, RBP, RBPResidual and alpha-nDCG: names, hand-computed values, the public API, the CLI
and bad input. The oracle comparisons are in test_oracle_ir_measures.py."""

from __future__ import annotations

import math
import subprocess
import sys
import warnings
from pathlib import Path

import pandas as pd
import polars as pl
import pytest

import searcheval_frames as sef
from searcheval_frames.errors import (
    DuplicateRowsError,
    InvalidRelevanceError,
    MissingColumnError,
    UnknownMeasureError,
)
from searcheval_frames.measures import parse_measure

REPO = Path(__file__).resolve().parents[1]


# ----------------------------------------------------------------------------- names
@pytest.mark.parametrize(("given", "canonical", "trec"), [
    ("ERR@20", "ERR@20", None),
    ("err@20", "ERR@20", None),
    ("ERR(max_rel=4)@20", "ERR@20", None),
    ("ERR(max_rel=3)@10", "ERR(max_rel=3)@10", None),
    ("rbp", "RBP(p=0.9)", "rbp"),
    ("RBP", "RBP(p=0.9)", "rbp"),
    ("RBP(p=0.8)", "RBP(p=0.8)", "rbp_p=0.8"),
    ("rbp_p=0.8", "RBP(p=0.8)", "rbp_p=0.8"),
    ("RBP(p=0.8,rel=2)", "RBP(p=0.8,rel=2)", None),
    ("RBP(rel=2,p=0.8)@10", "RBP(p=0.8,rel=2)@10", None),
    ("RBP(gain=label,p=0.95)", "RBP(gain=label,p=0.95)", None),
    ("RBP(gain=scaled,p=0.95)", "RBP(p=0.95)", "rbp_p=0.95"),
    ("rbp_resid", "RBPResidual(p=0.9)", "rbp_resid"),
    ("rbp_resid_p=0.5", "RBPResidual(p=0.5)", "rbp_resid_p=0.5"),
    ("RBPResidual(p=0.8)", "RBPResidual(p=0.8)", "rbp_resid_p=0.8"),
    ("alpha_nDCG@20", "alpha-nDCG@20", None),
    ("alpha-nDCG(alpha=0.5)@5", "alpha-nDCG@5", None),
    ("alpha_nDCG(alpha=0.25,rel=2)@10", "alpha-nDCG(alpha=0.25,rel=2)@10", None),
    ("compat", "Compat", None),
    ("Compat(p=0.95,normalize=true)", "Compat", None),
    ("Compat(p=0.8,normalize=false)", "Compat(normalize=False,p=0.8)", None),
    # ranx spellings
    ("ndcg_burges@10", "nDCG(gain=exp)@10", None),
    ("hit_rate@5", "Success@5", "success_5"),
    ("r-precision", "Rprec", "Rprec"),
    ("mrr@10", "RR@10", None),
    ("map@100", "AP@100", "map_cut_100"),
    ("ndcg@10", "nDCG@10", "ndcg_cut_10"),
    ("precision@10", "P@10", "P_10"),
    ("recall@100", "R@100", "recall_100"),
])
def test_names(given, canonical, trec):
    m = parse_measure(given)
    assert m.name == canonical
    assert m.trec_name == trec
    assert parse_measure(m.name) == m  # canonical names parse back


@pytest.mark.parametrize("bad", ["RBP(p=1.5)", "RBP(p=0)", "RBP(p=x)", "RBP(rel=2,gain=label)",
                                 "RBP(gain=exp)", "ERR(max_rel=0)@10", "alpha-nDCG",
                                 "alpha-nDCG(alpha=2)@10", "RBPResidual@10", "rbp.95",
                                 "ERR(p=0.5)@10", "Compat@10", "Compat(normalize=maybe)"])
def test_bad_names(bad):
    with pytest.raises(UnknownMeasureError):
        parse_measure(bad)


def test_listed():
    table = sef.list_measures()
    rows = {r["family"]: r for r in table.iter_rows(named=True)}
    for fam in ("ERR", "RBP", "RBPResidual", "alpha-nDCG", "Compat"):
        assert rows[fam]["formula"] and rows[fam]["summary"]
    assert "rbp_resid" in rows["RBPResidual"]["aliases"]
    assert rows["RBP"]["trec_eval"] == "rbp"
    assert "ndcg_burges" in rows["nDCG"]["aliases"]


# ----------------------------------------------------------------------------- values by hand
RUN = pl.DataFrame({"query_id": "q1", "doc_id": ["a", "x", "b", "c"], "score": [4.0, 3.0, 2.0, 1.0]})
QRELS = pl.DataFrame({"query_id": "q1", "doc_id": ["a", "b", "c", "e"], "relevance": [3, 0, 2, 1]})


def values(run, qrels, names, **opts):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = sef.evaluate(run, qrels, names, **opts)
    return dict(zip(out["measure"], out["value"], strict=True))


def test_err_by_hand():
    # ranks 1..4: labels 3, unjudged, 0, 2; R = (2^g - 1)/16
    got = values(RUN, QRELS, ["ERR@3", "ERR@4", "ERR", "ERR(max_rel=3)@4"])
    r1, r4 = 7 / 16, 3 / 16
    assert got["ERR@3"] == pytest.approx(r1, abs=1e-15)
    assert got["ERR@4"] == pytest.approx(r1 + (1 - r1) * r4 / 4, abs=1e-15)
    assert got["ERR"] == got["ERR@4"]
    assert got["ERR(max_rel=3)@4"] == pytest.approx(7 / 8 + (1 / 8) * (3 / 8) / 4, abs=1e-15)


def test_rbp_by_hand():
    got = values(RUN, QRELS, ["RBP(p=0.5)", "RBP(gain=label,p=0.5)", "RBP(p=0.5,rel=2)",
                              "RBP(p=0.5)@3", "RBPResidual(p=0.5)"])
    # the query's largest label is 3: scaled gains 1, -, 0, 2/3 at weights 1, .5, .25, .125
    assert got["RBP(p=0.5)"] == pytest.approx(0.5 * (1 + 0.125 * 2 / 3), abs=1e-15)
    assert got["RBP(p=0.5)@3"] == pytest.approx(0.5, abs=1e-15)
    assert got["RBP(gain=label,p=0.5)"] == pytest.approx(0.5 * (3 + 0.125 * 2), abs=1e-15)
    assert got["RBP(p=0.5,rel=2)"] == pytest.approx(0.5 * (1 + 0.125), abs=1e-15)
    # unjudged x at rank 2, four documents: p^4 + (1-p) p^1
    assert got["RBPResidual(p=0.5)"] == pytest.approx(0.5**4 + 0.5 * 0.5, abs=1e-15)


def test_rbp_binary_labels_are_not_scaled_and_residual_needs_an_unjudged_document():
    qrels = QRELS.with_columns(pl.col("relevance").clip(upper_bound=1)).vstack(
        pl.DataFrame({"query_id": ["q1"], "doc_id": ["x"], "relevance": [-1]}))
    got = values(RUN, qrels, ["RBP(p=0.5)", "RBPResidual(p=0.5)"])
    assert got["RBP(p=0.5)"] == pytest.approx(0.5 * (1 + 0.125), abs=1e-15)
    # x is labelled -1: still "unjudged" for the residual, as in trec_eval
    assert got["RBPResidual(p=0.5)"] == pytest.approx(0.5**4 + 0.25, abs=1e-15)
    qrels = qrels.with_columns(pl.col("relevance").clip(lower_bound=0))
    got = values(RUN, qrels, ["RBPResidual(p=0.5)"], judged_only=False)
    assert got["RBPResidual(p=0.5)"] == 0.0  # everything judged: trec_eval reports 0
    got = values(RUN, QRELS, ["RBPResidual(p=0.5)"], judged_only=True)
    assert got["RBPResidual(p=0.5)"] == 0.0


def test_compat_by_hand():
    # ranking a, x, b, c; ideal a (3), c (2), e (1); D = 4; w_i = p^(i-1) / i
    got = values(RUN, QRELS, ["Compat(p=0.5)", "Compat(p=0.5,normalize=false)"])
    w = [0.5 ** (i - 1) / i for i in range(1, 5)]
    overlap = sum(w) + w[3]  # a from depth 1, c (rank 4, ideal 2) from depth 4
    best = sum(wi * min(i, 3) for i, wi in enumerate(w, start=1))
    assert got["Compat(p=0.5)"] == pytest.approx(overlap / best, abs=1e-15)
    assert got["Compat(normalize=False,p=0.5)"] == pytest.approx(
        overlap / sum(0.5 ** (i - 1) for i in range(1, 5)), abs=1e-15)


SUB = pl.DataFrame({"query_id": "q1",
                    "subtopic": ["1", "2", "1", "3", "2", "1"],
                    "doc_id": ["a", "a", "b", "c", "d", "e"],
                    "relevance": [1, 1, 1, 1, 1, 0]})


def test_alpha_ndcg_by_hand():
    run = pl.DataFrame({"query_id": "q1", "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    got = values(run, SUB, ["alpha-nDCG@3", "alpha-nDCG@1", "alpha-nDCG(alpha=0)@3",
                            "nDCG@3", "P@3"])
    dcg = 2 + 0.5 / math.log2(3) + 1 / math.log2(4)
    # greedy ideal: a (2), then c (1 new subtopic), then b or d (0.5 each): the tie goes to
    # the larger doc id, d
    ideal = 2 + 1 / math.log2(3) + 0.5 / math.log2(4)
    assert got["alpha-nDCG@3"] == pytest.approx(dcg / ideal, abs=1e-15)
    assert got["alpha-nDCG@1"] == 1.0
    # alpha = 0: every covered subtopic counts fully, ideal a, then b/c/d with 1 each
    assert got["alpha-nDCG(alpha=0.0)@3"] == pytest.approx(1.0, abs=1e-15)
    # the other measures see one label per document, the largest over its subtopics
    flat = values(run, SUB.group_by("query_id", "doc_id").agg(pl.col("relevance").max()),
                  ["nDCG@3", "P@3"])
    assert got["nDCG@3"] == flat["nDCG@3"] and got["P@3"] == flat["P@3"]


def test_queries_a_run_lacks_score_zero():
    qrels = QRELS.vstack(pl.DataFrame({"query_id": ["q2"], "doc_id": ["a"], "relevance": [2]}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = sef.evaluate(RUN, qrels, ["ERR@10", "RBP(p=0.8)", "RBPResidual(p=0.8)"],
                           per_query=True)
    q2 = out.filter(pl.col("query_id") == "q2")
    assert q2.height == 3 and q2["value"].to_list() == [0.0, 0.0, 0.0]
    sub = SUB.vstack(pl.DataFrame({"query_id": ["q2"], "subtopic": ["1"], "doc_id": ["a"],
                                   "relevance": [1]}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = sef.evaluate(RUN, sub, ["alpha-nDCG@5"], per_query=True)
    assert dict(zip(out["query_id"], out["value"], strict=True))["q2"] == 0.0


# ----------------------------------------------------------------------------- API, kinds
def test_pandas_in_pandas_out_and_as_given_names():
    out = sef.evaluate(RUN.to_pandas(), QRELS.to_pandas(), ["err@4", "rbp", "rbp_resid"],
                       names="as_given")
    assert isinstance(out, pd.DataFrame)
    assert out["measure"].tolist() == ["err@4", "rbp", "rbp_resid"]
    sub = sef.evaluate(RUN.to_pandas(), SUB.to_pandas(), ["alpha_nDCG@3"])
    assert isinstance(sub, pd.DataFrame) and 0 < sub["value"].item() <= 1


def test_subtopic_column_aliases_and_columns_option():
    renamed = SUB.rename({"subtopic": "intent"})
    a = values(RUN, SUB, ["alpha-nDCG@3"])
    assert values(RUN, renamed, ["alpha-nDCG@3"]) == a
    other = SUB.rename({"subtopic": "facet"})
    assert values(RUN, other, ["alpha-nDCG@3"], columns={"subtopic": "facet"}) == a


def test_compare_runs_on_new_measures():
    run = pl.concat([
        RUN.with_columns(pl.lit("one").alias("run")),
        RUN.with_columns(pl.lit("two").alias("run"), (-pl.col("score")).alias("score")),
    ]).vstack(pl.DataFrame({"query_id": ["q2"] * 2, "doc_id": ["a", "b"], "score": [1.0, 2.0],
                            "run": ["one", "two"]}).select([*RUN.columns, "run"]))
    qrels = QRELS.vstack(pl.DataFrame({"query_id": ["q2", "q2"], "doc_id": ["a", "b"],
                                       "relevance": [1, 0]}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cmp = sef.compare(run, qrels=qrels, measures=["ERR@10", "RBP(p=0.8)", "rbp_resid",
                                                      "Compat"], baseline="one")
    table = cmp.to_polars()
    assert set(table["measure"]) == {"ERR@10", "RBP(p=0.8)", "RBPResidual(p=0.9)", "Compat"}


# ----------------------------------------------------------------------------- bad input
def test_err_rejects_labels_above_its_scale():
    qrels = QRELS.with_columns(pl.when(pl.col("doc_id") == "a").then(5).otherwise(
        pl.col("relevance")).alias("relevance"))
    with pytest.raises(InvalidRelevanceError, match=r"max_rel=5"):
        sef.evaluate(RUN, qrels, ["ERR@10"])
    assert values(RUN, qrels, ["ERR(max_rel=5)@10"])["ERR(max_rel=5)@10"] > 0


def test_alpha_ndcg_needs_subtopics():
    with pytest.raises(MissingColumnError, match="subtopic"):
        sef.evaluate(RUN, QRELS, ["alpha-nDCG@10"])


def test_subtopic_duplicates_are_named():
    dup = SUB.vstack(SUB.head(1))
    with pytest.raises(DuplicateRowsError, match="labelled more than once"):
        sef.evaluate(RUN, dup, ["alpha-nDCG@10"])


def test_subtopic_column_is_ignored_unless_a_diversity_measure_asks():
    # without a subtopic measure the qrels are read as before: one label per document
    with pytest.raises(DuplicateRowsError):
        sef.evaluate(RUN, SUB, ["nDCG@10"])


# ----------------------------------------------------------------------------- CLI
def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "searcheval_frames", *args],
                          capture_output=True, text=True, cwd=REPO, timeout=120)


def test_cli(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 a 3\n1 0 b 0\n1 0 c 2\n1 0 e 1\n2 0 a 1\n")
    run = tmp_path / "one.run"
    run.write_text("1 Q0 a 1 4 one\n1 Q0 x 2 3 one\n1 Q0 b 3 2 one\n1 Q0 c 4 1 one\n"
                   "2 Q0 b 1 5 one\n")
    res = cli(str(qrels), str(run), "-q", "-m", "ERR@20", "-m", "RBP(p=0.8)", "-m", "rbp.p=0.8",
              "-m", "rbp_resid", "-m", "Compat", "-f", "trec_eval")
    assert res.returncode == 0, res.stderr
    lines = [line.split("\t") for line in res.stdout.splitlines()]
    labels = {(name.strip(), qid) for name, qid, _ in lines}
    assert ("rbp_p=0.8", "all") in labels and ("rbp_resid", "all") in labels
    assert ("ERR@20", "1") in labels and ("Compat", "all") in labels
    want = values(sef.read_run(run), sef.read_qrels(qrels), ["ERR@20", "RBP(p=0.8)", "rbp_resid"],
                  missing="skip")
    got = {name.strip(): float(v) for name, qid, v in lines if qid == "all"}
    assert got["ERR@20"] == pytest.approx(want["ERR@20"], abs=5e-5)
    assert got["rbp_p=0.8"] == pytest.approx(want["RBP(p=0.8)"], abs=5e-5)

def test_cli_reads_diversity_qrels_for_alpha_ndcg(tmp_path):
    # ndeval's format: topic subtopic docno judgment; the same rows as SUB
    qrels = tmp_path / "div.qrels"
    qrels.write_text("".join(f"{q} {s} {d} {r}\n" for q, s, d, r in SUB.iter_rows()))
    run = tmp_path / "div.run"
    run.write_text("q1 Q0 a 1 3 one\nq1 Q0 b 2 2 one\nq1 Q0 c 3 1 one\n")
    res = cli(str(qrels), str(run), "-m", "alpha-nDCG@3", "-m", "P@3", "-f", "csv")
    assert res.returncode == 0, res.stderr
    table = pl.read_csv(res.stdout.encode())
    want = values(sef.read_run(run), SUB, ["alpha-nDCG@3", "P@3"])
    assert table["alpha-nDCG@3"].item() == pytest.approx(want["alpha-nDCG@3"], abs=1e-12)
    assert table["P@3"].item() == pytest.approx(want["P@3"], abs=1e-12)
    # the same file without a diversity measure is refused, as before: duplicate documents
    res = cli(str(qrels), str(run), "-m", "P@3")
    assert res.returncode != 0 and "duplicate" in res.stderr
    # and as a path through sef.evaluate
    got = values(str(run), str(qrels), ["alpha-nDCG@3"])
    assert got["alpha-nDCG@3"] == pytest.approx(want["alpha-nDCG@3"], abs=1e-12)
