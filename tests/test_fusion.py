"""sef.fuse and sef.optimize_fusion: ranx's fusion as the oracle, value by value.

ranx ranks a run by ``np.argsort(-score)`` (not stable), so on tied scores its ranks are
arbitrary; ours follow trec_eval (score desc, doc_id desc). For the rank-based methods and
norms the oracle is therefore given each run with score = -(our trec_eval rank), computed
here independently in plain Python, and on tie-free runs it is given the raw scores.
Documented differences (docs/fusion.md) have their own tests below.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import searcheval_frames as sef
from searcheval_frames.errors import InvalidOptionError, SearchEvalError, SearchEvalWarning
from searcheval_frames.fusion import METHODS, NORMS
from searcheval_frames.fusion.methods import RANK_METHODS, SCORE_METHODS

ranx = pytest.importorskip("ranx")

RANX_METHOD = {"rrf": "rrf", "borda": "bordafuse", "isr": "isr", "logisr": "log_isr",
               "combsum": "sum", "combmnz": "mnz", "combmax": "max", "combmin": "min",
               "combmed": "med", "combanz": "anz", "wsum": "wsum"}
RANK_NORMS = ("rank", "borda")
COMBOS = [(m, None) for m in METHODS] + [(m, n) for m in SCORE_METHODS for n in NORMS]
COMPARED: Counter[str] = Counter()


# --------------------------------------------------------------------------- helpers
def trec_ranks(docs: dict[str, float]) -> dict[str, int]:
    """Ranks in trec_eval order (score desc, doc_id desc), written independently."""
    order = sorted(docs.items(), key=lambda x: (x[1], x[0]), reverse=True)
    return {d: i + 1 for i, (d, _) in enumerate(order)}


def as_ranked(run: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    return {q: {d: -float(r) for d, r in trec_ranks(docs).items()} for q, docs in run.items()}


def ranx_fuse(runs: dict, method: str, norm: str | None, weights=None, k=60, ranked=False):
    rank_based = method in RANK_METHODS or norm in RANK_NORMS
    feed = {n: (as_ranked(r) if ranked and rank_based else r) for n, r in runs.items()}
    rx = [ranx.Run.from_dict(r, name=n) for n, r in feed.items()]
    params = {}
    if method == "wsum":
        params["weights"] = weights
    if method == "rrf":
        params["k"] = k
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = ranx.fuse(rx, norm=norm, method=RANX_METHOD[method], params=params)
    return {(q, d): s for q, docs in out.to_dict().items() for d, s in docs.items()}


def our_fuse(runs: dict, method: str, norm: str | None, weights=None, k=60):
    frame = pl.concat([
        pl.DataFrame({"run": n, "query_id": q, "doc_id": list(docs), "score": list(docs.values())},
                     schema={"run": pl.String, "query_id": pl.String, "doc_id": pl.String,
                             "score": pl.Float64})
        for n, r in runs.items() for q, docs in r.items() if docs
    ])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SearchEvalWarning)
        out = sef.fuse(frame, method, norm=norm, weights=weights, k=k)
    return {(q, d): s for q, d, s in out.select("query_id", "doc_id", "score").iter_rows()}


def compare(runs, method, norm, weights=None, k=60, ranked=False) -> int:
    ours = our_fuse(runs, method, norm, weights if method == "wsum" else None, k)
    theirs = ranx_fuse(runs, method, norm, weights, k, ranked)
    assert set(ours) == set(theirs), (method, norm)
    for key, v in theirs.items():
        assert math.isclose(ours[key], v, rel_tol=1e-9, abs_tol=1e-9), (method, norm, key,
                                                                      ours[key], v)
    COMPARED[f"{method}/{norm}"] += len(theirs)
    return len(theirs)


def positive(runs):
    """Scores shifted above 0 (ranx's max norm divides by 1e-9 when a max is <= 0)."""
    return {n: {q: {d: s + 100.0 for d, s in docs.items()} for q, docs in r.items()}
            for n, r in runs.items()}


# --------------------------------------------------------------------------- strategies
@st.composite
def run_sets(draw, ties: bool):
    n_runs = draw(st.integers(2, 4))
    queries = [f"q{i}" for i in range(draw(st.integers(1, 3)))]
    pool = [f"d{i}" for i in range(draw(st.integers(1, 9)))]
    runs: dict[str, dict[str, dict[str, float]]] = {f"r{i}": {} for i in range(n_runs)}
    for q in queries:
        for i, name in enumerate(runs):
            docs = draw(st.lists(st.sampled_from(pool), unique=True,
                                 min_size=1 if i == 0 or q == queries[0] else 0,
                                 max_size=len(pool)))
            if ties:   # few distinct values: many ties (dyadic: sums are exact)
                vals = draw(st.lists(st.integers(-8, 8), min_size=len(docs), max_size=len(docs)))
            else:
                vals = draw(st.lists(st.integers(-400, 400), min_size=len(docs),
                                     max_size=len(docs), unique=True))
            runs[name][q] = {d: v / 8 for d, v in zip(docs, vals, strict=True)}
    return runs


SETTINGS = settings(max_examples=8, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize(("method", "norm"), COMBOS, ids=[f"{m}-{n}" for m, n in COMBOS])
@SETTINGS
@given(data=st.data())
def test_agrees_with_ranx_on_runs_with_ties(method, norm, data):
    """Partial overlaps, empty queries in some runs, and many tied scores."""
    runs = data.draw(run_sets(ties=True))
    if norm == "max":
        runs = positive(runs)
    weights = data.draw(st.lists(st.integers(0, 4), min_size=len(runs), max_size=len(runs))
                        .filter(any)) if method == "wsum" else None
    k = data.draw(st.integers(0, 100))
    compare(runs, method, norm, [w / 4 for w in weights] if weights else None, k, ranked=True)


@pytest.mark.parametrize(("method", "norm"), COMBOS, ids=[f"{m}-{n}" for m, n in COMBOS])
@SETTINGS
@given(data=st.data())
def test_agrees_with_ranx_on_tie_free_runs(method, norm, data):
    """Without ties ranx gets the raw scores, rank-based methods included."""
    runs = data.draw(run_sets(ties=False))
    if norm == "max":
        runs = positive(runs)
    compare(runs, method, norm, [0.5] * len(runs) if method == "wsum" else None)


def random_runs(rng: np.random.Generator, n_runs: int, n_q: int, pool: int, depth: int):
    runs = {}
    for i in range(n_runs):
        r = {}
        for q in range(n_q):
            m = int(rng.integers(1, depth + 1))
            docs = rng.choice(pool, size=m, replace=False)
            scores = rng.normal(i, 1 + i, size=m) if i % 2 else rng.uniform(0, 20, size=m)
            r[f"q{q}"] = {f"d{d}": float(s) for d, s in zip(docs, scores, strict=True)}
        runs[f"sys{i}"] = r
    return runs


def test_agrees_with_ranx_on_larger_random_runs():
    """Continuous scores (no ties), 3-5 runs, 40 queries: every method x norm; counts."""
    rng = np.random.default_rng(13)
    total = 0
    for trial in range(3):
        runs = random_runs(rng, 3 + trial % 3, 40, 120, 60)
        weights = list(rng.uniform(0, 1, size=len(runs)))
        for method, norm in COMBOS:
            data = positive(runs) if norm == "max" else runs
            total += compare(data, method, norm, weights, k=int(rng.integers(1, 100)))
    print(f"\nvalues compared with ranx: {total} (this test); per method/norm so far: "
          f"{sum(COMPARED.values())} in {len(COMPARED)} combinations")
    assert total > 50_000


# --------------------------------------------------------------------------- documented
def test_ties_use_trec_eval_order_for_ranks():
    runs = {"a": {"q": {"x": 1.0, "y": 1.0, "z": 2.0}}, "b": {"q": {"x": 5.0}}}
    out = sef.fuse(runs, "rrf", k=0)
    got = dict(zip(out["doc_id"], out["score"], strict=True))
    # a: z (1), then y before x (doc_id descending) -> y=2, x=3; b: x (1)
    assert got == {"z": 1.0, "y": 0.5, "x": 1 / 3 + 1.0}
    # the fused ranking's own ties are listed doc_id descending
    tied = sef.fuse({"a": {"q": {"m": 1.0}}, "b": {"q": {"n": 1.0}}}, "combsum")
    assert tied["doc_id"].to_list() == ["n", "m"]


def test_ranx_comb_max_sentinel_differs():
    """ranx fills a missing document with -1e9 for CombMAX (1e9 for CombMIN); with max
    norm on all-negative scores (divided by 1e-9) that sentinel wins. We use the runs
    that retrieved the document, always, and warn about the max norm."""
    runs = {"a": {"q": {"x": -3.0, "y": -2.0}}, "b": {"q": {"x": 3.0}}}
    with pytest.warns(SearchEvalWarning, match="highest score <= 0"):
        ours = our_fuse_warn(runs, "combmax", "max")
    theirs = ranx_fuse(runs, "combmax", "max")
    assert ours[("q", "y")] == pytest.approx(-2.0 / 1e-9)
    assert theirs[("q", "y")] == -1e9


def our_fuse_warn(runs, method, norm):
    out = sef.fuse(runs, method, norm=norm)
    return {(q, d): s for q, d, s in out.select("query_id", "doc_id", "score").iter_rows()}


def test_zmuv_all_equal_scores_give_exact_zero():
    runs = {"a": {"q": {"x": 0.1, "y": 0.1, "z": 0.1}}, "b": {"q": {"x": 1.0, "w": 3.0}}}
    out = sef.fuse(runs, "combsum", norm="zmuv")
    got = dict(zip(out["doc_id"], out["score"], strict=True))
    assert got["y"] == 0.0 and got["z"] == 0.0


def test_query_missing_from_a_run_is_an_empty_list():
    a = {"q1": {"x": 2.0, "y": 1.0}, "q2": {"x": 1.0}}
    b = {"q1": {"y": 3.0}}
    out = sef.fuse({"a": a, "b": b}, "borda")
    got = {(q, d): s for q, d, s in out.select("query_id", "doc_id", "score").iter_rows()}
    # q2: C = 1; a gives x 1 point, b (no list) gives (1 - 0 + 1) / 2 = 1
    assert got[("q2", "x")] == 2.0
    # same as ranx with an explicit empty list
    assert got == ranx_fuse({"a": a, "b": {"q1": {"y": 3.0}, "q2": {}}}, "borda", None)


def test_weighted_rrf_formula():
    runs = {"a": {"q": {"x": 2.0, "y": 1.0}}, "b": {"q": {"y": 9.0}}}
    out = sef.fuse(runs, "rrf", k=10, weights={"a": 0.25, "b": 2.0})
    got = dict(zip(out["doc_id"], out["score"], strict=True))
    assert got == pytest.approx({"x": 0.25 / 11, "y": 0.25 / 12 + 2.0 / 11}, rel=1e-12)


# --------------------------------------------------------------------------- inputs
def frames():
    bm25 = pd.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "a"],
                         "score": [3.0, 2.0, 1.0]})
    dense = pd.DataFrame({"query_id": ["1", "2", "2"], "doc_id": ["b", "c", "a"],
                          "score": [0.9, 0.8, 0.1]})
    return bm25, dense


