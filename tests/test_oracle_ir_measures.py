"""Graded and user-model measures against ir_measures' providers, value by value per query.

* ERR@k      ir_measures' ERR (gdeval.pl, which prints 5 decimals: compared to 5e-6), and
             the same gdeval.pl run with its print format widened to 17 digits (1e-9);
* RBP        ir_measures' RBP(rel=k) (cwl_eval) and its graded RBP (trectools, raw labels
             as gains = our RBP(gain=label)); trec_eval 10's own rbp / rbp_resid outputs are
             checked in test_trec_eval_expected.py;
* RBPResidual  a plain-Python transcription of trec_eval 10's rbp_resid definition (no
             ir_measures provider computes a residual);
* alpha-nDCG ir_measures' alpha_nDCG provider, pyndeval (ndeval.c);
* Compat     ir_measures' Compat (its own Python code);
* ranx names (ndcg@k, ndcg_burges@k, map@k, mrr, precision@k, recall@k, hit_rate@k,
             r-precision, hits@k) against ranx itself.

Tie handling: gdeval and trec_eval both order by score, then doc id descending, and cwl_eval
keeps the order it is given (a stable sort by score), so those get runs with ties, fed in
our order. trectools averages the weights of tied documents, pyndeval and Compat break ties
by doc id ascending and ranx by its own sort: those get tie-free runs (scores replaced by
the position in our order), stated per test.
"""

from __future__ import annotations

import math
import pkgutil
import shutil
import subprocess
import warnings
from collections import Counter
from pathlib import Path

import polars as pl
import pytest
from conftest import shared_path
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trec_files import read_trec_qrels, read_trec_run

from searcheval_frames.core.evaluate import evaluate_frames
from searcheval_frames.measures import parse_measure

ir_measures = pytest.importorskip("ir_measures")

TOL = 1e-9
DL_RUNS = ["bm25", "bm25-rm3", "splade-pp-ed", "tasb", "openai-ada2", "repllama",
           "bm25-minilm-rerank"]


# ----------------------------------------------------------------------------- helpers
#: values compared per measure over the whole module (printed at the end with -s)
COMPARED: Counter = Counter()


@pytest.fixture(scope="module", autouse=True)
def _report_counts():
    yield
    for name, n in sorted(COMPARED.items()):
        print(f"[oracle total] {name}: {n}")


