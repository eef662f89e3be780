"""The trec_eval families of issue #13 against pytrec_eval (trec_eval 9.x) per query.

infAP, set_F, Rprec_mult, utility, binG, G, ndcg_rel, Rndcg, relative_P, set_relative_P,
set_map, num_nonrel_judged_ret, gm_bpref and 11pt_avg, on TREC DL 2019/2020 (seven
published systems, relevance levels 1 and 2) and on hypothesis-generated runs with tied
scores, unjudged documents, -1 labels (pooled but not judged: infAP's sampled-out
documents), graded labels and queries missing on either side. F1@k is checked against
pytrec_eval's P@k and recall@k (and ranx when installed). pytrec_eval cannot take gain
maps, so custom gains are checked by invariances.
"""

from __future__ import annotations

import math
import warnings

import polars as pl
import pytest
from conftest import shared_path
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trec_files import collections, read_trec_qrels, read_trec_run

import searcheval_frames as sef
from searcheval_frames.core.evaluate import evaluate_frames
from searcheval_frames.errors import InvalidRelevanceError
from searcheval_frames.measures import parse_measure

pytrec_eval = pytest.importorskip("pytrec_eval")

#: our name -> pytrec_eval's key
PAIRS = {
    "infAP": "infAP", "SetF": "set_F", "RprecMult@0.2": "Rprec_mult_0.20",
    "RprecMult@1.0": "Rprec_mult_1.00", "RprecMult@1.4": "Rprec_mult_1.40",
    "RprecMult@2.0": "Rprec_mult_2.00", "Utility": "utility", "BinG": "binG", "G": "G",
    "nDCGRel": "ndcg_rel", "RnDCG": "Rndcg", "RelP@1": "relative_P_1", "RelP@5": "relative_P_5",
    "RelP@10": "relative_P_10", "RelP@100": "relative_P_100", "SetRelP": "set_relative_P",
    "SetMAP": "set_map", "NumNonRelJudgedRet": "num_nonrel_judged_ret", "GMBpref": "gm_bpref",
    "IPrecAvg": "11pt_avg",
}
PYTREC_MEASURES = {"infAP", "set_F", "Rprec_mult.0.2,1.0,1.4,2.0", "utility", "binG", "G",
                   "ndcg_rel", "Rndcg", "relative_P.1,5,10,100", "set_relative_P", "set_map",
                   "num_nonrel_judged_ret", "gm_bpref", "11pt_avg", "P.3,10", "recall.3,10"}
MEASURES = [parse_measure(n) for n in PAIRS]
F1 = {"F1@3": ("P_3", "recall_3"), "F1@10": ("P_10", "recall_10")}


def _pytrec(run: pl.DataFrame, qrels: pl.DataFrame, level: int, judged_only: bool = False,
            measures=PYTREC_MEASURES):
    q: dict[str, dict[str, int]] = {}
    for qid, did, rel in qrels.iter_rows():
        q.setdefault(qid, {})[did] = rel
    out = {}
    for (name,), part in run.group_by(["run"], maintain_order=True):
        r: dict[str, dict[str, float]] = {}
        for qid, did, score in part.select("query_id", "doc_id", "score").iter_rows():
            r.setdefault(qid, {})[did] = score
        out[name] = pytrec_eval.RelevanceEvaluator(
            q, measures, relevance_level=level, judged_docs_only_flag=judged_only).evaluate(r)
    return out


