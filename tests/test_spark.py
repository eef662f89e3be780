"""sef.spark.evaluate on a local Spark (local[2]) agrees with sef.evaluate in memory.

Runs in CI (``.ci/run`` installs Java when it is missing; the ``spark`` extra is in the
test install). Without Java the tests skip, unless ``SEF_REQUIRE_SPARK=1`` (set by CI).
"""

from __future__ import annotations

import math
import os
import shutil
import sys
import warnings

import polars as pl
import pytest
from subtopic_data import (
    DIV_MEASURES,
    HAND_ALPHA_NDCG_3,
    HAND_RUN,
    HAND_SUB,
    make_subtopic_qrels,
)
from test_scale import MEASURES, example, make_run

import searcheval_frames as sef
from searcheval_frames.errors import (
    DuplicateRowsError,
    InvalidOptionError,
    InvalidScoreError,
    MissingColumnError,
)

if not os.environ.get("SEF_REQUIRE_SPARK"):
    if shutil.which("java") is None:
        pytest.skip("Spark needs Java (CI installs it and sets SEF_REQUIRE_SPARK=1)",
                    allow_module_level=True)
    pytest.importorskip("pyspark")


@pytest.fixture(scope="session")
def spark():
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName("sef-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.driver.memory", "1g")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kw)


def check_same(mem: pl.DataFrame, got, per_query: bool) -> int:
    """Same rows in the same order; per-query values equal to the last bit, means to 1e-12
    (Spark sums them in another order). Returns the number of values compared."""
    got = pl.from_pandas(got.toPandas())
    assert got.columns == mem.columns
    keys = [c for c in mem.columns if c != "value"]
    assert got.select(keys).equals(mem.select(keys))
    if per_query:
        assert got.equals(mem)
    else:
        for a, b in zip(mem["value"], got["value"], strict=True):
            assert math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15), (a, b)
    return got.height


def test_bundled_example_every_value(spark):
    run, qrels = example()
    rs, qs = spark.createDataFrame(run.to_pandas()), spark.createDataFrame(qrels.to_pandas())
    n = 0
    for per_query in (True, False):
        mem = quiet(sef.evaluate, run, qrels, MEASURES, per_query=per_query)
        n += check_same(mem, quiet(sef.spark.evaluate, rs, qs, MEASURES, per_query=per_query),
                        per_query)
    assert n > 100


@pytest.mark.parametrize("options", [
    {"missing": "zero"},
    {"missing": "skip", "depth": 7, "compat": "trec_eval-9"},
    {"judged_only": True, "relevance_level": 2, "names": "as_given"},
])
def test_generated_run_with_ties_and_unjudged(spark, options):
    run, qrels = make_run(11, runs=("a", "b"), int_ids=True)
    run = run.rename({"query_id": "qid", "doc_id": "docno"})
    cols = {"query_id": "qid", "doc_id": "docno"}
    q = qrels.rename({"query_id": "qid", "doc_id": "docno"})
    # two spellings of nDCG@10: a row under each with names="as_given" (canonical: an error)
    measures = [*MEASURES, "ndcg_cut_10"] if options.get("names") == "as_given" else MEASURES
    mem = quiet(sef.evaluate, run, q, measures, per_query=True, columns=cols, **options)
    got = quiet(sef.spark.evaluate, spark.createDataFrame(run.to_pandas()),
                spark.createDataFrame(q.to_pandas()), measures, per_query=True,
                columns=cols, partitions=3, **options)
    assert check_same(mem, got, True) == mem.height


def test_warnings_as_in_memory(spark):
    run, qrels = make_run(12)
    rs, qs = spark.createDataFrame(run.to_pandas()), spark.createDataFrame(qrels.to_pandas())
    with pytest.warns(sef.errors.SearchEvalWarning) as mem:
        sef.evaluate(run, qrels, "P@10")
    with pytest.warns(sef.errors.SearchEvalWarning) as got:
        sef.spark.evaluate(rs, qs, "P@10")
    def ours(rec):
        return sorted(str(w.message) for w in rec if issubclass(w.category,
                                                                sef.errors.SearchEvalWarning))

    assert ours(mem) == ours(got) and len(ours(got)) == 2


def test_duplicate_in_one_partition_is_raised_with_the_query(spark):
    run, qrels = make_run(13)
    row = run.filter(pl.col("query_id") == "q7").head(1) if (run["query_id"] == "q7").any() \
        else run.head(1)
    bad = pl.concat([run, row])
    with pytest.raises(DuplicateRowsError) as err:
        quiet(sef.spark.evaluate, spark.createDataFrame(bad.to_pandas()),
              spark.createDataFrame(qrels.to_pandas()), ["P@10", "AP"], partitions=4)
    text = str(err.value)
    assert f"query_id='{row['query_id'][0]}'" in text and row["doc_id"][0] in text
    assert "Traceback" not in text and "at org.apache" not in text


