"""The `searcheval` command line, run as a subprocess like a user or CI would."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

import searcheval_frames as sef

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "data" / "example"
SEED = REPO / "data" / "seed"


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "searcheval_frames", *args],
                          capture_output=True, text=True, cwd=cwd or REPO, timeout=120)


@pytest.fixture()
def files(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq2 0 a 1\nq3 0 z 1\n")
    r1 = tmp_path / "one.run"
    r1.write_text("q1 Q0 a 1 3 one\nq1 Q0 b 2 2 one\nq1 Q0 c 3 1 one\nq2 Q0 b 1 5 one\n")
    r2 = tmp_path / "two.run"
    r2.write_text("q1 Q0 c 1 3 two\nq1 Q0 a 2 2 two\nq2 Q0 a 1 5 two\n")
    return qrels, r1, r2


def test_help_is_newcomer_friendly():
    res = cli("--help")
    assert res.returncode == 0
    for text in ("QRELS", "RUN", "-m", "nDCG@10", "P.5,10", "exit codes", "--format"):
        assert text in res.stdout


def test_compare_table_matches_evaluate(files):
    qrels, r1, r2 = files
    res = cli(str(qrels), str(r1), str(r2), "-m", "nDCG@10", "-m", "P.1", "-f", "csv")
    assert res.returncode == 0, res.stderr
    table = pl.read_csv(res.stdout.encode())
    assert table.columns == ["run", "nDCG@10", "P@1"]
    assert table["run"].to_list() == ["one", "two"]
    want = sef.evaluate(sef.read_run([r1, r2]), sef.read_qrels(qrels), ["nDCG@10", "P@1"],
                        missing="skip")
    for run, m, v in want.iter_rows():
        assert table.filter(pl.col("run") == run)[m].item() == pytest.approx(v, abs=1e-12)


def test_per_query_and_complete(files):
    qrels, r1, _ = files
    res = cli(str(qrels), str(r1), "-q", "-c", "-m", "P.1", "-f", "trec_eval")
    assert res.returncode == 0, res.stderr
    assert res.stdout == (
        "P_1                   \tq1\t1.0000\n"
        "P_1                   \tq2\t0.0000\n"
        "P_1                   \tq3\t0.0000\n"
        "P_1                   \tall\t0.3333\n"
    )
    res = cli(str(qrels), str(r1), "-q", "-m", "P.1", "-m", "num_q", "-f", "trec_eval")
    assert "q3" not in res.stdout
    assert "num_q                 \tall\t2\n" in res.stdout


def test_all_output_formats(files):
    qrels, r1, r2 = files
    for fmt in ("table", "tsv", "markdown", "json", "trec_eval"):
        res = cli(str(qrels), str(r1), str(r2), "-m", "map", "-f", fmt)
        assert res.returncode == 0, (fmt, res.stderr)
        assert "one" in res.stdout and "two" in res.stdout
    recs = json.loads(cli(str(qrels), str(r1), "-m", "AP", "-q", "-f", "json").stdout)
    assert {r["query_id"] for r in recs} == {"q1", "q2", "all"}
    md = cli(str(qrels), str(r1), "-m", "AP", "-f", "markdown").stdout
    assert md.splitlines()[1] == "| --- | ---: |"


def test_output_file(files, tmp_path):
    qrels, r1, _ = files
    out = tmp_path / "res.tsv"
    res = cli(str(qrels), str(r1), "-m", "RR", "-f", "tsv", "-o", str(out))
    assert res.returncode == 0 and res.stdout == ""
    assert out.read_text().startswith("run\tRR\n")


def test_same_tags_fall_back_to_file_names(files, tmp_path):
    qrels, r1, _ = files
    copy = tmp_path / "copy.run"
    copy.write_text(r1.read_text())
    res = cli(str(qrels), str(r1), str(copy), "-m", "map", "-f", "csv")
    assert res.returncode == 0
    assert pl.read_csv(res.stdout.encode())["run"].to_list() == ["one", "copy"]
    assert "file" in res.stderr


def test_errors_are_one_line_with_exit_codes(files, tmp_path):
    qrels, r1, _ = files
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 a 1 3 x\n# note\nq1 Q0 b 2 high x\n")
    res = cli(str(qrels), str(bad))
    assert res.returncode == 1
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1
    assert f"{bad}:3" in lines[0] and "high" in lines[0] and "fix:" in lines[0]
    res = cli(str(qrels), str(r1), "-m", "nDGC@10")
    assert res.returncode == 1 and len(res.stderr.strip().splitlines()) == 1
    res = cli(str(qrels), str(tmp_path / "missing.run"))
    assert res.returncode == 1 and "no such file" in res.stderr
    assert cli(str(qrels)).returncode == 2
    assert cli("--no-such-flag").returncode == 2
    assert cli(str(qrels), str(r1), "-M", "0").returncode == 2


def test_unsupported_trec_measure_set_is_an_error(files):
    qrels, r1, _ = files
    res = cli(str(qrels), str(r1), "-m", "all_prefs")  # preference judgments: not supported
    assert res.returncode == 1 and "not supported" in res.stderr
    res = cli(str(qrels), str(r1), "-m", "infAP")  # implemented since issue #13
    assert res.returncode == 0, res.stderr


def test_bundled_data(tmp_path):
    if not (EXAMPLE / "qrels.txt").exists():
        pytest.skip("bundled data/example not present")
    runs = sorted(str(p) for p in (EXAMPLE / "runs").glob("*.run"))
    res = cli(str(EXAMPLE / "qrels.txt"), *runs, "-m", "nDCG@10,RR", "-m", "P.10")
    assert res.returncode == 0, res.stderr
    assert len(res.stdout.strip().splitlines()) == 2 + len(runs)
    seed = sorted(SEED.glob("*.qrels"))
    for q in seed:
        res = cli(str(q), str(q.with_suffix(".run")), "-q")
        assert res.returncode == 0, res.stderr


def test_console_script_entry_point():
    from searcheval_frames.cli import main

    assert main(["--version"]) == 0


@pytest.mark.parametrize("name_from", ["tag", "file"])
def test_one_run_in_any_format_gives_the_same_numbers(files, tmp_path, name_from):
    """A single run file is read once (TREC: batched, with blocks); tables take the
    general path; both agree with the API."""
    qrels, r1, _ = files
    csv = tmp_path / "one.csv"
    sef.read_run(r1).write_csv(csv)
    want = sef.evaluate(sef.read_run(r1), sef.read_qrels(qrels), ["nDCG@10", "AP", "P@2"],
                        missing="skip")
    for path in (r1, csv):
        res = cli(str(qrels), str(path), "-m", "nDCG@10,AP,P@2", "-f", "csv", "--name-from",
                  name_from)
        assert res.returncode == 0, res.stderr
        table = pl.read_csv(res.stdout.encode())
        assert table["run"].to_list() == ["one"]
        for _, m, v in want.iter_rows():
            assert table[m].item() == pytest.approx(v, abs=1e-12)
