"""The silent and raw-error classes of issue #22, each with generated inputs: the right
number, or a SearchEvalError subclass naming the file / column and the fix."""

from __future__ import annotations

import errno
import gzip
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import polars as pl
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import searcheval_frames as sef
from searcheval_frames import errors as E
from searcheval_frames.frames import ALIASES

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
word = st.text(st.sampled_from("abcdefgh0123456789-_"), min_size=1, max_size=6)


# ------------------------------------------------------------------ TREC lines
@st.composite
def result_lines(draw):
    n = draw(st.integers(2, 8))
    docs = draw(st.lists(word, min_size=n, max_size=n, unique=True))
    return [f"q1 Q0 {d} {i + 1} {float(n - i)} tag" for i, d in enumerate(docs)]


@SETTINGS
@given(result_lines(), st.data(), st.sampled_from(["\r", " ", "", "\t"]), st.booleans())
def test_joined_result_lines_are_reported_not_lost(tmp_path, lines, data, glue, gz):
    """Two results on one line (a lone CR, or a lost line break with or without a space)
    used to lose the second one without a word."""
    i = data.draw(st.integers(0, len(lines) - 2))
    joined = [*lines[:i], lines[i] + glue + lines[i + 1], *lines[i + 2:]]
    raw = ("\n".join(joined) + "\n").encode()
    path = tmp_path / ("r.run.gz" if gz else "r.run")
    path.write_bytes(gzip.compress(raw) if gz else raw)
    with pytest.raises(E.FileFormatError, match=r"carriage return|joined") as info:
        sef.read_run(path)
    assert info.value.line_no == i + 1 and str(path) in str(info.value)


@SETTINGS
@given(result_lines(), st.lists(st.sampled_from(["junk", "at", "end", "of", "lines."]),
                                min_size=1, max_size=4))
def test_text_after_the_tag_is_still_tolerated(tmp_path, lines, junk):
    """trec_eval ignores words after the tag (its own test runs have some)."""
    lines = [lines[0] + " " + " ".join(junk), *lines[1:]]
    path = tmp_path / "r.run"
    path.write_text("\n".join(lines) + "\n")
    assert sef.read_run(path).height == len(lines)


@SETTINGS
@given(result_lines(), st.sampled_from(["utf-16", "utf-16-le", "utf-16-be"]))
def test_utf16_files_get_the_utf16_hint(tmp_path, lines, encoding):
    path = tmp_path / "r.run"
    path.write_bytes(("\n".join(lines) + "\n").encode(encoding))
    with pytest.raises(E.FileFormatError, match="UTF-16") as info:
        sef.read_run(path)
    assert "latin1" not in str(info.value)


# ------------------------------------------------------------------ OSErrors
OS_ERRORS = [PermissionError(errno.EACCES, "Permission denied"),
             IsADirectoryError(errno.EISDIR, "Is a directory"),
             OSError(errno.EIO, "Input/output error"),
             OSError(errno.ENOSPC, "No space left on device"),
             OSError("disk on fire")]


