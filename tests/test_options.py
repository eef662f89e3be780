"""Every option of every public function is checked before any work (issue: no silent
wrong number). Each row below passes one bad value for one option; the call must raise
``InvalidOptionError`` (a ``SearchEvalError``, a ``ValueError``) whose message names the
function and the option, shows what was given and gives an example of a good value.

The table is the catalogue: docs/errors.md is checked against it.
"""

from __future__ import annotations

import math

import polars as pl
import pytest

import searcheval_frames as sef
from searcheval_frames.analysis.weighted import weighted_compare
from searcheval_frames.core.weights import weighted_summary
from searcheval_frames.errors import InvalidOptionError, SearchEvalWarning

RUN = pl.DataFrame({
    "run": ["a"] * 4 + ["b"] * 4,
    "query_id": ["1", "1", "2", "2"] * 2,
    "doc_id": ["d1", "d2", "d3", "d4"] * 2,
    "score": [2.0, 1.0, 2.0, 1.0, 1.0, 2.0, 1.0, 2.0],
})
QRELS = pl.DataFrame({"query_id": ["1", "2", "2"], "doc_id": ["d1", "d3", "d4"],
                      "relevance": [1, 2, 0]})


def _per_query():
    return sef.evaluate(RUN, QRELS, ["P@1", "RR"], per_query=True)


