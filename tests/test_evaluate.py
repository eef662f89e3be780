"""The evaluation core: the seed's worked examples, input kinds, options, bad input."""

from __future__ import annotations

import contextlib
import math
import warnings

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import searcheval_frames as sef
from searcheval_frames.core.evaluate import evaluate_frames
from searcheval_frames.errors import (
    DuplicateRowsError,
    EmptyInputError,
    IdMismatchError,
    InvalidRelevanceError,
    InvalidScoreError,
    MissingColumnError,
    SearchEvalError,
    SearchEvalWarning,
    UnknownMeasureError,
)
from searcheval_frames.frames import qrels_frame, run_frame
from searcheval_frames.measures import parse_measure


def values(result) -> dict[str, float]:
    df = result if isinstance(result, pl.DataFrame) else pl.from_pandas(result)
    return dict(zip(df["measure"], df["value"], strict=True))


# ----------------------------------------------------------------------------- the seed
PINECONE_RUN = pd.DataFrame(
    {"query_id": "how to use Pinecone", "doc_id": [12, 78, 34, 90, 56],
     "score": [0.9, 0.8, 0.7, 0.6, 0.5]}
)
PINECONE_QRELS = pd.DataFrame(
    {"query_id": "how to use Pinecone", "doc_id": [12, 34, 56, 78, 90],
     "relevance": [1, 1, 1, 0, 0]}
)


def test_seed_precision_and_recall():
    v = values(sef.evaluate(PINECONE_RUN, PINECONE_QRELS, ["P@5", "R@5", "R@3"]))
    assert v["P@5"] == pytest.approx(0.60)
    assert v["R@5"] == pytest.approx(1.0)
    assert v["R@3"] == pytest.approx(2 / 3)
    assert round(v["R@3"], 2) == 0.67


def test_seed_tradeoff_example():
    qrels = {"q": {"A": 1, "B": 1, "C": 1}}
    system1 = {"q": {"A": 3.0, "B": 2.0, "X": 1.0}}
    system2 = {"q": {d: 10.0 - i for i, d in enumerate("ABCXYZUVWT")}}
    v1 = values(sef.evaluate(system1, qrels, ["P@3", "R@3"]))
    v2 = values(sef.evaluate(system2, qrels, ["P@10", "R@10"]))
    assert round(v1["P@3"], 2) == 0.67 and round(v1["R@3"], 2) == 0.67
    assert v2["P@10"] == pytest.approx(0.30) and v2["R@10"] == pytest.approx(1.0)


def test_seed_mrr():
    # first relevant document at ranks 1, 3 and 2
    run = {"q1": {"r": 3.0, "x": 2.0}, "q2": {"x": 3.0, "y": 2.0, "r": 1.0},
           "q3": {"x": 3.0, "r": 2.0, "y": 1.0}}
    qrels = {"q1": {"r": 1}, "q2": {"r": 1}, "q3": {"r": 1}}
    per_q = sef.evaluate(run, qrels, "MRR", per_query=True)
    assert per_q["value"].to_list() == pytest.approx([1.0, 1 / 3, 0.5])
    mrr = values(sef.evaluate(run, qrels, "MRR"))["RR"]
    assert mrr == pytest.approx((1 + 1 / 3 + 1 / 2) / 3)
    assert round(mrr, 2) == 0.61
    # the seed rounds 1/3 to 0.33 first: (1.0 + 0.33 + 0.5) / 3 = 0.61 as well
    assert round((1.0 + 0.33 + 0.5) / 3, 2) == round(mrr, 2)


def test_seed_ndcg():
    run = pd.DataFrame({"query_id": "Python tutorial", "doc_id": ["B", "D", "A"],
                        "score": [3.0, 2.0, 1.0]})
    qrels = pd.DataFrame({"query_id": "Python tutorial", "doc_id": ["A", "B", "C", "D"],
                          "relevance": [3, 2, 1, 0]})
    v = values(sef.evaluate(run, qrels, ["nDCG@3"]))
    dcg = 2 / math.log2(2) + 0 / math.log2(3) + 3 / math.log2(4)
    idcg = 3 / math.log2(2) + 2 / math.log2(3) + 1 / math.log2(4)
    assert dcg == pytest.approx(3.5)
    assert v["nDCG@3"] == pytest.approx(dcg / idcg)
    assert round(v["nDCG@3"], 3) == 0.735


