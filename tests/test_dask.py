"""sef.dask.evaluate on a distributed.LocalCluster agrees with sef.evaluate in memory."""

from __future__ import annotations

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

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        yield c


def quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kw)


def ddf(frame: pl.DataFrame, n: int = 3):
    return dd.from_pandas(frame.to_pandas(), npartitions=n)


def test_bundled_example_every_value(client):
    run, qrels = example()
    for per_query in (True, False):
        mem = quiet(sef.evaluate, run, qrels, MEASURES, per_query=per_query)
        got = quiet(sef.dask.evaluate, ddf(run), ddf(qrels, 1), MEASURES, per_query=per_query)
        assert pl.from_pandas(got.compute()).equals(mem)  # means too: the same code sums them


@pytest.mark.parametrize("options", [
    {"missing": "zero"},
    {"missing": "skip", "depth": 7, "compat": "trec_eval-9"},
    {"judged_only": True, "relevance_level": 2, "names": "as_given"},
])
def test_generated_run_with_ties_and_unjudged(client, options):
    run, qrels = make_run(21, runs=("a", "b"), int_ids=True)
    run = run.rename({"query_id": "topic"})
    q = qrels.rename({"query_id": "topic"})
    # two spellings of nDCG@10: a row under each with names="as_given" (canonical: an error)
    measures = [*MEASURES, "ndcg_cut_10"] if options.get("names") == "as_given" else MEASURES
    for per_query in (True, False):
        mem = quiet(sef.evaluate, run, q, measures, per_query=per_query,
                    columns={"query_id": "topic"}, **options)
        got = quiet(sef.dask.evaluate, ddf(run, 4), q.to_pandas(), measures,
                    per_query=per_query, columns={"query_id": "topic"}, partitions=3, **options)
        assert pl.from_pandas(got.compute()).equals(mem)


def test_warnings_as_in_memory(client):
    run, qrels = make_run(22)
    with pytest.warns(sef.errors.SearchEvalWarning) as mem:
        sef.evaluate(run, qrels, "P@10")
    with pytest.warns(sef.errors.SearchEvalWarning) as got:
        sef.dask.evaluate(ddf(run), qrels.to_pandas(), "P@10")
    def ours(rec):
        return sorted(str(w.message) for w in rec if issubclass(w.category,
                                                                sef.errors.SearchEvalWarning))

    assert ours(mem) == ours(got) and len(ours(got)) == 2


def test_duplicate_in_one_partition_is_raised_with_the_query(client):
    run, qrels = make_run(23)
    row = run.tail(1)
    with pytest.raises(DuplicateRowsError) as err:
        quiet(sef.dask.evaluate, ddf(pl.concat([run, row])), qrels.to_pandas(), "P@10")
    assert f"query_id='{row['query_id'][0]}'" in str(err.value)


def test_nan_score_is_raised(client):
    run, qrels = make_run(24)
    bad = pl.concat([run, run.head(1).with_columns(pl.lit(float("nan")).alias("score"),
                                                     pl.lit("dnew").alias("doc_id"))])
    with pytest.raises(InvalidScoreError, match="dnew"):
        quiet(sef.dask.evaluate, ddf(bad), qrels.to_pandas(), "P@10")


@pytest.mark.parametrize("bad", [{"partitions": 0}, {"per_query": "yes"}, {"names": "x"}])
def test_options_are_checked_first(client, bad):
    run, qrels = make_run(25)
    err = InvalidOptionError if "names" not in bad else sef.SearchEvalError
    with pytest.raises(err):
        sef.dask.evaluate(ddf(run), qrels.to_pandas(), "P@10", **bad)


# ----------------------------------------------------------------------------- alpha-nDCG
@pytest.mark.parametrize(("options", "subtopic", "parts"), [
    ({"missing": "zero"}, "subtopic", 3),
    ({"missing": "skip", "depth": 7, "compat": "trec_eval-9"}, "intent", 40),  # an alias
    ({"judged_only": True, "relevance_level": 2, "names": "as_given"}, "facet", 2),
])
def test_alpha_ndcg_every_value_as_in_memory(client, options, subtopic, parts):
    # 40 partitions for about 45 queries: most hold one query (a value must not depend on
    # the other queries of its frame)
    run, _ = make_run(26, runs=("a", "b"), int_ids=True)
    sub = make_subtopic_qrels(26, int_ids=True).rename({"subtopic": subtopic})
    cols = {"subtopic": "facet"} if subtopic == "facet" else None
    measures = ([*DIV_MEASURES, "alpha_ndcg@20", "ndcg_cut_10"]
                if options.get("names") == "as_given" else DIV_MEASURES)
    n = 0
    for per_query in (True, False):
        mem = quiet(sef.evaluate, run, sub, measures, per_query=per_query, columns=cols,
                    **options)
        got = quiet(sef.dask.evaluate, ddf(run, 4), sub.to_pandas(), measures,
                    per_query=per_query, columns=cols, partitions=parts, **options)
        got = pl.from_pandas(got.compute())
        assert got.equals(mem)  # same rows, same order, every value to the last bit
        n += got.height
    alpha = mem.filter(pl.col("measure").str.starts_with("alpha"))
    assert alpha.height >= 3 and alpha["value"].n_unique() > 1
    print(f"[dask] alpha-nDCG {options}: {n} values equal to in memory")