def ours(run: pl.DataFrame, qrels: pl.DataFrame, names: list[str], **opts) -> dict:
    """{(run, query_id, name as given): value} for the queries in both run and qrels."""
    ms = [parse_measure(n) for n in names]
    by_name = {m.name: n for m, n in zip(ms, names, strict=True)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = evaluate_frames(run, qrels, ms, per_query=True, missing="skip", **opts)
    return {(r, q, by_name[m]): v for r, q, m, v in out.iter_rows()}


def trec_order(run: pl.DataFrame) -> pl.DataFrame:
    """Rows in trec_eval's order: score descending, ties by doc id descending (bytes)."""
    return run.sort(["run", "query_id", "score", "doc_id"], descending=[False, False, True, True])


def tie_free(run: pl.DataFrame) -> pl.DataFrame:
    """Same order as ours, no ties: the score becomes n + 1 - position (positive).

    Positions count over the whole run, not per query, so no two rows of a run share a
    score: trectools averages the weights of equal scores even across queries.
    """
    return trec_order(run).with_columns(
        (pl.len() - pl.int_range(pl.len())).over("run").cast(pl.Float64).alias("score")
    )


def irm_qrels(qrels: pl.DataFrame) -> list:
    return [ir_measures.Qrel(q, d, int(r)) for q, d, r in
            qrels.select("query_id", "doc_id", "relevance").iter_rows()]


def irm_values(provider, measure, qrels: pl.DataFrame, run: pl.DataFrame) -> dict:
    """{(run, query_id): value} from one ir_measures provider, runs fed in our order."""
    q = irm_qrels(qrels)
    out = {}
    for (name,), part in trec_order(run).group_by(["run"], maintain_order=True):
        docs = [ir_measures.ScoredDoc(qid, did, s) for qid, did, s in
                part.select("query_id", "doc_id", "score").iter_rows()]
        for met in provider.iter_calc([measure], q, docs):
            out[(name, met.query_id)] = met.value
    return out


def _family(name: str) -> str:
    m = parse_measure(name)
    if m.family == "RBP":
        return "RBP(gain=label)" if m.param("gain") else "RBP(rel=k)"
    return m.family


def agree(mine: dict, theirs: dict, name: str, tol: float = TOL) -> tuple[int, list]:
    n, bad = 0, []
    for (run, qid), ref in theirs.items():
        if (run, qid, name) not in mine:
            # a query the run lacks: ir_measures scores it 0, as our missing="zero"
            if ref != 0:
                bad.append((run, qid, name, ref, "query not in the run"))
            continue
        value = mine[(run, qid, name)]
        n += 1
        COMPARED[_family(name) + (" (5 decimals)" if tol > TOL else "")] += 1
        if not math.isclose(value, ref, rel_tol=0.0, abs_tol=tol):
            bad.append((run, qid, name, ref, value))
    return n, bad


def dl(year: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    d = shared_path("trec_dl_passage")
    qrels = read_trec_qrels(d / f"qrels.dl{year}-passage.txt")
    run = pl.concat([
        read_trec_run(d / "runs" / f"run.dl{year}-passage.{name}.txt")
        .with_columns(pl.lit(name).alias("run")) for name in DL_RUNS
    ])
    return run, qrels


# ----------------------------------------------------------------------------- ERR
GDEVAL_K = [5, 10, 20]


def gdeval_full(qrels: pl.DataFrame, run: pl.DataFrame, k: int, tmp: Path) -> dict:
    """ERR@k per (run, query) from ir_measures' bundled gdeval.pl printing 17 digits."""
    if shutil.which("perl") is None:
        pytest.skip("perl is not installed")
    script = pkgutil.get_data("ir_measures", "bin/gdeval.pl").decode()
    wide = script.replace('"$runid,$topicCurrent,%.5f,%.5f\\n"', '"$runid,$topicCurrent,%.17g,%.17g\\n"')
    assert wide != script, "gdeval.pl's print format changed; update the test"
    (tmp / "gdeval.pl").write_text(wide)
    (tmp / "qrels").write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in
                                       qrels.select("query_id", "doc_id", "relevance").iter_rows()))
    out = {}
    for (name,), part in run.group_by(["run"], maintain_order=True):
        (tmp / "run").write_text("".join(
            f"{q} Q0 {d} {i} {s!r} tag\n"
            for i, (q, d, s) in enumerate(part.select("query_id", "doc_id", "score").iter_rows())))
        text = subprocess.run(["perl", str(tmp / "gdeval.pl"), str(tmp / "qrels"), str(tmp / "run"),
                               str(k)], capture_output=True, text=True, check=True).stdout
        for line in text.splitlines()[1:]:
            _, qid, _, err = line.split(",")
            out[(name, qid)] = float(err)
    return out


def check_err(run, qrels, tmp: Path) -> dict[str, int]:
    names = [f"ERR@{k}" for k in GDEVAL_K]
    mine = ours(run, qrels, names)
    counts, bad = {}, []
    for k, name in zip(GDEVAL_K, names, strict=True):
        five = irm_values(ir_measures.gdeval, ir_measures.ERR @ k, qrels, run)
        n5, b5 = agree(mine, five, name, tol=5e-6 + 1e-12)
        full = gdeval_full(qrels, run, k, tmp)
        n, b = agree(mine, full, name)
        assert set(full) <= set(five)
        assert all(five[key] == 0 for key in set(five) - set(full))
        # queries gdeval leaves out (no label > 0) score 0 here
        for (r, q, m), v in mine.items():
            if m == name and (r, q) not in full:
                assert v == 0.0, (r, q, m, v)
        counts[name] = n
        counts[name + " (5 decimals)"] = n5
        bad += b5 + b
    assert not bad, f"{len(bad)} differ: {bad[:5]}"
    return counts