def test_kinds_names_and_input_forms(tmp_path):
    bm25, dense = frames()
    out = sef.fuse({"bm25": bm25, "dense": dense})
    assert isinstance(out, pd.DataFrame) and list(out.columns) == ["run", "query_id", "doc_id",
                                                                   "score"]
    assert set(out["run"]) == {"rrf(bm25,dense)"}
    long = pl.concat([pl.from_pandas(bm25).with_columns(run=pl.lit("bm25")),
                      pl.from_pandas(dense).with_columns(run=pl.lit("dense"))])
    out_pl = sef.fuse(long, "combsum", norm="min-max", name="hybrid")
    assert isinstance(out_pl, pl.DataFrame) and out_pl["run"].unique().to_list() == ["hybrid"]
    listed = sef.fuse([pl.from_pandas(bm25), pl.from_pandas(dense)], "combsum", norm="min-max")
    assert listed["run"][0] == "combsum[min-max](run1,run2)"
    assert listed["score"].to_list() == out_pl["score"].to_list()
    paths = []
    for name, df in (("bm25", bm25), ("dense", dense)):
        p = tmp_path / f"{name}.run"
        sef.write_run(pl.from_pandas(df).with_columns(run=pl.lit(name)), p)
        paths.append(p)
    from_files = sef.fuse(paths, "combsum", norm="min-max")
    assert from_files["score"].to_list() == out_pl["score"].to_list()
    assert from_files["run"][0] == "combsum[min-max](bm25,dense)"
    # unsorted input: same result as sorted
    shuffled = long.sample(fraction=1.0, shuffle=True, seed=3)
    assert sef.fuse(shuffled, "rrf").equals(sef.fuse(long, "rrf"))


