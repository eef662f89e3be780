"""sef.sweep: every point's numbers are sef.evaluate's on that point's run; holes are
counted by brute force; a sweep into unlabelled documents warns; judge= fills them;
train_queries= chooses on train and scores on the rest."""

from __future__ import annotations

import matplotlib
import polars as pl
import pytest
from conftest import DATA

import searcheval_frames as sef
from searcheval_frames.errors import InvalidOptionError, SearchEvalWarning
from searcheval_frames.evalset.judges.stub import overlap_grade
from searcheval_frames.sweeps import SweepDisplay
from searcheval_frames.systems import bm25, sqlite_fts

matplotlib.use("Agg")

DOCS = DATA / "example" / "docs.jsonl"
QUERIES = DATA / "example" / "queries.tsv"
QRELS = DATA / "example" / "qrels.txt"
MEASURES = ["nDCG@10", "AP", "P@5"]


@pytest.fixture(scope="module")
def base():
    return bm25(DOCS)


@pytest.fixture(scope="module")
def qrels() -> pl.DataFrame:
    return sef.read_qrels(QRELS)


def _labelled_by_hand(run: pl.DataFrame, qrels: pl.DataFrame, k: int) -> float:
    keys = set(zip(qrels["query_id"], qrels["doc_id"], strict=True))
    top = [(q, d) for q, d, r in run.select("query_id", "doc_id", "rank").iter_rows() if r <= k]
    return sum(p in keys for p in top) / len(top)


def test_each_point_is_evaluate_of_its_run(base, qrels, tmp_path) -> None:
    res = sef.sweep(lambda k1, b: base.with_params(k1=k1, b=b),
                    {"k1": [0.6, 1.2, 2.0], "b": [0.3, 0.75]}, queries=QUERIES, qrels=QRELS,
                    measures=MEASURES, k=20, cache=tmp_path / "c.db", min_judged=0.5)
    table = res.table
    assert table.height == 6 and table["k1"].to_list() == [0.6, 0.6, 1.2, 1.2, 2.0, 2.0]
    for row in table.iter_rows(named=True):
        run = res.runs[row["run"]].run
        want = sef.evaluate(run, qrels, [*MEASURES, "Judged@20"])
        for m, v in zip(want["measure"], want["value"], strict=True):
            assert row[m] == pytest.approx(v, abs=1e-12), (row["run"], m)
        assert row["labelled"] == pytest.approx(_labelled_by_hand(run, qrels, 20))
        lat = res.runs[row["run"]].latency["seconds"]
        assert row["p50"] == pytest.approx(lat.quantile(0.5, "linear"))
        assert row["p95"] == pytest.approx(lat.quantile(0.95, "linear"))
        assert row["errors"] == 0
    # the sqlite_fts point: bm25 at 1.2/0.75 is FTS5's bm25()
    fts = sef.evaluate(sef.retrieve(sqlite_fts(DOCS), QUERIES, 20, cache=False).run, qrels,
                       ["nDCG@10"])["value"][0]
    assert table.filter((pl.col("k1") == 1.2) & (pl.col("b") == 0.75))["nDCG@10"][0] == \
        pytest.approx(fts, abs=1e-12)
    best = res.best("ndcg_cut_10")  # any spelling of the measure
    assert best["nDCG@10"] == table["nDCG@10"].max()


def test_a_rerun_is_read_from_the_cache(base, tmp_path) -> None:
    def run():
        return sef.sweep(lambda b: base.with_params(b=b), {"b": [0.2, 0.8]}, queries=QUERIES,
                         qrels=QRELS, measures=["AP"], k=10, cache=tmp_path / "c.db",
                         min_judged=0.5)

    first, again = run(), run()
    assert not any(r.latency["cached"].any() for r in first.runs.values())
    assert all(r.latency["cached"].all() for r in again.runs.values())
    assert first.table.select("run", "AP").equals(again.table.select("run", "AP"))


def _shifted(offset: int):
    """A system whose top k is d{offset}, d{offset+1}, ...: a knob that walks off the labels."""
    def search(query, k):
        return [(f"d{offset + i:03d}", 1.0 / (i + 1)) for i in range(k)]
    return search


