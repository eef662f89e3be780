"""Curves as data: P@k / R@k at every cutoff and interpolated PR curves.

Oracles: the evaluation core (``P@k``, ``R@k``, ``IPrec@r``, itself checked
against trec_eval), a brute-force Python definition of interpolated precision,
the seed's worked example, and the real TREC DL runs.
"""

from __future__ import annotations

import doctest
import math
import warnings

import pandas as pd
import polars as pl
import pytest
from conftest import shared_path
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import searcheval_frames as sef
from searcheval_frames.errors import InvalidOptionError, SearchEvalError, SearchEvalWarning
from searcheval_frames.figures import curves

TOL = 1e-12


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SearchEvalWarning)
        return fn(*args, **kwargs)


def _core_pk(run, qrels, ks, **opts) -> pl.DataFrame:
    names = [f"P@{k}" for k in ks] + [f"R@{k}" for k in ks]
    ev = _quiet(sef.evaluate, run, qrels, names, per_query=True, **opts)
    return ev.with_columns(
        pl.col("measure").str.slice(0, 1).alias("m"),
        pl.col("measure").str.split("@").list.get(1).cast(pl.Int64).alias("k"),
    ).pivot(on="m", index=["run", "query_id", "k"], values="value")


def _core_iprec(run, qrels, levels, per_query=True, **opts) -> pl.DataFrame:
    names = {f"IPrec@{lv!r}": lv for lv in levels}
    ev = _quiet(sef.evaluate, run, qrels, list(names), per_query=per_query, **opts)
    canon = {sef.parse_measure(n).name: lv for n, lv in names.items()}
    return ev.with_columns(pl.col("measure").replace_strict(canon).alias("recall"))


def _brute_iprec(ranked_rels: list[bool], num_rel: int, j: int) -> float:
    """Textbook interpolated precision at recall j / R: best precision at any rank
    where at least j relevant documents have been seen (j = 0: any rank)."""
    best, seen = 0.0, 0
    for i, rel in enumerate(ranked_rels, start=1):
        seen += rel
        if seen >= max(j, 1) and rel:
            best = max(best, seen / i)
    return best


# --------------------------------------------------------------------------- hand cases
def test_seed_tradeoff_example():
    # the seed's example: ground truth {A, B, C}
    qrels = {"q": {"A": 1, "B": 1, "C": 1}}
    s1 = {"q": {"A": 0.9, "B": 0.8, "X": 0.7}}
    s2 = {"q": {d: 1.0 - i / 10 for i, d in enumerate("ABCXYZUVWT")}}
    r1 = sef.precision_recall_at_k(s1, qrels, k=[3])
    assert r1.select("precision", "recall").row(0) == pytest.approx((2 / 3, 2 / 3))
    r2 = sef.precision_recall_at_k(s2, qrels)
    assert r2.height == 10
    assert r2.filter(pl.col("k") == 10).select("precision", "recall").row(0) == pytest.approx(
        (0.3, 1.0)
    )
    # more results: recall never falls
    rec = r2.get_column("recall").to_list()
    assert rec == sorted(rec)


def test_precision_divides_by_k_beyond_the_list():
    run = {"q": {"A": 1.0}}
    qrels = {"q": {"A": 1, "B": 1}}
    out = sef.precision_recall_at_k(run, qrels, k=4)
    assert out.get_column("precision").to_list() == pytest.approx([1.0, 0.5, 1 / 3, 0.25])
    assert out.get_column("recall").to_list() == pytest.approx([0.5] * 4)


def test_pr_curve_all_levels_hand_case():
    # ranking: A(rel) X B(rel) Y C(rel): precisions at relevant 1, 2/3, 3/5
    run = {"q": {"A": 5.0, "X": 4.0, "B": 3.0, "Y": 2.0, "C": 1.0}}
    qrels = {"q": {"A": 1, "B": 1, "C": 1, "X": 0, "D": 1}}
    out = sef.pr_curve_data(run, qrels, levels="all", per_query=True)
    assert out.get_column("recall").to_list() == pytest.approx([0, 0.25, 0.5, 0.75, 1.0])
    assert out.get_column("precision").to_list() == pytest.approx([1, 1, 2 / 3, 0.6, 0.0])