def test_depth_keeps_top_documents_per_query():
    bm25, dense = frames()
    out = sef.fuse({"bm25": bm25, "dense": dense}, "rrf", depth=1)
    assert out.groupby("query_id").size().to_dict() == {"1": 1, "2": 1}
    full = sef.fuse({"bm25": bm25, "dense": dense}, "rrf")
    assert out["doc_id"].tolist() == full.groupby("query_id").head(1)["doc_id"].tolist()


def test_fused_run_evaluates():
    bm25, dense = frames()
    fused = sef.fuse({"bm25": bm25, "dense": dense})
    qrels = pd.DataFrame({"query_id": ["1", "2"], "doc_id": ["b", "c"], "relevance": [1, 1]})
    res = sef.evaluate(fused, qrels, ["RR"])
    assert res["value"].tolist() == [0.75]   # q1: b first; q2: a (both runs) before c


# --------------------------------------------------------------------------- bad input
BM25, DENSE = frames()
RUNS = {"bm25": BM25, "dense": DENSE}


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"method": "cosine"}, r"fuse\(method='cosine'\): must be one of"),
    ({"method": 3}, r"fuse\(method=3\)"),
    ({"norm": "l2"}, r"fuse\(norm='l2'\): must be one of"),
    ({"method": "rrf", "norm": "min-max"}, r"must be None for method='rrf'"),
    ({"method": "borda", "norm": "rank"}, r"must be None for method='borda'"),
    ({"k": -1}, r"fuse\(k=-1\): must be a finite number in \[0, inf\]"),
    ({"k": True}, r"fuse\(k=True\)"),
    ({"k": "60"}, r"fuse\(k='60'\)"),
    ({"depth": 0}, r"fuse\(depth=0\): must be an integer >= 1"),
    ({"depth": 2.5}, r"fuse\(depth=2.5\)"),
    ({"name": "my run"}, r"fuse\(name='my run'\): must be a non-empty string without spaces"),
    ({"name": ""}, r"fuse\(name=''\)"),
    ({"name": 7}, r"fuse\(name=7\)"),
    ({"method": "combsum", "weights": [1, 1]}, r"used by method='wsum' and 'rrf' only"),
    ({"method": "wsum", "weights": [1.0]}, r"must have 2 weights"),
    ({"method": "wsum", "weights": {"bm25": 1.0, "bert": 1.0}}, r"keyed by run name"),
    ({"method": "wsum", "weights": [1.0, -0.5]}, r"finite numbers >= 0"),
    ({"method": "wsum", "weights": [0, 0]}, r"not all 0"),
    ({"method": "wsum", "weights": [1.0, float("nan")]}, r"finite numbers >= 0"),
    ({"method": "wsum", "weights": "0.5,0.5"}, r"must be a list of numbers"),
    ({"method": "rrf", "weights": [True, 1]}, r"finite numbers >= 0"),
])
def test_bad_options(kwargs, match):
    with pytest.raises(InvalidOptionError, match=match):
        sef.fuse(RUNS, **kwargs)