def test_bundled_seed_files(data_dir):
    seed = data_dir / "seed"
    if not (seed / "precision_recall.run").exists():
        pytest.skip("bundled seed files not generated")
    from trec_files import read_trec_qrels, read_trec_run

    v = values(sef.evaluate(read_trec_run(seed / "precision_recall.run"),
                            read_trec_qrels(seed / "precision_recall.qrels"), ["P@5", "R@5", "R@3"]))
    assert (round(v["P@5"], 2), v["R@5"], round(v["R@3"], 2)) == (0.6, 1.0, 0.67)
    v = values(sef.evaluate(read_trec_run(seed / "mrr.run"), read_trec_qrels(seed / "mrr.qrels"), "RR"))
    assert round(v["RR"], 2) == 0.61
    v = values(sef.evaluate(read_trec_run(seed / "ndcg.run"), read_trec_qrels(seed / "ndcg.qrels"),
                            "nDCG@3"))
    assert round(v["nDCG@3"], 3) == 0.735


# ----------------------------------------------------------------------------- kinds in/out
RUN = pl.DataFrame({
    "run": ["a"] * 4 + ["b"] * 4,
    "query_id": ["1", "1", "2", "2"] * 2,
    "doc_id": ["x", "y", "x", "z"] * 2,
    "score": [2.0, 1.0, 1.0, 2.0, 1.0, 2.0, 2.0, 1.0],
})
QRELS = pl.DataFrame({"query_id": ["1", "2", "2"], "doc_id": ["x", "x", "z"], "relevance": [1, 2, 0]})


def test_same_kind_out():
    assert isinstance(sef.evaluate(RUN, QRELS, "P@1"), pl.DataFrame)
    assert isinstance(sef.evaluate(RUN.to_pandas(), QRELS.to_pandas(), "P@1"), pd.DataFrame)
    assert isinstance(sef.evaluate(RUN.lazy(), QRELS.lazy(), "P@1"), pl.LazyFrame)
    assert isinstance(sef.evaluate(RUN.to_arrow(), QRELS.to_arrow(), "P@1"), pa.Table)
    ref = values(sef.evaluate(RUN, QRELS, ["P@1", "nDCG@2", "AP"]))
    for run, qrels in [(RUN.to_pandas(), QRELS.to_pandas()), (RUN.to_arrow(), QRELS.to_arrow()),
                       (RUN.lazy(), QRELS)]:
        res = sef.evaluate(run, qrels, ["P@1", "nDCG@2", "AP"])
        if isinstance(res, pl.LazyFrame):
            res = res.collect()
        if isinstance(res, pa.Table):
            res = pl.from_arrow(res)
        got = values(res)
        assert set(got) == set(ref) and all(got[k] == pytest.approx(ref[k]) for k in ref)


def test_dict_of_runs_and_pytrec_dicts():
    runs = {name: RUN.filter(pl.col("run") == name).drop("run") for name in ["a", "b"]}
    a = sef.evaluate(runs, QRELS, ["P@1", "RR"], per_query=True)
    b = sef.evaluate(RUN, QRELS, ["P@1", "RR"], per_query=True)
    assert a.equals(b)
    pytrec_run = {"a": {q: dict(zip(g["doc_id"], g["score"], strict=True))
                        for (q,), g in RUN.filter(pl.col("run") == "a").group_by(["query_id"])}}
    pytrec_qrels = {"1": {"x": 1}, "2": {"x": 2, "z": 0}}
    c = sef.evaluate(pytrec_run, pytrec_qrels, ["P@1", "RR"], per_query=True)
    assert c.equals(b.filter(pl.col("run") == "a"))


def test_int_ids_join_str_ids():
    run = pd.DataFrame({"qid": [1, 1, 2], "docno": [10, 11, 10], "score": [2.0, 1.0, 1.0]})
    qrels = pd.DataFrame({"qid": ["1", "2"], "docno": ["11", "10"], "label": [1, 1]})
    v = values(sef.evaluate(run, qrels, ["P@1", "RR"]))
    assert v == {"P@1": 0.5, "RR": 0.75}
    # float ids from pandas (after a NaN elsewhere) join too
    run_f = run.astype({"qid": float})
    assert values(sef.evaluate(run_f, qrels, ["RR"]))["RR"] == 0.75


