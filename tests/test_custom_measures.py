"""Custom measures (``@sef.measure``): a custom P@k equals the built-in everywhere.

The oracle is the built-in ``P@k`` (itself checked against trec_eval, pytrec_eval and
ir_measures elsewhere) and, for the parameter and ``num_rel`` plumbing, R@k and a
slow reference written here.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import searcheval_frames as sef
from searcheval_frames.errors import UnknownMeasureError

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "data" / "example"
RUNS = [str(EXAMPLE / "runs" / f"{n}.run") for n in ("bm25", "bm25-rerank", "lsi", "tfidf")]
QRELS = str(EXAMPLE / "qrels.txt")


@sef.measure("CustP", cutoff=True, formula="|rel ∩ top-k| / k")
def cust_p(rows):
    # true_divide: the built-in P@k's quotient to the last bit (polars' `/ k` is `* (1/k)`)
    return sef.true_divide(rows.relevant.filter(rows.rank <= rows.k).sum(), rows.k)


@sef.measure("CustPpy", cutoff=True, python=True)
def cust_p_python(rows):
    return float(np.sum(rows.relevant[rows.rank <= rows.k])) / rows.k


@sef.measure("CustR", cutoff="optional", params={"scale": 1.0})
def cust_r(rows):
    top = rows.relevant if rows.k is None else rows.relevant.filter(rows.rank <= rows.k)
    return top.sum() / rows.num_rel * rows.scale


PAIRS = {"CustP@5": "P@5", "CustP@10": "P@10", "CustPpy@5": "P@5",
         "CustP(rel=2)@5": "P(rel=2)@5", "CustR@10": "R@10", "CustR": "R"}


def quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kw)


def same_columns(wide: pl.DataFrame, pairs: dict[str, str]) -> int:
    n = 0
    for mine, builtin in pairs.items():
        a, b = wide[mine].to_numpy(), wide[builtin].to_numpy()
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12, err_msg=mine)
        n += len(a)
    return n


def test_names_parse_back_and_defaults_drop():
    assert sef.parse_measure("CustR(scale=1.0)@10").name == "CustR@10"
    assert sef.parse_measure("custr(scale=2)@10").name == "CustR(scale=2.0)@10"
    assert sef.parse_measure("CustR(scale=2.0)@10") == sef.parse_measure("CustR(scale=2)@10")
    assert sef.parse_measure("CustP(rel=2)@5").param("rel") == 2
    with pytest.raises(UnknownMeasureError, match="needs a cutoff"):
        sef.parse_measure("CustP")
    with pytest.raises(UnknownMeasureError, match="no parameter 'q'"):
        sef.parse_measure("CustR(q=1)")
    assert "CustP" in sef.list_measures()["family"].to_list()


def test_bad_registrations_say_why():
    with pytest.raises(UnknownMeasureError, match="already the built-in"):
        sef.measure("P", cutoff=True)
    with pytest.raises(UnknownMeasureError, match="letter followed by"):
        sef.measure("My_P")
    with pytest.raises(UnknownMeasureError, match=r"^measure\(params=\{'rel': 1\}\): must leave out 'rel'"):
        sef.measure("MyQ", params={"rel": 1})
    with pytest.raises(UnknownMeasureError, match="is not a custom measure"):
        sef.unregister_measure("nDCG")


def test_reregistering_replaces_and_unregister_removes():
    @sef.measure("Tmp")
    def one(rows):
        return rows.relevant.sum() * 0 + 1.0

    @sef.measure("Tmp")
    def two(rows):
        return rows.relevant.sum() * 0 + 2.0

    res = sef.evaluate(RUNS[0], QRELS, "Tmp")
    assert res["value"].to_list() == [2.0]
    sef.unregister_measure("Tmp")
    with pytest.raises(UnknownMeasureError):
        sef.parse_measure("Tmp")


def test_evaluate_per_query_equals_builtin_polars_and_pandas():
    ms = [*PAIRS, *set(PAIRS.values())]
    wide = sef.pivot(quiet(sef.evaluate, RUNS, QRELS, ms, per_query=True))
    assert same_columns(wide, PAIRS) == 6 * 4 * 38
    run = sef.read_run(RUNS[0]).to_pandas()
    res = quiet(sef.evaluate, run, sef.read_qrels(QRELS).to_pandas(), ["CustP@5", "P@5"])
    assert isinstance(res, pd.DataFrame)
    assert res["value"].iloc[0] == res["value"].iloc[1]


def test_as_given_spelling_and_trec9():
    res = quiet(sef.evaluate, RUNS[:1], QRELS, ["custp@5", "P_5"], names="as_given",
                compat="trec_eval-9", depth=3, judged_only=True)
    assert res["measure"].to_list() == ["custp@5", "P_5"]
    assert res["value"][0] == res["value"][1]


@st.composite
def run_and_qrels(draw):
    n_q = draw(st.integers(1, 5))
    rows, labels = [], []
    for q in range(n_q):
        docs = draw(st.lists(st.integers(0, 15), min_size=0, max_size=12, unique=True))
        scores = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.5]),
                               min_size=len(docs), max_size=len(docs)))
        rows += [(f"q{q}", f"d{d}", s) for d, s in zip(docs, scores, strict=True)]
        judged = draw(st.lists(st.integers(0, 15), min_size=1, max_size=10, unique=True))
        labels += [(f"q{q}", f"d{d}", draw(st.integers(-1, 3))) for d in judged]
    run = pl.DataFrame(rows, schema=["query_id", "doc_id", "score"], orient="row")
    qrels = pl.DataFrame(labels, schema=["query_id", "doc_id", "relevance"], orient="row")
    return run, qrels


@settings(max_examples=60, deadline=None)
@given(run_and_qrels(), st.sampled_from([1, 2]), st.sampled_from([1, 3, 7]))
def test_generated_runs_equal_builtin(data, level, k):
    run, qrels = data
    pairs = {f"CustP@{k}": f"P@{k}", f"CustPpy@{k}": f"P@{k}", f"CustR@{k}": f"R@{k}"}
    if run.height == 0:
        return
    ms = [*pairs, *set(pairs.values())]
    wide = sef.pivot(quiet(sef.evaluate, run, qrels, ms, per_query=True,
                           relevance_level=level))
    same_columns(wide, pairs)


def test_compare_equals_builtin():
    # t intervals: the bootstrap's random stream is seeded by the measure's name
    a, b = (quiet(sef.compare, runs=RUNS, qrels=QRELS, measures=["P@5", m], baseline="bm25",
                  ci_method="t").frame.filter(pl.col("measure") == m).drop("measure")
            for m in ("CustP@10", "P@10"))
    num = [c for c, t in a.schema.items() if t.is_numeric()]
    assert len(num) > 5 and a.height == 3
    np.testing.assert_allclose(a.select(num).to_numpy().astype(float),
                               b.select(num).to_numpy().astype(float), atol=1e-12)


def test_leaderboard_equals_builtin():
    """The same seed, the same scores: the custom P@10's leaderboard is the built-in's."""
    a, b = (quiet(sef.leaderboard, runs=RUNS, qrels=QRELS, measure=m, seed=3,
                  n_resamples=2_000, progress=False) for m in ("CustP@10", "P@10"))
    fa, fb = a.frame, b.frame
    assert fa.height == 4 and fa["run"].to_list() == fb["run"].to_list()
    # p_best's query bootstrap draws from a stream keyed by the measure's name (as
    # compare's bootstrap does), so it differs within Monte Carlo error only
    num = [c for c, t in fa.schema.items() if t.is_numeric() and c != "p_best"]
    assert {"mean", "rank", "rank_low", "rank_high"} <= set(num)
    np.testing.assert_allclose(fa["p_best"].to_numpy(), fb["p_best"].to_numpy(), atol=0.02)
    np.testing.assert_allclose(fa.select(num).to_numpy().astype(float),
                               fb.select(num).to_numpy().astype(float), atol=1e-12)
    assert fa["group"].to_list() == fb["group"].to_list()
    np.testing.assert_allclose(a.pairs["p_value"].to_numpy(), b.pairs["p_value"].to_numpy())


def test_report_equals_builtin():
    a, b = (quiet(sef.report, RUNS[:2], QRELS, baseline="bm25", measures=["P@5", m], figures=False,
                  ci_method="t") for m in ("CustP@10", "P@10"))
    fa, fb = (r.frame.select(pl.selectors.numeric()) for r in (a, b))
    assert fa.width > 5
    np.testing.assert_allclose(fa.to_numpy().astype(float), fb.to_numpy().astype(float),
                               atol=1e-12)
    assert a.verdicts[0].replace("CustP@10", "P@10") == b.verdicts[0]


def test_fusion_optimisation_equals_builtin():
    runs = {Path(p).stem: sef.read_run(p) for p in RUNS[:2]}
    a = quiet(sef.optimize_fusion, runs, QRELS, measure="CustP@10", method="rrf")
    b = quiet(sef.optimize_fusion, runs, QRELS, measure="P@10", method="rrf")
    assert a.params == b.params and a.train_score == b.train_score
    np.testing.assert_allclose(a.trials["score"] if "score" in a.trials.columns
                               else a.trials[:, -1], b.trials["score"] if "score" in
                               b.trials.columns else b.trials[:, -1], atol=1e-12)


def test_cli_entry_point_group(monkeypatch, capsys):
    from importlib.metadata import EntryPoint

    from searcheval_frames.cli import plugins
    from searcheval_frames.cli.main import main as cli_main

    loaded = []

    class Fake(EntryPoint):
        def load(self):
            @sef.measure("EntryP", cutoff=True)
            def entry_p(rows):
                return sef.true_divide(rows.relevant.filter(rows.rank <= rows.k).sum(), rows.k)

            loaded.append(self.name)
            return entry_p

    ep = Fake("mine", "my_pkg.measures", plugins.ENTRY_POINT_GROUP)
    monkeypatch.setattr(plugins, "entry_points",
                        lambda group: [ep] if group == plugins.ENTRY_POINT_GROUP else [])
    code = cli_main([QRELS, RUNS[0], "-m", "EntryP@5", "-m", "P@5", "-f", "csv"])
    out = capsys.readouterr().out
    assert code == 0 and loaded == ["mine"]
    table = pl.read_csv(out.encode())
    assert table["EntryP@5"].to_list() == table["P@5"].to_list()
    sef.unregister_measure("EntryP")


def test_cli_plugin(tmp_path):
    plugin = tmp_path / "my_measures.py"
    plugin.write_text(textwrap.dedent("""
        import searcheval_frames as sef

        @sef.measure("PlugP", cutoff=True)
        def plug_p(rows):
            return sef.true_divide(rows.relevant.filter(rows.rank <= rows.k).sum(), rows.k)
    """))
    res = subprocess.run([sys.executable, "-m", "searcheval_frames", "--plugin", str(plugin),
                          QRELS, *RUNS, "-m", "PlugP@5", "-m", "P@5", "-f", "csv"],
                         capture_output=True, text=True, cwd=REPO, timeout=120)
    assert res.returncode == 0, res.stderr
    table = pl.read_csv(res.stdout.encode())
    assert table["PlugP@5"].to_list() == table["P@5"].to_list()
    assert table.height == 4
    bad = subprocess.run([sys.executable, "-m", "searcheval_frames", "--plugin",
                          str(tmp_path / "nope.py"), QRELS, RUNS[0]],
                         capture_output=True, text=True, cwd=REPO, timeout=120)
    assert bad.returncode == 1 and "no such file" in bad.stderr


def test_out_of_core_scan_parquet(tmp_path, monkeypatch):
    from searcheval_frames.core import partitioned

    monkeypatch.setattr(partitioned, "ROWS_PER_PART", 500)  # several parts of query ids
    path = tmp_path / "runs.parquet"
    sef.read_run(RUNS).write_parquet(path)
    ms = ["CustP@5", "P@5", "CustPpy@5", "CustR@10", "R@10"]
    parts = []
    real_map = partitioned.RunScan.map

    def spy(self, fn, qrels):
        out = real_map(self, fn, qrels)
        parts.append(len(out))
        return out

    monkeypatch.setattr(partitioned.RunScan, "map", spy)
    lazy = quiet(sef.evaluate, pl.scan_parquet(path), QRELS, ms, per_query=True)
    assert parts and parts[0] > 3  # really evaluated in parts
    wide = sef.pivot(lazy.collect() if isinstance(lazy, pl.LazyFrame) else lazy)
    assert same_columns(wide, {"CustP@5": "P@5", "CustPpy@5": "P@5", "CustR@10": "R@10"}) \
        == 3 * 4 * 38
    eager = sef.pivot(quiet(sef.evaluate, sef.read_run(RUNS), QRELS, ms, per_query=True))
    assert wide.sort("run", "query_id").equals(eager.sort("run", "query_id"))


def test_dask_equals_builtin():
    distributed = pytest.importorskip("distributed")
    dd = pytest.importorskip("dask.dataframe")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        run = dd.from_pandas(sef.read_run(RUNS).to_pandas(), npartitions=3)
        qrels = dd.from_pandas(sef.read_qrels(QRELS).to_pandas(), npartitions=2)
        res = quiet(sef.dask.evaluate, run, qrels, ["CustP@5", "P@5", "CustPpy@5"],
                    per_query=True)
    wide = sef.pivot(pl.from_pandas(res if isinstance(res, pd.DataFrame) else res.compute()))
    assert same_columns(wide, {"CustP@5": "P@5", "CustPpy@5": "P@5"}) == 2 * 4 * 38


def test_spark_ships_the_definitions_to_workers(monkeypatch):
    import os
    import shutil

    if shutil.which("java") is None and not os.environ.get("SEF_REQUIRE_SPARK"):
        pytest.skip("Spark needs Java (CI installs it and sets SEF_REQUIRE_SPARK=1)")
    pytest.importorskip("pyspark")
    monkeypatch.setenv("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[2]").appName("sef-custom")
             .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "4")
             .config("spark.driver.memory", "1g").getOrCreate())
    try:
        run = spark.createDataFrame(sef.read_run(RUNS).to_pandas())
        qrels = spark.createDataFrame(sef.read_qrels(QRELS).to_pandas())
        res = quiet(sef.spark.evaluate, run, qrels, ["CustP@5", "P@5", "CustPpy@5",
                                                      "CustR(scale=2)@10", "R@10"],
                    per_query=True)
        long = pl.from_pandas(res.toPandas())
    finally:
        spark.stop()
    wide = sef.pivot(long)
    assert same_columns(wide, {"CustP@5": "P@5", "CustPpy@5": "P@5"}) == 2 * 4 * 38
    np.testing.assert_allclose(wide["CustR(scale=2.0)@10"], 2 * wide["R@10"], atol=1e-12)