def test_bad_runs():
    with pytest.raises(SearchEvalError, match="needs two runs or more, got one"):
        sef.fuse(BM25)
    with pytest.raises(SearchEvalError, match="empty list"):
        sef.fuse([])
    named = pl.from_pandas(BM25).with_columns(run=pl.lit("x"))
    with pytest.raises(SearchEvalError, match=r"runs\[0\] and runs\[1\] both hold a run named"):
        sef.fuse([named, named])
    with pytest.raises(SearchEvalError, match="missing, NaN or infinite"):
        sef.fuse({"a": BM25.assign(score=[1.0, float("nan"), 2.0]), "b": DENSE})
    with pytest.raises(SearchEvalError, match="more than once"):
        sef.fuse({"a": pd.concat([BM25, BM25]), "b": DENSE})


# --------------------------------------------------------------------------- optimize
def toy_set():
    rng = np.random.default_rng(7)
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(0, 3)) for j in range(12)} for i in range(8)}
    runs = random_runs(rng, 3, 8, 12, 10)
    runs = {n: {q: {d.replace("d", "d"): s for d, s in r[q].items()} for q in r}
            for n, r in runs.items()}
    return runs, qrels


def test_optimize_grid_is_the_best_of_brute_force():
    runs, qrels = toy_set()
    best = sef.optimize_fusion(runs, qrels, "nDCG@5", "wsum", grid=0.25)
    assert best.trials.height == 15   # C(4 + 2, 2) weight vectors on the 0.25 grid
    brute = []
    for row in best.trials.iter_rows(named=True):
        w = {n: row[n] for n in runs}
        fused = sef.fuse(runs, "wsum", norm="min-max", weights=w)
        v = sef.evaluate(fused, qrels, ["nDCG@5"])["value"][0]
        assert v == pytest.approx(row["train"], abs=1e-12)
        assert sum(w.values()) == pytest.approx(1.0)
        brute.append(v)
    assert best.train_score == pytest.approx(max(brute), abs=1e-12)
    again = sef.fuse(runs, **best.params)
    assert sef.evaluate(again, qrels, ["nDCG@5"])["value"][0] == pytest.approx(best.train_score)
    assert "wsum[min-max]" in str(best) and best.frame.height == 1


