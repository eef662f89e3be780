"""sef.retrieve with Python function systems: forms, validation, retries, timeouts,
concurrency, rate, cache, and the result accepted wherever a run is.

The oracle for the run frame is a plain loop calling the function and numbering the
hits; the summary's quantiles are numpy's."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import searcheval_frames as sef
from searcheval_frames.errors import (
    EmptyInputError,
    InvalidOptionError,
    RetrievalError,
    SearchEvalWarning,
)
from searcheval_frames.systems import Answer, System, TransientError

REPO = Path(__file__).resolve().parents[1]
QUERIES = REPO / "data" / "example" / "queries.tsv"
DOCS = {f"d{i:03d}": f"doc {i} " + " ".join(f"w{j}" for j in range(i % 7, i % 7 + 4))
        for i in range(1, 60)}


@pytest.fixture(autouse=True)
def _own_folder(tmp_path, monkeypatch):
    """Each test in a folder of its own: adapters' default cache (.searcheval/) lands there."""
    monkeypatch.chdir(tmp_path)


def overlap(query: str, k: int) -> list[tuple[str, float]]:
    """A deterministic toy engine: word overlap, ties by doc id."""
    words = set(query.lower().split())
    scored = [(d, float(len(words & set(t.split())))) for d, t in DOCS.items()]
    scored = [h for h in scored if h[1] > 0]
    return sorted(scored, key=lambda h: (-h[1], h[0]))[:k]


def queries(n: int = 30) -> pl.DataFrame:
    return pl.DataFrame({"query_id": [f"q{i}" for i in range(n)],
                         "query": [f"w{i % 9} w{(i * 3) % 11} doc" for i in range(n)]})


def reference_run(fn, qs: pl.DataFrame, k: int, name: str) -> pl.DataFrame:
    rows = []
    for qid, text in qs.iter_rows():
        for rank, (doc, score) in enumerate(fn(text, k), start=1):
            rows.append((qid, doc, rank, float(score), name))
    return pl.DataFrame(rows, schema=["query_id", "doc_id", "rank", "score", "run"], orient="row")


# ------------------------------------------------------------------ forms of system
def test_a_function_gives_the_run_of_a_plain_loop():
    qs = queries()
    result = sef.retrieve(overlap, qs, k=5, name="overlap")
    assert_frame_equal(result.frame, reference_run(overlap, qs, 5, "overlap"))
    assert result.latency["status"].to_list() == ["ok"] * qs.height
    assert result.provenance["adapter"] == "function" and result.provenance["k"] == 5


def test_every_form_of_function_gives_the_same_run():
    qs = queries(12)
    expected = reference_run(overlap, qs, 4, "x")

    def with_id(query_id, query, k):
        return [{"doc_id": d, "score": s} for d, s in overlap(query, k)]

    async def asynchronous(query, k):
        await asyncio.sleep(0)
        return overlap(query, k)

    def batch_frame(queries, k):
        return pl.DataFrame([(q, d, s) for q, t in queries.iter_rows() for d, s in overlap(t, k)],
                            schema=["query_id", "doc_id", "score"], orient="row")

    def batch_list(queries, k):
        return [overlap(t, k) for t in queries["query"]]

    class Engine(System):
        kind = "toy"
        name = "engine"

        def search(self, query_id, query, k):
            return Answer(overlap(query, k), server_seconds=0.001)

    def polars_frame(query, k):
        return pl.DataFrame(overlap(query, k), schema={"doc_id": pl.String, "score": pl.Float64},
                            orient="row")

    def pandas_frame(query, k):
        return pd.DataFrame(overlap(query, k), columns=["doc_id", "score"])

    for system in (with_id, asynchronous, batch_frame, batch_list, Engine(), polars_frame,
                   pandas_frame):
        for workers in (1, 3):
            got = sef.retrieve(system, qs, k=4, name="x", max_concurrency=workers)
            assert_frame_equal(got.frame, expected), (system, workers)