def test_column_aliases_and_override():
    run = pd.DataFrame({"topic": ["q"], "pid": ["d"], "sim": [1.0], "system": ["s"]})
    qrels = pd.DataFrame({"topic": ["q"], "pid": ["d"], "grade": [2]})
    res = sef.evaluate(run, qrels, "P@1", columns={"relevance": "grade"})
    assert res.to_dict("records") == [{"run": "s", "measure": "P@1", "value": 1.0}]


def test_rank_only_runs_use_rank_order():
    run = pd.DataFrame({"qid": "q", "docno": ["a", "b", "c"], "rank": [3, 1, 2]})
    qrels = pd.DataFrame({"qid": "q", "docno": ["b"], "rel": [1]})
    assert values(sef.evaluate(run, qrels, ["RR"]))["RR"] == 1.0


def test_rank_column_is_ignored_when_scores_exist():
    run = pd.DataFrame({"qid": "q", "docno": ["a", "b"], "score": [1.0, 2.0], "rank": [1, 2]})
    qrels = pd.DataFrame({"qid": "q", "docno": ["a"], "rel": [1]})
    assert values(sef.evaluate(run, qrels, ["RR"]))["RR"] == 0.5


def test_ties_broken_by_doc_id_descending():
    run = {"q": {"a": 1.0, "b": 1.0, "c": 1.0}}
    qrels = {"q": {"a": 1}}
    assert values(sef.evaluate(run, qrels, "RR"))["RR"] == pytest.approx(1 / 3)
    qrels = {"q": {"c": 1}}
    assert values(sef.evaluate(run, qrels, "RR"))["RR"] == 1.0


def test_pivot_wide():
    res = sef.evaluate(RUN, QRELS, ["P@1", "AP"])
    wide = sef.pivot(res)
    assert wide.columns == ["run", "P@1", "AP"] and wide["run"].to_list() == ["a", "b"]
    by_measure = sef.pivot(res, index="measure")
    assert by_measure.columns == ["measure", "a", "b"]
    pq = sef.pivot(sef.evaluate(RUN, QRELS, ["P@1"], per_query=True))
    assert pq.columns == ["run", "query_id", "P@1"] and pq.height == 4
    assert isinstance(sef.pivot(res.to_pandas()), pd.DataFrame)
    lazy = sef.pivot(sef.evaluate(RUN.lazy(), QRELS, ["P@1", "AP"]))
    assert isinstance(lazy, pl.LazyFrame) and lazy.collect().equals(wide)
    assert isinstance(sef.pivot(res.to_arrow()), pa.Table)


def test_names_as_given():
    res = sef.evaluate(RUN, QRELS, ["ndcg_cut_2", "MRR"], names="as_given")
    assert res["measure"].to_list() == ["ndcg_cut_2", "MRR"] * 2
    res = sef.evaluate(RUN, QRELS, ["ndcg_cut_2", "MRR"])
    assert res["measure"].to_list() == ["nDCG@2", "RR"] * 2


def test_aggregates_sum_counts_and_mean_rest():
    per_q = sef.evaluate(RUN, QRELS, ["NumQ", "NumRet", "NumRel", "NumRelRet", "P@1"], per_query=True)
    agg = sef.evaluate(RUN, QRELS, ["NumQ", "NumRet", "NumRel", "NumRelRet", "P@1"])
    for name in ["NumQ", "NumRet", "NumRel", "NumRelRet"]:
        s = per_q.filter(pl.col("measure") == name).group_by("run").agg(pl.col("value").sum())
        a = agg.filter(pl.col("measure") == name).select("run", "value")
        assert s.sort("run").equals(a.sort("run"))
    p = agg.filter(pl.col("measure") == "P@1")["value"].to_list()
    assert p == [0.5, 0.5]  # a: q1 hit, q2 miss; b: q1 miss, q2 hit