def test_optimize_rrf_k_with_held_out_queries():
    runs, qrels = toy_set()
    train = ["q0", "q1", "q2", "q3", "q4"]
    best = sef.optimize_fusion(runs, qrels, "AP", "rrf", k=[1, 30, 200], train_queries=train)
    assert best.n_train == 5 and best.n_test == 3 and best.weights is None
    assert best.k in (1.0, 30.0, 200.0) and best.trials.height == 3
    fused = sef.fuse(runs, **best.params)
    test_qrels = {q: v for q, v in qrels.items() if q not in train}
    train_qrels = {q: v for q, v in qrels.items() if q in train}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SearchEvalWarning)
        assert sef.evaluate(fused, test_qrels, ["AP"])["value"][0] == pytest.approx(best.test_score)
        assert sef.evaluate(fused, train_qrels, ["AP"])["value"][0] == pytest.approx(best.train_score)


def test_optimize_random_trials_are_seeded():
    runs, qrels = toy_set()
    a = sef.optimize_fusion(runs, qrels, trials=20, seed=1)
    b = sef.optimize_fusion(runs, qrels, trials=20, seed=1)
    c = sef.optimize_fusion(runs, qrels, trials=20, seed=2)
    assert a.trials.equals(b.trials) and not a.trials.equals(c.trials)
    assert a.trials.height == 21   # equal weights + 20 draws
    sums = a.trials.select(pl.sum_horizontal(list(runs))).to_series()
    assert (sums - 1).abs().max() < 1e-12


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"measure": "nDCG@x"}, "nDCG@x"),
    ({"measure": ["P@5", "AP"]}, r"must name one measure"),
    ({"method": "combsum"}, r"optimize_fusion\(method='combsum'\): must be one of 'wsum', 'rrf'"),
    ({"method": "bogus"}, r"optimize_fusion\(method='bogus'\)"),
    ({"norm": "l1"}, r"optimize_fusion\(norm='l1'\)"),
    ({"method": "rrf", "norm": "min-max"}, r"must be None for method='rrf'"),
    ({"grid": 0}, r"optimize_fusion\(grid=0\)"),
    ({"grid": 0.3}, r"whole steps"),
    ({"grid": 0.001}, r"weight vectors for 3 runs"),
    ({"grid": 0.1, "trials": 5}, r"cannot be combined with grid="),
    ({"trials": 0}, r"optimize_fusion\(trials=0\)"),
    ({"seed": "x"}, r"optimize_fusion\(seed='x'\)"),
    ({"method": "rrf", "k": []}, r"optimize_fusion\(k=\[\]\): must not be empty"),
    ({"method": "rrf", "k": [-1]}, r"optimize_fusion\(k=-1\)"),
    ({"method": "rrf", "k": "60"}, r"optimize_fusion\(k='60'\)"),
    ({"train_queries": "q1"}, r"optimize_fusion\(train_queries='q1'\)"),
    ({"train_queries": []}, r"must not be empty"),
    ({"train_queries": ["nope"]}, r"none of the train_queries has relevance labels"),
    ({"depth": 0}, r"optimize_fusion\(depth=0\)"),
    ({"relevance_level": 1.5}, r"optimize_fusion\(relevance_level=1.5\)"),
])
def test_optimize_bad_options(kwargs, match):
    runs, qrels = toy_set()
    with pytest.raises(SearchEvalError, match=match):
        sef.optimize_fusion(runs, qrels, **kwargs)