def test_an_async_system_runs_inside_a_running_loop_as_in_a_notebook():
    async def asearch(query, k):
        await asyncio.sleep(0.001)
        return overlap(query, k)

    async def notebook_cell():  # a notebook's loop is running while the cell runs
        return sef.retrieve(asearch, queries(6), k=3, name="x", max_concurrency=3)

    result = asyncio.run(notebook_cell())
    assert_frame_equal(result.frame, reference_run(overlap, queries(6), 3, "x"))


def test_frames_come_back_in_the_queries_kind_and_files_are_read():
    qs = queries(5)
    assert isinstance(sef.retrieve(overlap, qs.to_pandas(), k=3).frame, pd.DataFrame)
    assert isinstance(sef.retrieve(overlap, qs.lazy(), k=3).frame, pl.LazyFrame)
    from_file = sef.retrieve(overlap, QUERIES, k=3)
    assert from_file.frame["query_id"].unique().len() <= 38
    assert from_file.latency.height == sef.read_queries(QUERIES).height
    renamed = qs.rename({"query_id": "topic", "query": "question_text"})
    got = sef.retrieve(overlap, renamed, k=3, columns={"query_id": "topic",
                                                       "query": "question_text"})
    assert got.latency["query_id"].to_list() == qs["query_id"].to_list()


# ------------------------------------------------------------------ bad answers
BAD_ANSWERS = {
    "duplicate": ([("d1", 2.0), ("d1", 1.0)], "appears 2 times"),
    "nan": ([("d1", float("nan"))], "finite"),
    "none score": ([{"doc_id": "d1", "score": None}], "finite"),
    "missing score": ([{"doc_id": "d1"}], "no 'score'"),
    "too many": ([(f"d{i}", 1.0) for i in range(4)], "4 hits for k=3"),
    "bool id": ([(True, 1.0)], "ids must be text"),
    "none id": ([(None, 1.0)], "ids must be text"),
    "float id": ([(1.5, 1.0)], "ids must be text"),
    "not a list": ("d1 d2", "instead of a list"),
    "scores rising": ([("d1", 1.0), ("d2", 3.0)], "higher than hit 1"),
}


@pytest.mark.parametrize("case", sorted(BAD_ANSWERS))
def test_a_bad_answer_is_a_recorded_failure_or_an_error_naming_query_and_system(case):
    hits, message = BAD_ANSWERS[case]

    def system(query, k):
        return hits if query == "bad one" else [("d9", 1.0)]

    qs = pl.DataFrame({"query_id": ["q1", "q2"], "query": ["fine", "bad one"]})
    with pytest.warns(SearchEvalWarning, match=r"failed on 1 of 2 queries.*q2 \(invalid"):
        result = sef.retrieve(system, qs, k=3, name="sys")
    row = result.latency.row(1, named=True)
    assert row["status"] == "invalid" and message in row["error"]
    assert result.frame["query_id"].to_list() == ["q1"]  # no rows for the failed query
    with pytest.raises(RetrievalError, match=r"'sys'.*query 'q2'.*" + message.split()[0]):
        sef.retrieve(system, qs, k=3, name="sys", on_error="raise")


def test_on_error_raise_stops_a_threaded_and_an_async_run():
    def system(query, k):
        if query == "w3 w9 doc":
            raise RuntimeError("engine down")
        time.sleep(0.01)
        return []

    async def asystem(query, k):
        return system(query, k)

    for fn in (system, asystem):
        with pytest.raises(RetrievalError, match=r"query 'q3'.*engine down"):
            sef.retrieve(fn, queries(40), name="s", max_concurrency=4, on_error="raise")


def test_integer_ids_become_text_and_empty_answers_are_fine():
    result = sef.retrieve(lambda q, k: [(7, 1), (np.int64(8), 0.5)] if q == "a" else [],
                          {"q1": "a", "q2": "b"}, k=5)
    assert result.frame["doc_id"].to_list() == ["7", "8"]
    assert result.frame["score"].to_list() == [1.0, 0.5]
    assert result.latency["status"].to_list() == ["ok", "ok"]


