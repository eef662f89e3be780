"""sef.judge_agreement against independent oracles: scikit-learn's cohen_kappa_score,
the krippendorff package, scipy's kendalltau and ttest_rel, and slow references written
here (tau_AP, per-grade rates, the query bootstrap)."""

from __future__ import annotations

import glob
import itertools
import warnings

import krippendorff
import numpy as np
import polars as pl
import pytest
from conftest import DATA
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import kendalltau, ttest_rel
from sklearn.metrics import cohen_kappa_score

import searcheval_frames as sef
from searcheval_frames.evalset.judges import krippendorff_alpha, tau_ap

EX = DATA / "example"


@st.composite
def labelled(draw, max_queries=6):
    nq = draw(st.integers(2, max_queries))
    rows = []
    for q in range(nq):
        for d in range(draw(st.integers(1, 8))):
            h = draw(st.integers(0, 3))
            j = draw(st.one_of(st.just(h), st.integers(0, 3)))
            rows.append((f"q{q}", f"d{d}", h, j))
    return rows


def _frames(rows):
    h = pl.DataFrame([(q, d, a) for q, d, a, _ in rows], orient="row",
                     schema=["query_id", "doc_id", "relevance"])
    j = pl.DataFrame([(q, d, b) for q, d, _, b in rows], orient="row",
                     schema=["query_id", "doc_id", "relevance"])
    return h, j


@given(labelled())
@settings(max_examples=150, deadline=None)
def test_label_statistics_equal_sklearn_and_krippendorff(rows):
    h, j = _frames(rows)
    a = np.array([r[2] for r in rows])
    b = np.array([r[3] for r in rows])
    ag = sef.judge_agreement(None, h, j, n_resamples=2, grades=[0, 1, 2, 3])
    got = dict(ag.frame.select("statistic", "value").iter_rows())
    labels = [0, 1, 2, 3]
    for name, w in (("cohen_kappa", None), ("weighted_kappa_linear", "linear"),
                    ("weighted_kappa_quadratic", "quadratic")):
        with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
            # the oracle notes that kappa is undefined when the raters share one label;
            # its NaN is what the next lines compare with ours
            warnings.filterwarnings("ignore", "`y1`, `y2` and `labels` have only one label")
            want = cohen_kappa_score(a, b, labels=labels, weights=w)
        if np.isnan(want) or np.isnan(got[name]):
            assert np.isnan(want) == np.isnan(got[name]) or len(set(a) | set(b)) == 1
        else:
            assert got[name] == pytest.approx(want, abs=1e-12)
    assert got["raw_agreement"] == pytest.approx(float((a == b).mean()))
    if len(set(a) | set(b)) > 1:
        want = krippendorff.alpha(np.array([a, b]), level_of_measurement="ordinal")
        assert got["krippendorff_alpha_ordinal"] == pytest.approx(want, abs=1e-12)
    # confusion matrix and per-grade rates, counted here by hand
    conf = ag.confusion.drop("human").to_numpy()
    for (x, y), n in zip(itertools.product(labels, labels), conf.ravel(), strict=True):
        assert n == sum(1 for r in rows if r[2] == x and r[3] == y)
    for g, n, mean_j, over, equal, under in ag.per_grade.iter_rows():
        sel = [r[3] for r in rows if r[2] == g]
        assert n == len(sel) and mean_j == pytest.approx(np.mean(sel))
        assert over == pytest.approx(np.mean([s > g for s in sel]))
        assert equal == pytest.approx(np.mean([s == g for s in sel]))
        assert under == pytest.approx(np.mean([s < g for s in sel]))


@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=2, max_size=60),
       st.sampled_from(["nominal", "ordinal", "interval"]))
@settings(max_examples=150, deadline=None)
def test_krippendorff_alpha_equals_the_package(pairs, level):
    a, b = np.array(pairs).T
    if len(set(a) | set(b)) < 2:
        return
    want = krippendorff.alpha(np.array([a, b]), level_of_measurement=level)
    assert krippendorff_alpha(a, b, level) == pytest.approx(want, abs=1e-12)