@pytest.mark.parametrize("name", ["searcheval_frames.fusion.methods",
                                  "searcheval_frames.fusion.optimize",
                                  "searcheval_frames.fusion.parts"])
def test_docstring_examples(name):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name),
                             optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


# --------------------------------------------------------------------------- large inputs
# An input of more than core.partitioned.ROWS_PER_PART rows is fused by ranges of query
# ids. Forced small here, the result must equal the one-piece result exactly (rows, order,
# float bits), whatever the row layout: the layouts below make the whole frame be sorted
# or not while some parts alone would decide otherwise, and give 3+ runs in a per-query
# order that differs from the run order, so float sums would differ by an ulp if a part
# summed a document's values in another order than the whole does.
def layout_frame(seed: int = 5) -> pl.DataFrame:
    """4 runs x 14 queries, partly overlapping documents, ties, queries some runs lack."""
    rng = np.random.default_rng(seed)
    rows = []
    for r in range(4):
        for q in range(14):
            if (q + r) % 5 == 4:  # this run lacks the query
                continue
            docs = rng.choice(30, size=int(rng.integers(1, 12)), replace=False)
            tied = q % 3 == 0  # a few distinct values: ties
            for d in docs:
                s = float(rng.integers(0, 4)) if tied else float(rng.normal(r, 1 + r))
                rows.append((f"r{r}", f"q{q:02d}", f"d{d}", s))
    return pl.DataFrame(rows, schema=["run", "query_id", "doc_id", "score"], orient="row")


def layout(df: pl.DataFrame, how: str) -> pl.DataFrame:
    trec = ["score", "doc_id"]
    if how == "run-major":  # as run files: in order, not sorted again
        return df.sort(["run", "query_id", *trec], descending=[False, False, True, True])
    if how == "shuffled":  # sorted by every piece
        return df.sample(fraction=1.0, shuffle=True, seed=3)
    # query-major, the runs of each query in a query-dependent order (not the run order)
    key = (pl.col("run").str.slice(1).cast(pl.Int64) * 7 + pl.col("query_id").str.slice(1)
           .cast(pl.Int64) * 3) % 4
    out = (df.sort(trec, descending=True).sort("query_id", key, maintain_order=True))
    first = out.filter(pl.col("run") == "r0").head(1)  # keep r0 first: the same run names
    out = pl.concat([first, out.join(first, on=out.columns, how="anti")])
    if how == "query-major":  # blocks together and in order: not sorted
        return out
    # one late query's block broken in two: the whole frame is sorted, but a part
    # without that query would not be on its own
    q = out.filter(pl.col("query_id") == "q12")
    rest = out.filter(pl.col("query_id") != "q12")
    return pl.concat([rest, q.slice(1), q.head(1)])


LAYOUTS = ["run-major", "shuffled", "query-major", "query-major-broken"]


