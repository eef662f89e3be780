"""`searcheval report` run as a user runs it: a subprocess, exit codes, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import DATA

EX = DATA / "example"
BASE = [str(EX / "qrels.txt"), str(EX / "runs" / "bm25.run"), str(EX / "runs" / "bm25-rerank.run")]

pytest.importorskip("scipy")


def _cli(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "searcheval_frames", *args],
                          capture_output=True, text=True, timeout=600, cwd=cwd)


def test_report_writes_the_folder_and_prints_the_headline(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "rep"
    proc = _cli("report", *BASE, "--baseline", "bm25", "-m", "nDCG@10", "-m", "P.5,10",
                "--queries", str(EX / "queries.tsv"), "--docs", str(EX / "docs.jsonl"),
                "--resamples", "1000", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert f"searcheval: report written to {out / 'index.html'}" in proc.stdout
    assert "| Measure | Before (bm25) | After (bm25-rerank) |" in proc.stdout
    # -m order kept, trec_eval spellings expanded
    rows = [ln.split("|")[1].strip() for ln in proc.stdout.splitlines()
            if ln.startswith("| ") and "Measure" not in ln]
    assert rows == ["nDCG@10", "P@5", "P@10"]
    page = (out / "index.html").read_text(encoding="utf-8")
    assert page.count("data:image/png;base64,") == 3
    prov = json.loads((out / "provenance.json").read_text())
    assert [r["role"] for r in prov["inputs"]] == ["run", "run", "qrels", "queries", "docs"]
    assert prov["command"].startswith("searcheval report ")
    assert (out / "report.md").is_file() and len(list((out / "figures").glob("*.svg"))) == 3


def test_report_quiet_without_figures(tmp_path):
    proc = _cli("report", *BASE, "-q", "--no-figures", "--ci-method", "t", "-o", "r",
                cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "searcheval: report written to r/index.html"
    page = (tmp_path / "r" / "index.html").read_text()
    assert "Figures were not drawn" in page and "Student t" in page


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--baseline", "nope"], 1, "report(baseline='nope'): must be one of 'bm25', 'bm25-rerank'"),
        (["-m", "nDCG@x"], 1, "nDCG@x"),
        (["--test", "magic"], 1, "test='magic'"),
        (["--focus", "AP", "-m", "P@5"], 1, "focus='AP'"),
        (["--depth", "0"], 2, "--depth must be a positive number"),
        (["--min-judged", "2"], 1, "min_judged=2.0"),
    ],
)
def test_report_errors_are_one_line(tmp_path, args, code, message):
    proc = _cli("report", *BASE, "--no-figures", "-o", str(tmp_path / "r"), *args)
    assert proc.returncode == code
    err = [ln for ln in proc.stderr.splitlines() if "error:" in ln]
    assert len(err) == 1 and message in err[0], proc.stderr
    assert not (tmp_path / "r").exists()


def test_report_needs_two_runs_and_readable_files(tmp_path):
    proc = _cli("report", BASE[0], BASE[1])
    assert proc.returncode == 2 and "at least two run files" in proc.stderr
    proc = _cli("report", str(tmp_path / "missing.qrels"), BASE[1], BASE[2], "-o",
                str(tmp_path / "r"))
    assert proc.returncode == 1 and "missing.qrels" in proc.stderr
    assert proc.stderr.count("\n") == 1


def test_report_help_and_the_classic_form_still_work():
    proc = _cli("report", "--help")
    assert proc.returncode == 0 and "usage: searcheval report" in proc.stdout
    proc = _cli(*BASE, "-m", "P@5")  # the trec_eval-like form, unchanged
    assert proc.returncode == 0 and "bm25-rerank" in proc.stdout and "P@5" in proc.stdout


def test_trec_dl_runs_sharing_a_tag_baseline_by_its_short_name(tmp_path):
    """Seven TREC DL 2019 runs whose tags collide are named after their files
    (run.dl19-passage.*); --baseline bm25 picks run.dl19-passage.bm25 by the name the
    report shows, -l 2 is stated on the page, and the tables name runs briefly."""
    from conftest import shared_path

    qrels = shared_path("trec_dl_passage", "qrels.dl19-passage.txt")
    runs = sorted(str(p) for p in (qrels.parent / "runs").glob("run.dl19-passage.*.txt"))
    out = tmp_path / "dl19"
    proc = _cli("report", str(qrels), *runs, "--baseline", "bm25", "-l", "2", "-m", "nDCG@10",
                "-m", "map", "--ci-method", "t", "--no-figures", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "| bm25-minilm-rerank | bm25 | nDCG@10 | 0.506 |" in proc.stdout
    assert "Runs are shown by shorter names: bm25 = run.dl19-passage.bm25;" in proc.stdout
    md = (out / "report.md").read_text()
    assert "Relevant = label ≥ 2" in md
    assert "| bm25 | 0.506 | 0.248 |" in md.replace("  ", " ")  # nDCG@10, AP at level 2