@pytest.mark.parametrize("exc", OS_ERRORS, ids=lambda e: type(e).__name__ + str(e.errno))
def test_any_oserror_while_reading_is_a_file_access_error(tmp_path, monkeypatch, exc):
    path = tmp_path / "r.run"
    path.write_text("q1 Q0 d1 1 1.0 tag\n")
    real_open = open

    def failing_open(file, *a, **k):
        if str(file) == str(path):
            raise exc
        return real_open(file, *a, **k)

    monkeypatch.setattr("builtins.open", failing_open)
    monkeypatch.setattr(Path, "read_bytes", lambda self: (_ for _ in ()).throw(exc))
    with pytest.raises(E.SearchEvalError) as info:
        sef.read_run(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize("exc", OS_ERRORS, ids=lambda e: type(e).__name__ + str(e.errno))
def test_any_oserror_while_writing_names_the_target(tmp_path, monkeypatch, exc):
    import tempfile

    def failing(*a, **k):
        raise exc

    monkeypatch.setattr(tempfile, "mkstemp", failing)
    target = tmp_path / "out.qrels"
    with pytest.raises(E.FileAccessError) as info:
        sef.write_qrels({"q1": {"d1": 1}}, target)
    assert str(target) in str(info.value) and ".tmp" not in str(info.value)


def test_permission_denied_for_real(tmp_path):
    """A real EACCES: the file has mode 000 and the reader runs without the capabilities
    that let root read anything (setpriv drops CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH), so
    this runs as root in CI too."""
    import shutil
    import subprocess
    import sys

    path = tmp_path / "r.run"
    path.write_text("q1 Q0 d1 1 1.0 tag\n")
    path.chmod(0)
    code = ("import sys, searcheval_frames as sef\n"
            "from searcheval_frames.errors import FileAccessError\n"
            "try:\n    sef.read_run(sys.argv[1])\n"
            "except FileAccessError as e:\n    print('FileAccessError:', e)\n    sys.exit(3)\n")
    cmd = [sys.executable, "-c", code, str(path)]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        assert setpriv, "util-linux's setpriv is needed to drop root's read-anything capability"
        drop = "-dac_override,-dac_read_search"
        cmd = [setpriv, f"--bounding-set={drop}", f"--inh-caps={drop}", *cmd]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 3, out.stderr[-2000:]
    assert "Permission denied" in out.stdout and str(path) in out.stdout, out.stdout


def test_cli_prints_an_oserror_as_one_line(tmp_path):
    """A folder where the output file should go, and a run that is a folder: one line on
    stderr and exit code 1 (docs/cli.md), never a traceback."""
    (tmp_path / "q.txt").write_text("q1 0 d1 1\n")
    (tmp_path / "r.run").write_text("q1 Q0 d1 1 1.0 tag\n")
    (tmp_path / "out").mkdir()
    env = {**os.environ, "PYTHONPATH": str(Path(sef.__file__).parents[1])}
    for args in (["q.txt", "r.run", "-o", "out"], ["q.txt", "out"],
                 ["q.txt", "r.run", "-o", "r.run/x"]):
        res = subprocess.run([sys.executable, "-m", "searcheval_frames", *args],
                             capture_output=True, text=True, cwd=tmp_path, env=env)
        assert res.returncode == 1, (args, res.stderr)
        assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr


# ------------------------------------------------------------------ frames
QID_ALIASES = [a for a in ALIASES["query_id"] if a != "query_id"]


@SETTINGS
@given(st.lists(st.sampled_from(QID_ALIASES), min_size=2, max_size=2, unique=True),
       st.lists(st.sampled_from(["1", "2", "3"]), min_size=1, max_size=4), st.booleans())
def test_two_query_id_columns(names, qids, same):
    other = qids if same else [q + "x" for q in qids]
    run = pl.DataFrame({names[0]: qids, names[1]: other,
                        "doc_id": [f"d{i}" for i in range(len(qids))],
                        "score": [1.0] * len(qids)})
    qrels = pl.DataFrame({names[0]: qids, "doc_id": [f"d{i}" for i in range(len(qids))],
                          "relevance": [1] * len(qids)})
    if same:
        assert sef.evaluate(run, qrels, "P@1")["value"][0] == 1.0
    else:
        with pytest.raises(E.AmbiguousColumnError, match="both look like"):
            sef.evaluate(run, qrels, "P@1")
        picked = sef.evaluate(run, qrels, "P@1", columns={"query_id": names[0]})
        assert picked["value"][0] == 1.0


_REQUIRED = ["query_id", "doc_id", "score"]


#: column lists holding every required name and at least one of them twice (filtering
#: random lists for that discarded most inputs and failed Hypothesis' health check)
DUPLICATED_COLUMNS = st.tuples(
    st.lists(st.sampled_from(_REQUIRED), min_size=1, max_size=2),
    st.lists(st.just("x"), max_size=1),
).flatmap(lambda t: st.permutations(_REQUIRED + t[0] + t[1]))


@SETTINGS
@given(DUPLICATED_COLUMNS)
def test_pandas_duplicate_column_names(cols):
    assert len(set(cols)) < len(cols) and set(_REQUIRED) <= set(cols)
    df = pd.DataFrame([["1", "d1", 1.0, "a", "b", "c"][: len(cols)]], columns=cols)
    with pytest.raises(E.AmbiguousColumnError, match="duplicate column names"):
        sef.evaluate(df, {"1": {"d1": 1}}, "P@1")


@SETTINGS
@given(st.lists(st.integers(1, 50), min_size=1, max_size=5, unique=True), st.booleans())
def test_pandas_id_as_index_name_and_column(qids, same):
    df = pd.DataFrame({"query_id": [str(q) for q in qids], "doc_id": "d1", "score": 1.0})
    index = [str(q) for q in qids] if same else [str(q + 100) for q in qids]
    df.index = pd.Index(index, name="query_id")
    qrels = {str(q): {"d1": 1} for q in qids}
    if same:
        assert sef.evaluate(df, qrels, "P@1")["value"][0] == 1.0
    else:
        with pytest.raises(E.AmbiguousColumnError, match="index name and a column"):
            sef.evaluate(df, qrels, "P@1")


@SETTINGS
@given(st.integers(0, 2**62))
def test_float_ids_exact_below_2_53_refused_above(n):
    run = pd.DataFrame({"query_id": [float(n)], "doc_id": ["d1"], "score": [1.0]})
    qrels = pd.DataFrame({"query_id": [n], "doc_id": ["d1"], "relevance": [1]})
    if n < 2**53:
        assert sef.evaluate(run, qrels, "P@1")["value"][0] == 1.0
    else:
        with pytest.raises(E.SearchEvalError, match="2\\*\\*53"):
            sef.evaluate(run, qrels, "P@1")


@SETTINGS
@given(st.sampled_from(["query_id", "doc_id", "score"]), st.sampled_from(["run", "qrels"]),
       st.booleans())
def test_list_columns_from_parquet(tmp_path, col, which, as_file):
    data = {"query_id": ["1"], "doc_id": ["d1"], "score": [1.0]}
    if which == "qrels":
        data = {"query_id": ["1"], "doc_id": ["d1"], "relevance": [1]}
        col = "relevance" if col == "score" else col
    data[col] = [[data[col][0]]]
    df = pl.DataFrame(data)
    path = tmp_path / f"{which}.parquet"
    df.write_parquet(path)
    obj = str(path) if as_file else pl.read_parquet(path)
    other = {"1": {"d1": 1}} if which == "run" else {"1": {"d1": 1.0}}
    args = (obj, other) if which == "run" else (other, obj)
    with pytest.raises(E.SearchEvalError, match="explode"):
        sef.evaluate(*args, "P@1")


@SETTINGS
@given(st.sampled_from(["cast", "column", "str"]))
def test_lazyframe_whose_plan_fails(kind):
    lf = pl.LazyFrame({"query_id": ["1"], "doc_id": ["d1"], "score": ["high"]})
    lf = {"cast": lf.with_columns(pl.col("score").cast(pl.Float64)),
          "column": lf.with_columns(pl.col("nope").alias("score")),
          "str": lf.with_columns(pl.col("doc_id").str.to_datetime("%Y"))}[kind]
    with pytest.raises(E.LazyPlanError, match="collect"):
        sef.evaluate(lf, {"1": {"d1": 1}}, "P@1")


@SETTINGS
@given(st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyz_"), min_size=1, max_size=20),
       st.booleans())
def test_unknown_keyword_through_compare(name, runs_path):
    import inspect

    known = set(inspect.signature(sef.compare).parameters) | set(
        inspect.signature(sef.evaluate).parameters)
    assume(name not in known)
    run = pl.DataFrame({"run": ["a", "b"], "query_id": "1", "doc_id": "d1", "score": 1.0})
    qrels = {"1": {"d1": 1}}
    call = (lambda: sef.compare(runs=run, qrels=qrels, measures="P@1", **{name: 1})) \
        if runs_path else (lambda: sef.compare(per_query=sef.evaluate(run, qrels, "P@1",
                                                            per_query=True),
                                               **{name: 1}))
    with pytest.raises(E.UnknownOptionError, match=rf"compare\({name}=1\)"):
        call()


@SETTINGS
@given(DUPLICATED_COLUMNS)
def test_pyarrow_duplicate_column_names(cols):
    import pyarrow as pa

    assert len(set(cols)) < len(cols) and set(_REQUIRED) <= set(cols)
    values = {"query_id": "1", "doc_id": "d1", "score": 1.0, "x": "a"}
    table = pa.table([pa.array([values[c]]) for c in cols], names=cols)
    with pytest.raises(E.AmbiguousColumnError, match="duplicate column names"):
        sef.evaluate(table, {"1": {"d1": 1}}, "P@1")


def test_padded_id_prefilter_holds_every_character_the_regex_calls_whitespace():
    # the substring prefilter of padded_ids must not hide an id the regex would report
    from searcheval_frames.frames.hazards import WHITESPACE
    chars = pl.Series([chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF])
    assert set(chars.filter(chars.str.contains(r"\s")).to_list()) <= set(WHITESPACE)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from(["a", "1", " ", "\t", "\u00a0", "\u3000",
                                                  "\u2007", "\x1c", "é", "\r"]),
                        max_size=4), min_size=1, max_size=12),
       st.sampled_from(["doc_id", "query_id"]))
def test_padded_ids_reports_the_rows_the_regex_finds(ids, col):
    from searcheval_frames.frames.hazards import PADDED, padded_ids
    df = pl.DataFrame({col: ids})
    expected = df.filter(pl.col(col).str.contains(PADDED))
    if expected.height == 0:
        padded_ids(df, [col], "run")
        return
    with pytest.raises(E.PaddedIdError) as exc:
        padded_ids(df, [col], "run")
    assert f"has {expected.height} id(s)" in str(exc.value)
    assert E.format_rows(expected) in str(exc.value)