def test_relevance_level_global_and_per_measure():
    run = {"1": {"x": 2.0, "y": 1.0}, "2": {"x": 2.0, "z": 1.0}}  # x first: labels 1 and 2
    res = values(sef.evaluate(run, QRELS, ["P@1", "P(rel=2)@1", "P(rel=1)@1", "NumRel"],
                              relevance_level=2))
    assert res == {"P@1": 0.5, "P(rel=2)@1": 0.5, "P(rel=1)@1": 1.0, "NumRel": 1.0}
    res = values(sef.evaluate(run, QRELS, ["P@1", "P(rel=2)@1", "NumRel"]))
    assert res == {"P@1": 1.0, "P(rel=2)@1": 0.5, "NumRel": 2.0}


def test_negative_labels_are_judged_but_unusable():
    run = {"q": {"n": 3.0, "r": 2.0, "u": 1.0}}
    qrels = {"q": {"n": -1, "r": 1, "z": 0}}
    v = values(sef.evaluate(run, qrels, ["P@1", "Judged@3", "Unjudged@3", "Bpref", "nDCG"]))
    assert v["P@1"] == 0.0
    assert v["Judged@3"] == pytest.approx(1 / 3)  # only r carries a usable label
    assert v["Unjudged@3"] == pytest.approx(2 / 3)
    assert v["Bpref"] == 1.0  # n is not a judged non-relevant document
    assert v["nDCG"] == pytest.approx(1 / math.log2(3))


def test_gain_schemes():
    run = {"q": {"b": 2.0, "a": 1.0}}
    qrels = {"q": {"a": 3, "b": 1}}
    v = values(sef.evaluate(run, qrels, ["nDCG@2", "nDCG(gain=exp)@2", "nDCG(gain={1:10,3:1})@2"]))
    disc = 1 / math.log2(3)
    assert v["nDCG@2"] == pytest.approx((1 + 3 * disc) / (3 + 1 * disc))
    assert v["nDCG(gain=exp)@2"] == pytest.approx((1 + 7 * disc) / (7 + 1 * disc))
    assert v["nDCG(gain={1:10,3:1})@2"] == pytest.approx(1.0)


def test_depth_and_judged_only():
    run = {"q": {"a": 4.0, "u1": 3.0, "u2": 2.0, "r": 1.0}}
    qrels = {"q": {"a": 0, "r": 1}}
    assert values(sef.evaluate(run, qrels, ["RR", "NumRet"])) == {"RR": 0.25, "NumRet": 4.0}
    assert values(sef.evaluate(run, qrels, ["RR", "NumRet"], depth=3)) == {"RR": 0.0, "NumRet": 3.0}
    assert values(sef.evaluate(run, qrels, ["RR", "NumRet"], judged_only=True)) == {
        "RR": 0.5, "NumRet": 2.0}


def test_judged_only_with_nothing_judged_scores_zero():
    # trec_eval -J hangs or prints nan here; we define every measure as 0 (NumRel still counts)
    run = {"q": {"u1": 2.0, "n": 1.0}}
    qrels = {"q": {"n": -1, "r": 1}}
    v = values(sef.evaluate(run, qrels, ["P@5", "AP", "IPrec@0.0", "nDCG", "NumRet", "NumRel"],
                            judged_only=True))
    assert v == {"P@5": 0.0, "AP": 0.0, "IPrec@0.0": 0.0, "nDCG": 0.0, "NumRet": 0.0, "NumRel": 1.0}


def test_query_with_only_negative_labels():
    run = {"q": {"a": 2.0, "b": 1.0}, "r": {"a": 1.0}}
    qrels = {"q": {"b": -1}, "r": {"a": 1}}
    per_q = sef.evaluate(run, qrels, ["P@1", "nDCG", "NumRel", "NumRet", "Judged@2"], per_query=True)
    got = {(r["query_id"], r["measure"]): r["value"] for r in per_q.iter_rows(named=True)}
    assert [got[("q", m)] for m in ["P@1", "nDCG", "NumRel", "NumRet", "Judged@2"]] == [
        0.0, 0.0, 0.0, 2.0, 0.0]
    assert got[("r", "P@1")] == 1.0


