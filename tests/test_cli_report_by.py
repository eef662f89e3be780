"""`searcheval report --queries FILE --by COLUMN` run as a process: the "By slice"
section and, with more than two runs, the leaderboard per slice, whose Markdown equals
``sef.leaderboard(..., queries=, by=)`` on the same per-query values and options."""

from __future__ import annotations

import subprocess
import sys
import warnings

import polars as pl
import pytest
from conftest import DATA

import searcheval_frames as sef

EX = DATA / "example"
RUNS = [str(EX / "runs" / f"{n}.run") for n in ("bm25", "bm25-rerank", "lsi")]
QRELS = str(EX / "qrels.txt")

pytest.importorskip("scipy")


def _cli(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "searcheval_frames", *args],
                          capture_output=True, text=True, timeout=900, cwd=cwd)


def _queries(tmp_path) -> str:
    """The bundled queries with a ``length`` column: 1-3, 4-5 or 6+ words."""
    words = pl.col("query").str.split(" ").list.len()
    q = sef.read_queries(EX / "queries.tsv").with_columns(
        pl.when(words <= 3).then(pl.lit("1-3")).when(words <= 5).then(pl.lit("4-5"))
        .otherwise(pl.lit("6+")).alias("length"))
    path = tmp_path / "queries.tsv"
    q.write_csv(path, separator="\t")
    return str(path)


def test_report_by_a_query_column_shows_the_slices(tmp_path):
    queries = _queries(tmp_path)
    out = tmp_path / "rep"
    proc = _cli("report", QRELS, *RUNS, "--baseline", "bm25", "--run", "bm25-rerank",
                "-m", "nDCG@10", "-m", "P@5", "--queries", queries, "--by", "length",
                "--ci-method", "t", "--resamples", "300", "--no-figures", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    page = (out / "index.html").read_text(encoding="utf-8")
    md = (out / "report.md").read_text(encoding="utf-8")
    # the small slices are named in the page with their minimum detectable Δ
    assert "fewer than 20 queries" in page and "|Δ| &gt;=" in page and "|Δ| >=" in md
    assert '<section id="slices"><h2>By slice</h2>' in page and "## By slice" in md
    for value in ("1-3", "4-5", "6+"):
        assert f"<td>{value}</td>" in page
    # the leaderboard of the three runs, per slice: the numbers of sef.leaderboard(by=)
    assert '<div id="leaderboard-slices">' in page and page.count('<h4 class="sef-slice">') == 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pq = sef.evaluate(sef.read_run(RUNS), QRELS, "nDCG@10", per_query=True)
        want = sef.leaderboard(per_query=pq, measure="nDCG@10", queries=queries, by="length",
                               n_resamples=300, seed=0, progress=False)
    assert "## Leaderboard on nDCG@10 by slice (length)" in md
    assert want.to_markdown() in md


def test_report_by_needs_queries_and_an_existing_column(tmp_path):
    proc = _cli("report", QRELS, *RUNS[:2], "--by", "length", "-o", str(tmp_path / "r"))
    assert proc.returncode == 2 and "--by needs --queries FILE" in proc.stderr
    proc = _cli("report", QRELS, *RUNS[:2], "--queries", str(EX / "queries.tsv"), "--by",
                "intent", "--no-figures", "--ci-method", "t", "-o", str(tmp_path / "r"))
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "no column 'intent'" in proc.stderr
