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


def _note_from_evaluate(run, qrels, focus, runs, threshold):
    """The note as the report wrote it before it evaluated only the tied queries: from
    evaluate(..., ties="bounds") of the two runs (the reference)."""
    b = sef.evaluate(run.filter(pl.col("run").is_in(runs)), qrels, [focus], ties="bounds")
    moved = b.filter(pl.col("tie_spread") > threshold)
    if moved.height == 0:
        return ""
    parts = [f"{r['run']} scores {r['measure']} = {r['value']:.3f} with trec_eval's order "
             f"of ties (by document id) but anywhere from {r['low']:.3f} to {r['high']:.3f} "
             "over the orders of its tied documents" for r in moved.iter_rows(named=True)]
    return ("Ties move a headline mean: " + "; ".join(parts)
            + ". See evaluate(..., ties='bounds') or ties='given_order'.")


def test_tie_note_from_the_tied_queries_equals_evaluate_with_bounds():
    import warnings

    from searcheval_frames.frames import mark_checked, query_blocks
    from searcheval_frames.reporting.checks import tie_note

    rng = np.random.default_rng(3)
    notes = blocked = 0
    for _ in range(40):
        n_q = int(rng.integers(1, 7))
        same = bool(rng.random() < 0.5)  # every query the same depth: a checked run's blocks
        rows = [(r, f"q{q}", f"d{d}", float(rng.integers(0, 4)))
                for r in ("a", "b", "c") for q in range(n_q) if same or rng.random() > 0.2
                for d in rng.choice(30, size=8 if same else int(rng.integers(1, 15)),
                                    replace=False)]
        if not {r[0] for r in rows} >= {"a", "b"}:
            continue
        run = pl.DataFrame(rows, schema=["run", "query_id", "doc_id", "score"], orient="row")
        if same:  # (the report's run: validated, its blocks recorded)
            run = sef.run_frame(run)
            run = mark_checked(run, query_blocks(run))
        qrels = pl.DataFrame([(f"q{q}", f"d{d}", int(rng.integers(-1, 3)))
                              for q in range(n_q + 1) for d in range(0, 30, 2)],
                             schema=["query_id", "doc_id", "relevance"], orient="row")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for focus in ("nDCG@10", "AP", "RR", "P@5"):
                want = _note_from_evaluate(run, qrels, focus, ["a", "b"], 0.0)
                pq = pl.DataFrame(sef.evaluate(run, qrels, [focus, "R@10"], per_query=True))
                for given in (pq, None):
                    assert tie_note(run, qrels, focus, ["a", "b"], relevance_level=1,
                                    threshold=0.0, per_query=given) == want
                notes += bool(want)
                blocked += bool(want) and same
    assert notes > 20 and blocked > 5  # many notes met, by both paths; not only empty ones