def test_ties_follow_trec_eval_order():
    # equal scores: doc_id descending first, so "b" (non-relevant) outranks "a"
    run = {"q": {"a": 1.0, "b": 1.0}}
    qrels = {"q": {"a": 1, "b": 0}}
    out = sef.precision_recall_at_k(run, qrels)
    assert out.get_column("precision").to_list() == pytest.approx([0.0, 0.5])


def test_missing_queries_score_zero_and_warn_like_the_core():
    run = pl.DataFrame({"run": "r", "query_id": ["1", "1", "9"], "doc_id": ["a", "b", "c"],
                        "score": [2.0, 1.0, 1.0]})
    qrels = pl.DataFrame({"query_id": ["1", "2"], "doc_id": ["a", "z"], "relevance": [1, 1]})
    with pytest.warns(SearchEvalWarning) as rec:
        pk = sef.precision_recall_at_k(run, qrels, per_query=True)
    text = " ".join(str(w.message) for w in rec)
    assert "'9'" in text and "'2'" in text
    assert set(pk.get_column("query_id")) == {"1", "2"}
    assert pk.filter(pl.col("query_id") == "2").get_column("precision").sum() == 0
    with pytest.warns(SearchEvalWarning):
        skip = sef.pr_curve_data(run, qrels, per_query=True, missing="skip")
    assert set(skip.get_column("query_id")) == {"1"}
    # warnings point at the caller, as the core's do
    with pytest.warns(SearchEvalWarning) as rec:
        sef.pr_curve_data(run, qrels)
    assert all(w.filename == __file__ for w in rec)


def test_pandas_in_pandas_out():
    run = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "score": [2.0, 1.0]})
    qrels = pd.DataFrame({"qid": ["1"], "docno": ["b"], "rel": [1]})
    out = sef.precision_recall_at_k(run, qrels)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == ["run", "k", "precision", "recall"]
    pr = sef.pr_curve_data(run, qrels)
    assert isinstance(pr, pd.DataFrame)
    assert pr["recall"].tolist() == pytest.approx([i / 10 for i in range(11)])
    assert pr["precision"].tolist() == pytest.approx([0.5] * 11)


def test_levels_options():
    run = {"q": {"A": 2.0, "B": 1.0}}
    qrels = {"q": {"B": 1}}
    assert sef.pr_curve_data(run, qrels, levels=4).get_column("recall").to_list() == [
        0, 0.25, 0.5, 0.75, 1.0
    ]
    assert sef.pr_curve_data(run, qrels, levels=[0.5, 0.2]).get_column("recall").to_list() == [
        0.2, 0.5
    ]


@pytest.mark.parametrize(
    "kwargs",
    [{"k": 0}, {"k": [0, 3]}, {"k": "ten"}, {"k": True}, {"relevance_level": "2"},
     {"missing": "drop"}, {"depth": 0}],
)
def test_bad_options_precision_recall(kwargs):
    with pytest.raises(InvalidOptionError, match=rf"precision_recall_at_k\({next(iter(kwargs))}="):
        sef.precision_recall_at_k({"q": {"a": 1.0}}, {"q": {"a": 1}}, **kwargs)


@pytest.mark.parametrize("levels", ["12pt", -1, [0.5, 1.5], ["x"], True])
def test_bad_levels(levels):
    with pytest.raises(SearchEvalError, match="levels"):
        sef.pr_curve_data({"q": {"a": 1.0}}, {"q": {"a": 1}}, levels=levels)


def test_progress_path_gives_the_same_numbers():
    run = pl.DataFrame({
        "run": ["x"] * 3 + ["y"] * 3, "query_id": "1", "doc_id": ["a", "b", "c"] * 2,
        "score": [3.0, 2.0, 1.0, 1.0, 2.0, 3.0],
    })
    qrels = {"1": {"a": 1, "c": 1}}
    assert sef.pr_curve_data(run, qrels, progress=True).equals(sef.pr_curve_data(run, qrels))
    assert sef.precision_recall_at_k(run, qrels, progress=True).equals(
        sef.precision_recall_at_k(run, qrels, progress=False)
    )


def test_doctests():
    assert doctest.testmod(curves, optionflags=doctest.NORMALIZE_WHITESPACE).failed == 0