def test_alpha_ndcg_hand_example_and_subtopic_qrels_as_dask_frame(client):
    sub = pl.concat([HAND_SUB, make_subtopic_qrels(27)])
    run = pl.concat([HAND_RUN.with_columns(pl.lit("a").alias("run")),
                     make_run(27)[0].select("query_id", "doc_id", "score", "run")])
    mem = quiet(sef.evaluate, run, sub, DIV_MEASURES, per_query=True)
    got = pl.from_pandas(quiet(sef.dask.evaluate, ddf(run), ddf(sub, 2), DIV_MEASURES,
                               per_query=True, partitions=5).compute())
    assert got.equals(mem)
    value = got.filter(pl.col("query_id") == "q1", pl.col("measure") == "alpha-nDCG@20")
    three = quiet(sef.dask.evaluate, ddf(HAND_RUN, 1), HAND_SUB.to_pandas(), "alpha-nDCG@3")
    assert three.compute()["value"].item() == pytest.approx(HAND_ALPHA_NDCG_3, abs=1e-15)
    assert 0 < value["value"].item() < 1


def test_alpha_ndcg_without_subtopics_raises_the_in_memory_error(client):
    run, qrels = make_run(28)
    with pytest.raises(MissingColumnError) as mem:
        sef.evaluate(run, qrels, ["P@5", "alpha-nDCG@20"])
    with pytest.raises(MissingColumnError) as got:
        quiet(sef.dask.evaluate, ddf(run), qrels.to_pandas(), ["P@5", "alpha-nDCG@20"])
    assert str(got.value) == str(mem.value) and "'subtopic'" in str(got.value)
    # columns= naming a column that is not there: the in-memory error too
    sub = make_subtopic_qrels(28)
    with pytest.raises(MissingColumnError) as mem:
        sef.evaluate(run, sub, "alpha-nDCG@5", columns={"subtopic": "aspect"})
    with pytest.raises(MissingColumnError) as got:
        quiet(sef.dask.evaluate, ddf(run), sub.to_pandas(), "alpha-nDCG@5",
              columns={"subtopic": "aspect"})
    assert str(got.value) == str(mem.value)


def test_subtopic_duplicates_raise_the_in_memory_error(client):
    run, _ = make_run(29)
    sub = make_subtopic_qrels(29)
    bad = pl.concat([sub, sub.slice(7, 1).with_columns(pl.col("relevance") + 1)])
    with pytest.raises(DuplicateRowsError) as mem:
        sef.evaluate(run, bad, ["alpha-nDCG@10"])
    with pytest.raises(DuplicateRowsError) as got:
        quiet(sef.dask.evaluate, ddf(run), bad.to_pandas(), ["alpha-nDCG@10"])
    assert str(got.value) == str(mem.value) and "labelled more than once" in str(got.value)


def test_subtopic_column_is_ignored_unless_a_diversity_measure_asks(client):
    run, _ = make_run(30)
    sub = make_subtopic_qrels(30)
    # one label per (query, doc) without a diversity measure: several subtopics are duplicates
    with pytest.raises(DuplicateRowsError):
        sef.evaluate(run, sub, ["nDCG@10"])
    with pytest.raises(DuplicateRowsError):
        quiet(sef.dask.evaluate, ddf(run), sub.to_pandas(), ["nDCG@10"])
    flat = sub.unique(["query_id", "doc_id"], keep="first", maintain_order=True)
    mem = quiet(sef.evaluate, run, flat, ["nDCG@10", "P@5"], per_query=True)
    got = quiet(sef.dask.evaluate, ddf(run), flat.to_pandas(), ["nDCG@10", "P@5"],
                per_query=True)
    assert pl.from_pandas(got.compute()).equals(mem)


@pytest.mark.shared
def test_alpha_ndcg_trec_dl_runs_as_in_memory(client):
    # real runs, subtopics made from the graded labels (as the pyndeval oracle test does)
    from test_oracle_ir_measures import dl, synthetic_subtopics

    run, qrels = dl("19")
    run = run.filter(pl.col("run").is_in(["bm25", "tasb"]))
    sub = synthetic_subtopics(qrels)
    measures = ["alpha-nDCG@20", "alpha-nDCG(rel=2)@10", "nDCG@10", "P@5"]
    mem = quiet(sef.evaluate, run, sub, measures, per_query=True)
    got = quiet(sef.dask.evaluate, ddf(run, 4), sub.to_pandas(), measures, per_query=True,
                partitions=8)
    assert pl.from_pandas(got.compute()).equals(mem)
    assert mem.height == 2 * 43 * len(measures)
    print(f"[dask] alpha-nDCG DL19: {mem.height} per-query values equal to in memory")