# ----------------------------------------------------------------------------- missing queries
def test_missing_queries_zero_and_warn():
    run = {"q1": {"a": 1.0}, "extra": {"a": 1.0}}
    qrels = {"q1": {"a": 1}, "q2": {"b": 1, "c": 1}}
    with pytest.warns(SearchEvalWarning) as rec:
        per_q = sef.evaluate(run, qrels, ["P@1", "NumRel"], per_query=True)
    text = " ".join(str(w.message) for w in rec)
    assert "'q2'" in text and "'extra'" in text
    assert all(w.filename == __file__ for w in rec)  # warnings point at the caller
    got = {(r["query_id"], r["measure"]): r["value"] for r in per_q.iter_rows(named=True)}
    assert got == {("q1", "P@1"): 1.0, ("q1", "NumRel"): 1.0, ("q2", "P@1"): 0.0, ("q2", "NumRel"): 2.0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        skip = sef.evaluate(run, qrels, "P@1", missing="skip")
        zero = sef.evaluate(run, qrels, "P@1")
    assert skip["value"].to_list() == [1.0] and zero["value"].to_list() == [0.5]


def test_many_runs_missing_different_queries():
    run = pl.DataFrame({"run": ["a", "b"], "query_id": ["1", "2"], "doc_id": ["x", "x"],
                        "score": [1.0, 1.0]})
    qrels = pl.DataFrame({"query_id": ["1", "2"], "doc_id": ["x", "x"], "relevance": [1, 1]})
    with pytest.warns(SearchEvalWarning, match="run 'a'|run 'b'") as rec:
        res = sef.evaluate(run, qrels, ["P@1", "NumQ"])
    assert any("run 'a'" in str(w.message) for w in rec)
    assert any("run 'b'" in str(w.message) for w in rec)
    assert values(res.filter(pl.col("run") == "a")) == {"P@1": 0.5, "NumQ": 2.0}


# ----------------------------------------------------------------------------- bad input
def test_duplicate_docs_in_run():
    run = pd.DataFrame({"qid": ["q", "q", "q"], "docno": ["a", "a", "b"], "score": [1.0, 2.0, 3.0]})
    with pytest.raises(DuplicateRowsError, match=r"(?s)doc_id='a'.*unique") as e:
        sef.evaluate(run, {"q": {"a": 1}}, "P@1")
    assert isinstance(e.value, ValueError)


def test_duplicate_pairs_in_qrels():
    qrels = pd.DataFrame({"qid": ["q", "q"], "docno": ["a", "a"], "rel": [1, 0]})
    with pytest.raises(DuplicateRowsError, match=r"qrels.*labelled more than once"):
        sef.evaluate({"q": {"a": 1.0}}, qrels, "P@1")


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), None])
def test_nan_inf_null_scores(bad):
    run = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [1.0, bad]},
                       schema_overrides={"score": pl.Float64})
    with pytest.raises(InvalidScoreError, match=r"(?s)'score'.*doc_id='b'"):
        sef.evaluate(run, {"q": {"a": 1}}, "P@1")


def test_non_numeric_scores():
    run = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": ["1.5", "high"]})
    with pytest.raises(InvalidScoreError, match="high"):
        sef.evaluate(run, {"q": {"a": 1}}, "P@1")


def test_missing_columns_named():
    with pytest.raises(MissingColumnError, match=r"run: no column for 'doc_id'.*docno"):
        sef.evaluate(pd.DataFrame({"qid": ["q"], "score": [1.0]}), {"q": {"a": 1}}, "P@1")
    with pytest.raises(MissingColumnError, match="'score' or a 'rank'"):
        sef.evaluate(pd.DataFrame({"qid": ["q"], "docno": ["a"]}), {"q": {"a": 1}}, "P@1")
    with pytest.raises(MissingColumnError, match="qrels: no column for 'relevance'"):
        sef.evaluate({"q": {"a": 1.0}}, pd.DataFrame({"qid": ["q"], "docno": ["a"]}), "P@1")
    with pytest.raises(MissingColumnError, match="columns= maps"):
        sef.evaluate({"q": {"a": 1.0}}, {"q": {"a": 1}}, "P@1", columns={"relevance": "nope"})


@pytest.mark.parametrize("labels", [[0.5], ["relevant"], [None]])
def test_non_integer_relevance(labels):
    qrels = pd.DataFrame({"qid": ["q"], "docno": ["a"], "rel": labels})
    with pytest.raises(InvalidRelevanceError, match=r"'rel'.*not integers"):
        sef.evaluate({"q": {"a": 1.0}}, qrels, "P@1")