def test_an_exception_is_recorded_with_its_type():
    def boom(query, k):
        raise KeyError("index missing")

    with pytest.warns(SearchEvalWarning, match="failed on 2 of 2"):
        result = sef.retrieve(boom, {"q1": "a", "q2": "b"})
    assert result.latency["error"].to_list() == ["KeyError: 'index missing'"] * 2
    assert result.latency["attempts"].to_list() == [1, 1]  # not retried


# ------------------------------------------------------------------ retries, timeouts
def test_transient_errors_are_retried_and_retry_after_is_honoured():
    calls: list[float] = []

    def flaky(query, k):
        calls.append(time.perf_counter())
        if len(calls) < 3:
            raise TransientError("busy", retry_after=0.2, status=429)
        return [("d1", 1.0)]

    result = sef.retrieve(flaky, {"q1": "a"}, retries=3, backoff=0.001)
    assert result.latency["attempts"].to_list() == [3]
    assert np.diff(calls).min() >= 0.2  # each retry waited at least Retry-After
    with pytest.warns(SearchEvalWarning, match="busy"):
        calls.clear()
        failed = sef.retrieve(flaky, {"q1": "a"}, retries=1, backoff=0.001)
    assert failed.latency.row(0, named=True)["attempts"] == 2
    assert failed.latency.row(0, named=True)["status"] == "error"


def test_backoff_has_full_jitter_within_the_exponential_bound():
    from searcheval_frames.systems.calls import backoff_delay

    draws = np.array([backoff_delay(3, 0.1, None) for _ in range(2000)])
    assert draws.min() >= 0 and draws.max() <= 0.8
    assert 0.3 < draws.mean() < 0.5  # uniform(0, 0.8) has mean 0.4
    assert min(backoff_delay(3, 0.1, 2.0) for _ in range(50)) >= 2.0


def test_a_hang_past_the_timeout_is_a_recorded_timeout_sync_and_async():
    def slow(query, k):
        time.sleep(1.0 if query == "slow" else 0)
        return [("d1", 1.0)]

    async def aslow(query, k):
        await asyncio.sleep(1.0 if query == "slow" else 0)
        return [("d1", 1.0)]

    for system in (slow, aslow):
        start = time.perf_counter()
        with pytest.warns(SearchEvalWarning, match="timeout"):
            result = sef.retrieve(system, {"q1": "slow", "q2": "fast"}, timeout=0.1, retries=1,
                                  backoff=0.001)
        assert time.perf_counter() - start < 0.9
        assert result.latency["status"].to_list() == ["timeout", "ok"]
        assert result.latency["attempts"].to_list() == [2, 1]


def test_batches_retry_only_their_transient_items():
    class Batched(System):
        kind = "batched"
        name = "batched"
        batch_size = 4

        def __init__(self):
            self.calls: list[list[str]] = []

        def search_batch(self, items, k):
            self.calls.append([q for q, _ in items])
            if len(self.calls) == 1:
                raise TransientError("whole batch refused", retry_after=0.01)
            return [TransientError("busy") if q == "q1" and len(self.calls) == 2
                    else RuntimeError("bad") if q == "q2" else Answer(overlap(t, k))
                    for q, t in items]

    system = Batched()
    qs = queries(4)
    with pytest.warns(SearchEvalWarning, match=r"q2 \(error: RuntimeError: bad"):
        result = sef.retrieve(system, qs, k=3, backoff=0.001)
    assert system.calls == [["q0", "q1", "q2", "q3"], ["q0", "q1", "q2", "q3"], ["q1"]]
    assert result.latency["attempts"].to_list() == [2, 3, 2, 2]
    assert result.latency["status"].to_list() == ["ok", "ok", "error", "ok"]
    want = reference_run(overlap, qs, 3, "batched").filter(pl.col("query_id") != "q2")
    assert_frame_equal(result.frame, want)