@pytest.mark.shared
@pytest.mark.parametrize("year", ["19", "20"])
def test_err_trec_dl(year, tmp_path):
    run, qrels = dl(year)
    counts = check_err(run, qrels, tmp_path)
    print(f"[oracle] ERR DL{year}: {counts}")
    assert counts["ERR@10"] >= 7 * 43


# ----------------------------------------------------------------------------- RBP
RBP_P = [0.5, 0.8, 0.95]


def check_rbp(run, qrels) -> dict[str, int]:
    pytest.importorskip("cwl")  # ir_measures' RBP(rel=k) provider (cwl-eval)
    pytest.importorskip("trectools")  # its graded RBP provider
    names = [f"RBP(p={p},rel={rel})" for p in RBP_P for rel in (1, 2)]
    names += [f"RBP(gain=label,p={p})" for p in RBP_P]
    mine = ours(run, qrels, names)
    mine_tf = ours(tie_free(run), qrels, names)
    counts, bad = {}, []
    for p in RBP_P:
        for rel in (1, 2):
            theirs = irm_values(ir_measures.cwl_eval, ir_measures.RBP(p=p, rel=rel), qrels, run)
            counts[f"RBP(p={p},rel={rel})"], b = agree(mine, theirs, f"RBP(p={p},rel={rel})")
            bad += b
        # trectools averages the weights of tied documents: tie-free runs
        theirs = irm_values(ir_measures.trectools, ir_measures.RBP(p=p), qrels, tie_free(run))
        name = f"RBP(gain=label,p={p})"
        counts[name], b = agree(mine_tf, theirs, name)
        bad += b
    assert not bad, f"{len(bad)} differ: {bad[:5]}"
    return counts


@pytest.mark.shared
@pytest.mark.parametrize("year", ["19", "20"])
def test_rbp_trec_dl(year):
    run, qrels = dl(year)
    counts = check_rbp(run, qrels)
    print(f"[oracle] RBP DL{year}: {counts}")
    assert min(counts.values()) >= 7 * 43


def rbp_resid_reference(run: pl.DataFrame, qrels: pl.DataFrame, p: float) -> dict:
    """trec_eval 10's rbp_resid (m_rbp_resid.c), transcribed as plain Python loops.

    Ranks in trec_eval's order; "unjudged" = not in the qrels or labelled below 0; the
    value stays 0 when no retrieved document is unjudged.
    """
    labels = {(q, d): r for q, d, r in qrels.select("query_id", "doc_id", "relevance").iter_rows()}
    judged_q = set(qrels["query_id"])
    out: dict = {}
    ranked = trec_order(run).select("run", "query_id", "doc_id").rows()
    lists: dict = {}
    for r, q, d in ranked:
        lists.setdefault((r, q), []).append(d)
    for (r, q), docs in lists.items():
        if q not in judged_q:
            continue
        total, weight, unjudged = 0.0, 1.0, 0
        for d in docs:
            if labels.get((q, d), -1) < 0:
                unjudged += 1
                total += weight
            weight *= p
        out[(r, q)] = weight + (1 - p) * total if unjudged else 0.0
    return out


@pytest.mark.shared
@pytest.mark.parametrize("year", ["19", "20"])
def test_rbp_residual_trec_dl(year):
    run, qrels = dl(year)
    n, bad = 0, []
    for p in (0.5, 0.9, 0.95):
        name = f"RBPResidual(p={p})"
        k, b = agree(ours(run, qrels, [name]), rbp_resid_reference(run, qrels, p), name)
        n, bad = n + k, bad + b
    print(f"[oracle] RBPResidual DL{year} vs trec_eval transcription: {n}")
    assert n >= 3 * 7 * 43
    assert not bad, bad[:5]