def _tau_ap_reference(truth, est):
    """Yilmaz et al. (2008), eq. 3, with the estimated list written out as names."""
    names = sorted(range(len(est)), key=lambda i: -est[i])
    n = len(names)
    s = 0.0
    for i in range(1, n):
        correct = 0.0
        for k in range(i):
            if truth[names[k]] > truth[names[i]]:
                correct += 1
            elif truth[names[k]] == truth[names[i]]:
                correct += 0.5
        s += correct / i
    return 2 * s / (n - 1) - 1


@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=2, max_size=12, unique=True),
       st.randoms(use_true_random=False))
@settings(max_examples=200, deadline=None)
def test_tau_ap_reference_and_properties(truth, rnd):
    est = list(truth)
    rnd.shuffle(est)
    got = tau_ap(truth, est)
    assert got == pytest.approx(_tau_ap_reference(truth, est))
    assert -1 - 1e-12 <= got <= 1 + 1e-12
    assert tau_ap(truth, truth) == pytest.approx(1.0)
    assert tau_ap(truth, [-x for x in truth]) == pytest.approx(-1.0)
    if len(truth) == 2:  # for two items tau_AP is Kendall's tau
        assert got == pytest.approx(kendalltau(truth, est)[0])


def test_bootstrap_resamples_queries_like_a_slow_reference():
    rng = np.random.default_rng(5)
    rows = [(f"q{q}", f"d{d}", int(h), int(np.clip(h + rng.integers(-1, 2), 0, 3)))
            for q in range(12) for d, h in enumerate(rng.integers(0, 4, 7))]
    h, j = _frames(rows)
    ag = sef.judge_agreement(None, h, j, n_resamples=200, seed=11, grades=[0, 1, 2, 3])
    got = ag.frame.filter(pl.col("statistic") == "weighted_kappa_quadratic").row(0)
    by_q = {}
    for r in rows:
        by_q.setdefault(r[0], []).append(r)
    qids = sorted(by_q)
    draws = np.random.default_rng(11)
    vals = []
    for _ in range(200):
        pick = draws.integers(0, len(qids), len(qids))
        sample = [r for i in pick for r in by_q[qids[i]]]
        vals.append(cohen_kappa_score([r[2] for r in sample], [r[3] for r in sample],
                                      labels=[0, 1, 2, 3], weights="quadratic"))
    lo, hi = np.percentile(vals, [2.5, 97.5])
    assert got[2] == pytest.approx(lo) and got[3] == pytest.approx(hi)
    assert lo <= got[1] <= hi


def _deterministic_judge(qrels: pl.DataFrame) -> pl.DataFrame:
    """Human grades, shifted on a hash of the doc id: a judge that is right ~60% of the time."""
    return qrels.with_columns(
        relevance=(pl.col("relevance") + (pl.col("doc_id").hash(7) % 3).cast(pl.Int64) - 1)
        .clip(0, 3))


def test_system_level_equals_scipy_on_the_bundled_runs():
    runs = sef.read_run(sorted(glob.glob(str(EX / "runs" / "*.run"))))
    human = sef.read_qrels(EX / "qrels.txt")
    auto = _deterministic_judge(human)
    ag = sef.judge_agreement(runs, human, auto, measures=["nDCG@10", "AP"], n_resamples=10)
    for measure in ("nDCG@10", "AP"):
        pq = {who: sef.evaluate(runs, q, [measure], per_query=True)
              .pivot(on="run", index="query_id", values="value").sort("query_id")
              for who, q in (("human", human), ("judge", auto))}
        names = sorted(c for c in pq["human"].columns if c != "query_id")
        mh = [pq["human"][n].mean() for n in names]
        mj = [pq["judge"][n].mean() for n in names]
        row = ag.systems.filter(pl.col("measure") == measure).row(0, named=True)
        assert row["kendall_tau"] == pytest.approx(kendalltau(mh, mj)[0])
        assert row["tau_ap"] == pytest.approx(_tau_ap_reference(mh, mj))
        flips = 0
        for a, b in itertools.combinations(names, 2):
            verdicts = []
            for who in ("human", "judge"):
                x, y = pq[who][a].to_numpy(), pq[who][b].to_numpy()
                p = ttest_rel(x, y).pvalue
                verdicts.append("=" if not p <= 0.05 else (">" if x.mean() > y.mean() else "<"))
            flips += verdicts[0] != verdicts[1]
        assert row["flips"] == flips and row["n_pairs"] == 15
    assert ag.flips.height == int(ag.systems["flips"].sum())


