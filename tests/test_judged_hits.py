"""The judged rows of a run found by 64-bit pair hashes (core/_judged.py) against the join
on the id strings it replaces (issue #25): equal on random runs, and still equal when the
hash is made to collide for every document of a query (the ids then decide)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from searcheval_frames.core import _judged
from searcheval_frames.core._judged import judged_hits
from searcheval_frames.core.ranking import rank_judged

KEYS = ["run", "query_id"]


def _by_join(run: pl.DataFrame, qrels: pl.DataFrame) -> pl.DataFrame:
    """The reference: the run's rows with their row numbers, joined on the two ids."""
    return (run.select(*KEYS, "doc_id").with_row_index("_p")
            .with_columns(pl.col("_p").cast(pl.Int64))
            .join(qrels, on=["query_id", "doc_id"], how="inner", maintain_order="left")
            .select(*KEYS, "doc_id", "_p", *[c for c in qrels.columns
                                             if c not in ("query_id", "doc_id")]))


def _data(seed: int, n_q: int = 6, docs: int = 30) -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = np.random.default_rng(seed)
    rows, labels = [], []
    for r in ("a", "b"):
        for q in range(n_q):
            for d in rng.choice(docs, size=int(rng.integers(1, docs)), replace=False):
                rows.append((r, f"q{q}", f"d{d}", float(rng.normal())))
    for q in range(n_q + 1):  # (a query no run retrieved, labels of unretrieved docs)
        for d in rng.choice(docs + 5, size=int(rng.integers(0, 12)), replace=False):
            labels.append((f"q{q}", f"d{d}", int(rng.integers(0, 3))))
    run = pl.DataFrame(rows, schema=["run", "query_id", "doc_id", "score"], orient="row")
    qrels = pl.DataFrame(labels, schema=["query_id", "doc_id", "relevance"], orient="row",
                         schema_overrides={"relevance": pl.Int64})
    return run, qrels


@pytest.mark.parametrize("seed", range(8))
def test_hits_equal_the_join_on_the_ids(seed):
    run, qrels = _data(seed)
    want = _by_join(run, qrels)
    assert want.height > 0
    assert_frame_equal(judged_hits(run, qrels, KEYS), want)


@pytest.mark.parametrize("seed", range(4))
def test_colliding_hashes_are_dropped_by_the_ids(seed, monkeypatch):
    """Every document of a query hashes alike: only the ids tell the pairs apart (a
    version that trusts the hash returns every document of a judged query)."""
    run, qrels = _data(seed)
    monkeypatch.setattr(_judged, "PAIR_HASH", pl.col("query_id").hash(seed=1))
    got = judged_hits(run, qrels, KEYS)
    assert_frame_equal(got, _by_join(run, qrels))
    # the degenerate hash did collide: the unfiltered join has more rows
    assert (run.with_columns(_judged.PAIR_HASH.alias("h")).join(
        qrels.with_columns(_judged.PAIR_HASH.alias("h")), on="h").height > got.height)


def test_extra_label_columns_and_no_hits():
    run, qrels = _data(3)
    q2 = qrels.with_columns(pl.lit("x").alias("note"))
    assert_frame_equal(judged_hits(run, q2, KEYS), _by_join(run, q2))
    none = qrels.with_columns(pl.format("z{}", "doc_id").alias("doc_id"))
    assert judged_hits(run, none, KEYS).height == 0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["r1", "r2"]), st.sampled_from(["1", "2", "10"]),
                          st.text("ab ", min_size=0, max_size=3),
                          st.integers(-3, 3)), min_size=1, max_size=40, unique_by=lambda t: t[:3]),
       st.lists(st.tuples(st.sampled_from(["1", "2", "10", "3"]),
                          st.text("ab ", min_size=0, max_size=3), st.integers(0, 3)),
                max_size=25, unique_by=lambda t: t[:2]))
def test_ranks_through_the_hashes_equal_the_sort_strategy(rows, labels):
    """rank_judged on unsorted blocks (the path using the hashes) equals sorting by keys."""
    run = pl.DataFrame(rows, schema=["run", "query_id", "doc_id", "score"], orient="row",
                       schema_overrides={"score": pl.Float64}).sort("run", "query_id")
    qrels = pl.DataFrame(labels, orient="row", schema={
        "query_id": pl.String, "doc_id": pl.String, "relevance": pl.Int64})
    fast = rank_judged(run, qrels, strategy="auto")
    slow = rank_judged(run, qrels, strategy="sort")
    assert_frame_equal(fast.judged, slow.judged)
    assert_frame_equal(fast.num_ret.sort(KEYS), slow.num_ret.sort(KEYS))


@pytest.mark.parametrize("seed", range(6))
def test_every_way_to_find_the_judged_rows_gives_the_same_rows(seed, monkeypatch):
    """judged_rows: the reader's marks (a superset), validation's document hashes, an
    is_in of the doc ids (few labels) and the pair hashes (many) give the same frame."""
    from searcheval_frames.frames.blocks import DOC_HASH

    run, qrels = _data(seed)
    want = _by_join(run, qrels)
    some = np.flatnonzero(run.get_column("doc_id").is_in(qrels.get_column("doc_id")
                                                         .implode()).to_numpy())
    every = np.arange(run.height)
    hashes = run.select(DOC_HASH).to_series()
    ways = {"marks": dict(marked=some), "all marked": dict(marked=every),
            "doc hashes": dict(doc_hash=hashes), "pairs": {}}
    for name, kw in ways.items():
        if name == "doc hashes":  # (used only with few labels: make these "few")
            run = pl.concat([run] + [run.with_columns(pl.lit(f"x{i}").alias("run"))
                                     for i in range(8)])
            kw = dict(doc_hash=run.select(DOC_HASH).to_series())
            want = _by_join(run, qrels)
        got = _judged.judged_rows(run, qrels, KEYS, **kw).sort("_p")
        assert_frame_equal(got, want, check_row_order=True)
    monkeypatch.setattr(_judged, "FEW_LABELS", 0)  # never "few": the pair hashes
    assert_frame_equal(_judged.judged_rows(run, qrels, KEYS).sort("_p"), want)
    monkeypatch.setattr(_judged, "FEW_LABELS", 10**9)  # always "few": the is_in
    assert_frame_equal(_judged.judged_rows(run, qrels, KEYS).sort("_p"), want)
