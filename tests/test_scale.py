"""Out of core on one machine: a lazy or Parquet run evaluated by query-id ranges
gives exactly the in-memory result; and runs read by ``read_run`` are not checked twice."""

from __future__ import annotations

import gc
import importlib
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from conftest import DATA
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import searcheval_frames as sef
from searcheval_frames.core import partitioned
from searcheval_frames.errors import (
    DuplicateRowsError,
    FileFormatError,
    IdMismatchError,
    InvalidScoreError,
    SearchEvalError,
    SearchEvalWarning,
)
from searcheval_frames.frames import checked_blocks, mark_checked

inputs_mod = importlib.import_module("searcheval_frames.core._inputs")

MEASURES = ["P@10", "R@100", "RR", "nDCG@10", "AP", "Judged@10", "GMAP", "NumQ", "NumRel",
            "NumRet", "NumRelRet", "Bpref", "P(rel=2)@5", "nDCG", "DCG@10", "DCG(gain=exp)",
            "Judged", "INST(T=2,max_rel=2)", "INSQ", "BPM(T=1)@5", "SDCG(max_rel=2)@10"]


def make_run(seed: int, n_q: int = 40, depth: int = 30, runs: tuple[str, ...] = ("a",),
             int_ids: bool = False) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Runs with tied scores and unjudged documents, labels -1..2, queries missing on
    either side (some judged queries have no results, some results no labels)."""
    rng = np.random.default_rng(seed)
    parts = []
    for name in runs:
        qs = rng.choice(n_q + 10, size=n_q, replace=False)
        q = np.repeat(qs, depth)
        d = rng.integers(0, 3 * depth, q.size)
        parts.append(pl.DataFrame({"run": name, "qid": q, "doc": d,
                                   "score": rng.integers(0, 8, q.size).astype(float)}))
    run = pl.concat(parts).unique(["run", "qid", "doc"], maintain_order=True)
    n_rel = 12 * n_q
    qrels = pl.DataFrame({"qid": rng.integers(5, n_q + 20, n_rel),
                          "doc": rng.integers(0, 3 * depth, n_rel),
                          "relevance": rng.integers(-1, 3, n_rel)}).unique(["qid", "doc"])
    if not int_ids:
        run = run.with_columns(pl.format("q{}", "qid").alias("qid"), pl.format("d{}", "doc"))
        qrels = qrels.with_columns(pl.format("q{}", "qid").alias("qid"), pl.format("d{}", "doc"))
    cols = {"query_id": "qid", "doc_id": "doc"}
    return run.rename({v: k for k, v in cols.items()}), qrels.rename(
        {v: k for k, v in cols.items()})


def example() -> tuple[pl.DataFrame, pl.DataFrame]:
    """The bundled example: four runs (named after their files) and graded qrels."""
    runs = sorted((DATA / "example" / "runs").iterdir())
    run = sef.read_run([str(p) for p in runs], name_from="file")
    return run, sef.read_qrels(DATA / "example" / "qrels.txt")


def quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kw)


@pytest.fixture
def small_parts(monkeypatch):
    monkeypatch.setattr(partitioned, "ROWS_PER_PART", 150)


def assert_same(a: pl.DataFrame, b: pl.DataFrame) -> None:
    """The same rows in the same order, values equal to 1e-12.

    Nearly always equal to the last bit; but polars may sum one query's terms (AP's
    precisions) in another order when a part holds that query alone, which moves the
    last bit (hypothesis found seed=1327, n_q=24, depth=11, one row per part: 5.6e-17).
    """
    keys = [c for c in a.columns if c != "value"]
    assert a.columns == b.columns and a.height == b.height
    assert a.select(keys).equals(b.select(keys))
    far = a.with_columns(b["value"].alias("other")).filter(
        ((pl.col("value") - pl.col("other")).abs() > 1e-12)
        | (pl.col("value").is_nan() != pl.col("other").is_nan()))
    assert far.height == 0, far


@pytest.mark.parametrize("missing", ["zero", "skip"])
@pytest.mark.parametrize("options", [{}, {"depth": 7}, {"judged_only": True},
                                     {"compat": "trec_eval-9", "relevance_level": 2}])
def test_parquet_parts_equal_in_memory(tmp_path, small_parts, missing, options):
    run, qrels = make_run(1, runs=("a", "b"))
    path = tmp_path / "run.parquet"
    run.write_parquet(path, row_group_size=100)
    scan = partitioned.scan_run(path)
    assert scan is not None and len(scan.bounds) >= 5  # really several parts
    for per_query in (True, False):
        mem = quiet(sef.evaluate, run, qrels, MEASURES, per_query=per_query, missing=missing,
                    **options)
        part = quiet(sef.evaluate, path, qrels, MEASURES, per_query=per_query,
                     missing=missing, **options)
        lazy = quiet(sef.evaluate, pl.scan_parquet(path), qrels, MEASURES,
                     per_query=per_query, missing=missing, **options)
        assert isinstance(lazy, pl.LazyFrame)
        assert_same(mem, part)
        assert_same(mem, lazy.collect())


def test_scan_csv_integer_ids_and_columns(tmp_path, small_parts):
    run, qrels = make_run(2, int_ids=True)
    run = run.drop("run").rename({"query_id": "topic", "doc_id": "docno", "score": "sim"})
    path = tmp_path / "run.csv"
    run.write_csv(path)
    cols = {"query_id": "topic", "doc_id": "docno", "score": "sim"}
    mem = quiet(sef.evaluate, run, qrels.rename({"query_id": "topic", "doc_id": "docno"}),
                MEASURES, per_query=True, columns=cols)
    lazy = quiet(sef.evaluate, pl.scan_csv(path), qrels.rename(
        {"query_id": "topic", "doc_id": "docno"}), MEASURES, per_query=True, columns=cols)
    assert partitioned.scan_run(pl.scan_csv(path), cols) is not None
    assert_same(mem, lazy.collect())


def test_parquet_glob_and_file_name(tmp_path, small_parts):
    run, qrels = make_run(3)
    run = run.drop("run")
    qids = sorted(run["query_id"].unique())
    for i, chunk in enumerate((qids[:15], qids[15:])):
        run.filter(pl.col("query_id").is_in(chunk)).write_parquet(tmp_path / f"part{i}.parquet")
    mem = quiet(sef.evaluate, run, qrels, MEASURES)
    assert_same(mem, quiet(sef.evaluate, str(tmp_path / "part*.parquet"), qrels, MEASURES))
    # one file without a run column is named after the file, as read_run names it
    run.write_parquet(tmp_path / "bm25.parquet")
    res = quiet(sef.evaluate, tmp_path / "bm25.parquet", qrels, "P@10")
    assert res["run"].to_list() == ["bm25"]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow,
          HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), n_q=st.integers(1, 25), depth=st.integers(1, 20),
       rows=st.integers(1, 200), missing=st.sampled_from(["zero", "skip"]))
def test_property_any_split_gives_the_same_values(tmp_path_factory, seed, n_q, depth, rows,
                                                  missing):
    run, qrels = make_run(seed, n_q=n_q, depth=depth)
    if not run.join(qrels, on="query_id", how="semi").height:
        return
    path = tmp_path_factory.mktemp("p") / "run.parquet"
    run.write_parquet(path)
    mem = quiet(sef.evaluate, run, qrels, MEASURES, per_query=True, missing=missing)
    old = partitioned.ROWS_PER_PART
    try:
        partitioned.ROWS_PER_PART = rows
        part = quiet(sef.evaluate, pl.scan_parquet(path), qrels, MEASURES, per_query=True,
                     missing=missing)
    finally:
        partitioned.ROWS_PER_PART = old
    assert_same(mem, part.collect())


def test_warnings_are_those_of_the_whole_run(tmp_path, small_parts):
    run, qrels = make_run(4, runs=("a", "b"))
    path = tmp_path / "run.parquet"
    run.write_parquet(path)
    with pytest.warns(SearchEvalWarning) as mem:
        sef.evaluate(run, qrels, "P@10")
    with pytest.warns(SearchEvalWarning) as part:
        sef.evaluate(path, qrels, "P@10")
    assert [str(w.message) for w in mem] == [str(w.message) for w in part]
    assert all(w.filename == __file__ for w in part)  # warnings point at the caller


def test_no_common_query(tmp_path, small_parts):
    run, qrels = make_run(5)
    path = tmp_path / "run.parquet"
    run.write_parquet(path)
    with pytest.raises(IdMismatchError, match="no query id in common"):
        sef.evaluate(path, qrels.with_columns(pl.format("x{}", "query_id")), "P@10")


def _one_bad_part(tmp_path, bad: pl.DataFrame) -> Path:
    run, _ = make_run(6)
    path = tmp_path / "bad.parquet"
    pl.concat([run, bad], how="vertical_relaxed").sort("query_id").write_parquet(path)
    return path


def test_duplicate_in_one_part_names_query_and_rows(tmp_path, small_parts):
    run, qrels = make_run(6)
    row = run.filter(pl.col("query_id") == run["query_id"].max()).head(1)
    path = _one_bad_part(tmp_path, row)
    scan = partitioned.scan_run(path)
    assert scan is not None and len(scan.bounds) >= 3
    with pytest.warns(SearchEvalWarning, match="no relevance labels|no results"), \
            pytest.raises(DuplicateRowsError) as err:  # (a part before the bad one warns)
        sef.evaluate(path, qrels, "P@10")
    text = str(err.value)
    assert row["query_id"][0] in text and row["doc_id"][0] in text and "appear more than once" in text


def test_nan_score_in_one_part(tmp_path, small_parts):
    run, qrels = make_run(6)
    row = run.filter(pl.col("query_id") == run["query_id"].min()).head(1).with_columns(
        pl.lit(float("nan")).alias("score"), pl.lit("new-doc").alias("doc_id"))
    path = _one_bad_part(tmp_path, row)
    with pytest.warns(SearchEvalWarning, match="no relevance labels|no results"), \
            pytest.raises(InvalidScoreError, match="new-doc"):  # (another part warns first)
        sef.evaluate(path, qrels, "P@10")


def test_missing_query_id(tmp_path, small_parts):
    run, qrels = make_run(6)
    path = tmp_path / "null.parquet"
    pl.concat([run, run.head(1).with_columns(pl.lit(None, pl.String).alias("query_id"))]
              ).write_parquet(path)
    with pytest.raises(SearchEvalError, match="missing id"):
        sef.evaluate(path, qrels, "P@10")


def test_small_lazy_runs_stay_in_memory(tmp_path):
    run, qrels = make_run(7)
    assert partitioned.scan_run(run.lazy()) is None
    assert partitioned.scan_run(run) is None
    assert partitioned.scan_run("no-such-file.parquet") is None
    path = tmp_path / "r.parquet"
    run.write_parquet(path)
    # one small file: read by the file reader, as sef.read_run reads it
    assert partitioned.scan_run(path) is None
    df, blocks = inputs_mod.run_from(path, qrels)
    assert df.equals(run.select("run", "query_id", "doc_id", "score"))
    assert blocks is not None and blocks.keys.equals(run.select("run", "query_id").unique(
        maintain_order=True))
    assert partitioned.scan_run(str(tmp_path / "*.parquet")) is not None  # a glob: scanned


def test_small_parquet_file_as_read_run_reads_it(tmp_path):
    run, qrels = make_run(16)
    run = run.drop("run")
    path = tmp_path / "dense.parquet"
    run.write_parquet(path)
    assert_same(quiet(sef.evaluate, sef.read_run(path), qrels, MEASURES, per_query=True),
                quiet(sef.evaluate, path, qrels, MEASURES, per_query=True))
    bad = tmp_path / "bad.parquet"
    pl.concat([run, run.head(1)]).write_parquet(bad)
    # the same error both ways: the file, the row and the document
    for read in (sef.read_run, lambda p: sef.evaluate(p, qrels, "P@10")):
        with pytest.raises(FileFormatError, match=rf"bad\.parquet:{run.height + 1}: .*"
                           rf"duplicate document: document {run['doc_id'][0]} appears again"):
            read(bad)


def test_parts_cover_the_queries_once(tmp_path, small_parts):
    run, qrels = make_run(8, runs=("a", "b"))
    path = tmp_path / "r.parquet"
    run.write_parquet(path)
    scan = partitioned.scan_run(path)
    seen = scan.map(lambda part, blocks, labels: part.select("run", "query_id", "doc_id"), qrels)
    assert len(seen) == len(scan.bounds) + 1
    assert max(s.height for s in seen) < 3 * partitioned.ROWS_PER_PART
    allrows = pl.concat(seen)
    assert allrows.height == run.height and not allrows.is_duplicated().any()
    assert scan.runs == ["a", "b"]


# ----------------------------------------------------------- read_run, then evaluate
def test_read_run_frames_are_not_checked_twice(tmp_path, monkeypatch):
    run, qrels = make_run(9)
    path = tmp_path / "r.run"
    sef.write_run(run.sort("query_id", "score", descending=[False, True]), path)
    frame = sef.read_run(path)
    known, _ = checked_blocks(frame)
    assert known  # (blocks too when the batched reader read it; small files go another way)
    from searcheval_frames.frames import canonical

    def boom(*a, **k):
        raise AssertionError("validated again")

    monkeypatch.setattr(canonical, "validate_run", boom)
    two = quiet(sef.evaluate, frame, qrels, MEASURES, per_query=True)
    monkeypatch.undo()
    one = quiet(sef.evaluate, str(path), qrels, MEASURES, per_query=True)
    assert_same(one, two)


def test_derived_frames_are_checked_again(tmp_path):
    run, _ = make_run(10)
    path = tmp_path / "r.run"
    sef.write_run(run, path)
    frame = sef.read_run(path)
    doubled = pl.concat([frame, frame.head(2)])
    assert not checked_blocks(doubled)[0] and not checked_blocks(frame.head(5))[0]
    with pytest.raises(DuplicateRowsError):
        sef.evaluate(doubled, {"x": {"y": 1}}, "P@1")


def test_registry_entries_die_with_their_frames():
    from searcheval_frames.frames import checked

    df = pl.DataFrame({"run": "r", "query_id": "1", "doc_id": ["a"], "score": [1.0]})
    mark_checked(df)
    key = id(df)
    assert key in checked._CHECKED
    del df
    gc.collect()
    assert key not in checked._CHECKED


def test_only_canonical_frames_are_recorded():
    bad = pl.DataFrame({"query_id": ["1"], "doc_id": ["a"], "score": [1.0]})  # no run column
    assert mark_checked(bad) is bad and not checked_blocks(bad)[0]
    ints = pl.DataFrame({"run": "r", "query_id": [1], "doc_id": ["a"], "score": [1.0]})
    assert not checked_blocks(mark_checked(ints))[0]
    assert mark_checked("not a frame") == "not a frame"


def test_spark_and_dask_modules_load_lazily():
    import subprocess
    import sys

    code = ("import sys, searcheval_frames as sef; m = (sef.spark, sef.dask); "
            "print(m[0].__name__, m[1].__name__, "
            "any(k.split('.')[0] in ('pyspark', 'dask', 'distributed') for k in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["searcheval_frames.scale.spark", "searcheval_frames.scale.dask", "False"]
