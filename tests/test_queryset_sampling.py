"""sef.sample_queries: inclusion probabilities against brute-force enumeration and Monte
Carlo, the stratified allocation against its formula, normalisation, coverage, errors."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import searcheval_frames as sef
from searcheval_frames.errors import InvalidOptionError, MissingColumnError
from searcheval_frames.evalset.queryset.design import allocate, pps_inclusion, systematic_pps
from searcheval_frames.evalset.queryset.log import LogError


def _pps_reference(counts, n):
    """pi_i = min(1, m c_i / sum of the rest), certainty units out first (plain Python)."""
    certain: set[int] = set()
    while True:
        rest = [i for i, c in enumerate(counts) if c > 0 and i not in certain]
        m = n - len(certain)
        total = sum(counts[i] for i in rest)
        new = {i for i in rest if m * counts[i] / total >= 1}
        if not new:
            return [1.0 if i in certain else (m * c / total if c > 0 else 0.0)
                    for i, c in enumerate(counts)]
        certain |= new


def _enumerate(pi):
    """Exact inclusion probabilities of randomised systematic pps: every order of the
    non-certain units, and every interval of the start u between the breakpoints."""
    middle = [i for i, p in enumerate(pi) if 0 < p < 1]
    got = np.zeros(len(pi))
    sizes = set()
    perms = list(itertools.permutations(middle))
    for perm in perms:
        cum = np.cumsum([pi[i] for i in perm])
        cuts = sorted({0.0, 1.0, *(float(c % 1.0) for c in cum)})
        for a, b in itertools.pairwise(cuts):
            if b - a < 1e-15:
                continue
            chosen = systematic_pps(np.array(pi), np.array(perm, dtype=np.int64), (a + b) / 2)
            sizes.add(len(set(chosen.tolist())))
            got[chosen] += (b - a) / len(perms)
    return got, sizes


@pytest.mark.parametrize("counts,n", [
    ([5, 3, 2, 1, 1], 2), ([50, 3, 2, 1, 1, 1], 3), ([7, 7, 7, 1, 2], 3), ([9, 1, 1, 1], 1),
    ([10, 9, 1, 1, 1, 1], 4), ([3, 3, 3, 3], 2)])
def test_pps_inclusion_is_exact_by_enumeration(counts, n):
    pi = pps_inclusion(np.array(counts), n)
    assert pi == pytest.approx(_pps_reference(counts, n), abs=1e-12)
    assert pi.sum() == pytest.approx(n)
    got, sizes = _enumerate(pi.tolist())
    assert got == pytest.approx(pi, abs=1e-9)
    assert sizes == {n}  # always exactly n distinct queries


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 1000), min_size=1, max_size=40), st.data())
def test_pps_inclusion_properties(counts, data):
    positive = sum(c > 0 for c in counts)
    if positive == 0:
        return
    n = data.draw(st.integers(1, positive))
    pi = pps_inclusion(np.array(counts), n)
    assert pi == pytest.approx(_pps_reference(counts, n), abs=1e-9)
    assert pi.sum() == pytest.approx(n)
    assert ((pi >= 0) & (pi <= 1)).all()
    assert (pi[np.array(counts) == 0] == 0).all()


def test_pps_monte_carlo_on_a_large_log():
    rng = np.random.default_rng(1)
    counts = np.maximum(1, (20000 / np.arange(1, 3001) ** 1.1).astype(int))
    n, reps = 100, 2000
    pi = pps_inclusion(counts, n)
    hits = np.zeros(counts.size)
    middle = np.flatnonzero((pi > 0) & (pi < 1))
    for _ in range(reps):
        chosen = systematic_pps(pi, rng.permutation(middle), float(rng.random()))
        assert chosen.size == n
        hits[chosen] += 1
    freq = hits / reps
    se = np.sqrt(np.maximum(pi * (1 - pi), 1e-12) / reps)
    z = np.abs(freq - pi) / se
    assert z[(pi > 0) & (pi < 1)].max() < 5.0
    assert (freq[pi == 1] == 1).all()
    # and the overall chi-square-like check: z^2 averages to about 1
    assert 0.7 < float(np.mean(z[(pi > 0) & (pi < 1)] ** 2)) < 1.3


def _log(seed=0, n_queries=60):
    rng = np.random.default_rng(seed)
    counts = np.maximum(1, (400 / np.arange(1, n_queries + 1) ** 1.2).astype(int))
    rows = [f"query {i}" for i, c in enumerate(counts) for _ in range(c)]
    rng.shuffle(rows)
    return pl.DataFrame({"query": rows}), counts


def test_public_sampler_monte_carlo_matches_its_stated_probabilities():
    log, counts = _log()
    n, reps = 8, 400
    hits: dict[str, int] = {}
    stated: dict[str, float] = {}
    for seed in range(reps):
        s = sef.sample_queries(log, n, "pptss", seed=seed).frame
        assert s.height == n
        for q, p in s.select("query", "inclusion_probability").iter_rows():
            hits[q] = hits.get(q, 0) + 1
            stated[q] = p
    pi = pps_inclusion(counts, n)
    for i, p in enumerate(pi):
        q = f"query {i}"
        if q in stated:
            assert stated[q] == pytest.approx(p)
        freq = hits.get(q, 0) / reps
        se = math.sqrt(max(p * (1 - p), 1e-12) / reps)
        assert abs(freq - p) < 5 * se + 1e-9, (q, freq, p)


@pytest.mark.parametrize("sizes,n,alloc", [
    ([10, 30, 60], 20, "proportional"), ([10, 30, 60], 21, "equal"), ([7, 13, 80], 17, "proportional"),
    ([100, 100, 100], 10, "equal"), ([5, 50, 500], 37, "proportional")])
def test_allocation_follows_its_formula(sizes, n, alloc):
    got = allocate(sizes, n, alloc)
    share = [1 / len(sizes)] * len(sizes) if alloc == "equal" else [s / sum(sizes) for s in sizes]
    want = [n * s for s in share]
    assert sum(got) == n
    assert all(math.floor(w) <= g <= math.ceil(w) for g, w in zip(got, want, strict=True))
    # largest remainder: the strata rounded up are those with the largest fractions
    up = [i for i, (g, w) in enumerate(zip(got, want, strict=True)) if g > math.floor(w)]
    down = [i for i in range(len(sizes)) if i not in up]
    if up and down:
        assert min(want[i] % 1 for i in up) >= max(want[i] % 1 for i in down) - 1e-12


def test_allocation_caps_at_the_stratum_size_and_gives_the_rest_away():
    assert allocate([2, 50, 50], 30, "equal") == [2, 14, 14]
    assert allocate([3, 4, 100], 20, "equal") == [3, 4, 13]
    assert sum(allocate([1, 1, 1], 3, "proportional")) == 3


def test_stratified_sample_probabilities_and_strata():
    log, counts = _log(n_queries=90)
    s = sef.sample_queries(log, 12, "stratified", seed=3, allocation="proportional")
    df = s.frame
    sizes = dict(s.strata.select("stratum", "log_queries").iter_rows())
    alloc = dict(zip(["head", "torso", "tail"],
                     allocate([sizes["head"], sizes["torso"], sizes["tail"]], 12, "proportional"),
                     strict=True))
    got = dict(df.group_by("stratum").len().iter_rows())
    assert got == {k: v for k, v in alloc.items() if v}
    for stratum, p in df.select("stratum", "inclusion_probability").iter_rows():
        assert p == pytest.approx(alloc[stratum] / sizes[stratum])
    assert (df["weight"] == df["count"] / df["inclusion_probability"]).all()
    # strata by cumulative share: head queries are the first ones up to half the traffic
    order = np.sort(counts)[::-1]
    before = (np.cumsum(order) - order) / order.sum()
    assert sizes["head"] == int((before < 0.5).sum())
    assert sizes["torso"] == int(((before >= 0.5) & (before < 0.8)).sum())


def test_top_random_and_coverage_numbers():
    log, counts = _log()
    top = sef.sample_queries(log, 5, "top")
    assert top.frame["count"].to_list() == sorted(counts.tolist(), reverse=True)[:5]
    cov = top.coverage()
    allrow = cov.filter(pl.col("stratum") == "all").row(0, named=True)
    assert allrow["sample_share"] == pytest.approx(sum(sorted(counts)[::-1][:5]) / counts.sum())
    assert allrow["log_queries"] == counts.size and allrow["log_share"] == pytest.approx(1.0)
    rnd = sef.sample_queries(log, 10, "random", seed=5).frame
    assert rnd["inclusion_probability"].to_list() == pytest.approx([10 / counts.size] * 10)
    pps = sef.sample_queries(log, 10, "pptss", seed=5)
    cov = pps.coverage().filter(pl.col("stratum") == "all").row(0, named=True)
    # pptss weights add up to all searches (the HT estimate of the total is exact)
    assert cov["represented_share"] == pytest.approx(1.0)
    assert sef.sample_queries(log, 10, "pptss", seed=5).frame.equals(pps.frame)


def test_normalisation_counts_one_query_typed_several_ways():
    log = pl.DataFrame({"query": ["HNSW vs IVF", "hnsw  vs ivf", "ｈｎｓｗ vs ivf",
                                  " hnsw vs ivf ", "bm25", "bm25", "rag"]})
    s = sef.sample_queries(log, 3, "top").frame
    assert s["count"].to_list() == [4, 2, 1]
    assert s["query"][0] == "HNSW vs IVF"  # the spellings tie: the first in byte order
    raw = sef.sample_queries(log, 3, "top", normalize=False).frame
    assert raw["count"].to_list() == [2, 1, 1]
    fn = sef.sample_queries(log, 2, "top", normalize=lambda t: "x" if "vs" in t else t).frame
    assert fn["count"].to_list() == [4, 2]


def test_count_logs_pandas_in_pandas_out_and_log_ids():
    log = pd.DataFrame({"qid": ["a", "b", "c"], "search": ["x y", "z", "w"],
                        "freq": [10, 3, 1]})
    s = sef.sample_queries(log, 2, "top")
    assert isinstance(s.frame, pd.DataFrame)
    assert s.frame["query_id"].tolist() == ["a", "b"]
    assert list(s.frame.columns) == ["query_id", "query", "count", "stratum",
                                     "inclusion_probability", "weight"]
    d = sef.sample_queries({"x": 5, "y": 1}, 1, "top").frame
    assert d["query"].to_list() == ["x"]
    renamed = sef.sample_queries(pl.DataFrame({"t": ["a", "b"], "c": [2, 1]}), 1, "top",
                                 columns={"query": "t", "count": "c"}).frame
    assert renamed["count"].to_list() == [2]


@pytest.mark.parametrize("log,match", [
    (pl.DataFrame({"query": ["a", "b", "c"]}), "no count column and no query occurs twice"),
    (pl.DataFrame({"query": ["a", "b"], "count": [3, -1]}), "negative count"),
    (pl.DataFrame({"query": ["a", "", "a"]}), "empty query"),
    (pl.DataFrame({"query": ["a", None, "a"]}), "empty query"),
    (pl.DataFrame({"query": [1, 2, 2]}), "not text"),
    (pl.DataFrame({"query": ["a", "b"], "count": ["3", "1"]}), "not numbers"),
    (pl.DataFrame({"query": ["a", "b"], "count": [3, None]}), "no count"),
])
def test_bad_logs_are_refused_with_the_reason(log, match):
    with pytest.raises(LogError, match=match):
        sef.sample_queries(log, 1)


def test_bad_options():
    log = pl.DataFrame({"query": ["a", "a", "b"]})
    with pytest.raises(LogError, match="only 2 distinct"):
        sef.sample_queries(log, 3)
    with pytest.raises(InvalidOptionError, match="method"):
        sef.sample_queries(log, 1, "pps")
    with pytest.raises(InvalidOptionError, match="cuts"):
        sef.sample_queries(log, 1, cuts=(0.8, 0.5))
    with pytest.raises(InvalidOptionError, match="normalize"):
        sef.sample_queries(log, 1, normalize="yes")
    with pytest.raises(MissingColumnError, match="no query text column"):
        sef.sample_queries(pl.DataFrame({"x": [1]}), 1)
    with pytest.raises(MissingColumnError, match="no column 'nope'"):
        sef.sample_queries(log, 1, columns={"query": "nope"})
    with pytest.raises(InvalidOptionError, match="its keys are"):
        sef.sample_queries(log, 1, columns={"qeury": "query"})


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 60), min_size=1, max_size=5), st.data(),
       st.sampled_from(["equal", "proportional"]))
def test_allocation_formula_hypothesis(sizes, data, alloc):
    if sum(sizes) == 0:
        return
    n = data.draw(st.integers(1, sum(sizes)))
    got = allocate(sizes, n, alloc)
    assert sum(got) == n
    assert all(0 <= g <= s for g, s in zip(got, sizes, strict=True))
    open_ = [i for i, s in enumerate(sizes) if s > 0]
    base = [1.0 if alloc == "equal" else float(sizes[i]) for i in open_]
    want = [n * b / sum(base) for b in base]
    if all(math.ceil(w) <= sizes[i] for w, i in zip(want, open_, strict=True)):
        # no stratum capped: the plain formula, rounded by largest remainder
        assert all(math.floor(w) <= got[i] <= math.ceil(w)
                   for w, i in zip(want, open_, strict=True))


@pytest.mark.parametrize("method", ["stratified", "random"])
def test_srs_designs_monte_carlo(method):
    log, _ = _log(n_queries=40)
    reps, n = 300, 9
    hits: dict[str, int] = {}
    stated: dict[str, float] = {}
    for seed in range(reps):
        for q, p in sef.sample_queries(log, n, method, seed=seed).frame.select(
                "query", "inclusion_probability").iter_rows():
            hits[q] = hits.get(q, 0) + 1
            stated[q] = p
    for q, p in stated.items():
        se = math.sqrt(max(p * (1 - p), 1e-12) / reps)
        assert abs(hits[q] / reps - p) < 5 * se + 1e-9, (q, hits[q] / reps, p)