# ------------------------------------------------------------------ concurrency, rate
def test_max_concurrency_bounds_the_queries_in_flight():
    lock = threading.Lock()
    state = {"now": 0, "max": 0}

    def tracked(query, k):
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.1)  # long enough for all 8 threads to start, even on a loaded machine
        with lock:
            state["now"] -= 1
        return overlap(query, k)

    qs = queries(40)
    result = sef.retrieve(tracked, qs, k=5, name="x", max_concurrency=8)
    assert state["max"] == 8
    assert_frame_equal(result.frame, reference_run(overlap, qs, 5, "x"))


def test_rate_spaces_the_requests():
    stamps: list[float] = []

    def stamped(query, k):
        stamps.append(time.monotonic())
        return []

    sef.retrieve(stamped, queries(9), rate=20, max_concurrency=4)
    stamps.sort()
    assert stamps[-1] - stamps[0] >= 8 / 20 - 0.01  # 1/20 s apart, whatever the threads


# ------------------------------------------------------------------ cache
def test_the_cache_asks_nothing_twice_and_a_changed_k_asks_again(tmp_path):
    asked: list[str] = []

    def counted(query, k):
        asked.append(query)
        return overlap(query, k)

    qs = queries(20)
    db = tmp_path / "cache.db"
    first = sef.retrieve(counted, qs, k=5, cache=db)
    assert len(asked) == 20 and not first.latency["cached"].any()
    second = sef.retrieve(counted, qs, k=5, cache=db)
    assert len(asked) == 20 and second.latency["cached"].all()
    assert_frame_equal(first.frame, second.frame)
    assert_frame_equal(first.latency.drop("cached"), second.latency.drop("cached"))
    sef.retrieve(counted, qs, k=6, cache=db)
    assert len(asked) == 40


def test_failures_are_not_cached(tmp_path):
    fail = {"on": True}

    def sometimes(query, k):
        if fail["on"] and query == "a":
            raise RuntimeError("down")
        return [("d1", 1.0)]

    with pytest.warns(SearchEvalWarning):
        sef.retrieve(sometimes, {"q1": "a", "q2": "b"}, cache=tmp_path / "c.db")
    fail["on"] = False
    again = sef.retrieve(sometimes, {"q1": "a", "q2": "b"}, cache=tmp_path / "c.db")
    assert again.latency["cached"].to_list() == [False, True]


def test_a_cache_that_cannot_be_opened_is_one_clear_error(tmp_path):
    from searcheval_frames.errors import FileAccessError

    (tmp_path / "dir.db").mkdir()
    with pytest.raises(FileAccessError, match=r"cannot open the answer cache.*cache=False"):
        sef.retrieve(overlap, queries(2), cache=tmp_path / "dir.db")
    sef.retrieve(overlap, queries(2), cache=True)
    assert (tmp_path / ".searcheval" / "retrieve-cache.db").exists()