# --------------------------------------------------------------------------- properties
@st.composite
def run_and_qrels(draw):
    n_q = draw(st.integers(1, 4))
    docs = [f"d{i}" for i in range(draw(st.integers(1, 9)))]
    runs, qrels = [], []
    for q in range(n_q):
        qid = str(q)
        for name in ("a", "b"):
            if draw(st.booleans()) or q == 0:
                picked = draw(st.lists(st.sampled_from(docs), unique=True, max_size=len(docs)))
                for d in picked:
                    # few distinct scores: many ties
                    runs.append((name, qid, d, float(draw(st.integers(0, 3)))))
        judged = draw(st.lists(st.sampled_from(docs), unique=True, max_size=len(docs)))
        for d in judged:
            qrels.append((qid, d, draw(st.integers(-1, 3))))
    # query 0 is always in run "a" and judged, so run and qrels share a query
    runs.append(("a", "0", docs[0], 1.0))
    qrels.append(("0", docs[0], 1))
    run = pl.DataFrame(runs, schema=["run", "query_id", "doc_id", "score"], orient="row").unique(
        subset=["run", "query_id", "doc_id"], keep="first", maintain_order=True
    )
    qr = pl.DataFrame(qrels, schema=["query_id", "doc_id", "relevance"], orient="row").unique(
        subset=["query_id", "doc_id"], keep="first", maintain_order=True
    )
    opts = draw(st.fixed_dictionaries({
        "relevance_level": st.integers(0, 2),
        "missing": st.sampled_from(["zero", "skip"]),
        "depth": st.none() | st.integers(1, 5),
        "judged_only": st.booleans(),
        "compat": st.sampled_from(["trec_eval-10", "trec_eval-9"]),
    }))
    return run, qr, opts


def _has_overlap(run, qrels) -> bool:
    return run.join(qrels, on="query_id", how="semi").height > 0


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_and_qrels())
def test_precision_recall_at_k_equals_core(case):
    run, qrels, opts = case
    if not _has_overlap(run, qrels):
        return
    ks = list(range(1, 11))
    mine = _quiet(sef.precision_recall_at_k, run, qrels, k=10, per_query=True, **opts)
    core = _core_pk(run, qrels, ks, **opts)
    joined = core.join(mine, on=["run", "query_id", "k"], how="full", coalesce=True)
    assert joined.height == core.height == mine.height
    assert (joined["P"] - joined["precision"]).abs().max() < TOL
    assert (joined["R"] - joined["recall"]).abs().max() < TOL
    agg = _quiet(sef.precision_recall_at_k, run, qrels, k=ks, **opts)
    means = core.group_by(["run", "k"]).agg(pl.col("P").mean(), pl.col("R").mean())
    j = means.join(agg, on=["run", "k"])
    assert j.height == agg.height == means.height
    assert (j["P"] - j["precision"]).abs().max() < TOL
    assert (j["R"] - j["recall"]).abs().max() < TOL


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_and_qrels())
def test_eleven_point_curve_equals_core_iprec(case):
    run, qrels, opts = case
    if not _has_overlap(run, qrels):
        return
    levels = [i / 10 for i in range(11)]
    mine = _quiet(sef.pr_curve_data, run, qrels, per_query=True, **opts)
    core = _core_iprec(run, qrels, levels, **opts)
    j = core.join(mine, on=["run", "query_id", "recall"], how="full", coalesce=True)
    assert j.height == core.height == mine.height
    assert (j["value"] - j["precision"]).abs().max() < TOL
    agg = _quiet(sef.pr_curve_data, run, qrels, **opts)
    core_agg = _core_iprec(run, qrels, levels, per_query=False, **opts)
    j = core_agg.join(agg, on=["run", "recall"])
    assert j.height == agg.height == core_agg.height
    assert (j["value"] - j["precision"]).abs().max() < TOL


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_and_qrels())
def test_all_levels_curve_matches_brute_force_and_core(case):
    run, qrels, opts = case
    opts = {**opts, "compat": "trec_eval-10", "judged_only": False, "depth": None}
    if not _has_overlap(run, qrels):
        return
    per_q = _quiet(sef.pr_curve_data, run, qrels, levels="all", per_query=True, **opts)
    level = max(opts["relevance_level"], 0)
    rels = {(q, d): r for q, d, r in qrels.iter_rows()}
    num_rel = qrels.filter(pl.col("relevance") >= level).group_by("query_id").len()
    num_rel = dict(num_rel.iter_rows())
    ranked = run.sort(["run", "query_id", "score", "doc_id"], descending=[False, False, True, True])
    lists: dict[tuple[str, str], list[bool]] = {}
    for name, q, d, _ in ranked.iter_rows():
        lists.setdefault((name, q), []).append(rels.get((q, d), -99) >= level)
    for (name, q), group in per_q.group_by(["run", "query_id"]):
        big_r = num_rel.get(q, 0)
        recalls = group.sort("recall").get_column("recall").to_list()
        precs = group.sort("recall").get_column("precision").to_list()
        assert recalls == pytest.approx([j / big_r for j in range(big_r + 1)] if big_r else [0.0])
        for j, p in enumerate(precs):
            assert p == pytest.approx(_brute_iprec(lists.get((name, q), []), big_r, j))
    # the mean curve over the union of levels agrees with IPrec at those levels
    agg = _quiet(sef.pr_curve_data, run, qrels, levels="all", **opts)
    levels = agg.get_column("recall").unique().sort().to_list()
    core = _core_iprec(run, qrels, levels, per_query=False, **opts)
    j = core.join(agg, on=["run", "recall"])
    assert j.height == agg.height == core.height
    assert (j["value"] - j["precision"]).abs().max() < TOL


