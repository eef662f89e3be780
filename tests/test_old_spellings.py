"""The calling conventions issue #31 replaced keep working until 0.3, with a warning that
shows the call to write; the old call gives what the new call gives."""

from __future__ import annotations

import re

import matplotlib
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import searcheval_frames as sef
from searcheval_frames.errors import SearchEvalWarning

matplotlib.use("Agg")

PQ = pl.DataFrame({
    "run": ["a"] * 6 + ["b"] * 6 + ["c"] * 6,
    "query_id": [str(i) for i in range(6)] * 3,
    "measure": "P@5",
    "value": [.2, .4, .2, .6, .4, .2, .6, .8, .6, .8, .8, .4, .6, .6, .8, .8, .8, .6],
})
# five queries of two documents; b puts the relevant one first on four of them, a on two
_QIDS = [str(q) for q in range(1, 6) for _ in range(2)]
RUNS = pl.DataFrame({
    "run": ["a"] * 10 + ["b"] * 10,
    "query_id": _QIDS * 2,
    "doc_id": ["r", "n"] * 2 + ["n", "r"] * 3 + ["r", "n"] * 4 + ["n", "r"],
    "score": [2.0, 1.0] * 10,
})
QRELS = pl.DataFrame({"query_id": [str(q) for q in range(1, 6)], "doc_id": "r",
                      "relevance": 1})


def _warns(new_call: str):
    return pytest.warns(DeprecationWarning, match=re.escape(f"call {new_call}"))


def test_compare_per_query_first():
    with _warns("compare(per_query=pq, baseline='a')"):
        old = sef.compare(PQ, "a")
    with _warns("compare(per_query=pq, baseline='a')"):
        old_kw = sef.compare(PQ, baseline="a")
    with _warns("compare(per_query=pq, baseline='a')"):
        old_data = sef.compare(data=PQ, baseline="a")
    new = sef.compare(per_query=PQ, baseline="a")
    for o in (old, old_kw, old_data):
        assert_frame_equal(o.to_polars(), new.to_polars())


def test_compare_runs_then_baseline_then_qrels_keyword():
    with _warns("compare(runs, qrels, ['P@1'], baseline='a')"):
        old = sef.compare(RUNS, "a", qrels=QRELS, measures=["P@1"])
    new = sef.compare(RUNS, QRELS, ["P@1"], baseline="a")
    assert_frame_equal(old.to_polars(), new.to_polars())


def test_leaderboard_per_query_first():
    with _warns("leaderboard(per_query=pq, measure='P@5', test='tukey_hsd', seed=0)"):
        old = sef.leaderboard(PQ, measure="P@5", test="tukey_hsd", seed=0)
    new = sef.leaderboard(per_query=PQ, measure="P@5", test="tukey_hsd", seed=0)
    assert_frame_equal(old.to_polars(), new.to_polars())
    # the new way: runs, qrels, measure, as after evaluate
    lb = sef.leaderboard(RUNS, QRELS, "P@1", test="tukey_hsd", seed=0)
    assert lb.to_polars()["run"].to_list() == ["b", "a"]
    assert lb.to_polars()["mean"].to_list() == [0.8, 0.4]


def test_power_stability_discriminative_power_per_query_first():
    with _warns("power(per_query=pq, measure='P@5', baseline='a', delta=0.1)"):
        old = sef.power(PQ, "a", "P@5", 0.1)
    assert_frame_equal(old, sef.power(per_query=PQ, baseline="a", measure="P@5", delta=0.1))
    with _warns("stability(per_query=pq, sizes=[2, 4], n_samples=50)"):
        old_s = sef.stability(PQ, sizes=[2, 4], n_samples=50)
    assert_frame_equal(old_s.summary,
                       sef.stability(per_query=PQ, sizes=[2, 4], n_samples=50).summary)
    with _warns("discriminative_power(per_query=pq, measures=['P@5'])"):
        old_d = sef.discriminative_power(PQ, ["P@5"])
    assert_frame_equal(old_d.summary, sef.discriminative_power(per_query=PQ).summary)