# (function name, callable taking **kwargs, option, bad value)
def _cases():
    ev = lambda **kw: sef.evaluate(RUN, QRELS, ["P@1"], **kw)  # noqa: E731
    cases = []
    for opt, bad in [
        ("relevance_level", -1), ("relevance_level", 1.5), ("relevance_level", True),
        ("relevance_level", "1"), ("missing", "drop"), ("missing", None), ("depth", 0),
        ("depth", -3), ("depth", 2.5), ("depth", True), ("judged_only", 1),
        ("judged_only", "yes"), ("per_query", "no"), ("compat", "trec_eval-8"),
        ("names", "given"), ("strategy", "fast"),
    ]:
        cases.append(("evaluate", ev, opt, bad))
    for fname in ("precision_recall_at_k", "pr_curve_data"):
        fn = getattr(sef, fname)
        for opt, bad in [("relevance_level", -1), ("missing", "x"), ("depth", 0),
                         ("judged_only", "no"), ("compat", "9"), ("strategy", "x")]:
            cases.append((fname, lambda f=fn, **kw: f(RUN, QRELS, **kw), opt, bad))
    pool = lambda **kw: sef.pool(RUN, **kw)  # noqa: E731
    for opt, bad in [("depth", 0), ("depth", 1.5), ("method", "borda"),
                     ("max_per_query", 0), ("rrf_k", -1.0), ("rrf_k", math.nan),
                     ("rbp_p", 1.5), ("rbp_p", 0.0)]:
        cases.append(("pool", pool, opt, bad))
    cov = lambda **kw: sef.coverage(RUN, QRELS, **kw)  # noqa: E731
    for opt, bad in [("depth", 0), ("depth", "10"), ("per_query", 1)]:
        cases.append(("coverage", cov, opt, bad))
    cases.append(("holes", lambda **kw: sef.holes(RUN, QRELS, **kw), "depth", 0))
    mb = lambda **kw: sef.metric_bounds(RUN, QRELS, ["P@1"], **kw)  # noqa: E731
    for opt, bad in [("depth", 0), ("grade", -1), ("grade", 1.5), ("per_query", "x"),
                     ("relevance_level", -2)]:
        cases.append(("metric_bounds", mb, opt, bad))
    cmp = lambda **kw: sef.compare(per_query=_per_query(), **kw)  # noqa: E731
    for opt, bad in [("pairs", "some"), ("test", "anova"), ("alternative", "up"),
                     ("correction", "magic"), ("family", "run"), ("alpha", 0.0),
                     ("alpha", 1.0), ("alpha", "0.05"), ("missing", "drop")]:
        cases.append(("compare", cmp, opt, bad))
    cases.append(("compare", cmp, "ci_method", "magic"))
    lb = lambda **kw: sef.leaderboard(per_query=_per_query(), **{"measure": "P@1", **kw})  # noqa: E731
    for opt, bad in [("test", "anova"), ("alpha", 0.0), ("ci", 1.0), ("n_resamples", 0),
                     ("missing", "drop"), ("measure", ["P@1", "RR"]), ("seed", -1)]:
        cases.append(("leaderboard", lb, opt, bad))
    cases.append(("pivot", lambda **kw: sef.pivot(sef.evaluate(RUN, QRELS, "P@1"), **kw),
                  "index", "query"))
    meta = pl.DataFrame({"query_id": ["1", "2"], "kind": ["x", "y"]})  # slices (issue 24)
    for opt, bad in [("min_queries", 0), ("min_queries", 2.5), ("power", 1.5), ("power", 0.01)]:
        cases.append(("compare", lambda **kw: sef.compare(per_query=_per_query(), baseline="a",
                                                          queries=meta, by="kind", **kw),
                      opt, bad))
    # automatic judges (issue 23)
    cases.append(("compare", lambda **kw: sef.compare(RUN, qrels=QRELS, measures=["P@1"], **kw),
                  "unjudged", "ignore"))
    jd = lambda **kw: sef.judge(QRELS, lambda p: p, journal="/nonexistent/j.jsonl", **kw)  # noqa: E731
    for opt, bad in [("budget", -1), ("budget", 1.5), ("dry_run", "yes"), ("progress", 1)]:
        cases.append(("judge", jd, opt, bad))
    ja = lambda **kw: sef.judge_agreement(None, QRELS, QRELS, **kw)  # noqa: E731
    for opt, bad in [("n_resamples", 0), ("ci", 1.5), ("alpha", 0.0)]:
        cases.append(("judge_agreement", ja, opt, bad))
    cases.append(("fill_holes", lambda **kw: sef.fill_holes(RUN, QRELS, lambda p: p, **kw),
                  "depth", 0))
    oa = lambda base_url="http://127.0.0.1:9/v1", **kw: (  # noqa: E731
        sef.judges.OpenAICompatible(base_url, "m", **kw))
    for opt, bad in [("max_concurrency", 0), ("temperature", -1.0), ("timeout", 0),
                     ("retries", -1), ("base_url", "localhost:8000")]:
        cases.append(("OpenAICompatible", oa, opt, bad))
    rep = lambda **kw: sef.report(RUN, QRELS, figures=False, **kw)  # noqa: E731
    for opt, bad in [("baseline", "c"), ("baseline", 3), ("columns", "query_id=qid"),
                     ("columns", {"topic": "qid"})]:
        cases.append(("report", rep, opt, bad))
    # issue #22: the tie policy and sef.check
    cases.append(("evaluate", ev, "ties", "random"))
    chk = lambda **kw: sef.check(RUN, QRELS, **kw)  # noqa: E731
    for opt, bad in [("relevance_level", -1), ("relevance_level", 1.5), ("depth", 0),
                     ("scale", (3, 0)), ("scale", 3)]:
        cases.append(("check", chk, opt, bad))
    # the test queries (issue #34)
    log = pl.DataFrame({"query": ["a", "a", "b", "c"]})
    sq = lambda **kw: sef.sample_queries(log, **{"n": 1, **kw})  # noqa: E731
    for opt, bad in [("n", 0), ("n", 1.5), ("method", "pps"), ("seed", -1),
                     ("allocation", "optimal"), ("cuts", (0.8, 0.5)), ("cuts", 0.5),
                     ("normalize", "yes"), ("columns", {"text": "query"})]:
        cases.append(("sample_queries", sq, opt, bad))
    aq = lambda **kw: sef.audit_queries({"q1": "a b"}, **kw)  # noqa: E731
    for opt, bad in [("near_duplicate", 0.0), ("copy_run", 0), ("copy_ratio", 1.5),
                     ("max_words", 0), ("min_per_stratum", -1), ("alpha", 1.0),
                     ("log_unit", "row"), ("normalize", 1)]:
        cases.append(("audit_queries", aq, opt, bad))
    gq = lambda **kw: sef.generate_queries({"d1": "text"}, lambda p: "q", **kw)  # noqa: E731
    for opt, bad in [("per_doc", 0), ("n_docs", 0), ("seed", -1), ("relevance", 0),
                     ("max_chars", 10), ("dry_run", "yes"), ("prompt", "no placeholder")]:
        cases.append(("generate_queries", gq, opt, bad))
    wpq = pl.DataFrame({"run": "a", "query_id": ["1"], "measure": "P@1", "value": [1.0]})
    ws = lambda **kw: weighted_summary(wpq, {"1": 1.0}, **kw)  # noqa: E731
    for opt, bad in [("ci", 1.0), ("n_resamples", 10), ("seed", -1)]:
        cases.append(("weighted_summary", ws, opt, bad))
    wc = lambda **kw: weighted_compare(wpq, {"1": 1.0}, **kw)  # noqa: E731
    cases.append(("weighted_compare", wc, "ci", 0.0))
    return cases