def test_integral_float_and_string_labels_are_fine():
    qrels = pd.DataFrame({"qid": ["q", "q"], "docno": ["a", "b"], "rel": ["1", " 2 "]})
    assert values(sef.evaluate({"q": {"a": 1.0}}, qrels, "P@1"))["P@1"] == 1.0
    qrels = pd.DataFrame({"qid": ["q"], "docno": ["a"], "rel": [2.0]})
    assert values(sef.evaluate({"q": {"a": 1.0}}, qrels, "P(rel=2)@1"))["P(rel=2)@1"] == 1.0


def test_unknown_measure_suggests():
    with pytest.raises(UnknownMeasureError, match="Did you mean 'nDCG@10'"):
        sef.evaluate(RUN, QRELS, ["nDGC@10"])
    with pytest.raises(UnknownMeasureError, match="needs a cutoff"):
        sef.evaluate(RUN, QRELS, ["P"])
    with pytest.raises(UnknownMeasureError, match="no parameter 'gain'"):
        parse_measure("P(gain=exp)@5")
    with pytest.raises(UnknownMeasureError, match="no measures"):
        sef.evaluate(RUN, QRELS, [])


def test_empty_inputs():
    empty_run = pl.DataFrame(schema={"query_id": pl.String, "doc_id": pl.String, "score": pl.Float64})
    with pytest.raises(EmptyInputError, match="run has no rows"):
        sef.evaluate(empty_run, QRELS, "P@1")
    with pytest.raises(EmptyInputError, match="qrels has no rows"):
        sef.evaluate(RUN, QRELS.clear(), "P@1")
    with pytest.raises(EmptyInputError):
        sef.evaluate({}, QRELS, "P@1")


def test_no_common_query_ids_shows_both_sides():
    run = pd.DataFrame({"qid": ["q301", "q302"], "docno": ["a", "b"], "score": [1.0, 1.0]})
    qrels = pd.DataFrame({"qid": [301, 302], "docno": ["a", "b"], "rel": [1, 1]})
    with pytest.raises(IdMismatchError, match=r"(?s)'q301'.*'301'"):
        sef.evaluate(run, qrels, "P@1")


@pytest.mark.parametrize(("kw", "match"), [
    ({"relevance_level": "2"}, "relevance_level"), ({"missing": "drop"}, "missing"),
    ({"depth": 0}, "depth"), ({"compat": "trec_eval-8"}, "compat"), ({"names": "x"}, "names"),
])
def test_bad_options(kw, match):
    with pytest.raises(SearchEvalError, match=match):
        sef.evaluate(RUN, QRELS, "P@1", **kw)


def test_bad_object():
    with pytest.raises(SearchEvalError, match="cannot read"):
        sef.evaluate(42, QRELS, "P@1")


# ----------------------------------------------------------------------------- properties
@st.composite
def runs(draw):
    docs = [f"d{i}" for i in range(12)]
    rows, qrows = [], []
    for q in ["q1", "q2", "q3"]:
        for r in ["A", "B"]:
            chosen = draw(st.lists(st.sampled_from(docs), unique=True, min_size=1, max_size=12))
            rows += [(r, q, d, float(draw(st.integers(0, 4)))) for d in chosen]
        judged = draw(st.lists(st.sampled_from(docs), unique=True, min_size=1, max_size=8))
        qrows += [(q, d, draw(st.integers(-1, 3))) for d in judged]
    return (pl.DataFrame(rows, schema=["run", "query_id", "doc_id", "score"], orient="row"),
            pl.DataFrame(qrows, schema=["query_id", "doc_id", "relevance"], orient="row"))


ALL = [parse_measure(n) for n in [
    "P@1", "P@5", "R@3", "R", "RR", "RR@2", "AP", "AP@3", "nDCG", "nDCG@3", "nDCG(gain=exp)@5",
    "Rprec", "Bpref", "IPrec@0.0", "IPrec@0.3", "IPrecAvg", "Success@2", "NumRet", "NumRel",
    "NumRelRet", "Judged@5", "Unjudged@5", "SetP", "P(rel=2)@3", "GMAP"]]


