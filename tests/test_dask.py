"""sef.dask.evaluate on a distributed.LocalCluster agrees with sef.evaluate in memory."""

from __future__ import annotations

import warnings

import polars as pl
import pytest
from test_scale import MEASURES, example, make_run

import searcheval_frames as sef
from searcheval_frames.errors import DuplicateRowsError, InvalidOptionError, InvalidScoreError

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
