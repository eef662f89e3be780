"""Report tables: HTML, Markdown, LaTeX, string frames; layouts, rounding, columns."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import polars as pl
import pytest

import searcheval_frames as sef
from searcheval_frames.analysis.tables import Table
from searcheval_frames.errors import SearchEvalError, SearchEvalWarning


def seed_like():
    """The seed's benchmark: P@5 0.65 -> 0.78 over 20 queries, RR 0.55 -> 0.68, recall equal."""
    rng = np.random.default_rng(0)
    before_p5 = np.array([0.6, 0.8] * 10) - 0.05 + 0.05  # mean 0.7
    before_p5 = np.where(np.arange(20) < 2, 0.2, before_p5)  # mean 0.65
    after_p5 = before_p5 + 0.13 + rng.normal(0, 0.01, 20)
    after_p5 = after_p5 - after_p5.mean() + 0.78
    rr_before = np.full(20, 0.55) + np.tile([-0.2, 0.2], 10)
    rr_after = rr_before + 0.13 + np.tile([0.05, -0.05], 10) * 0.0
    recall = np.full(20, 0.8)
    rows = []
    for run, vals in [("before", (before_p5, recall, rr_before)),
                      ("after", (after_p5, recall, rr_after))]:
        for m, v in zip(["P@5", "R@10", "RR"], vals, strict=True):
            rows += [(run, f"q{i:02d}", m, float(x)) for i, x in enumerate(v)]
    return pl.DataFrame(rows, schema=["run", "query_id", "measure", "value"], orient="row")


def seed_compare(pq, **kw):
    """compare on seed_like() values: R@10 (all ties) and RR (no spread) cannot be tested,
    and compare says so."""
    with pytest.warns(SearchEvalWarning, match=r"cannot be tested: .*R@10 \(all ties.*RR \(no "):
        return sef.compare(per_query=pq, **kw)


@pytest.fixture(scope="module")
def cmp():
    return seed_compare(seed_like(), baseline="before")


def three_runs():
    rng = np.random.default_rng(1)
    base = rng.random(40)
    runs = {"a_base": base, "b": base + 0.15 + rng.normal(0, 0.05, 40),
            "c": base + 0.3 + rng.normal(0, 0.05, 40)}
    rows = [(r, f"q{i}", "nDCG@10", float(v)) for r, vals in runs.items()
            for i, v in enumerate(vals)]
    return pl.DataFrame(rows, schema=["run", "query_id", "measure", "value"], orient="row")


def test_before_after_labels_absolute_and_relative(cmp):
    md = cmp.to_markdown(layout="before_after")
    assert "| Measure | Before (before) | After (after) | Δ abs (rel) |" in md
    # 0.65 -> 0.78 is +0.13 absolute and +20% relative, never "+13%"
    p5 = next(line for line in md.splitlines() if line.startswith("| P@5"))
    assert "| 0.650 | **0.780** | +0.130 (+20.0%)\\* |" in p5
    rr = next(line for line in md.splitlines() if line.startswith("| RR"))
    assert "+0.130 (+23.6%)" in rr
    recall = next(line for line in md.splitlines() if line.startswith("| R@10"))
    assert "| 0.000 (0.0%) |" in recall and "0/20/0" in recall
    assert "absolute difference after − before" in md
    assert "Holm" in md


def test_digits_and_columns_are_arguments(cmp):
    md = cmp.to_markdown(layout="before_after", digits=2, pct_digits=0,
                         columns=["change", "delta", "ci", "p_value", "effect_size", "n"])
    header = md.splitlines()[0]
    assert header == "| Measure | Before → after | Δ abs (rel) | 95% CI of Δ | p | d_z | n |"
    p5 = next(line for line in md.splitlines() if line.startswith("| P@5"))
    assert "0.65 → 0.78" in p5 and "+0.13 (+20%)" in p5 and "| 20 |" in p5
    assert re.search(r"\| \[\+0\.1\d, \+0\.1\d\] \|", p5)
    with pytest.raises(SearchEvalError, match="not a column"):
        cmp.table(layout="before_after", columns=["median"])
    with pytest.raises(SearchEvalError, match="layout="):
        cmp.table(layout="tall")


def test_wide_html_marks_best_significance_and_colours(cmp):
    html = cmp._repr_html_()
    assert html.startswith("<table") and "</table>" in html
    # after beats before on P@5: bold best, superscript letter of "before" (a)
    assert "<b>0.780</b><sup>a</sup>" in html
    assert "color:#1a7f37;font-weight:600" in html  # significant positive delta
    assert "+0.130 (+20.0%)" in html
    assert 'colspan="2"' in html  # measure groups over mean and delta
    assert "<caption" in html and "Superscript letters" in html