def fuse_both(df, monkeypatch, rows=7, **kw):
    """(one-piece, by parts of ``rows`` rows, number of parts) of sef.fuse(df, **kw)."""
    from searcheval_frames.core import partitioned
    from searcheval_frames.fusion import methods

    cuts = []
    real = methods.query_ranges
    monkeypatch.setattr(methods, "query_ranges", lambda d, n: cuts.append(real(d, n)) or cuts[-1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SearchEvalWarning)
        monkeypatch.setattr(partitioned, "ROWS_PER_PART", 10**9)
        whole = sef.fuse(df, **kw)
        assert not cuts
        monkeypatch.setattr(partitioned, "ROWS_PER_PART", rows)
        parts = sef.fuse(df, **kw)
    return whole, parts, len(cuts[0]) if cuts else 1


@pytest.mark.parametrize("how", LAYOUTS)
def test_parts_equal_one_piece_for_every_method_and_norm(how, monkeypatch):
    df = layout(layout_frame(), how)
    assert df.height > 100
    names = df.get_column("run").unique(maintain_order=True).to_list()
    assert sorted(names) == ["r0", "r1", "r2", "r3"]
    weights = {"r0": 0.7, "r1": 0.1, "r2": 0.05, "r3": 0.15}
    for method, norm in COMBOS:
        for depth in (None, 3):
            kw = {"method": method, "norm": norm, "depth": depth}
            if method in ("wsum", "rrf"):
                kw["weights"] = weights
            whole, parts, n = fuse_both(df, monkeypatch, **kw)
            assert n >= 10, n
            assert whole.height > 0
            assert whole.equals(parts), (how, method, norm, depth)


def test_parts_keep_the_input_kind_and_name(monkeypatch):
    df = layout(layout_frame(7), "shuffled").to_pandas()
    whole, parts, n = fuse_both(df, monkeypatch, rows=20, method="combmnz", norm="zmuv",
                                name="hybrid")
    assert isinstance(parts, pd.DataFrame) and n > 3
    pd.testing.assert_frame_equal(whole, parts, check_exact=True)
    assert set(parts["run"]) == {"hybrid"}


def test_parts_warn_once_for_max_norm(monkeypatch):
    df = layout_frame(3).with_columns(pl.col("score") - 100.0)  # every max <= 0
    pairs = df.select("run", "query_id").n_unique()
    assert pairs > 40
    from searcheval_frames.core import partitioned

    counts = []
    for rows in (10**9, 9):
        monkeypatch.setattr(partitioned, "ROWS_PER_PART", rows)
        with pytest.warns(SearchEvalWarning, match=r"norm='max'") as got:
            sef.fuse(df, "combsum", norm="max")
        assert len(got) == 1
        counts.append(str(got[0].message).split(" (run, query)")[0])
        assert f"... and {df.height - 3} more" in str(got[0].message)
    assert counts[0] == counts[1] == f"fuse(norm='max'): {pairs}"


def test_parts_only_above_rows_per_part(monkeypatch):
    df = layout_frame()
    _, _, n = fuse_both(df, monkeypatch, rows=df.height)
    assert n == 1  # not partitioned at exactly ROWS_PER_PART rows
    _, _, n = fuse_both(df, monkeypatch, rows=df.height - 1)
    assert n == 2


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(runs=st.one_of(run_sets(ties=True), run_sets(ties=False)), data=st.data())
def test_parts_equal_one_piece_property(runs, data):
    combo = data.draw(st.sampled_from(COMBOS))
    rows = data.draw(st.integers(1, 10))
    seed = data.draw(st.integers(0, 3))
    frame = pl.concat([
        pl.DataFrame({"run": n, "query_id": q, "doc_id": list(docs),
                      "score": [float(v) for v in docs.values()]},
                     schema={"run": pl.String, "query_id": pl.String, "doc_id": pl.String,
                             "score": pl.Float64})
        for n, r in runs.items() for q, docs in r.items() if docs
    ])
    if seed:  # some layouts shuffled (the names keep their order: the first row stays)
        frame = pl.concat([frame.head(1), frame.slice(1).sample(fraction=1.0, shuffle=True,
                                                                 seed=seed)])
    method, norm = combo
    kw = {"method": method, "norm": norm, "depth": data.draw(st.sampled_from([None, 1, 2]))}
    if method in ("wsum", "rrf") and data.draw(st.booleans()):
        kw["weights"] = [data.draw(st.integers(0, 4)) / 4 + 0.25 for _ in runs]
    with pytest.MonkeyPatch.context() as mp:
        whole, parts, _ = fuse_both(frame, mp, rows=rows, **kw)
    assert whole.equals(parts), (combo, rows)


def test_parts_equal_one_piece_combmed_borda_one_query_per_part(monkeypatch):
    """The example Hypothesis found: with one query per part, the borda norm's candidate
    count C was joined in from a one-row frame, which polars divides by as x * (1/C):
    d1 got 1 - 3 * (1/5) = 0.3999999999999999 instead of 1 - 3/5 = 0.4."""
    docs = [f"d{i}" for i in range(5)]
    frame = pl.DataFrame(
        [("r0", "q0", d, 0.0) for d in docs] + [("r0", "q1", "d0", 0.0)]
        + [("r1", "q0", d, 0.0) for d in docs],
        schema=["run", "query_id", "doc_id", "score"], orient="row")
    # by hand: q0 ties give trec_eval ranks d4=1 ... d0=5 in both runs, C = 5, borda
    # norm 1 - (r-1)/C, the median of two equal values is the value; q1: C = 1, r0 has
    # d0 at rank 1 (1.0), r1 has no list for q1 (0.5 - (0-1)/(2*1) = 1.0)
    expected = [("q0", d, 1 - (4 - i) / 5) for i, d in reversed(list(enumerate(docs)))]
    expected.append(("q1", "d0", 1.0))
    assert expected[3] == ("q0", "d1", 0.4)
    whole, parts, n = fuse_both(frame, monkeypatch, rows=1, method="combmed", norm="borda")
    assert n == 2
    assert whole.select("query_id", "doc_id", "score").rows() == expected
    assert parts.select("query_id", "doc_id", "score").rows() == expected
    # a one-query input is fused as that query is within a larger one
    alone = sef.fuse(frame.filter(pl.col("query_id") == "q0"), "combmed", norm="borda")
    assert alone.select("query_id", "doc_id", "score").rows() == expected[:5]


@pytest.mark.parametrize("norm", NORMS)
def test_normalised_values_do_not_depend_on_the_other_queries(norm):
    """Every norm's values of a query, fused alone, equal the ones it gets beside another
    query, bit for bit. Divisors of 5 (5 candidates, 5 documents a run, a's min-max
    range; 3 * (1/5) != 3 / 5), and d3 at rank 4 in both runs (1 - 3/5 for the rank
    norms) so that combmax and combmin show that value itself."""
    q0 = [("a", "q0", f"d{i}", s) for i, s in enumerate([6.0, 4.0, 3.0, 2.0, 1.0])]
    q0 += [("b", "q0", f"d{i}", s) for i, s in enumerate([3.0, 4.0, 5.0, 0.5, 0.1])]
    q1 = [("a", "q1", "d0", 1.0), ("b", "q1", "d9", 2.0), ("b", "q1", "d0", 7.0)]
    schema = ["run", "query_id", "doc_id", "score"]
    alone = pl.DataFrame(q0, schema=schema, orient="row")
    both = pl.DataFrame(q0 + q1, schema=schema, orient="row")
    for method in ("combmax", "combmin", "combsum"):
        one = sef.fuse(alone, method, norm=norm)
        two = sef.fuse(both, method, norm=norm).filter(pl.col("query_id") == "q0")
        assert one.equals(two), (method, norm)


def test_divide_rounds_once_whatever_the_divisor_layout():
    from searcheval_frames._exact import true_divide as divide

    x = pl.DataFrame({"q": ["a"] * 3, "x": [3, None, 7]})
    # C joined in from a one-row frame: polars 2.1's pl.col("x") / pl.col("C") gives
    # 3 * (1/5) = 0.6000000000000001 here
    joined = x.join(pl.DataFrame({"q": ["a"], "C": [5]}), on="q")
    for den in (pl.col("C"), pl.lit(5), pl.col("C").cast(pl.Float64)):
        got = joined.select(divide(pl.col("x"), den).alias("v"))["v"].to_list()
        assert got == [3 / 5, None, 7 / 5], den
    full = pl.DataFrame({"x": [3.0, 1.0], "d": [5.0, 0.0]})
    assert full.select(divide(pl.col("x"), pl.col("d")))["x"].to_list() == [0.6, math.inf]


@settings(max_examples=30, deadline=None)
@given(runs=run_sets(ties=True), seed=st.integers(0, 2), data=st.data())
def test_order_check_by_slices_equals_the_whole_check(runs, seed, data):
    """The check run a few rows at a time gives the one-slice answer (slice edges included)."""
    from searcheval_frames.fusion.parts import out_of_order

    frame = pl.DataFrame(
        [(n, q, d, float(s)) for n, r in runs.items() for q, docs in r.items()
         for d, s in sorted(docs.items(), key=lambda x: (x[1], x[0]), reverse=True)],
        schema=["run", "query_id", "doc_id", "score"], orient="row")
    if seed == 1:
        frame = frame.sample(fraction=1.0, shuffle=True, seed=seed)
    elif seed == 2 and frame.height > 2:  # one adjacent pair swapped somewhere
        i = data.draw(st.integers(0, frame.height - 2))
        idx = list(range(frame.height))
        idx[i], idx[i + 1] = idx[i + 1], idx[i]
        frame = frame[idx]
    whole = out_of_order(frame, "run")
    assert seed or not whole  # written in order
    for rows in range(1, frame.height + 1):
        assert out_of_order(frame, "run", rows) == whole, rows