def test_nan_score_is_raised(spark):
    run, qrels = make_run(14)
    bad = pl.concat([run, run.head(1).with_columns(pl.lit(float("nan")).alias("score"),
                                                     pl.lit("dnew").alias("doc_id"))])
    with pytest.raises(InvalidScoreError, match="dnew"):
        quiet(sef.spark.evaluate, spark.createDataFrame(bad.to_pandas()),
              spark.createDataFrame(qrels.to_pandas()), "P@10")


@pytest.mark.parametrize("bad", [{"partitions": 0}, {"per_query": "yes"}, {"missing": "all"},
                                 {"depth": 0}, {"judged_only": 1}])
def test_options_are_checked_first(spark, bad):
    run, qrels = make_run(15)
    with pytest.raises(sef.SearchEvalError):
        sef.spark.evaluate(spark.createDataFrame(run.to_pandas()),
                           spark.createDataFrame(qrels.to_pandas()), "P@10", **bad)
    if "partitions" in bad:
        with pytest.raises(InvalidOptionError, match="partitions"):
            sef.spark.evaluate(spark.createDataFrame(run.to_pandas()),
                               spark.createDataFrame(qrels.to_pandas()), "P@10", **bad)


# ----------------------------------------------------------------------------- alpha-nDCG
@pytest.mark.parametrize(("options", "subtopic", "parts"), [
    ({"missing": "zero"}, "subtopic", 3),
    ({"missing": "skip", "depth": 7, "compat": "trec_eval-9", "judged_only": True,
      "relevance_level": 2, "names": "as_given"}, "facet", 48),
])
def test_alpha_ndcg_every_value_as_in_memory(spark, options, subtopic, parts):
    # 48 groups for about 45 queries: most hold one query (a value must not depend on the
    # other queries of its frame)
    run, _ = make_run(31, n_q=30, runs=("a", "b"), int_ids=True)
    sub = make_subtopic_qrels(31, n_q=30, int_ids=True).rename({"subtopic": subtopic})
    cols = {"subtopic": "facet"} if subtopic == "facet" else None
    measures = ([*DIV_MEASURES, "alpha_ndcg@20", "ndcg_cut_10"]
                if options.get("names") == "as_given" else DIV_MEASURES)
    rs, qs = spark.createDataFrame(run.to_pandas()), spark.createDataFrame(sub.to_pandas())
    n = 0
    for per_query in (True, False):
        mem = quiet(sef.evaluate, run, sub, measures, per_query=per_query, columns=cols,
                    **options)
        n += check_same(mem, quiet(sef.spark.evaluate, rs, qs, measures, per_query=per_query,
                                   columns=cols, partitions=parts, **options), per_query)
    print(f"[spark] alpha-nDCG {options}: {n} values as in memory")


def test_alpha_ndcg_hand_example_with_an_alias(spark):
    sub = pl.concat([HAND_SUB, make_subtopic_qrels(32, n_q=10)]).rename({"subtopic": "intent"})
    run = pl.concat([HAND_RUN, make_run(32, n_q=10)[0].select("query_id", "doc_id", "score")])
    mem = quiet(sef.evaluate, run, sub, DIV_MEASURES, per_query=True)
    got = quiet(sef.spark.evaluate, spark.createDataFrame(run.to_pandas()),
                spark.createDataFrame(sub.to_pandas()), DIV_MEASURES, per_query=True,
                partitions=4)
    assert check_same(mem, got, True) == mem.height
    three = quiet(sef.spark.evaluate, spark.createDataFrame(HAND_RUN.to_pandas()),
                  spark.createDataFrame(HAND_SUB.to_pandas()), "alpha-nDCG@3").toPandas()
    assert three["value"].item() == pytest.approx(HAND_ALPHA_NDCG_3, abs=1e-15)


def test_alpha_ndcg_errors_as_in_memory(spark):
    run, qrels = make_run(33, n_q=10)
    rs = spark.createDataFrame(run.to_pandas())
    # no subtopic column: the in-memory error, before any Spark job
    with pytest.raises(MissingColumnError) as mem:
        sef.evaluate(run, qrels, ["P@5", "alpha-nDCG@20"])
    with pytest.raises(MissingColumnError) as got:
        quiet(sef.spark.evaluate, rs, spark.createDataFrame(qrels.to_pandas()),
              ["P@5", "alpha-nDCG@20"])
    assert str(got.value) == str(mem.value) and "'subtopic'" in str(got.value)
    # a (query, subtopic, doc) labelled twice: the in-memory error, raised by a worker
    sub = make_subtopic_qrels(33, n_q=10)
    bad = pl.concat([sub, sub.slice(3, 1).with_columns(pl.col("relevance") + 1)])
    with pytest.raises(DuplicateRowsError) as mem:
        sef.evaluate(run, bad, ["alpha-nDCG@10"])
    with pytest.raises(DuplicateRowsError) as got:
        quiet(sef.spark.evaluate, rs, spark.createDataFrame(bad.to_pandas()),
              ["alpha-nDCG@10"], partitions=3)
    assert str(got.value) == str(mem.value) and "labelled more than once" in str(got.value)