# ----------------------------------------------------------------------------- Compat
def check_compat(run, qrels) -> int:
    """ir_measures' Compat on tie-free runs with positive scores (it ranks unretrieved
    relevant documents at score 0 in the ideal, ahead of negative scores)."""
    run = tie_free(run)
    n, bad = 0, []
    for p, norm in [(0.95, True), (0.8, True), (0.95, False)]:
        name = f"Compat(p={p},normalize={norm})"
        theirs = irm_values(ir_measures.compat, ir_measures.Compat(p=p, normalize=norm), qrels, run)
        k, b = agree(ours(run, qrels, [name]), theirs, name)
        n, bad = n + k, bad + b
    assert not bad, f"{len(bad)} of {n} differ: {bad[:5]}"
    return n


@pytest.mark.shared
@pytest.mark.parametrize("year", ["19", "20"])
def test_compat_trec_dl(year):
    run, qrels = dl(year)
    n = check_compat(run, qrels)
    print(f"[oracle] Compat DL{year}: {n}")
    assert n >= 3 * 7 * 43


# ----------------------------------------------------------------------------- alpha-nDCG


def subtopic_values(qrels: pl.DataFrame, run: pl.DataFrame, names: list[str], rel: int,
                    alpha: float) -> dict:
    """{(run, query_id, name): value} from pyndeval on tie-free runs."""
    pyndeval = pytest.importorskip("pyndeval")
    tuples = [tuple(r) for r in qrels.select("query_id", "subtopic", "doc_id", "relevance").iter_rows()]
    ev = pyndeval.RelevanceEvaluator(tuples, names, relevance_level=rel, alpha=alpha)
    out = {}
    for (name,), part in run.group_by(["run"], maintain_order=True):
        docs = [tuple(r) for r in part.select("query_id", "doc_id", "score").iter_rows()]
        for qid, values in ev.evaluate(docs).items():
            for m, v in values.items():
                out[(name, qid, m)] = v
    return out


def check_alpha(run, sub_qrels, rel: int, alpha: float, cutoffs=(5, 10, 20)) -> int:
    run = tie_free(run)
    params = [] if alpha == 0.5 else [f"alpha={alpha}"]
    params += [] if rel == 1 else [f"rel={rel}"]
    ptext = f"({','.join(params)})" if params else ""
    mine_names = [f"alpha_nDCG{ptext}@{k}" for k in cutoffs]
    nd_names = [f"alpha-nDCG@{k}" for k in cutoffs]
    mine = ours(run, sub_qrels, mine_names)
    theirs = subtopic_values(sub_qrels, run, nd_names, rel, alpha)
    n, bad = 0, []
    for (r, q, m), ref in theirs.items():
        value = mine[(r, q, mine_names[nd_names.index(m)])]
        n += 1
        COMPARED["alpha-nDCG"] += 1
        if not math.isclose(value, ref, rel_tol=0.0, abs_tol=TOL):
            bad.append((r, q, m, ref, value))
    assert not bad, f"{len(bad)} of {n} differ: {bad[:5]}"
    # the queries pyndeval evaluates are exactly ours
    assert {(r, q) for r, q, _ in theirs} == {(r, q) for r, q, _ in mine}
    return n