def test_negative_and_nonsignificant_deltas_are_coloured_differently():
    pq = three_runs()
    worse = pq.with_columns(
        pl.when(pl.col("run") == "c").then(pl.col("value") - 0.6).otherwise(pl.col("value"))
        .alias("value")
    )
    html = sef.compare(per_query=worse, baseline="a_base").to_html()
    assert "color:#cf222e;font-weight:600" in html
    flip = pl.Series(np.tile([0.3, -0.3], 60))
    noisy = pq.with_columns(
        pl.when(pl.col("run") == "b").then(pl.col("value") - 0.15 + flip)
        .otherwise(pl.col("value")).alias("value")
    )
    cmp = sef.compare(per_query=noisy, baseline="a_base")
    html = cmp.to_html()
    # a change the test cannot tell from zero is not tinted: one coloured cell per
    # significant delta, the rest neutral
    sig = pl.DataFrame(cmp.frame).filter(pl.col("significant")).height
    assert html.count("#cf222e;font-weight:600") + html.count("#1a7f37;font-weight:600") == sig
    assert sig < pl.DataFrame(cmp.frame).height and "opacity" not in html


def test_all_pairs_superscripts_like_ranx():
    cmp = sef.compare(per_query=three_runs(), pairs="all")
    md = cmp.to_markdown(columns=["mean"], legend=False)
    rows = {line.split(" | ")[1]: line for line in md.splitlines()[2:]}
    assert "<sup>" not in rows["a_base"]
    assert "<sup>a</sup>" in rows["b"]
    assert "**" in rows["c"] and "<sup>ab</sup>" in rows["c"]
    assert md.splitlines()[0] == "| # | Run | nDCG@10 |"


def test_latex_booktabs_superscripts_and_escaping():
    cmp = sef.compare(per_query=three_runs(), pairs="all")
    tex = cmp.to_latex(columns=["mean"], caption="Effectiveness.", label="tab:cmp")
    for token in [r"\begin{table}", r"\toprule", r"\midrule", r"\bottomrule",
                  r"\begin{tabular}{llr}", r"\label{tab:cmp}", r"\caption{Effectiveness. Bold"]:
        assert token in tex
    assert r"a\_base" in tex
    assert re.search(r"c & c & \\textbf\{0\.\d{3}\}\$\^\{ab\}\$ \\\\", tex)
    two = seed_compare(seed_like(), baseline="before").to_latex()
    assert r"\multicolumn{2}{c}{P@5}" in two and r"\cmidrule(lr){3-4}" in two
    assert r"+0.130 (+20.0\%)$^{*}$" in two
    assert r"$\Delta$ abs (rel)" in two
    body = seed_compare(seed_like(), baseline="before").to_latex(environment=False, legend=False)
    assert body.startswith(r"\begin{tabular}") and r"\caption" not in body


def test_latex_negative_numbers_use_math_minus():
    pq = seed_like()
    cmp = seed_compare(pq, baseline="after")
    tex = cmp.to_latex(layout="before_after", columns=["delta"])
    assert r"$-$0.130 ($-$16.7\%)" in tex


def test_to_frame_plain_strings_in_callers_kind(cmp):
    frame = cmp.table(layout="before_after").to_frame()
    assert isinstance(frame, pl.DataFrame)
    assert frame.columns == ["Measure", "Before (before)", "After (after)", "Δ abs (rel)",
                             "p (Holm)", "W/T/L"]
    assert frame.row(0)[3] == "+0.130 (+20.0%)*"
    wide = cmp.table().to_frame()
    assert wide.columns[:4] == ["#", "Run", "P@5", "P@5 Δ abs (rel)"]
    assert wide.row(1)[2] == "0.780ᵃ"
    pd_cmp = seed_compare(seed_like().to_pandas(), baseline="before")
    assert isinstance(pd_cmp.table().to_frame(), pd.DataFrame)
    assert isinstance(pd_cmp.table().frame, pd.DataFrame)


def test_report_selects_runs_and_measures(cmp):
    rep = cmp.table(measures=["RR"], runs=["after", "before"])
    assert isinstance(rep, Table)
    md = rep.to_markdown(legend=False)
    assert "P@5" not in md and "RR" in md
    assert md.splitlines()[2].startswith("| a | after |")
    with pytest.raises(SearchEvalError, match="measures="):
        cmp.table(measures=["MAP"])


def test_repr_is_readable(cmp):
    text = repr(cmp)
    assert text.startswith("Comparison(2 runs")
    assert "| # | Run |" in text
