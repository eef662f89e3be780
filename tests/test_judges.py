"""sef.judge: journaled, cached, resumable automatic judges (issue 23).

The OpenAI-compatible adapter is tested against a local stub server on 127.0.0.1 (a
fixture starts and stops it) that answers deterministically and injects 429s, 500s,
malformed and slow answers and a crash; it counts every answer it gives, so repeated
calls are seen where they happen. The kill test SIGKILLs a judging subprocess at random
moments and checks that no pair answered in the journal is ever asked again.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import polars as pl
import pytest
from conftest import DATA, REPO
from hypothesis import given, settings
from hypothesis import strategies as st

import searcheval_frames as sef
from searcheval_frames.evalset.judges import (
    JudgeAnswerError,
    StubServer,
    overlap_grade,
    parse_grade,
)
from searcheval_frames.evalset.judges.texts import judge_pairs

EX = DATA / "example"


@pytest.fixture(scope="module")
def example_pairs() -> pl.DataFrame:
    runs = sef.read_run(sorted((EX / "runs").glob("*.run")))
    pool = sef.pool(runs, depth=10)
    return judge_pairs(pool, EX / "queries.tsv", EX / "docs.jsonl")


@pytest.fixture
def stub():
    server = StubServer().start()
    yield server
    server.stop()


def _judge(url: str, **kw) -> sef.judges.OpenAICompatible:
    kw.setdefault("backoff", 0.001)
    return sef.judges.OpenAICompatible(url, "stub-model", **kw)


def _expected(pairs: pl.DataFrame) -> dict[tuple[str, str], int]:
    return {(a, b): overlap_grade(q, t) for a, b, q, t in pairs.iter_rows()}


# ------------------------------------------------------------------ reading grades
@given(st.text(max_size=60))
@settings(max_examples=300, deadline=None)
def test_an_answer_without_a_grade_is_an_error_never_zero(text):
    try:
        g = parse_grade(text)
    except JudgeAnswerError:
        return
    # accepted only when the text states a grade: a bare number or 'final score: N'
    core = text.strip().strip("\"'*#()[].").strip()
    bare = core.lstrip("-").isascii() and core.lstrip("-").isdigit() and int(core) == g
    assert bare or "score" in text.lower()


@pytest.mark.parametrize("answer,grade", [
    ("##final score: 2", 2), ("M: 3\nT: 1\n##Final Score: 1", 1), ("  3 ", 3),
    ("final score = 0", 0), ("**Final score:** 3", 3), ("##final score: 2.0", 2),
])
def test_parse_grade_reads_the_final_score(answer, grade):
    assert parse_grade(answer) == grade


@pytest.mark.parametrize("answer", ["", "relevant", "##final score: 7", "score: high", "-1",
                                    "1 or 2"])
def test_parse_grade_refuses(answer):
    with pytest.raises(JudgeAnswerError):
        parse_grade(answer)


# ------------------------------------------------------------------ function judges
def _overlap_fn(pairs):
    return pairs.with_columns(
        relevance=pl.struct("query", "text").map_elements(
            lambda r: overlap_grade(r["query"], r["text"]), return_dtype=pl.Int64))


def test_function_judge_matches_its_function_and_is_cached(example_pairs, tmp_path):
    path = tmp_path / "j.jsonl"
    calls = []

    def judge_fn(p):
        calls.append(p.height)
        return _overlap_fn(p)

    res = sef.judge(example_pairs, judge_fn, journal=path, progress=False)
    got = {(a, b): g for a, b, g in res.qrels.iter_rows()}
    assert got == _expected(example_pairs)
    assert sum(calls) == example_pairs.height and res.cached == 0
    assert set(res.to_polars()["source"]) == {"judge:judge_fn"}
    again = sef.judge(example_pairs, judge_fn, journal=path, progress=False)
    assert again.calls == 0 and again.cached == example_pairs.height
    assert sum(calls) == example_pairs.height  # no new call
    # the journal holds exactly one line per pair, read back by LabelStore
    assert len(sef.LabelStore(path).records()) == example_pairs.height


def test_pandas_in_pandas_out_and_texts_from_queries_and_docs(tmp_path):
    pd = pytest.importorskip("pandas")
    pairs = pd.DataFrame({"query_id": ["q01", "q01"], "doc_id": ["d001", "d002"]})
    seen = []

    def fn(p):
        seen.append(type(p))
        return p.assign(relevance=[1] * len(p))

    res = sef.judge(pairs, fn, queries=EX / "queries.tsv", docs=EX / "docs.jsonl",
                    journal=tmp_path / "j.jsonl", progress=False)
    assert isinstance(res.frame, pd.DataFrame) and seen == [pd.DataFrame]
    assert res.frame["relevance"].tolist() == [1, 1]


def test_a_changed_function_or_prompt_is_a_new_key(example_pairs, tmp_path, stub):
    path = tmp_path / "j.jsonl"
    few = example_pairs.head(5)
    sef.judge(few, _overlap_fn, journal=path, progress=False)

    def other(p):
        return p.with_columns(relevance=pl.lit(1))

    assert sef.judge(few, other, journal=path, progress=False).calls == 1  # one batch
    a = sef.judge(few, _judge(stub.url), journal=path, progress=False)
    assert a.calls == 5
    custom = "Query: {query}\nPassage: {passage}\nAnswer with ##final score: N (0-3)."
    b = sef.judge(few, _judge(stub.url, prompt="umbrela", temperature=0.5), journal=path,
                  progress=False)
    assert b.calls == 5  # another temperature
    assert sef.judge(few, _judge(stub.url), journal=path, progress=False).calls == 0
    server = StubServer(prompt=custom).start()
    try:
        c = sef.judge(few, _judge(server.url, prompt=custom), journal=path, progress=False)
    finally:
        server.stop()
    assert c.calls == 5
    assert c.to_polars()["prompt_sha256"].n_unique() == 1
    assert c.to_polars()["prompt_sha256"][0] != a.to_polars()["prompt_sha256"][0]


def test_function_errors_are_recorded_not_zero(example_pairs, tmp_path):
    few = example_pairs.head(6)

    def half(p):
        return p.head(3).with_columns(relevance=pl.lit(2))

    with pytest.warns(UserWarning, match="3 pair"):
        res = sef.judge(few, half, journal=tmp_path / "j.jsonl", progress=False)
    assert res.qrels.height == 3 and set(res.qrels["relevance"]) == {2}
    assert res.errors.height == 3
    assert (tmp_path / "j.jsonl.errors").read_text().count("\n") == 3


# ------------------------------------------------------------------ the HTTP adapter
def test_adapter_survives_429_500_malformed_and_matches_the_server(example_pairs, tmp_path):
    pairs = example_pairs.head(120)
    server = StubServer(rate_limit_every=5, error_every=7, malformed_every=11).start()
    try:
        res = sef.judge(pairs, _judge(server.url, retries=8), journal=tmp_path / "j.jsonl",
                        progress=False)
    finally:
        server.stop()
    assert res.errors.height == 0
    got = {(a, b): g for a, b, g in res.qrels.iter_rows()}
    assert got == _expected(pairs)
    assert server.faults["429"] > 0 and server.faults["500"] > 0
    # each pair was answered (with a grade) exactly once
    assert set(server.answers.values()) == {1} and len(server.answers) == pairs.height


def test_always_malformed_is_reported_and_retried_on_the_next_run(example_pairs, tmp_path):
    pairs = example_pairs.head(20)
    bad_text = pairs["text"][3]
    server = StubServer(always_malformed=[bad_text]).start()
    try:
        with pytest.warns(UserWarning, match="no grade"):
            res = sef.judge(pairs, _judge(server.url, retries=2), journal=tmp_path / "j.jsonl",
                            progress=False)
        bad = pairs.filter(pl.col("text") == bad_text).select("query_id", "doc_id")
        assert res.errors.select("query_id", "doc_id").sort(pl.all()).equals(bad.sort(pl.all()))
        assert "fairly relevant" in (tmp_path / "j.jsonl.errors").read_text()
        assert res.qrels.join(bad, on=["query_id", "doc_id"]).height == 0  # no label, not 0
        server.always_malformed = ()
        again = sef.judge(pairs, _judge(server.url), journal=tmp_path / "j.jsonl",
                          progress=False)
        assert again.calls == bad.height and again.errors.height == 0
    finally:
        server.stop()


def test_a_crash_mid_batch_loses_nothing_and_resume_repeats_nothing(example_pairs, tmp_path):
    pairs = example_pairs.head(80)
    server = StubServer(crash_after=30).start()
    try:
        with pytest.warns(UserWarning):
            first = sef.judge(pairs, _judge(server.url, retries=1), journal=tmp_path / "j.jsonl",
                              progress=False)
        assert 0 < first.qrels.height <= 30 and first.errors.height == 80 - first.qrels.height
        server.recover()
        second = sef.judge(pairs, _judge(server.url), journal=tmp_path / "j.jsonl",
                           progress=False)
    finally:
        server.stop()
    assert second.calls == 80 - first.qrels.height and second.errors.height == 0
    assert {(a, b): g for a, b, g in second.qrels.iter_rows()} == _expected(pairs)
    assert set(server.answers.values()) == {1}


def test_slow_answers_time_out_as_errors(example_pairs, tmp_path):
    server = StubServer(delay=0.5).start()
    try:
        with pytest.warns(UserWarning, match="no grade"):
            res = sef.judge(example_pairs.head(3), _judge(server.url, timeout=0.1, retries=0),
                            journal=tmp_path / "j.jsonl", progress=False)
    finally:
        server.stop()
    assert res.qrels.height == 0 and res.errors.height == 3
    assert res.errors["error"].str.contains("Timeout").all()


def test_budget_stops_cleanly_and_the_next_call_goes_on(example_pairs, tmp_path, stub):
    pairs = example_pairs.head(50)
    path = tmp_path / "j.jsonl"
    res = sef.judge(pairs, _judge(stub.url), journal=path, budget=20, progress=False)
    assert res.stopped == "budget" and res.calls == 20 and res.qrels.height == 20
    assert res.pending.height == 30
    rest = sef.judge(pairs, _judge(stub.url), journal=path, progress=False)
    assert rest.calls == 30 and rest.cached == 20 and rest.stopped is None
    assert sum(stub.answers.values()) == 50


def test_dry_run_counts_calls_tokens_and_cost_without_a_call(example_pairs, tmp_path, stub):
    pairs = example_pairs.head(40)
    path = tmp_path / "j.jsonl"
    sef.judge(pairs.head(10), _judge(stub.url), journal=path, progress=False)
    before = stub.requests
    j = _judge(stub.url)
    dr = sef.judge(pairs, j, journal=path, dry_run=True,
                   prices={"stub-model": {"input": 0.15, "output": 0.6}})
    assert stub.requests == before
    assert dr.calls == 30 and dr.cached == 10
    todo = pairs.tail(30)
    if dr.tokenizer == "characters / 4":  # the slow reference: every message's characters
        chars = [len(" ".join(m["content"] for m in j.template.messages(q, t)))
                 for q, t in todo.select("query", "text").iter_rows()]
        assert dr.input_tokens == sum(-(-c // 4) for c in chars)
    assert dr.cost == pytest.approx((dr.input_tokens * 0.15 + dr.output_tokens * 0.6) / 1e6)


def test_options_are_checked(example_pairs, tmp_path):
    with pytest.raises(sef.InvalidOptionError, match="budget"):
        sef.judge(example_pairs, _overlap_fn, journal=tmp_path / "j", budget=-1)
    with pytest.raises(sef.InvalidOptionError, match="base_url"):
        sef.judges.OpenAICompatible("localhost:8000", "m")
    with pytest.raises(sef.SearchEvalError, match="no 'text' column"):
        sef.judge(example_pairs.select("query_id", "doc_id", "query"), _overlap_fn,
                  journal=tmp_path / "j")
    with pytest.raises(sef.SearchEvalError, match="no text for 1 pair"):
        sef.judge({"query_id": ["q01"], "doc_id": ["nope"]}, _overlap_fn,
                  queries=EX / "queries.tsv", docs=EX / "docs.jsonl", journal=tmp_path / "j")


# ------------------------------------------------------------------ kill -9 and resume
_SCRIPT = textwrap.dedent("""
    import sys, polars as pl, searcheval_frames as sef
    pairs = pl.read_parquet(sys.argv[1])
    j = sef.judges.OpenAICompatible(sys.argv[2], "stub-model", max_concurrency=4,
                                    backoff=0.001)
    sef.judge(pairs, j, journal=sys.argv[3], progress=False)