CASES = _cases()


@pytest.mark.parametrize(
    ("func", "call", "option", "bad"), CASES,
    ids=[f"{f}-{o}={b!r}" for f, _, o, b in CASES],
)
def test_bad_option_is_refused_with_a_clear_message(func, call, option, bad):
    with pytest.raises(InvalidOptionError) as info:
        call(**{option: bad})
    msg = str(info.value)
    assert option in msg, msg
    assert func in msg, msg
    assert "got" in msg or "given" in msg, msg


def test_options_are_checked_before_any_work():
    """A bad option is reported even when the inputs are bad too (no work done first)."""
    with pytest.raises(InvalidOptionError, match="depth"):
        sef.evaluate("/no/such/run.txt", "/no/such/qrels.txt", ["P@5"], depth=0)


def test_good_values_pass():
    assert sef.evaluate(RUN, QRELS, ["P@1"], relevance_level=0, depth=1, judged_only=True,
                        compat="trec_eval-9", names="as_given", strategy="sort").height == 2


def test_two_spellings_of_one_measure_never_vanish():
    """Canonical names: an error naming both; as given: a row under each spelling."""
    from searcheval_frames.errors import UnknownMeasureError

    with pytest.raises(UnknownMeasureError, match="'P@1' and 'P_1' are the same measure"):
        sef.evaluate(RUN, QRELS, ["P@1", "P_1"])
    with pytest.raises(UnknownMeasureError, match="not a positive whole number"):
        sef.evaluate(RUN, QRELS, ["P@1.5", "P@1"])
    got = sef.evaluate(RUN, QRELS, ["P@1", "P_1", "RR"], names="as_given")
    assert got.filter(pl.col("run") == "a")["measure"].to_list() == ["P@1", "P_1", "RR"]
    by = dict(zip(got["measure"], got["value"], strict=False))
    assert by["P@1"] == by["P_1"]
    pq = sef.evaluate(RUN, QRELS, ["P_1", "P@1"], names="as_given", per_query=True)
    assert pq.height == 2 * 2 * 2 and pq["measure"].to_list()[:2] == ["P_1", "P@1"]
    got = sef.evaluate(RUN, QRELS, ["P@1", "RR", "P_1"], names="as_given")  # request order
    assert got.filter(pl.col("run") == "a")["measure"].to_list() == ["P@1", "RR", "P_1"]


# --------------------------------------------------------------------------- figures
def _plot_cases():
    pytest.importorskip("matplotlib")
    pq = _per_query
    cases = []
    for opt, bad in [("levels", "some"), ("relevance_level", -1), ("depth", 0),
                     ("missing", "drop"), ("per_query_lines", "yes")]:
        cases.append(("pr_curve", lambda **kw: sef.pr_curve(RUN, QRELS, **kw), opt, bad))
    for opt, bad in [("k", 0), ("mark_k", -1), ("logx", "no"), ("depth", 0)]:
        cases.append(("tradeoff_curve", lambda **kw: sef.tradeoff_curve(RUN, QRELS, **kw),
                      opt, bad))
    for opt, bad in [("orientation", "diagonal"), ("digits", -1), ("pct_digits", 1.5),
                     ("value_labels", "no"), ("deltas", 2)]:
        cases.append(("benchmark_bars",
                      lambda **kw: sef.benchmark_bars(sef.evaluate(RUN, QRELS, ["P@1"]), **kw),
                      opt, bad))
    for opt, bad in [("annotate", -1), ("query_labels", "x")]:
        cases.append(("per_query_delta",
                      lambda **kw: sef.per_query_delta(per_query=pq(), baseline="a", **kw), opt, bad))
    for opt, bad in [("kind", "violin"), ("show_means", "x"), ("seed", -1)]:
        cases.append(("metric_distribution",
                      lambda **kw: sef.metric_distribution(per_query=pq(), measure="P@1", **kw),
                      opt, bad))
    return cases


PLOT_CASES = _plot_cases() if __import__("importlib").util.find_spec("matplotlib") else []