@settings(max_examples=60, deadline=None)
@given(data=runs(), depth=st.sampled_from([None, 2, 5]), judged_only=st.booleans())
def test_ranking_strategies_agree(data, depth, judged_only):
    run, qrels = data
    out = [
        evaluate_frames(run, qrels, ALL, per_query=True, depth=depth, judged_only=judged_only,
                        strategy=s)
        for s in ("sort", "count")
    ]
    assert out[0].equals(out[1])


@settings(max_examples=40, deadline=None)
@given(data=runs())
def test_bounds_and_invariants(data):
    run, qrels = data
    res = evaluate_frames(run, qrels, ALL, per_query=True)
    bounded = res.filter(~pl.col("measure").str.starts_with("Num"))
    assert bounded["value"].is_between(0.0, 1.0).all()
    wide = res.pivot(on="measure", index=["run", "query_id"], values="value")
    # nDCG of a run that is the ideal ranking is 1
    assert (wide["RR"] >= wide["RR@2"]).all()
    assert (wide["Success@2"] >= wide["P@1"]).all()
    assert np.allclose(wide["Judged@5"] + wide["Unjudged@5"],
                       np.minimum(wide["NumRet"], 5) / 5)


def test_ideal_ranking_scores_one():
    qrels = {"q": {"a": 3, "b": 2, "c": 1, "d": 0}}
    run = {"q": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}}
    v = values(sef.evaluate(run, qrels, ["nDCG", "nDCG@2", "AP", "Rprec", "Bpref", "IPrec@1.0"]))
    assert all(x == pytest.approx(1.0) for x in v.values())


def test_canonical_frames_direct():
    df = run_frame(pd.DataFrame({"qid": [1], "docno": [2], "score": [1]}))
    assert df.schema == pl.Schema({"run": pl.String, "query_id": pl.String, "doc_id": pl.String,
                                   "score": pl.Float64})
    assert qrels_frame(pd.DataFrame({"qid": [1], "docno": [2], "label": [True]}))["relevance"].to_list() == [1]


def test_summarize_per_query_equals_the_aggregate():
    """core.results.summarize: the aggregate from a per-query result, bit for bit."""
    from conftest import DATA

    from searcheval_frames.core.results import summarize

    runs = sorted(str(p) for p in (DATA / "example" / "runs").glob("*.run"))
    ms = ["P@5", "GMAP", "NumRel", "NumQ", "nDCG@10", "AP", "Judged@10"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pq = sef.evaluate(runs, DATA / "example" / "qrels.txt", ms, per_query=True)
        agg = sef.evaluate(runs, DATA / "example" / "qrels.txt", ms)
    assert summarize(pq).equals(agg)


def test_hits_is_ranx_count_and_hit_rate_is_success():
    """ranx's two "hit" names: hits@k counts relevant documents in the top k (P@k times k,
    averaged over queries); hit@k / hit_rate@k is Success@k."""
    rng = np.random.default_rng(11)
    run = pl.DataFrame({"query_id": np.repeat(["q1", "q2", "q3"], 8).tolist(),
                        "doc_id": [f"d{i}" for i in range(8)] * 3,
                        "score": rng.integers(0, 4, 24).astype(float)})
    qrels = pl.DataFrame({"query_id": np.repeat(["q1", "q2", "q3"], 5).tolist(),
                          "doc_id": [f"d{i}" for i in (0, 2, 4, 6, 9)] * 3,
                          "relevance": rng.integers(-1, 3, 15)})
    res = sef.evaluate(run, qrels, ["hits@5", "hit@5", "hit_rate@5", "P@5", "Success@5"],
                       per_query=True, names="as_given")
    wide = res.pivot(on="measure", index="query_id", values="value")
    assert wide["hits@5"].to_list() == (wide["P@5"] * 5).to_list()
    assert wide["hit@5"].to_list() == wide["Success@5"].to_list() == wide[
        "hit_rate@5"].to_list()
    assert (wide["hits@5"] > 1).any()  # (a count, not a 0/1 success)
    mean = sef.evaluate(run, qrels, ["hits@5", "P@5"])
    assert mean["measure"].to_list() == ["Hits@5", "P@5"]
    assert mean["value"][0] == pytest.approx(5 * mean["value"][1])


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 4), st.integers(1, 5), st.integers(1, 6), st.data())
def test_duplicates_in_several_runs_of_equal_blocks(n_runs, n_q, depth, data):
    """Several runs whose (run, query) blocks are all of one length: validation hashes the
    documents only and looks for a repeat inside each block (issue #25). A document in
    several runs or queries is fine; one twice in a block is refused, wherever it is."""
    docs = [f"d{i}" for i in range(depth)]
    rows = [(f"r{r}", f"q{q}", d, float(depth - i)) for r in range(n_runs)
            for q in range(n_q) for i, d in enumerate(docs)]
    run = pl.DataFrame(rows, schema=["run", "query_id", "doc_id", "score"], orient="row")
    qrels = pl.DataFrame({"query_id": ["q0"], "doc_id": ["d0"], "relevance": [1]})
    unlabelled = (pytest.warns(SearchEvalWarning, match="no relevance labels") if n_q > 1
                  else contextlib.nullcontext())  # q1, q2, ... have no labels: said so
    with unlabelled:
        assert sef.evaluate(run, qrels, "P@1").height == n_runs
    if depth < 2:
        return
    at = data.draw(st.integers(0, run.height - 1))
    twin = data.draw(st.integers(0, depth - 1).filter(lambda i: i != at % depth))
    start = at - at % depth  # the block of row `at`: its doc becomes another of its block's
    bad = run.with_columns(pl.when(pl.int_range(pl.len()) == at)
                           .then(pl.lit(docs[twin])).otherwise(pl.col("doc_id"))
                           .alias("doc_id"))
    assert bad["doc_id"][start:start + depth].n_unique() == depth - 1
    with pytest.raises(sef.DuplicateRowsError):
        sef.evaluate(bad, qrels, "P@1")