def test_plain_functions_are_not_cached_by_default(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    sef.retrieve(overlap, queries(3))
    assert not (tmp_path / ".searcheval").exists()


# ------------------------------------------------------------------ the result as a run
def test_a_result_is_accepted_wherever_a_run_is():
    qs = queries(30)
    a = sef.retrieve(overlap, qs, k=10, name="a")
    b = sef.retrieve(lambda q, k: [(d, 1.0 / (i + 1)) for i, (d, _) in
                                   enumerate(overlap(q, k)[::-1])], qs, k=10, name="b")
    qrels = a.frame.filter(pl.col("rank") <= 2).select(  # a's top two: a beats b
        "query_id", "doc_id", pl.lit(1).alias("relevance"))
    plain = a.frame
    assert_frame_equal(sef.evaluate(a, qrels, ["nDCG@10", "P@5"]),
                       sef.evaluate(plain, qrels, ["nDCG@10", "P@5"]).with_columns(
                           pl.lit("a").alias("run")))
    both = a + b
    assert sorted(both.frame["run"].unique()) == ["a", "b"]
    assert sef.evaluate(both, qrels, ["P@5"])["run"].to_list() == ["a", "b"]
    table = sef.compare(runs=both, qrels=qrels, measures=["nDCG@10"], baseline="b")
    assert table.frame.filter(pl.col("run") == "a")["delta"].item() > 0
    assert sef.pool(a, depth=3).height == sef.pool(plain, depth=3).height
    assert_frame_equal(sef.fuse(both), sef.fuse(pl.concat([a.frame, b.frame])))
    board = sef.leaderboard(runs=both, qrels=qrels, measure="nDCG@10", test="holm")
    assert sorted(board.frame["run"]) == ["a", "b"]
    report = sef.report(both, qrels, baseline="b", measures=["nDCG@10"])
    assert "nDCG@10" in report.to_markdown()
    assert sef.evaluate(a.frame.to_pandas(), qrels, ["P@5"]).shape[0] == 1
    assert isinstance(sef.evaluate(sef.retrieve(overlap, qs.to_pandas(), k=3), qrels, ["P@5"]),
                      pd.DataFrame)


def test_combining_results_and_their_latencies():
    a = sef.retrieve(overlap, queries(4), name="a")
    b = sef.retrieve(overlap, queries(4), name="b")
    lat = sef.systems.latency_of([a, b])
    assert lat.height == 8 and lat["run"].to_list() == ["a"] * 4 + ["b"] * 4
    assert_frame_equal(sef.combine_runs([a, b]).frame, (a + b).frame)
    with pytest.raises(InvalidOptionError, match="share the run name"):
        sef.combine_runs([a, a])


def test_the_summary_is_numpy_over_the_answered_queries():
    def uneven(query, k):
        time.sleep(0.001 * (len(query) % 5))
        if query.startswith("w1 "):
            raise RuntimeError("no")
        return []

    with pytest.warns(SearchEvalWarning):
        result = sef.retrieve(uneven, queries(30), name="u")
    s = result.summary().row(0, named=True)
    ok = result.latency.filter(pl.col("status") == "ok")["seconds"].to_numpy()
    assert s["queries"] == 30 and s["errors"] == 30 - ok.size
    for q, key in ((0.5, "p50"), (0.95, "p95"), (0.99, "p99")):
        assert s[key] == pytest.approx(np.quantile(ok, q))
    assert s["mean"] == pytest.approx(ok.mean())
    assert "<table>" in result._repr_html_() and "RetrieveResult" in repr(result)


def test_the_progress_bar_is_shown_when_asked_and_off_by_default(capsys):
    pytest.importorskip("tqdm")
    sef.retrieve(overlap, queries(300))
    assert "retrieve:" not in capsys.readouterr().err  # not a terminal: no bar
    sef.retrieve(overlap, queries(5), name="bar", progress=True)
    assert "retrieve:bar" in capsys.readouterr().err


def test_options_are_checked():
    for kwargs, name in (({"k": 0}, "k"), ({"max_concurrency": 0}, "max_concurrency"),
                         ({"rate": -1}, "rate"), ({"timeout": 0}, "timeout"),
                         ({"on_error": "skip"}, "on_error"), ({"retries": -1}, "retries"),
                         ({"cache": 3}, "cache")):
        with pytest.raises(InvalidOptionError, match=rf"retrieve\({name}="):
            sef.retrieve(overlap, queries(2), **kwargs)
    with pytest.raises(InvalidOptionError, match="parameters"):
        sef.retrieve(lambda a, b, c, d: [], queries(2))
    with pytest.raises(EmptyInputError, match="no rows"):
        sef.retrieve(overlap, queries(0))
    with pytest.raises(EmptyInputError, match=r"have no text: \['q2'\]"):
        sef.retrieve(overlap, {"q1": "a", "q2": " "})
