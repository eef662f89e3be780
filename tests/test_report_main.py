"""sef.report (the main job), sef.query_diff and sef.side_by_side.

Numbers in the report are checked against the public functions that compute them
(sef.evaluate, sef.compare, sef.coverage, sef.metric_bounds); verdict wording against
its rules; the HTML for self-containment; the saved folder and its provenance.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import struct
import subprocess
import sys
import warnings
from pathlib import Path

import polars as pl
import pytest
from conftest import DATA
from hypothesis import given, settings
from hypothesis import strategies as st

import searcheval_frames as sef
from searcheval_frames.analysis import stats as _st
from searcheval_frames.errors import SearchEvalWarning
from searcheval_frames.reporting.examples import explain
from searcheval_frames.reporting.verdict import signed, verdict, verdict_kind

EX = DATA / "example"
RUNS = [str(EX / "runs" / "bm25.run"), str(EX / "runs" / "bm25-rerank.run")]
QRELS = str(EX / "qrels.txt")
MEASURES = ["P@5", "P@10", "R@10", "RR", "nDCG@10", "AP"]
FAST = {"n_resamples": 2000, "seed": 3}

pytest.importorskip("scipy")


@pytest.fixture(scope="module")
def rep():
    pytest.importorskip("matplotlib")
    return sef.report(RUNS, QRELS, baseline="bm25", queries=str(EX / "queries.tsv"),
                      docs=str(EX / "docs.jsonl"), title="Example report", **FAST)


# --------------------------------------------------------------------------- verdicts
def _row(delta, lo, hi, p, pct=5.0, wins=3, losses=1, measure="nDCG@10"):
    return {"measure": measure, "delta": delta, "delta_pct": pct, "ci_low": lo, "ci_high": hi,
            "p_adjusted": p, "wins": wins, "losses": losses}


def test_verdict_example_wording():
    text = verdict(_row(0.041, -0.01, 0.09, 0.12, pct=9.8), ci=0.95, correction="holm",
                   alpha=0.05)
    assert text == ("nDCG@10: +0.041 (+9.8%), 95% CI [−0.010, +0.090], p=0.12 after Holm — "
                    "not a reliable change")


@pytest.mark.parametrize(
    ("row", "kind", "words"),
    [
        (_row(0.05, -0.001, 0.1, 0.001), "unreliable", "not a reliable change"),  # CI crosses 0
        (_row(-0.05, -0.1, 0.0, 0.001), "unreliable", "not a reliable change"),  # touches 0
        (_row(0.05, 0.01, 0.1, 0.2), "not_significant", "not significant after correcting"),
        (_row(0.05, 0.01, 0.1, 0.01), "better", "reliably better"),
        (_row(-0.05, -0.1, -0.01, 0.01), "worse", "reliably worse"),
        (_row(0.0, 0.0, 0.0, 1.0, wins=0, losses=0), "none", "no change"),
        (_row(0.05, float("nan"), float("nan"), float("nan")), "untestable", "cannot be tested"),
    ],
)
def test_verdict_rules(row, kind, words):
    assert verdict_kind(row, 0.05) == kind
    text = verdict(row, ci=0.95, correction="holm", alpha=0.05)
    assert words in text
    if kind != "better":
        assert "better" not in text and "improve" not in text


@settings(max_examples=200, deadline=None)
@given(d=st.floats(-1, 1), a=st.floats(-1, 1), b=st.floats(-1, 1), p=st.floats(0, 1))
def test_verdict_says_better_only_when_ci_above_zero_and_significant(d, a, b, p):
    lo, hi = min(a, b), max(a, b)
    text = verdict(_row(d, lo, hi, p), ci=0.9, correction="bh", alpha=0.05)
    if "better" in text:
        assert lo > 0 and p <= 0.05 and d > 0
    if "worse" in text:
        assert hi < 0 and p <= 0.05 and d < 0
    if lo <= 0 <= hi:
        assert text.endswith("not a reliable change") or "no change" in text


def test_signed_uses_a_real_minus_and_no_negative_zero():
    assert signed(-0.0104) == "−0.010" and signed(0.0004) == "0.000" and signed(0.5) == "+0.500"


# --------------------------------------------------------------------------- numbers
def test_numbers_equal_compare_and_evaluate(rep):
    cmp = sef.compare(sef.read_run(RUNS), baseline="bm25", qrels=QRELS, measures=MEASURES, **FAST)
    assert rep.frame.drop("p_value").equals(cmp.frame.drop("p_value"))
    assert rep.frame["p_value"].to_list() == pytest.approx(cmp.frame["p_value"].to_list())
    summary = sef.pivot(sef.evaluate(RUNS, QRELS, MEASURES))
    got = rep.summary.sort("run")
    for m in MEASURES:
        assert got[m].to_list() == pytest.approx(summary.sort("run")[m].to_list(), abs=1e-12)
    # one verdict per comparison row, with its numbers in it
    assert len(rep.verdicts) == len(MEASURES)
    for v, r in zip(rep.verdicts, cmp.frame.iter_rows(named=True), strict=True):
        assert v.startswith(f"{r['measure']}: {signed(r['delta'])}")
        assert f"[{signed(r['ci_low'])}, {signed(r['ci_high'])}]" in v


def test_query_diff_of_the_report_adds_up_to_the_comparison(rep):
    d = rep.query_diff
    row = rep.frame.filter(pl.col("measure") == "nDCG@10").row(0, named=True)
    assert d["delta"].mean() == pytest.approx(row["delta"], abs=1e-12)
    counts = d["outcome"].value_counts().to_dict(as_series=False)
    got = dict(zip(counts["outcome"], counts["count"], strict=True))
    assert (got.get("win", 0), got.get("tie", 0), got.get("loss", 0)) == (
        row["wins"], row["ties"], row["losses"])
    losses = rep.examples["losses"]
    assert len(losses) == 5
    assert [e.delta for e in losses] == sorted(d.filter(pl.col("outcome") == "loss")["delta"])[:5]
    assert all(e.query for e in losses)  # query texts from queries.tsv


def test_coverage_section_equals_sef_coverage(rep):
    cov = sef.coverage(sef.read_run(RUNS), sef.read_qrels(QRELS), depth=20)  # no paths there
    assert rep.coverage.select(cov.columns).equals(cov)
    assert rep.bounds is None  # every top-20 document of the example runs is judged


# --------------------------------------------------------------------------- html
def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_html_is_self_contained_with_figures(rep):
    page = rep.to_html()
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, re.I)
    assert "<script" not in page and "<link" not in page and "@import" not in page
    imgs = re.findall(r'src="data:image/png;base64,([^"]+)"', page)
    assert len(imgs) == 3
    for b64 in imgs:
        w, h = _png_size(base64.b64decode(b64))
        assert w > 300 and h > 200
    for section in ("verdicts", "summary", "before-after", "figures", "coverage", "losses",
                    "wins", "provenance"):
        assert f'<section id="{section}">' in page
    assert page.count('class="sef-side-by-side"') == 10  # 5 losses + 5 wins


def test_before_after_cells_equal_the_frame(rep):
    page = rep.to_html()
    ba = page.split('<section id="before-after">')[1].split("</section>")[0]
    rows = re.findall(r"<tr>(.*?)</tr>", ba)[1:]
    assert len(rows) == len(MEASURES)
    frame = rep.frame
    for tr, r in zip(rows, frame.iter_rows(named=True), strict=True):
        cells = [re.sub("<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", tr)]
        assert cells[0] == r["measure"]
        assert float(cells[1]) == round(r["baseline_mean"], 3)
        assert float(cells[2]) == round(r["mean"], 3)
        assert cells[6] == f"{r['wins']}/{r['ties']}/{r['losses']}"


def test_repr_html_is_a_fragment(rep):
    frag = rep._repr_html_()
    assert frag.startswith("<style>") and "<html" not in frag and 'class="sef-report"' in frag


# --------------------------------------------------------------------------- files
def test_save_writes_the_folder_atomically_and_again(rep, tmp_path):
    out = tmp_path / "rep"
    index = rep.save(out)
    assert index == out / "index.html" and index.is_file()
    md = (out / "report.md").read_text(encoding="utf-8")
    for f in ("tradeoff", "before_after", "per_query_delta"):
        assert (out / "figures" / f"{f}.png").stat().st_size > 1000
        assert (out / "figures" / f"{f}.svg").read_text().lstrip().startswith("<?xml")
        assert f"(figures/{f}.png)" in md
    assert "## Before → after" in md and "| nDCG@10 |" in md
    first = index.read_bytes()
    rep.save(out)  # into an existing folder: replaced file by file
    assert index.read_bytes() == first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep"]  # no temporary folder left
    (tmp_path / "file").write_text("x")
    with pytest.raises(sef.SearchEvalError, match="is a file"):
        rep.save(tmp_path / "file")


def test_provenance_checksums(rep, tmp_path):
    rep.save(tmp_path / "r")
    prov = json.loads((tmp_path / "r" / "provenance.json").read_text())
    files = {r["name"]: r for r in prov["inputs"]}
    for path in [*RUNS, QRELS, str(EX / "queries.tsv"), str(EX / "docs.jsonl")]:
        rec = files[Path(path).name]
        data = Path(path).read_bytes()
        assert rec["sha256"] == hashlib.sha256(data).hexdigest() and rec["bytes"] == len(data)
    assert prov["versions"]["searcheval_frames"] == sef.__version__
    assert prov["options"]["baseline"] == "bm25" and prov["options"]["n_resamples"] == 2000
    assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$", prov["created"])


def test_report_from_frames_in_pandas_out():
    pd = pytest.importorskip("pandas")
    runs = sef.read_run(RUNS).to_pandas()
    with pytest.warns(SearchEvalWarning, match="no baseline= given; using 'bm25'"):
        rep = sef.report(runs, sef.read_qrels(QRELS).to_pandas(), figures=False,
                         measures=["AP"], **FAST)
    assert isinstance(rep.frame, pd.DataFrame) and rep.data.baseline == "bm25"
    rec = rep.provenance["inputs"][0]
    assert rec["path"] is None and rec["rows"] == len(runs) and len(rec["content_sha256"]) == 64


# --------------------------------------------------------------------------- coverage
def test_low_coverage_warns_and_gives_bounds():
    runs = pl.DataFrame({
        "run": ["a"] * 4 + ["b"] * 4, "query_id": ["q1", "q1", "q2", "q2"] * 2,
        "doc_id": ["d1", "d2", "d3", "d4", "d1", "x1", "d3", "x2"],
        "score": [2.0, 1.0, 2.0, 1.0] * 2,
    })
    qrels = pl.DataFrame({"query_id": ["q1", "q1", "q2", "q2"], "doc_id": ["d1", "d2", "d3", "d4"],
                          "relevance": [1, 0, 0, 1]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = sef.report(runs, qrels, measures=["P@2", "RR"], figures=False, depth=2, **FAST)
    assert rep.data.low_coverage == ["b"]
    want = sef.metric_bounds(runs.filter(pl.col("run") == "b"), qrels, ["P@2", "RR"])
    assert rep.bounds.equals(want)
    page = rep.to_html()
    assert 'id="coverage-warning"' in page and 'id="bounds-table"' in page
    assert any("Judged coverage is low" in n for n in rep.data.notes)
    # the loss on q1 names the unjudged document that came in
    assert any("x2" in e.why and "unjudged" in e.why for e in rep.examples["losses"])


# --------------------------------------------------------------------------- options
@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"depth": 0}, "depth=0"),
        ({"k": 0}, "k=0"),
        ({"n_examples": -1}, "n_examples=-1"),
        ({"alpha": 1.5}, "alpha=1.5"),
        ({"ci": 0}, "ci=0"),
        ({"min_judged": 2.0}, "min_judged=2.0"),
        ({"measures": 5}, "measures=5"),
        ({"baseline": "nope"}, "baseline='nope'"),
        ({"run": "bm25"}, "run='bm25'"),
        ({"focus": "P@7"}, "focus='P@7'"),
        ({"figures": "yes"}, "figures='yes'"),
        ({"test": "z"}, "test='z'"),
        ({"ci_method": "exact"}, "ci_method='exact'"),
        ({"correction": "fdr?"}, "correction='fdr\\?'"),
        ({"n_resamples": 0}, "n_resamples=0"),
        ({"seed": -1}, "seed=-1"),
        ({"digits": 0}, "digits=0"),
        ({"progress": 1}, "progress=1"),
        ({"title": 3}, "title=3"),
        ({"relevance_level": 1.5}, "relevance_level=1.5"),
    ],
)
def test_bad_options_raise_invalid_option_error(kwargs, match):
    opts = {"baseline": "bm25", "figures": False, **FAST, **kwargs}
    with pytest.raises(sef.InvalidOptionError, match=match):
        sef.report(RUNS, QRELS, **opts)


def test_one_run_is_not_a_report():
    with pytest.raises(sef.SearchEvalError, match="at least two runs"):
        sef.report(RUNS[:1], QRELS, figures=False)


def test_several_runs_pick_the_best_after_run_and_prefix_verdicts():
    runs = sorted(str(p) for p in (EX / "runs").glob("*.run"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = sef.report(runs, QRELS, baseline="bm25", measures=["nDCG@10", "AP"],
                         figures=False, **FAST)
    means = rep.comparison.means.filter(pl.col("measure") == "nDCG@10", pl.col("run") != "bm25")
    assert rep.data.run == means.sort("mean", descending=True)["run"][0]
    assert len(rep.verdicts) == (len(runs) - 1) * 2
    assert all(" vs bm25 — " in v for v in rep.verdicts)


def test_sef_report_is_the_function_whatever_was_imported_first():
    # the package used to be searcheval_frames/report/: importing it rebound sef.report to
    # a module, made callable by a class swap. A fresh process imports the package's
    # modules first (as the CLI does), then asks for sef.report and sef.Report.
    code = ("import inspect, pkgutil\n"
            "import searcheval_frames.reporting.build, searcheval_frames.cli.report\n"
            "import searcheval_frames as sef\n"
            "assert inspect.isfunction(sef.report), sef.report\n"
            "assert sef.report.__module__ == 'searcheval_frames.reporting'\n"
            "assert 'report' not in {m.name for m in pkgutil.iter_modules(sef.__path__)}\n"
            "from searcheval_frames.reporting.document import Report\n"
            "assert sef.Report is Report\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


def test_sef_report_returns_a_sef_Report(rep):
    assert isinstance(rep, sef.Report) and "Report" in dir(sef)


def test_the_old_tables_report_name_warns_and_is_table():
    from searcheval_frames.analysis import tables

    with pytest.warns(DeprecationWarning, match=r"tables\.Report .* removed in 0\.3; use "
                      r"searcheval_frames\.analysis\.tables\.Table .*sef\.Report is the report"):
        from searcheval_frames.analysis.tables import Report
    assert Report is tables.Table and Report is not sef.Report
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert "Report" not in tables.__all__ and tables.Table is Report  # no warning
        with pytest.raises(AttributeError, match="has no attribute 'Reports'"):
            tables.Reports  # noqa: B018


# --------------------------------------------------------------------------- query_diff
PQ = pl.DataFrame({
    "run": ["a"] * 4 + ["b"] * 3,
    "query_id": ["1", "2", "3", "4", "1", "2", "3"],
    "measure": "AP",
    "value": [0.2, 0.5, 0.4, 0.3, 0.6, 0.3, 0.4],
})


def test_query_diff_hand_built():
    with pytest.warns(UserWarning, match="score 0"):
        d = sef.query_diff(PQ, baseline="a", queries={"1": "one", "4": "four"})
    assert d.select("query_id", "query", "baseline_value", "value", "outcome").rows() == [
        ("4", "four", 0.3, 0.0, "loss"),  # missing in b: scores 0, like compare(missing="zero")
        ("2", None, 0.5, 0.3, "loss"),
        ("3", None, 0.4, 0.4, "tie"),
        ("1", "one", 0.2, 0.6, "win"),
    ]
    with pytest.warns(UserWarning, match="dropping"):
        skip = sef.query_diff(PQ, baseline="a", missing="skip")
    assert skip["query_id"].to_list() == ["2", "3", "1"]
    with pytest.raises(sef.IdMismatchError):
        sef.query_diff(PQ, baseline="a", missing="error")


def test_query_diff_matches_compare_wtl_and_pandas_kind():
    pd = pytest.importorskip("pandas")
    runs = sef.read_run(RUNS)
    d = sef.query_diff(runs.to_pandas(), sef.read_qrels(QRELS), baseline="bm25", measure="AP")
    assert isinstance(d, pd.DataFrame) and list(d["delta"]) == sorted(d["delta"])
    cmp = sef.compare(runs, QRELS, baseline="bm25", measures=["AP"], n_resamples=100)
    row = cmp.frame.row(0, named=True)
    assert (d["outcome"] == "win").sum() == row["wins"]
    assert (d["outcome"] == "loss").sum() == row["losses"]
    assert d["delta"].mean() == pytest.approx(row["delta"], abs=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "err", "match"),
    [
        ({"missing": "drop"}, sef.InvalidOptionError, "missing='drop'"),
        ({"tie_tolerance": -1.0}, sef.InvalidOptionError, "tie_tolerance=-1.0"),
        ({"baseline": "zz"}, sef.SearchEvalError, "baseline='zz'"),
        ({"run": "a"}, sef.SearchEvalError, "run='a'"),
        ({"measure": "P@5"}, sef.SearchEvalError, "P@5"),
    ],
)
def test_query_diff_bad_options(kwargs, err, match):
    with pytest.raises(err, match=match):
        sef.query_diff(PQ.filter(pl.col("query_id") != "4"), **{"baseline": "a", **kwargs})


# --------------------------------------------------------------------------- side_by_side
SBS_RUNS = pl.DataFrame({
    "run": ["before"] * 5 + ["after"] * 5,
    "query_id": "q",
    "doc_id": ["d1", "d2", "d3", "d4", "d5", "d3", "d9", "d1", "d2", "d4"],
    "score": [5.0, 4.0, 3.0, 2.0, 1.0, 5.0, 4.0, 4.0, 2.0, 1.0],
})
SBS_QRELS = {"q": {"d1": 2, "d2": 0, "d3": 1, "d5": 1}}


def test_side_by_side_hand_built():
    s = sef.side_by_side(SBS_RUNS, SBS_QRELS, "q", baseline="before", k=3,
                         docs={"d1": "One", "d9": "Nine"}, queries={"q": "my query"})
    f = s.frame
    # ties (d9, d1 at 4.0) go by doc_id descending, as in trec_eval
    assert f.rows() == [
        (1, "d1", 2, "One", "1 → 3", "d3", 1, None, "3 → 1"),
        (2, "d2", 0, None, "dropped (now 4)", "d9", None, "Nine", "new"),
        (3, "d3", 1, None, "3 → 1", "d1", 2, "One", "1 → 3"),
    ]
    md = s.to_markdown()
    assert "unjudged" in md and "my query" in md and "dropped (now 4)" in md
    html = s._repr_html_()
    assert 'data-query-id="q"' in html and "unjudged" in html and "3 → 1" in html
    deep = sef.side_by_side(SBS_RUNS, SBS_QRELS, "q", baseline="before", run="after", k=5).frame
    assert deep.filter(pl.col("rank") == 5).row(0) == (5, "d5", 1, "dropped", "d4", None, "4 → 5")


def test_side_by_side_new_from_deeper_ranks():
    s = sef.side_by_side(SBS_RUNS, SBS_QRELS, "q", baseline="after", k=2).frame
    # outside the other top-2 but deeper in its list: "dropped (now 3)" / "new (was 3)"
    assert s.row(0) == (1, "d3", 1, "dropped (now 3)", "d1", 2, "new (was 3)")


def test_side_by_side_bad_input():
    with pytest.raises(sef.InvalidOptionError, match="k=0"):
        sef.side_by_side(SBS_RUNS, SBS_QRELS, "q", k=0)
    with pytest.raises(sef.SearchEvalError, match="query_id='zz'"):
        sef.side_by_side(SBS_RUNS, SBS_QRELS, "zz")
    with pytest.raises(sef.SearchEvalError, match="baseline='x'"):
        sef.side_by_side(SBS_RUNS, SBS_QRELS, "q", baseline="x")


def test_explain_names_lost_relevant_and_new_unjudged_documents():
    f = sef.side_by_side(SBS_RUNS, SBS_QRELS, "q", baseline="before", k=2).to_polars()
    why = explain(f, 2)
    assert "first relevant" not in why  # rank 1 is relevant on both sides
    assert "1 relevant document(s) left the top 2 (d1)" in why
    assert "1 relevant document(s) entered the top 2 (d3)" in why
    assert "1 unjudged document(s) entered the top 2 (d9)" in why


# --------------------------------------------------------------------------- progress
def test_progress_bar_counts_resampling_calls_and_is_optional(monkeypatch):
    import numpy as np

    pytest.importorskip("tqdm")
    x, y = np.array([0.5, 0.7, 0.9, 0.1]), np.array([0.4, 0.5, 0.6, 0.3])
    with _st.progress(3, delay=0.0, desc="test"):
        bar = _st._BARS[-1]
        _st.bootstrap_ci(x, y, n_resamples=50, rng=1)
        _st.paired_test(x, y, "permutation", n_resamples=50, rng=1)
        _st.paired_test(x, y, "t")
        assert bar.n == 3
    assert _st._BARS == []
    monkeypatch.setitem(__import__("sys").modules, "tqdm.auto", None)  # tqdm absent
    with _st.progress(2):
        assert _st._BARS == []
        lo, hi = _st.bootstrap_ci(x, y, method="t")
    assert lo < hi


@pytest.mark.parametrize("name", ["searcheval_frames.analysis.querydiff",
                                  "searcheval_frames.analysis.side_by_side",
                                  "searcheval_frames.reporting.verdict"])
def test_docstring_examples(name):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name),
                             optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


def test_explain_first_relevant_rank_and_reorder():
    runs = pl.DataFrame({"run": ["a"] * 3 + ["b"] * 3, "query_id": "q",
                         "doc_id": ["r", "n", "m", "n", "m", "r"],
                         "score": [3.0, 2.0, 1.0, 3.0, 2.0, 1.0]})
    f = sef.side_by_side(runs, {"q": {"r": 1, "n": 0, "m": 0}}, "q", baseline="a", k=3)
    assert explain(f.to_polars(), 3) == ("The first relevant document moved from rank 1 to 3; "
                                         "relevant document(s) moved down (r 1 → 3).")
    same = sef.side_by_side(runs, {"q": {"r": 1}}, "q", baseline="a", run="b", k=1)
    assert "No relevant document in the top 1 any more" in explain(same.to_polars(), 1)


def test_low_coverage_of_a_third_run_warns_without_bounds():
    runs = pl.DataFrame({
        "run": ["a"] * 2 + ["b"] * 2 + ["c"] * 2, "query_id": "q1",
        "doc_id": ["d1", "d2", "d2", "d1", "x1", "x2"], "score": [2.0, 1.0] * 3,
    })
    qrels = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "relevance": [1, 0]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = sef.report(runs, qrels, baseline="a", run="b", measures=["P@1"], figures=False,
                         depth=2, **FAST)
    assert rep.data.low_coverage == ["c"] and rep.bounds is None
    page = rep.to_html()
    assert 'id="coverage-warning"' in page and 'id="bounds-table"' not in page


def test_auto_ci_method_is_the_tests_own_interval():
    """ci_method='auto': the interval that inverts the test (issue #26), for any size."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = sef.report(RUNS, QRELS, baseline="bm25", measures=["nDCG@10"], figures=False)
        own = sef.compare(RUNS, baseline="bm25", qrels=QRELS, measures=["nDCG@10"],
                          ci_method="test")
    cols = ["ci_low", "ci_high"]
    assert rep.comparison.frame.select(cols).equals(pl.DataFrame(own.frame).select(cols))


def test_report_says_how_large_a_change_its_queries_can_detect():
    """The power sentence is sef.power's row for the pair and focus measure, worded by the
    one definition README and docs use (power_sentence; issue #26)."""
    from searcheval_frames.analysis.power import power_sentence

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = sef.report(RUNS, QRELS, baseline="bm25", measures=["nDCG@10", "AP"],
                         figures=False)
        pq = pl.DataFrame(sef.evaluate(RUNS, QRELS, [rep.data.focus], per_query=True))
        pq = pq.filter(pl.col("run").is_in(["bm25", rep.data.run]))
        p = sef.power(per_query=pq, baseline="bm25", measure=rep.data.focus).row(0, named=True)
    text = rep.data.power
    assert text == "Power: " + power_sentence(p) + " (sef.power)"
    assert f"with {p['n_queries']} queries" in text or f"{p['n_queries']} queries" in text
    assert f"{p['detectable_delta']:.3f}" in text and f"about {p['n_needed']} queries" in text
    html = rep.to_html() if hasattr(rep, "to_html") else rep._repr_html_()
    assert "sef.power" in html