""")


def _journal_pairs(path: Path) -> set[tuple[str, str]]:
    if not path.exists():
        return set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a torn last line after a kill is expected
        return {(r["query_id"], r["doc_id"]) for r in sef.LabelStore(path).meta_records()}


def test_sigkill_at_random_moments_then_resume_repeats_no_answered_pair(example_pairs,
                                                                          tmp_path):
    pairs = example_pairs.head(300)
    pairs.write_parquet(tmp_path / "pairs.parquet")
    (tmp_path / "run.py").write_text(_SCRIPT)
    path = tmp_path / "judge.jsonl"
    text_of = {(a, b): (q, t) for a, b, q, t in pairs.iter_rows()}
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    rng = random.Random(23)
    server = StubServer(delay=0.004).start()
    snapshots = []  # (journaled pairs, answers per pair) right after each kill
    kills = 0
    try:
        for _ in range(40):
            start = server.requests
            proc = subprocess.Popen([sys.executable, str(tmp_path / "run.py"),
                                     str(tmp_path / "pairs.parquet"), server.url, str(path)],
                                    env=env)
            wait_for = rng.randint(1, 60)
            while proc.poll() is None and server.requests < start + wait_for:
                time.sleep(0.002)
            if proc.poll() is not None:
                assert proc.returncode == 0
                break
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            kills += 1
            time.sleep(0.05)  # requests in flight at the kill finish on the server
            snapshots.append((_journal_pairs(path), dict(server.answers)))
        else:
            pytest.fail("the judging never finished")
    finally:
        server.stop()
    assert kills >= 5
    final = _journal_pairs(path)
    assert final == set(text_of)  # no lost answer
    labels = {(a, b): g for a, b, g in sef.LabelStore(path).qrels().iter_rows()}
    assert labels == {p: overlap_grade(*text_of[p]) for p in text_of}
    violations = 0
    for journaled, answers in snapshots:
        for p in journaled:  # answered and on disk at this kill: never asked again
            violations += server.answers[text_of[p]] != answers[text_of[p]]
    assert violations == 0
    repeats = sum(server.answers.values()) - len(text_of)
    # a repeat is only a request in flight at a kill (answered, not yet journaled)
    assert repeats <= kills * 4
    print(f"\nkill/resume: {kills} kills, {sum(server.answers.values())} answers for "
          f"{len(text_of)} pairs, {repeats} repeated (in flight at a kill), "
          f"{violations} repeats of journaled pairs")
    (tmp_path / "summary.json").write_text(json.dumps({"kills": kills, "repeats": repeats}))


def test_two_processes_on_one_journal_at_once_rarely_ask_the_same_pair(example_pairs,
                                                                        tmp_path):
    pairs = example_pairs.head(300)
    pairs.write_parquet(tmp_path / "pairs.parquet")
    (tmp_path / "run.py").write_text(_SCRIPT)
    path = tmp_path / "judge.jsonl"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    server = StubServer(delay=0.004).start()
    try:
        procs = [subprocess.Popen([sys.executable, str(tmp_path / "run.py"),
                                   str(tmp_path / "pairs.parquet"), server.url, str(path)],
                                  env=env) for _ in range(2)]
        assert [p.wait(timeout=300) for p in procs] == [0, 0]
        # a third notebook afterwards asks nothing at all
        after = sef.judge(pairs, _judge(server.url), journal=path, progress=False)
    finally:
        server.stop()
    assert after.calls == 0 and after.qrels.height == 300
    text_of = {(a, b): (q, t) for a, b, q, t in pairs.iter_rows()}
    labels = {(a, b): g for a, b, g in sef.LabelStore(path).qrels().iter_rows()}
    assert labels == {p: overlap_grade(*text_of[p]) for p in text_of}
    repeats = sum(server.answers.values()) - 300
    print(f"\ntwo processes at once: {sum(server.answers.values())} answers for 300 pairs, "
          f"{repeats} asked by both")
    # Each process asks in its own random order and skips what the other has journaled,
    # so only pairs in flight in the other process are asked twice: about
    # max_concurrency * ln(pairs) ~ 23 here; in one shared order it would be ~all 300.
    assert repeats <= 75


@given(st.integers(0, 6), st.integers(0, 6), st.integers(0, 6), st.integers(0, 2))
@settings(max_examples=12, deadline=None)
def test_faults_never_give_a_wrong_label_only_errors(rate_every, error_every, bad_every,
                                                      retries):
    """Whatever the server does, a pair ends with the server's grade or an error, never a
    guessed one, and every pair is accounted for."""
    import tempfile

    pairs = judge_pairs(
        {"query_id": [f"q{i % 3}" for i in range(24)], "doc_id": [f"d{i}" for i in range(24)],
         "query": [["hnsw index", "bm25 ranking", "pinecone upsert"][i % 3] for i in range(24)],
         "text": [f"doc {i} about hnsw bm25 ranking index upsert"[: 10 + 3 * i]
                  for i in range(24)]})
    server = StubServer(rate_limit_every=rate_every + 1 if rate_every else 0,
                        error_every=error_every + 1 if error_every else 0,
                        malformed_every=bad_every + 1 if bad_every else 0).start()
    try:
        with tempfile.TemporaryDirectory() as d, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = sef.judge(pairs, _judge(server.url, retries=retries, max_concurrency=3),
                            journal=Path(d) / "j.jsonl", progress=False)
    finally:
        server.stop()
    want = _expected(pairs)
    got = {(a, b): g for a, b, g in res.qrels.iter_rows()}
    assert all(want[p] == g for p, g in got.items())
    failed = set(res.errors.select("query_id", "doc_id").iter_rows())
    assert failed.isdisjoint(got) and failed | set(got) == set(want)


def test_adapter_called_on_a_frame_and_progress_bar(example_pairs, tmp_path, stub, capsys):
    few = example_pairs.head(4)
    j = _judge(stub.url)
    out = j(few)
    assert out.select("query_id", "doc_id", "relevance").rows() == [
        (a, b, g) for (a, b), g in _expected(few).items()]
    assert out["rationale"].str.starts_with("##final score").all()
    sef.judge(example_pairs.head(6), j, journal=tmp_path / "j.jsonl", progress=True)
    assert "judge:stub-model" in capsys.readouterr().err
    j.close()
