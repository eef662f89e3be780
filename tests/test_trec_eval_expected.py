"""Per query and aggregate values against trec_eval's own expected outputs.

For every line of trec_eval's expected output files whose measure we implement,
our value printed with trec_eval's format must be identical (v10 files for the
default, ``v9.0.8_expected`` for ``compat="trec_eval-9"``).
"""

from __future__ import annotations

import warnings

import polars as pl
import pytest
from conftest import shared_path
from trec_files import read_expected, read_trec_qrels, read_trec_run

from searcheval_frames.core.evaluate import evaluate_frames
from searcheval_frames.errors import UnknownMeasureError
from searcheval_frames.measures import parse_measure

COUNTS = {"num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"}

# trec_eval names whose parameters come from the command line (out.test.meas_params)
SPECIAL = {"ndcg_1=3,2=9,4=4.5": "nDCG(gain={1:3,2:9,4:4.5})",
           "utility_2,-1,0,0": "Utility(tp=2,fp=-1,fn=0,tn=0)",
           "11pt_avg_.25,.5,.75": "IPrecAvg(levels={.25,.5,.75})"}


def _registered(name: str) -> bool:
    try:
        parse_measure(name)
    except UnknownMeasureError:
        return False
    return True


#: lines not compared here: runid and relstring print strings (compared in test_trec_eval_outputs),
#: rbp/rbp_resid come from another branch and are compared once they are registered
NOT_VALUES = {"runid", "relstring", "relstring_20"} | {n for n in ("rbp", "rbp_resid")
                                              if not _registered(n)}

CASES = [
    # expected file, qrels, run, options
    ("out.test", "qrels.test", "results.test", {}),
    ("out.test", "qrels.test.with-comments", "results.test", {}),
    ("out.test.a", "qrels.test", "results.test", {}),
    ("out.test.aq", "qrels.test", "results.test", {}),
    ("out.test.aqc", "qrels.test", "results.trunc", {"missing": "zero"}),
    ("out.test.aqcM", "qrels.test", "results.trunc", {"missing": "zero", "depth": 100}),
    ("out.test.aql", "qrels.rel_level", "results.test", {"relevance_level": 2}),
    ("out.test.meas_params", "qrels.test", "results.test", {}),
    ("out.comment.test", "qrels.comment.test", "results.comment.test", {}),
]
V9 = ["out.test", "out.test.a", "out.test.aq", "out.test.aqc", "out.test.aqcM",
      "out.test.aql", "out.test.meas_params"]


def _measure(name: str):
    if name in SPECIAL:
        return parse_measure(SPECIAL[name])
    if name in NOT_VALUES:
        return None
    try:
        m = parse_measure(name)
    except UnknownMeasureError:
        return None
    assert m.trec_name == name, (name, m.trec_name)
    return m


def _fmt(name: str, value: float) -> str:
    return str(round(value)) if name in COUNTS else f"{value:.4f}"


def check(expected, qrels, run, compat="trec_eval-10", **opts):
    lines = read_expected(expected)
    wanted = {}
    for name, _, _ in lines:
        m = _measure(name)
        if m is not None:
            wanted[name] = m
    measures = list(dict.fromkeys(wanted.values()))
    opts.setdefault("missing", "skip")
    run_df = read_trec_run(run)
    qrels_df = read_trec_qrels(qrels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        per_q = evaluate_frames(run_df, qrels_df, measures, per_query=True, compat=compat, **opts)
        agg = evaluate_frames(run_df, qrels_df, measures, compat=compat, **opts)
    got = {(r["measure"], r["query_id"]): r["value"] for r in per_q.iter_rows(named=True)}
    got.update({(r["measure"], "all"): r["value"] for r in agg.iter_rows(named=True)})
    checked, bad = 0, []
    for name, qid, text in lines:
        m = wanted.get(name)
        if m is None:
            continue
        key = (m.name, qid)
        if key not in got:
            bad.append((name, qid, text, "missing"))
            continue
        mine = _fmt(name, got[key])
        checked += 1
        if mine != text:
            bad.append((name, qid, text, mine))
    return checked, bad, set(wanted)


@pytest.mark.parametrize(("expected", "qrels", "run", "opts"), CASES, ids=[f"{c[0]}|{c[1]}" for c in CASES])
def test_trec_eval_10_expected(expected, qrels, run, opts):
    d = shared_path("trec_eval_tests")
    checked, bad, _names = check(d / expected, d / qrels, d / run, **opts)
    lines = read_expected(d / expected)
    assert checked == sum(n not in NOT_VALUES for n, _, _ in lines)  # every value line
    assert not bad, f"{len(bad)} of {checked} differ (measure, qid, expected, got): {bad[:10]}"


@pytest.mark.parametrize("expected", V9)
def test_trec_eval_9_expected(expected):
    case = next(c for c in CASES if c[0] == expected)
    d = shared_path("trec_eval_tests")
    path = d / "v9.0.8_expected" / expected
    checked, bad, _names = check(path, d / case[1], d / case[2], compat="trec_eval-9", **case[3])
    assert checked == sum(n not in NOT_VALUES for n, _, _ in read_expected(path))
    assert not bad, f"{len(bad)} of {checked} differ (measure, qid, expected, got): {bad[:10]}"


def test_all_trec_measures_we_cover():
    """The all_trec names we implement (the byte-identical claim rests on this list)."""
    d = shared_path("trec_eval_tests")
    names = {n for n, _, _ in read_expected(d / "out.test.aq") if _measure(n) is not None}
    for must in ["num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall_0.00", "iprec_at_recall_1.00", "P_5", "P_1000",
                 "recall_5", "recall_1000", "ndcg", "ndcg_cut_10", "map_cut_100", "11pt_avg",
                 "success_1", "success_10", "set_P", "set_recall", "unj_5", "infAP",
                 "gm_bpref", "Rprec_mult_0.20", "Rprec_mult_2.00", "utility", "binG", "G",
                 "ndcg_rel", "Rndcg", "relative_P_5", "relative_P_1000", "set_relative_P",
                 "set_map", "set_F", "num_nonrel_judged_ret"]:
        assert must in names
    every = {n for n, _, _ in read_expected(d / "out.test.aq")}
    assert every - names <= NOT_VALUES
    assert pl.Series(sorted(names)).len() == len(every - NOT_VALUES) >= 96