def compare(run: pl.DataFrame, qrels: pl.DataFrame, level: int = 1, judged_only: bool = False):
    """Per-query values compared, and (run, qid, measure, pytrec_eval, ours) that differ."""
    ms = MEASURES + [parse_measure(n) for n in F1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = evaluate_frames(run, qrels, ms, per_query=True, relevance_level=level,
                               missing="skip", compat="trec_eval-9", judged_only=judged_only)
    theirs = _pytrec(run, qrels, level, judged_only)
    counts: dict[str, int] = {}
    bad = []
    seen = set()
    for run_name, qid, measure, value in ours.iter_rows():
        seen.add((run_name, qid))
        ref_q = theirs[run_name][qid]
        if measure in F1:
            p, r = (ref_q[k] for k in F1[measure])
            ref = 2 * p * r / (p + r) if p + r > 0 else 0.0
        elif measure == "GMBpref":  # trec_eval keeps log(max(bpref, 1e-5)) per query
            ref, value = ref_q["gm_bpref"], math.log(max(value, 1e-5))
        else:
            ref = ref_q[PAIRS[measure]]
        counts[measure] = counts.get(measure, 0) + 1
        if not math.isclose(value, ref, rel_tol=1e-9, abs_tol=1e-12):
            bad.append((run_name, qid, measure, ref, value))
    assert seen == {(r, q) for r, d in theirs.items() for q in d}
    return counts, bad


DL_RUNS = ["bm25", "bm25-rm3", "splade-pp-ed", "tasb", "openai-ada2", "repllama",
           "bm25-minilm-rerank"]


@pytest.mark.shared
@pytest.mark.parametrize("year", ["19", "20"])
@pytest.mark.parametrize("level", [1, 2])
def test_trec_dl_real_runs(year, level):
    d = shared_path("trec_dl_passage")
    qrels = read_trec_qrels(d / f"qrels.dl{year}-passage.txt")
    run = pl.concat([
        read_trec_run(d / "runs" / f"run.dl{year}-passage.{name}.txt")
        .with_columns(pl.lit(name).alias("run")) for name in DL_RUNS
    ])
    counts, bad = compare(run, qrels, level)
    n_q = 43 if year == "19" else 54
    assert all(c == 7 * n_q for c in counts.values()), counts
    assert len(counts) == len(MEASURES) + len(F1)
    assert not bad, f"{len(bad)} of {sum(counts.values())} differ: {bad[:5]}"


# ----------------------------------------------------------------------------- random runs
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=collections(max_grade=4), level=st.sampled_from([1, 2]), judged_only=st.booleans())
def test_random_runs_match_pytrec_eval(data, level, judged_only):
    run, qrels = data
    # trec_eval reads stale per-level counts for a query whose labels are all negative
    # (see test_oracle_pytrec); such queries are left out of the oracle comparison
    qrels = qrels.filter(pl.col("relevance").max().over("query_id") >= 0)
    if judged_only:  # trec_eval -J loops forever when a query retrieves nothing judged
        usable = run.join(qrels.filter(pl.col("relevance") >= 0), on=["query_id", "doc_id"],
                          how="semi").select("run", "query_id").unique()
        run = run.join(usable, on=["run", "query_id"], how="semi")
    if not set(run["query_id"]) & set(qrels["query_id"]):
        return
    _, bad = compare(run, qrels, level, judged_only)
    assert not bad, bad[:5]