def test_walking_into_unlabelled_documents_warns_and_is_flagged() -> None:
    qrels = {q: {f"d{i:03d}": int(i % 3 == 0) for i in range(10)} for q in ("q1", "q2")}
    queries = {"q1": "a", "q2": "b"}
    with pytest.warns(SearchEvalWarning, match=r"2 of 3 points .* less than 90% .*top-10"):
        res = sef.sweep(_shifted, {"offset": [0, 5, 8]}, queries=queries, qrels=qrels,
                        measures=["P@10"], k=10, cache=False)
    t = res.table
    assert t["labelled"].to_list() == pytest.approx([1.0, 0.5, 0.2])
    assert t["below_min_judged"].to_list() == [False, True, True]
    assert t["Judged@10"].to_list() == pytest.approx([1.0, 0.5, 0.2])
    with pytest.warns(SearchEvalWarning, match="best point on P@10"):  # the best is a hole
        sef.sweep(_shifted, {"offset": [0, 6]}, queries=queries,
                  qrels={q: {**v, "d015": 1, "d014": 1, "d013": 1} for q, v in qrels.items()},
                  measures=["P@10"], k=10, cache=False)


def test_judge_fills_the_holes_and_the_measures_use_its_labels(tmp_path) -> None:
    docs = pl.read_ndjson(DOCS)
    qrels = sef.read_qrels(QRELS)
    thin = qrels.filter(pl.col("doc_id") < "d060")  # half the labels gone: holes

    def judge(pairs):
        return pairs.with_columns(relevance=pl.struct("query", "text").map_elements(
            lambda r: overlap_grade(r["query"], r["text"]), return_dtype=pl.Int64))

    res = sef.sweep(lambda b: bm25(docs, b=b), {"b": [0.3, 0.75]}, queries=QUERIES,
                    qrels=thin, measures=["nDCG@10"], k=10, judge=judge, docs=docs,
                    journal=tmp_path / "judge.jsonl", cache=False)
    t = res.table
    assert (t["unjudged"] > 0.2).all() and (t["filled"] > 0).all()
    assert t["labelled"].to_list() == [1.0, 1.0] and not t["below_min_judged"].any()
    assert set(res.qrels["source"].unique()) == {"human", "judge:judge"}
    for row in t.iter_rows(named=True):
        run = res.runs[row["run"]].run
        want = sef.evaluate(run, res.qrels, ["nDCG@10"])["value"][0]
        assert row["nDCG@10"] == pytest.approx(want, abs=1e-12)
        holes = 1 - _labelled_by_hand(run, thin, 10)
        assert row["unjudged"] == pytest.approx(holes)


def test_train_queries_choose_on_train_and_score_on_the_rest(base, qrels) -> None:
    ids = sorted(qrels["query_id"].unique())
    train = ids[::2]
    res = sef.sweep(lambda k1: base.with_params(k1=k1), {"k1": [0.3, 1.2, 3.0]},
                    queries=QUERIES, qrels=qrels, measures=["AP"], k=20, train_queries=train,
                    cache=False, min_judged=0.5)
    t = res.table
    assert res.train == train and res.test == ids[1::2]
    for row in t.iter_rows(named=True):
        run = res.runs[row["run"]].run
        for part, name in ((train, "AP (train)"), (ids[1::2], "AP (test)")):
            want = sef.evaluate(run.filter(pl.col("query_id").is_in(part)),
                                qrels.filter(pl.col("query_id").is_in(part)), ["AP"])
            assert row[name] == pytest.approx(want["value"][0], abs=1e-12)
    best = res.best("AP")
    assert best["AP (train)"] == t["AP (train)"].max()
    assert best["k1"] == t.sort("AP (train)", descending=True, maintain_order=True)["k1"][0]


def test_the_frame_comes_in_the_queries_kind(base) -> None:
    import pandas as pd

    q = pd.read_csv(QUERIES, sep="\t").head(5)
    res = sef.sweep(lambda b: base.with_params(b=b), {"b": [0.5]}, queries=q, qrels=QRELS,
                    measures="RR", k=5, cache=False, min_judged=0.0)
    assert isinstance(res.frame, pd.DataFrame) and list(res.frame["b"]) == [0.5]