@pytest.mark.parametrize(
    ("func", "call", "option", "bad"), PLOT_CASES,
    ids=[f"{f}-{o}={b!r}" for f, _, o, b in PLOT_CASES],
)
def test_bad_figure_option_is_refused(func, call, option, bad):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    try:
        with pytest.raises(InvalidOptionError) as info:
            call(**{option: bad})
    finally:
        plt.close("all")
    msg = str(info.value)
    assert option in msg and func in msg and "got" in msg, msg


@pytest.mark.parametrize(("option", "bad"), [("dpi", 0), ("formats", ["gif"]),
                                             ("transparent", "yes"), ("tight", 1)])
def test_bad_save_figure_option_is_refused(tmp_path, option, bad):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, _ = plt.subplots()
    try:
        with pytest.raises(InvalidOptionError) as info:
            sef.save_figure(fig, tmp_path / "f.png", **{option: bad})
    finally:
        plt.close(fig)
    assert option in str(info.value) and "save_figure" in str(info.value)


# --------------------------------------------------------------------------- CLI flags
@pytest.mark.parametrize(("flags", "needle"), [
    (["-l", "-1"], "relevance_level=-1"),
    (["-M", "0"], "-M DEPTH"),
    (["-m", "P@2.5"], "P@2.5"),
    (["-m", "nDGC@10"], "nDCG@10"),
])
def test_bad_cli_flag_is_one_line_with_exit_code(tmp_path, capsys, flags, needle):
    from searcheval_frames.cli import main

    run, qrels = tmp_path / "r.run", tmp_path / "q.txt"
    sef.write_run(RUN, run)
    sef.write_qrels(QRELS, qrels)
    code = main([str(qrels), str(run), *flags])
    err = capsys.readouterr().err.strip()
    assert code in (1, 2) and needle in err and len(err.splitlines()) == 1, (code, err)


def test_pr_curve_takes_every_levels_value_pr_curve_data_takes():
    """One check of ``levels`` serves the data and the figure (no stricter twin)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for levels in ("11pt", "11-pt", "ALL", 1, 20, [0.0, 0.25, 1.0]):
        sef.pr_curve_data(RUN, QRELS, levels=levels)
        plt.close(sef.pr_curve(RUN, QRELS, levels=levels).figure)


def test_unknown_keyword_arguments_name_the_function_called():
    """compare passed unknown keywords on to evaluate (a TypeError naming evaluate) or
    refused them otherwise: now one UnknownOptionError (also a TypeError) naming compare,
    with the closest option, on both input paths (issue #22)."""
    from searcheval_frames.errors import UnknownOptionError

    for call in (lambda: sef.compare(runs=RUN, qrels=QRELS, measures="P@1", relevence_level=2),
                 lambda: sef.compare(per_query=_per_query(), relevence_level=2)):
        with pytest.raises(UnknownOptionError, match=r"compare\(relevence_level=2\).*did you "
                                                      r"mean relevance_level") as info:
            call()
        assert isinstance(info.value, TypeError) and "evaluate()" not in str(info.value)



def test_unknown_test_options_and_query_diff_keywords_name_the_function_called():
    """scipy's TypeError named ttest_rel/wilcoxon, and query_diff passed unknown keywords to
    evaluate: both are UnknownOptionErrors naming the function called (issue #22)."""
    from searcheval_frames.errors import UnknownOptionError

    with pytest.raises(UnknownOptionError, match=r"compare\(test_options\['zero_mthod'\]"):
        sef.compare(per_query=_per_query(), test="wilcoxon", test_options={"zero_mthod": "pratt"})
    with pytest.warns(SearchEvalWarning, match="cannot be tested"):  # two queries
        sef.compare(per_query=_per_query(), baseline="a", test="wilcoxon",
                    test_options={"zero_method": "pratt"})
    with pytest.raises(UnknownOptionError, match=r"query_diff\(relevence_level=2\)"):
        sef.query_diff(RUN, QRELS, measure="P@1", relevence_level=2)


@pytest.mark.parametrize(("option", "bad"), [("order", "random"), ("order", None)])
def test_bad_label_widget_option_is_refused(tmp_path, option, bad):
    pytest.importorskip("anywidget")
    with pytest.raises(InvalidOptionError) as info:
        sef.label_widget(QRELS, store=tmp_path / "l.jsonl", assessor="t", **{option: bad})
    msg = str(info.value)
    assert option in msg and "label_widget" in msg and "got" in msg, msg