# --------------------------------------------------------------------------- TREC DL
SYSTEMS = ["bm25", "bm25-rm3", "splade-pp-ed", "tasb", "openai-ada2", "repllama"]


@pytest.fixture(scope="module")
def trec_dl():
    from searcheval_frames.io import read_qrels, read_run

    qrels = read_qrels(shared_path("trec_dl_passage", "qrels.dl19-passage.txt"))
    paths = [shared_path("trec_dl_passage", "runs", f"run.dl19-passage.{s}.txt") for s in SYSTEMS]
    return read_run(paths, name=SYSTEMS), qrels


@pytest.mark.shared
@pytest.mark.parametrize("level", [1, 2])
def test_trec_dl_curves_equal_core(trec_dl, level):
    run, qrels = trec_dl
    ks = [1, 3, 5, 10, 20, 100, 1000]
    mine = sef.precision_recall_at_k(run, qrels, k=ks, per_query=True, relevance_level=level)
    core = _core_pk(run, qrels, ks, relevance_level=level)
    j = core.join(mine, on=["run", "query_id", "k"])
    assert j.height == core.height == mine.height == 6 * 43 * len(ks)
    assert (j["P"] - j["precision"]).abs().max() < TOL
    assert (j["R"] - j["recall"]).abs().max() < TOL

    levels = [i / 10 for i in range(11)]
    pr = sef.pr_curve_data(run, qrels, per_query=True, relevance_level=level)
    core = _core_iprec(run, qrels, levels, relevance_level=level)
    j = core.join(pr, on=["run", "query_id", "recall"])
    assert j.height == core.height == pr.height == 6 * 43 * 11
    assert (j["value"] - j["precision"]).abs().max() < TOL


@pytest.mark.shared
def test_trec_dl_all_levels_curve(trec_dl):
    run, qrels = trec_dl
    per_q = sef.pr_curve_data(run, qrels, levels="all", per_query=True, relevance_level=2)
    num_rel = qrels.filter(pl.col("relevance") >= 2).group_by("query_id").len()
    sizes = per_q.group_by(["run", "query_id"]).len().join(
        num_rel.rename({"len": "R"}), on="query_id"
    )
    assert (sizes["len"] == sizes["R"] + 1).all()
    # interpolated precision never rises with recall
    bad = per_q.with_columns(
        pl.col("precision").diff().over(["run", "query_id"]).alias("d")
    ).filter(pl.col("d") > 1e-15)
    assert bad.height == 0
    # a sample of levels against the core
    agg = sef.pr_curve_data(run, qrels, levels="all", relevance_level=2)
    sample = agg.get_column("recall").unique().sort().gather_every(97).to_list()
    core = _core_iprec(run, qrels, sample, per_query=False, relevance_level=2)
    j = core.join(agg, on=["run", "recall"])
    assert j.height == 6 * len(sample)
    assert (j["value"] - j["precision"]).abs().max() < TOL
    assert math.isclose(agg.get_column("recall").max(), 1.0)