def test_missing_queries_score_zero_as_trec_eval_c():
    qrels = pl.DataFrame({"query_id": ["q1", "q1", "q2", "q2"], "doc_id": ["a", "b", "a", "c"],
                          "relevance": [1, 0, 2, 1]})
    run = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    names = [*PAIRS, "Utility(fn=-1)", "F1@3"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = sef.evaluate(run, qrels, names, per_query=True, missing="zero")
    q2 = res.filter(pl.col("query_id") == "q2")
    assert q2.height == len(names) and (q2["value"] == 0.0).all()  # trec_eval -c: all zero
    q1 = dict(res.filter(pl.col("query_id") == "q1").select("measure", "value").iter_rows())
    assert q1["infAP"] == 1.0 and q1["SetF"] == 2 * 0.5 * 1.0 / 1.5
    assert q1["Utility(fn=-1.0)"] == 0.0 and q1["NumNonRelJudgedRet"] == 1.0


# ----------------------------------------------------------------------------- invariances
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=collections(max_grade=4), scale=st.sampled_from([2, 3, 5]))
def test_custom_gains(data, scale):
    run, qrels = data
    qrels = qrels.filter(pl.col("relevance").max().over("query_id") >= 0)
    if not set(run["query_id"]) & set(qrels["query_id"]):
        return
    ident = "{" + ",".join(f"{lvl}:{lvl}" for lvl in range(5)) + "}"
    scaled = "{" + ",".join(f"{lvl}:{lvl * scale}" for lvl in range(5)) + "}"
    names = ["G", f"G(gain={ident})", "nDCGRel", f"nDCGRel(gain={scaled})", "RnDCG",
             f"RnDCG(gain={scaled})", f"RnDCG(gain={ident})"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = evaluate_frames(run, qrels, [parse_measure(n) for n in names], per_query=True)
    wide = res.pivot(on="measure", index=["run", "query_id"], values="value")
    ms = [parse_measure(n).name for n in names]
    for a, b in [(0, 1), (2, 3), (4, 5), (4, 6)]:  # identity map = default; ratios: scale-free
        assert wide[ms[a]].to_list() == pytest.approx(wide[ms[b]].to_list(), abs=1e-12)


def test_labels_above_max_are_refused():
    qrels = pl.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [11]})
    run = pl.DataFrame({"query_id": ["q"], "doc_id": ["a"], "score": [1.0]})
    with pytest.raises(InvalidRelevanceError, match="labels 0 to 10"):
        sef.evaluate(run, qrels, ["G"])
    assert sef.evaluate(run, qrels, ["infAP"])["value"].to_list() == [1.0]


# ----------------------------------------------------------------------------- ranx F1
def test_f1_matches_ranx():
    """F1@k against ranx's f1@k (binary relevance: label >= 1) on TREC DL 2019 BM25.

    ranx orders tied scores its own way, so queries with a tie in their top 100 are left out.
    """
    ranx = pytest.importorskip("ranx")
    d = shared_path("trec_dl_passage")
    qrels = read_trec_qrels(d / "qrels.dl19-passage.txt")
    run = read_trec_run(d / "runs" / "run.dl19-passage.bm25.txt").filter(
        pl.col("query_id").is_in(qrels["query_id"].unique().implode()))
    top = run.sort("score", descending=True).group_by("query_id").head(101)
    tied = top.group_by("query_id").agg((pl.col("score").n_unique() < pl.len()).alias("t"))
    run = run.join(tied.filter(~pl.col("t")), on="query_id", how="semi")
    pos = qrels.filter(pl.col("relevance") >= 1)
    rq = ranx.Qrels({q: dict(zip(g["doc_id"], g["relevance"], strict=True))
                     for (q,), g in pos.group_by(["query_id"])})
    rr = ranx.Run({q: dict(zip(g["doc_id"], g["score"], strict=True))
                   for (q,), g in run.group_by(["query_id"])})
    ks = (1, 10, 100)
    ranx.evaluate(rq, rr, [f"f1@{k}" for k in ks], return_mean=False)
    ours = sef.evaluate(run, qrels, [f"F1@{k}" for k in ks], per_query=True, missing="skip")
    mine = {(q, m): v for q, m, v in ours.select("query_id", "measure", "value").iter_rows()}
    n = 0
    for k in ks:
        for q, v in rr.scores[f"f1@{k}"].items():
            assert mine[(q, f"F1@{k}")] == pytest.approx(v, abs=1e-12), (q, k)
            n += 1
    assert n >= 3 * 30


@pytest.mark.shared
def test_set_f_beta_matches_pytrec_eval():
    d = shared_path("trec_dl_passage")
    qrels = read_trec_qrels(d / "qrels.dl20-passage.txt")
    run = read_trec_run(d / "runs" / "run.dl20-passage.tasb.txt")
    theirs = _pytrec(run, qrels, 2, measures={"set_F.0.25"})
    ours = evaluate_frames(run, qrels, [parse_measure("SetF(beta=0.25)")], per_query=True,
                           relevance_level=2, missing="skip", compat="trec_eval-9")
    (name,) = theirs
    n = 0
    for qid, value in ours.select("query_id", "value").iter_rows():
        assert value == pytest.approx(theirs[name][qid]["set_F"], rel=1e-12, abs=1e-15)
        n += 1
    assert n == 54