def test_analysis_functions_evaluate_runs_themselves():
    """runs + qrels + measure give what per-query values of evaluate give."""
    pq = sef.evaluate(RUNS, QRELS, ["P@1"], per_query=True)
    assert_frame_equal(sef.power(RUNS, QRELS, "P@1", baseline="a"),
                       sef.power(per_query=pq, baseline="a"))
    assert_frame_equal(sef.stability(RUNS, QRELS, "P@1", sizes=[3], n_samples=20).summary,
                       sef.stability(per_query=pq, sizes=[3], n_samples=20).summary)


def test_figures_old_spellings():
    with _warns("per_query_delta(per_query=pq, baseline='a', run='b')"):
        sef.per_query_delta(PQ, baseline="a", run="b")
    with _warns("metric_distribution(per_query=pq, show_runs=['a', 'b'])"):
        ax = sef.metric_distribution(PQ, runs=["a", "b"])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b"]
    with _warns("benchmark_bars(results, show_runs=['a'])"):
        sef.benchmark_bars(pl.DataFrame({"run": ["a", "b"], "measure": "P@5",
                                         "value": [0.5, 0.6]}), runs=["a"])
    with _warns("pr_curve(run, qrels, show_runs=['a'])"):
        sef.pr_curve(RUNS, QRELS, runs=["a"])
    with _warns("power_curve(per_query=pq, baseline='a')"):
        sef.power_curve(PQ, "a")
    with _warns("stability_curve(per_query=pq, n_samples=50)"):
        sef.stability_curve(PQ, n_samples=50)
    power = sef.power(per_query=PQ, baseline="a", delta=[0.1, 0.2])
    with _warns("power_curve(result=result)"):
        sef.power_curve(power)


def test_evalset_old_spellings(tmp_path):
    with _warns("pool(runs, depth=1)"):
        old = sef.pool(RUNS, 1)
    assert_frame_equal(old, sef.pool(RUNS, depth=1))
    pool = sef.pool(RUNS, depth=1)
    path = str(tmp_path / "labels.jsonl")
    with _warns(f"label_widget(pool, store={path!r}, assessor='alice')"):
        w = sef.label_widget(path, pool, assessor="alice")
    assert str(w.store.path) == path
    human = {"q1": {"d1": 2, "d2": 0, "d3": 1, "d4": 0}, "q2": {"d1": 1, "d5": 2}}
    auto = {"q1": {"d1": 2, "d2": 0, "d3": 0, "d4": 0}, "q2": {"d1": 1, "d5": 2}}
    with _warns("judge_agreement(qrels=qrels, auto=auto, n_resamples=20)"):
        old_ag = sef.judge_agreement(human, auto, n_resamples=20)
    new_ag = sef.judge_agreement(None, human, auto, n_resamples=20)
    assert_frame_equal(old_ag.frame, new_ag.frame)


def test_the_warning_points_at_the_callers_line():
    with pytest.warns(DeprecationWarning) as seen:
        sef.compare(PQ, "a")
    assert seen[0].filename == __file__


def test_compare_without_baseline_warns_naming_the_run_it_picked():
    with pytest.warns(SearchEvalWarning, match="no baseline= given; using 'a'"):
        cmp = sef.compare(per_query=PQ)
    assert cmp.baselines == ["a"]
    with pytest.warns(UserWarning, match="no baseline= given; using 'a'"):
        sef.compare(RUNS, QRELS, ["P@1"])


def test_mixing_both_inputs_is_refused():
    with pytest.raises(sef.InvalidOptionError, match="per_query= holds values already"):
        sef.compare(RUNS, QRELS, per_query=PQ)
    with pytest.raises(sef.InvalidOptionError, match="no qrels given"):
        sef.power(RUNS, measure="P@1", baseline="a")