def test_strategies_agree_bit_for_bit_on_one_judged_row_per_query():
    """Found by test_ranking_strategies_agree (flaky 1 in ~2,000): the "count" strategy's
    judged frame held a column polars kept as one repeated value; nDCG's gain / discount
    inside a group was then computed through the inverse, 1.8927892607143724 instead of
    3 / log2(3) = 1.8927892607143721 (pytrec_eval's). The measures now see plain columns."""
    run = pl.DataFrame(
        [("A", "q1", "d0", 4.0), ("A", "q1", "d2", 2.0), ("B", "q1", "d11", 2.0),
         ("B", "q1", "d1", 3.0), ("B", "q1", "d0", 4.0), ("B", "q1", "d6", 3.0),
         ("B", "q1", "d5", 2.0), ("B", "q1", "d3", 2.0), ("B", "q1", "d2", 2.0),
         ("A", "q2", "d4", 4.0), ("A", "q2", "d11", 3.0), ("A", "q2", "d10", 2.0),
         ("B", "q2", "d9", 3.0), ("A", "q3", "d5", 2.0), ("A", "q3", "d7", 4.0),
         ("A", "q3", "d3", 0.0), ("A", "q3", "d4", 4.0), ("B", "q3", "d5", 1.0),
         ("B", "q3", "d1", 4.0), ("B", "q3", "d10", 1.0), ("B", "q3", "d8", 4.0)],
        schema=["run", "query_id", "doc_id", "score"], orient="row")
    qrels = pl.DataFrame([("q1", "d6", 3), ("q2", "d10", 3), ("q2", "d1", 1), ("q3", "d3", 2),
                          ("q3", "d1", 2), ("q3", "d5", 2)],
                         schema=["query_id", "doc_id", "relevance"], orient="row")
    ms = [parse_measure(n) for n in ("nDCG(gain=exp)@5", "nDCG", "DCG@5", "AP")]
    out = {s: evaluate_frames(run, qrels, ms, per_query=True, depth=2, strategy=s)
           for s in ("sort", "count", "auto")}
    assert out["sort"].equals(out["count"]) and out["sort"].equals(out["auto"])
    b3 = out["count"].filter(pl.col("run") == "B", pl.col("query_id") == "q3")
    dcg = 3 / (math.log(3) / math.log(2))  # trec_eval's gain / log2(rank + 1), rank 2
    ideal = 3 + dcg + 3 / 2
    assert b3.filter(pl.col("measure") == "nDCG(gain=exp)@5")["value"].item() == dcg / ideal