def test_length_bias_bins_cover_the_pairs():
    human = sef.read_qrels(EX / "qrels.txt")
    auto = _deterministic_judge(human)
    ag = sef.judge_agreement(None, human, auto, docs=EX / "docs.jsonl", n_resamples=5)
    lb = ag.length_bias
    assert lb["n"].sum() == ag.n_items
    assert (lb["min_chars"] <= lb["max_chars"]).all()
    assert lb["mean_diff"].to_list() == pytest.approx(
        (lb["mean_judge"] - lb["mean_human"]).to_list())


def test_pandas_in_pandas_out_and_no_shared_pair():
    pd = pytest.importorskip("pandas")
    h = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1, 0]})
    ag = sef.judge_agreement(None, h, h, n_resamples=5)
    assert isinstance(ag.frame, pd.DataFrame) and isinstance(ag.confusion, pd.DataFrame)
    other = h.assign(doc_id=["x", "y"])
    with pytest.raises(sef.IdMismatchError, match="no \\(query, document\\) pair"):
        sef.judge_agreement(None, h, other)


@pytest.mark.shared
def test_real_trec_dl19_labels_against_a_lexical_judge_equal_the_oracles():
    """NIST's graded DL19 labels vs a word-overlap judge on the judged BM25 top-100
    passages (real texts): every statistic equals its oracle, and the rankings of the 7
    published runs are compared as scipy does."""
    import json

    from conftest import shared_path

    from searcheval_frames.evalset.judges import overlap_grade

    root = shared_path("trec_dl_passage")
    cand = json.loads((root / "candidates" / "bm25_top100_with_text.dl19.json").read_text())
    text = {(str(h["qid"]), str(h["docid"])): (e["query"], h["content"])
            for e in cand for h in e["hits"]}
    human = sef.read_qrels(root / "qrels.dl19-passage.txt")
    rows = [(q, d, r, overlap_grade(*text[(q, d)])) for q, d, r in human.iter_rows()
            if (q, d) in text]
    assert len(rows) > 2000
    h, j = _frames(rows)
    files = sorted((root / "runs").glob("run.dl19-passage.*.txt"))
    runs = sef.read_run(files, name=[f.name.split("passage.")[1][:-4] for f in files])
    ag = sef.judge_agreement(runs, h, j, measures=["nDCG@10", "AP"], n_resamples=20)
    got = dict(ag.frame.select("statistic", "value").iter_rows())
    a, b = np.array([r[2] for r in rows]), np.array([r[3] for r in rows])
    assert got["cohen_kappa"] == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
    assert got["weighted_kappa_quadratic"] == pytest.approx(
        cohen_kappa_score(a, b, weights="quadratic"), abs=1e-12)
    assert got["krippendorff_alpha_ordinal"] == pytest.approx(
        krippendorff.alpha(np.array([a, b]), level_of_measurement="ordinal"), abs=1e-12)
    for measure in ("nDCG@10", "AP"):
        r = ag.rankings.filter(pl.col("measure") == measure)
        row = ag.systems.filter(pl.col("measure") == measure).row(0, named=True)
        assert row["n_systems"] == 7
        assert row["kendall_tau"] == pytest.approx(kendalltau(r["human"], r["judge"])[0])
        assert row["tau_ap"] == pytest.approx(_tau_ap_reference(r["human"].to_list(),
                                                                r["judge"].to_list()))
