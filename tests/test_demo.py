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
    # the main job: searcheval report on bm25 (before) vs bm25-rerank (after)
    index = tmp_path / "report" / "index.html"
    assert index.is_file() and (tmp_path / "report" / "report.md").is_file()
    assert f"report written to {index.relative_to(tmp_path)}" in out
    assert "| Measure | Before (bm25) | After (bm25-rerank) |" in out
    assert "| nDCG@10 | 0.780 | 0.786 |" in out  # the headline table
    assert index.as_uri() in out
    # the flagship page does not warn about the demo's own choice of relevance level
    # (issue #31): the demo passes the level it means, and a chosen level is a note
    html = index.read_text(encoding="utf-8")
    assert "relevance_level_low" not in html and "relevance_level=1 counts" not in html
    assert "0 errors, 1 warning (ties_at_cutoff)" in html  # the data's own finding stays
    assert "--level 1" in out  # the command it shows says so


def test_demo_reports_a_missing_data_folder(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "searcheval_frames.demo", str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 2 and "bundled data not found" in proc.stderr