def test_bad_grids_and_makers_are_named(base) -> None:
    kw = {"queries": {"q1": "x"}, "qrels": {"q1": {"d1": 1}}, "measures": ["AP"],
          "cache": False}
    with pytest.raises(InvalidOptionError, match=r"sweep\(grid="):
        sef.sweep(lambda k1: base, {}, **kw)
    with pytest.raises(InvalidOptionError, match="'k1' has no values"):
        sef.sweep(lambda k1: base, {"k1": []}, **kw)
    with pytest.raises(InvalidOptionError, match="'k1' must map to a list"):
        sef.sweep(lambda k1: base, {"k1": "0.9"}, **kw)
    with pytest.raises(InvalidOptionError, match=r"make_system\(\*\*\{'b': 0.5\}\)"):
        sef.sweep(lambda k1: base, {"b": [0.5]}, **kw)
    with pytest.raises(InvalidOptionError, match="train_queries"):
        sef.sweep(lambda b: base, {"b": [0.5]}, train_queries="q1", **kw)
    with pytest.raises(InvalidOptionError, match=r"judge= \(the texts"):
        sef.sweep(lambda b: base.with_params(b=b), {"b": [0.5]}, judge=lambda p: p, **kw)


def test_the_display_is_the_table_and_marks_the_flagged_points() -> None:
    qrels = {q: {f"d{i:03d}": int(i % 3 == 0) for i in range(10)} for q in ("q1", "q2")}
    with pytest.warns(SearchEvalWarning):
        res = sef.sweep(lambda offset, depth: _shifted(offset),
                        {"offset": [0, 5, 8], "depth": ["a", "b"]},
                        queries={"q1": "a", "q2": "b"}, qrels=qrels, measures=["P@10"], k=10,
                        cache=False)
    disp = SweepDisplay.from_sweep(res, "P@10")
    assert disp.knob == "offset" and disp.data["value"].to_list() == res.table["P@10"].to_list()
    assert disp.data["series"].unique().sort().to_list() == ["depth=a", "depth=b"]
    disp.plot()
    assert len(disp.lines_) == 2 and disp.labelled_ax_ is not None
    assert len(disp.hollow_.get_offsets()) == 2  # the last series' two flagged points
    assert disp.labelled_ax_.get_xlabel() == "offset"
    other = SweepDisplay.from_sweep(res, x="depth")
    assert not other.numeric and other.data["x"].to_list() == [0.0, 1.0] * 3
    import matplotlib.pyplot as plt

    plt.close("all")


def test_judge_through_the_openai_compatible_stub_asks_each_hole_once(tmp_path) -> None:
    from searcheval_frames.evalset.judges.stub import StubServer

    qrels = sef.read_qrels(QRELS)
    queries = pl.read_csv(QUERIES, separator="\t").head(6)
    thin = qrels.filter(pl.col("query_id").is_in(queries["query_id"].to_list()),
                        pl.col("doc_id") < "d050")
    server = StubServer().start()
    judge = sef.judges.OpenAICompatible(server.url, "stub-model", backoff=0.001)
    try:
        res = sef.sweep(lambda b: bm25(DOCS, b=b), {"b": [0.2, 0.9]}, queries=queries,
                        qrels=thin, measures=["nDCG@10"], k=10, judge=judge, docs=DOCS,
                        journal=tmp_path / "j.jsonl", cache=False)
        asked = sum(server.answers.values())
    finally:
        judge.close()
        server.stop()
    top = pl.concat([r.run for r in res.runs.values()]).filter(pl.col("rank") <= 10)
    holes = {(q, d) for q, d in top.select("query_id", "doc_id").iter_rows()} - \
        {(q, d) for q, d in thin.select("query_id", "doc_id").iter_rows()}
    judged = res.qrels.filter(pl.col("source") != "human")
    assert {(q, d) for q, d in judged.select("query_id", "doc_id").iter_rows()} == holes
    assert asked == len(holes) > 0  # each hole asked once, across both points
    assert res.table["labelled"].to_list() == [1.0, 1.0]
    for row in res.table.iter_rows(named=True):
        want = sef.evaluate(res.runs[row["run"]].run, res.qrels, ["nDCG@10"])["value"][0]
        assert row["nDCG@10"] == pytest.approx(want, abs=1e-12)