def synthetic_subtopics(qrels: pl.DataFrame) -> pl.DataFrame:
    """Subtopic judgments made from graded qrels: label >= 1 splits a document over 1-3 of
    four subtopics chosen by its id (the runs stay real)."""
    h = pl.col("doc_id").hash(7)
    rows = qrels.with_columns(
        ((h % 4) + 1).cast(pl.String).alias("s1"),
        (((h // 4) % 4) + 1).cast(pl.String).alias("s2"),
        (((h // 16) % 4) + 1).cast(pl.String).alias("s3"),
    )
    parts = [rows.select("query_id", pl.col(s).alias("subtopic"), "doc_id",
                         (pl.col("relevance") - i).clip(lower_bound=0).alias("relevance"))
             for i, s in enumerate(["s1", "s2", "s3"])]
    return pl.concat(parts).unique(["query_id", "subtopic", "doc_id"], keep="first")


@pytest.mark.shared
@pytest.mark.parametrize("year", ["19", "20"])
def test_alpha_ndcg_trec_dl_runs(year):
    run, qrels = dl(year)
    sub = synthetic_subtopics(qrels)
    n = check_alpha(run, sub, 1, 0.5) + check_alpha(run, sub, 2, 0.5)
    print(f"[oracle] alpha-nDCG DL{year} (synthetic subtopics) vs pyndeval: {n}")
    assert n >= 2 * 3 * 7 * 43


def test_alpha_ndcg_through_ir_measures():
    """The same numbers through ir_measures' own alpha_nDCG measure (provider pyndeval)."""
    pytest.importorskip("pyndeval")
    run = pl.DataFrame({"run": "r", "query_id": ["1"] * 4 + ["2"] * 2,
                        "doc_id": ["a", "b", "c", "d", "a", "x"],
                        "score": [4.0, 3.0, 2.0, 1.0, 2.0, 1.0]})
    sub = pl.DataFrame({"query_id": ["1"] * 6 + ["2"] * 2,
                        "subtopic": ["1", "2", "1", "2", "3", "1", "1", "2"],
                        "doc_id": ["a", "a", "b", "c", "c", "d", "x", "y"],
                        "relevance": [1, 1, 1, 1, 1, 0, 1, 1]})
    qrels = [ir_measures.GenericQrel(q, d, r, s) for q, s, d, r in sub.iter_rows()]
    docs = [ir_measures.ScoredDoc(q, d, s) for _, q, d, s in run.iter_rows()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = {(m.query_id, str(m.measure)): m.value for m in ir_measures.pyndeval.iter_calc(
            [ir_measures.alpha_nDCG @ 3, ir_measures.alpha_nDCG @ 2], qrels, docs)}
    mine = ours(run, sub, ["alpha_nDCG@3", "alpha_nDCG@2"])
    assert len(theirs) == 4
    for (q, m), v in theirs.items():
        assert mine[("r", q, m)] == pytest.approx(v, abs=TOL)
    assert 0 < mine[("r", "1", "alpha_nDCG@3")] < 1


# ----------------------------------------------------------------------------- ranx names
def nested(df: pl.DataFrame) -> dict:
    out: dict = {}
    for qid, did, v in df.iter_rows():
        out.setdefault(qid, {})[did] = v
    return out


RANX_NAMES = ["ndcg@10", "ndcg_burges@10", "map@100", "map", "mrr", "mrr@10", "precision@10",
              "recall@100", "hit_rate@5", "r-precision", "hits@10", "hits"]


@pytest.mark.shared
def test_ranx_names_trec_dl():
    ranx = pytest.importorskip("ranx")
    run, qrels = dl("19")
    run = tie_free(run)
    # ranx treats a label as relevant when it is >= 1, as here with relevance_level=1; it
    # keeps only positive labels of the qrels for nDCG's ideal, which is what label gains do
    q = ranx.Qrels.from_dict(nested(qrels.filter(pl.col("relevance") > 0)))
    n, bad = 0, []
    for (name,), part in run.group_by(["run"], maintain_order=True):
        r = ranx.Run.from_dict(nested(part.select("query_id", "doc_id", "score")))
        ranx.evaluate(q, r, RANX_NAMES, return_mean=False, make_comparable=False)
        mine = ours(part, qrels, RANX_NAMES)
        for metric in RANX_NAMES:
            for qid, ref in r.scores[metric].items():
                n += 1
                COMPARED["ranx " + metric] += 1
                if not math.isclose(mine[(name, qid, metric)], ref, abs_tol=TOL):
                    bad.append((name, qid, metric, ref, mine[(name, qid, metric)]))
    print(f"[oracle] ranx names DL19: {n}")
    assert n >= len(RANX_NAMES) * 7 * 43
    assert not bad, f"{len(bad)} of {n} differ: {bad[:5]}"


# ----------------------------------------------------------------------------- random runs
DOCS = ["a", "b", "B", "aa", "1", "10", "9", "z", "x-1", "x_1", "7", "c", "d"]
QUERIES = ["1", "2", "3", "301", "10"]  # gdeval wants numeric topics


LABELS = st.integers(-1, 4)


@st.composite
def collections(draw, labels=LABELS):
    qrels_rows, run_rows = [], []
    for q in QUERIES:
        if draw(st.booleans()) or q == "1":
            for doc in draw(st.lists(st.sampled_from(DOCS), unique=True, min_size=1, max_size=9)):
                qrels_rows.append((q, doc, draw(labels)))
        if draw(st.booleans()) or q == "1":
            for name in ("A", "B"):
                docs = draw(st.lists(st.sampled_from(DOCS), unique=True, min_size=1, max_size=12))
                for doc in docs:
                    score = draw(st.one_of(st.integers(0, 3).map(float),
                                           st.floats(-5, 5, allow_nan=False, width=32)))
                    run_rows.append((name, q, doc, score))
    qrels = pl.DataFrame(qrels_rows, schema=["query_id", "doc_id", "relevance"], orient="row")
    run = pl.DataFrame(run_rows, schema=["run", "query_id", "doc_id", "score"], orient="row")
    return run, qrels


def _usable(run, qrels) -> bool:
    return bool(set(run["query_id"]) & set(qrels["query_id"]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=collections())
def test_random_err(data, tmp_path):
    run, qrels = data
    if _usable(run, qrels):
        check_err(run, qrels, tmp_path)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=collections())
def test_random_rbp(data):
    run, qrels = data
    if not _usable(run, qrels):
        return
    check_rbp(run, qrels)
    # graded (trec_eval) gains are the raw-label RBP scaled by the query's largest label
    mine = ours(run, qrels, ["RBP(p=0.8)", "RBP(gain=label,p=0.8)", "RBPResidual(p=0.8)"])
    top = dict(qrels.group_by("query_id").agg(pl.col("relevance").max()).iter_rows())
    for (r, q, m), v in mine.items():
        if m == "RBP(p=0.8)":
            assert v == pytest.approx(mine[(r, q, "RBP(gain=label,p=0.8)")] / max(top[q], 1),
                                      abs=1e-12)
    n, bad = agree(mine, rbp_resid_reference(run, qrels, 0.8), "RBPResidual(p=0.8)")
    assert n and not bad, bad


@st.composite
def subtopic_collections(draw):
    run, flat = draw(collections(labels=st.integers(-1, 3)))
    rows = []
    for q, d, _ in flat.iter_rows():
        for s in draw(st.lists(st.sampled_from(["1", "2", "3", "4"]), unique=True, min_size=1,
                               max_size=3)):
            rows.append((q, s, d, draw(st.integers(-1, 3))))
    sub = pl.DataFrame(rows, schema=["query_id", "subtopic", "doc_id", "relevance"], orient="row")
    return run, sub


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=subtopic_collections(), rel=st.sampled_from([1, 2]), alpha=st.sampled_from([0.5, 0.25]))
def test_random_alpha_ndcg(data, rel, alpha):
    run, sub = data
    if _usable(run, sub):
        check_alpha(run, sub, rel, alpha, cutoffs=(1, 3, 5, 20))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=collections())
def test_random_compat(data):
    run, qrels = data
    if _usable(run, qrels):
        check_compat(run, qrels)
