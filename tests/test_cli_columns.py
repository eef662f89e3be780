"""``searcheval --columns``: the main command reads tables under the user's column names,
as ``searcheval report --columns`` does (issue #31: only the report had it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

import searcheval_frames as sef

REPO = Path(__file__).resolve().parents[1]
COLUMNS = "run=system,query_id=question,doc_id=url,score=similarity,relevance=grade"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "searcheval_frames", *args],
                          capture_output=True, text=True, cwd=REPO, timeout=120)


@pytest.fixture()
def tables(tmp_path):
    run = pl.DataFrame({"system": ["bm25"] * 4 + ["dense"] * 4,
                        "question": ["q1", "q1", "q2", "q2"] * 2,
                        "url": ["a", "b", "c", "d", "b", "a", "d", "c"],
                        "similarity": [2.0, 1.0, 2.0, 1.0] * 2})
    qrels = pl.DataFrame({"question": ["q1", "q2"], "url": ["b", "c"], "grade": [2, 1]})
    run.write_csv(tmp_path / "runs.csv")
    qrels.write_csv(tmp_path / "qrels.csv")
    return tmp_path, run, qrels


def test_main_command_reads_your_column_names(tables):
    tmp, run, qrels = tables
    res = cli(str(tmp / "qrels.csv"), str(tmp / "runs.csv"), "--columns", COLUMNS,
              "-m", "P@1", "-m", "nDCG@2", "-f", "csv")
    assert res.returncode == 0, res.stderr
    got = pl.read_csv(res.stdout.encode()).sort("run")
    # the oracle: the same frames under the canonical names, through the library
    canon = {"system": "run", "question": "query_id", "url": "doc_id", "similarity": "score"}
    want = sef.pivot(sef.evaluate(run.rename(canon), qrels.rename(
        {"question": "query_id", "url": "doc_id", "grade": "relevance"}), ["P@1", "nDCG@2"]))
    want = want.sort("run")
    assert got["run"].to_list() == want["run"].to_list() == ["bm25", "dense"]
    for m in ("P@1", "nDCG@2"):
        assert got[m].to_list() == pytest.approx(want[m].to_list(), abs=1e-4)


def test_without_columns_the_table_is_refused_with_a_hint(tables):
    tmp, _, _ = tables
    res = cli(str(tmp / "qrels.csv"), str(tmp / "runs.csv"), "-m", "P@1")
    assert res.returncode != 0
    assert "question" in res.stderr or "column" in res.stderr


def test_bad_columns_text_is_a_usage_error(tables):
    tmp, _, _ = tables
    res = cli(str(tmp / "qrels.csv"), str(tmp / "runs.csv"), "--columns", "query_id", "-m",
              "P@1")
    assert res.returncode == 2
    assert "is not CANONICAL=YOURS" in res.stderr


def test_help_lists_columns():
    assert "--columns" in cli("--help").stdout
