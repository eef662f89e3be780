"""The report's sef.check banner and its note when ties move a headline mean (issue #22)."""

from __future__ import annotations

import numpy as np
import polars as pl

import searcheval_frames as sef
from searcheval_frames.reporting.checks import TIE_THRESHOLD


def _inputs(tied: bool):
    rng = np.random.default_rng(7)
    rows, qrels = [], []
    for q in range(12):
        for d in range(30):
            rel = int(rng.integers(0, 3)) if d < 12 else 0
            qrels.append((f"q{q}", f"d{d}", rel))
            rows.append(("base", f"q{q}", f"d{d}", float(rng.normal())))
            score = float(rng.normal() + rel)
            rows.append(("new", f"q{q}", f"d{d}", round(score) if tied else score))
    run = pl.DataFrame(rows, schema=["run", "query_id", "doc_id", "score"], orient="row")
    return run, pl.DataFrame(qrels, schema=["query_id", "doc_id", "relevance"], orient="row")


def _report(run, qrels, **kw):
    return sef.report(run, qrels, measures=["nDCG@10", "P@5"], figures=False,
                      n_resamples=200, progress=False, **kw)


def test_banner_and_tie_note_on_a_run_with_rounded_scores():
    run, qrels = _inputs(tied=True)
    rep = _report(run, qrels, relevance_level=1, baseline="base")
    html = rep.to_html()
    assert 'id="check-banner"' in html and "ties_at_cutoff" in html
    b = sef.evaluate(run, qrels, ["nDCG@10"], ties="bounds").filter(pl.col("run") == "new")
    spread = b["tie_spread"][0]
    assert spread > TIE_THRESHOLD
    assert "Ties move a headline mean" in html
    assert f"{b['low'][0]:.3f} to {b['high'][0]:.3f}" in html
    md = rep.to_markdown()
    assert "> ⚠ sef.check:" in md and "Ties move a headline mean" in md


def test_no_banner_and_no_tie_note_on_clean_inputs():
    run, qrels = _inputs(tied=False)
    qrels = qrels.with_columns(pl.col("relevance").clip(0, 1))  # binary: no level warning
    html = _report(run, qrels, baseline="base").to_html()
    assert 'id="check-banner"' not in html and "Ties move" not in html
