"""The quick start's main job runs as a user runs it (`make demo`)."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO


def test_demo_prints_the_seed_numbers_and_writes_the_report(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "searcheval_frames.demo", str(REPO / "data")],
        capture_output=True, text=True, timeout=600, check=True, cwd=tmp_path,
    ).stdout
    for text in ["P@5", "0.6000", "R@3", "0.6667", "0.6111", "nDCG@3", "0.7350"]:
        assert text in out
    for run in ["bm25", "bm25-rerank", "tfidf", "bm25-prf"]:
        assert f" {run} " in out
    # the process for real: two live systems (sef.retrieve), pooled, coverage, report
    assert "The process, for real" in out and "Pool of the two runs' top 20" in out
    index = tmp_path / "report" / "index.html"
    assert index.is_file() and (tmp_path / "report" / "report.md").is_file()
    assert f"report written to {index.relative_to(tmp_path)}" in out
    assert "| Measure | Before (bm25) | After (bm25-rerank) |" in out
    # the headline's numbers are sef.evaluate's on the runs the demo wrote
    import searcheval_frames as sef

    runs = tmp_path / "report" / "runs"
    vals = sef.evaluate(sef.read_run([runs / "bm25.run", runs / "bm25-rerank.run"]),
                        REPO / "data" / "example" / "qrels.txt", ["nDCG@10"])
    v = dict(zip(vals["run"], vals["value"], strict=True))
    assert f"| nDCG@10 | {v['bm25']:.3f} | {v['bm25-rerank']:.3f} |" in out
    # the latency table and the verdicts
    table = out.split("Latency per query", 1)[1]
    assert "p50" in table and "p95" in table and "p99" in table
    for run in ["bm25", "bm25-rerank"]:
        row = next(line for line in table.splitlines() if f" {run} " in line)
        assert row.split("┆")[1].strip() == "38" and row.split("┆")[2].strip() == "0"
    assert any(line.startswith("  nDCG@10: ") for line in out.splitlines())
    html = index.read_text(encoding="utf-8")
    assert 'id="latency"' in html and 'id="fig-latency"' in html
    assert index.as_uri() in out
    # the flagship page does not warn about the demo's own choice of relevance level
    # (issue #31): the demo passes the level it means, and a chosen level is a note
    html = index.read_text(encoding="utf-8")
    assert "relevance_level_low" not in html and "relevance_level=1 counts" not in html
    assert "0 errors, 1 warning (ties_at_cutoff)" in html  # the data's own finding stays


def test_demo_reports_a_missing_data_folder(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "searcheval_frames.demo", str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 2 and "bundled data not found" in proc.stderr
