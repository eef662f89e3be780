"""The label database (issue #33): SQLite and a real PostgreSQL, each checked against a
slow reference of what the events mean; journals imported; errors that name the file."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import searcheval_frames as sef
from searcheval_frames.errors import (
    FileAccessError,
    FileFormatError,
    InvalidOptionError,
    LabelConflictError,
    StoreUnavailableError,
)
from searcheval_frames.evalset.labeldb.schema import SCHEMA_VERSION
from searcheval_frames.evalset.store import JournalStore, LabelStore


@pytest.fixture(params=["sqlite", "postgres"])
def target(request, tmp_path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "labels.db")
    return request.getfixturevalue("postgres_dsn")


# --------------------------------------------------------------------------- reference
def reference(ops: list[tuple]) -> dict:
    """Slow reference: replay operations in order with plain dicts."""
    current: dict[tuple[str, str, str], tuple[str, int | None]] = {}
    adjudicated: dict[tuple[str, str], int] = {}
    for op in ops:
        kind, who, q, d = op[:4]
        if kind == "label":
            current[(who, q, d)] = ("label", op[4])
        elif kind == "cant_judge":
            current[(who, q, d)] = ("cant_judge", None)
        elif kind == "retract":
            current.pop((who, q, d), None)
        elif kind == "adjudicate":
            adjudicated[(q, d)] = op[4]
    labels = {k: v[1] for k, v in current.items() if v[0] == "label"}
    return {"labels": labels, "current": current, "adjudicated": adjudicated}


def apply(store: LabelStore, ops: list[tuple]) -> None:
    for op in ops:
        kind, who, q, d = op[:4]
        if kind == "label":
            store.append(q, d, op[4], assessor=who, seconds=op[5])
        elif kind == "cant_judge":
            store.cant_judge(q, d, assessor=who)
        elif kind == "retract":
            store.remove(q, d, assessor=who)
        elif kind == "note":
            store.note(q, d, "a note", assessor=who)
        else:
            store.adjudicate(q, d, op[4], assessor=who)


OPS = st.lists(st.tuples(
    st.sampled_from(["label", "label", "label", "cant_judge", "retract", "note", "adjudicate"]),
    st.sampled_from(["ana", "ben", "cy"]), st.sampled_from(["q1", "q2"]),
    st.sampled_from(["d1", "d2", "d3"]), st.integers(0, 3),
    st.floats(0.5, 60, allow_nan=False)), max_size=30)


def check_against_reference(store: LabelStore, ops: list[tuple]) -> None:
    ref = reference(ops)
    got = {(a, q, d): v for q, d, a, v, _ in store.labels().iter_rows()}
    assert got == ref["labels"]
    for (who, q, d), label in ref["labels"].items():
        assert store.get(q, d, assessor=who) == label
    judged = {(a, q, d): k for q, d, a, k, *_ in store.judgements().iter_rows()}
    assert judged == {k: v[0] for k, v in ref["current"].items()}
    # conflicts: pairs with more than one distinct current label
    by_pair: dict[tuple[str, str], set[int]] = {}
    for (_, q, d), v in ref["labels"].items():
        by_pair.setdefault((q, d), set()).add(v)
    conflicts = {k for k, v in by_pair.items() if len(v) > 1}
    conf = store.conflicts()
    assert set(conf.select("query_id", "doc_id").rows()) == conflicts
    assert {(q, d): a for q, d, a in conf.select("query_id", "doc_id", "adjudicated").rows()} == {
        k: ref["adjudicated"].get(k) for k in conflicts}
    # qrels by a policy = merge_labels of the reference labels
    if ref["labels"]:
        long = pl.DataFrame([(q, d, a, v) for (a, q, d), v in ref["labels"].items()],
                            schema=["query_id", "doc_id", "assessor", "relevance"], orient="row")
        for policy in ("max", "min"):
            want = sef.merge_labels(long, policy=policy).qrels
            assert sorted(store.qrels(policy=policy).rows()) == sorted(want.rows())
    open_ = [k for k in conflicts if k not in ref["adjudicated"]]
    if open_:
        with pytest.raises(LabelConflictError, match="no adjudicated label"):
            store.qrels(policy="adjudicated")
    else:
        want_adj = {k: (ref["adjudicated"][k] if k in ref["adjudicated"] else next(iter(v)))
                    for k, v in by_pair.items()}
        want_adj.update({k: v for k, v in ref["adjudicated"].items() if k not in by_pair})
        got_adj = {(q, d): r for q, d, r in store.qrels(policy="adjudicated").rows()}
        assert got_adj == want_adj


@settings(max_examples=40, deadline=None)
@given(ops=OPS)
def test_sqlite_state_matches_a_slow_reference(tmp_path_factory, ops):
    store = LabelStore(tmp_path_factory.mktemp("db") / "l.db", assessor="ana")
    apply(store, ops)
    check_against_reference(store, ops)
    # history is kept: every event is a row
    assert store.events().height == len(ops)
    store.close()


def test_both_backends_hold_the_same_state(target):
    ops = [("label", "ana", "q1", "d1", 2, 3.0), ("label", "ben", "q1", "d1", 0, 7.5),
           ("cant_judge", "ben", "q1", "d2"), ("label", "ana", "q1", "d2", 1, 4.0),
           ("label", "ana", "q1", "d1", 3, 2.0), ("retract", "ana", "q1", "d2"),
           ("note", "cy", "q1", "d1"), ("label", "cy", "q2", "d3", 1, 1.0),
           ("adjudicate", "cy", "q1", "d1", 1)]
    with LabelStore(target, assessor="ana", grades=[0, 1, 2, 3]) as store:
        apply(store, ops)
        check_against_reference(store, ops)
        ev = store.events()
        assert ev["kind"].to_list() == [op[0] for op in ops]
        assert ev["seconds"].to_list()[:2] == [3.0, 7.5]
        assert store.notes().select("assessor", "note").rows() == [("cy", "a note")]
        assert store.schema_version == SCHEMA_VERSION
    again = LabelStore(target, assessor="ben")  # reopened: same state, schema once
    check_against_reference(again, ops)
    assert again.backend.query("SELECT count(*) FROM schema_version") == [(1,)]
    with pytest.raises(sef.errors.InvalidRelevanceError, match="not a valid label"):
        LabelStore(target, grades=[0, 1]).append("q1", "d1", 5)
    with pytest.raises(InvalidOptionError, match="an id is needed"):
        again.append("", "d1", 1)
    again.close()


def test_progress_per_assessor_against_numpy(tmp_path):
    store = LabelStore(tmp_path / "p.db", assessor="ana")
    pool = pl.DataFrame({"query_id": ["q1"] * 4 + ["q2"] * 2,
                         "doc_id": ["a", "b", "c", "d", "e", "f"]})
    secs = {"ana": [3.0, 9.0, 4.0], "ben": [10.0, 20.0]}
    for (q, d), s in zip([("q1", "a"), ("q1", "b"), ("q2", "e")], secs["ana"], strict=True):
        store.append(q, d, 1, seconds=s)
    for (q, d), s in zip([("q1", "a"), ("q1", "c")], secs["ben"], strict=True):
        store.append(q, d, 0, assessor="ben", seconds=s)
    store.cant_judge("q1", "d", assessor="ben")
    prog = store.progress(pool, by="assessor", per_pair=2)
    rows = {r["assessor"]: r for r in prog.to_dicts()}
    # brute force: pairs open to each (unseen by them, fewer than 2 labels)
    n_labels = {("q1", "a"): 2, ("q1", "b"): 1, ("q2", "e"): 1, ("q1", "c"): 1}
    seen = {"ana": {("q1", "a"), ("q1", "b"), ("q2", "e")},
            "ben": {("q1", "a"), ("q1", "c"), ("q1", "d")}}
    for who in ("ana", "ben"):
        left = [p for p in pool.rows() if p not in seen[who] and n_labels.get(p, 0) < 2]
        assert rows[who]["left"] == len(left)
        assert rows[who]["median_seconds"] == pytest.approx(np.median(secs[who]))
        assert rows[who]["eta_seconds"] == pytest.approx(len(left) * np.median(secs[who]))
    assert rows["ben"]["cant_judge"] == 1 and rows["ana"]["done"] == 3
    # with assign, ana only sees q2
    prog = store.progress(pool, by="assessor", per_pair=2, assign={"ana": ["q2"], "ben": ["q1"]})
    assert {r["assessor"]: r["left"] for r in prog.to_dicts()} == {"ana": 1, "ben": 1}
    # without a pool: done and median, no "left"
    assert store.progress()["left"].null_count() == 2
    # the per-query progress of earlier versions
    assert store.progress(pool).rows()[0] == ("q1", 4, 2, 0.5)


def test_agreement_reads_the_store_live(tmp_path):
    path = tmp_path / "a.db"
    ana, ben = LabelStore(path, assessor="ana"), LabelStore(path, assessor="ben")
    for d, a, b in [("d1", 1, 1), ("d2", 0, 1), ("d3", 1, 1), ("d4", 0, 0)]:
        ana.append("q1", d, a)
        ben.append("q1", d, b)
    first = sef.agreement(ana)
    ref = sef.agreement({"ana": {"q1": {"d1": 1, "d2": 0, "d3": 1, "d4": 0}},
                         "ben": {"q1": {"d1": 1, "d2": 1, "d3": 1, "d4": 0}}})
    assert first.pairs.rows() == ref.pairs.rows()
    ana.append("q1", "d2", 1)  # ana changes her mind: the same store object sees it
    assert sef.agreement(ana).pairs["raw_agreement"][0] == 1.0
    assert sef.agreement(str(path)).pairs["raw_agreement"][0] == 1.0


# --------------------------------------------------------------------------- journals
def test_import_journal_is_idempotent_and_export_round_trips(target, tmp_path):
    journal = tmp_path / "old.jsonl"
    old = LabelStore(journal, assessor="ana")
    assert isinstance(old, JournalStore) and "import_journal" in repr(old)
    old.append("q1", "d1", 2)
    old.append("q1", "d1", 2)  # an identical label again: two events, both kept
    old.append("q1", "d2", 1, assessor="ben", meta={"key": "abc", "model": "m"})
    old.remove("q1", "d1")
    old.append("q2", "d3", 0)
    with journal.open("ab") as fh:
        fh.write(b'{"query_id":"q9","doc_id":"torn"')  # a writer killed mid-line
    with pytest.warns(UserWarning, match="incomplete line"):
        want = LabelStore(journal).labels()
    db = LabelStore(target, assessor="x")
    first = db.import_journal(journal)
    assert (first.lines, first.added, first.already, first.torn_bytes) == (5, 5, 0, 32)
    second = db.import_journal(journal)
    assert (second.added, second.already) == (0, 5)
    assert db.labels().drop("time").rows() == want.drop("time").rows()
    assert db.labels()["time"].to_list() == want["time"].to_list()
    assert [r["meta"] for r in db.meta_records()] == [{"key": "abc", "model": "m"}]
    out = db.export_journal(tmp_path / "out.jsonl")
    other = LabelStore(tmp_path / "other.db")
    assert other.import_journal(out).added == 5
    assert other.labels().rows() == db.labels().rows()
    assert db.import_journal(out).added == 0  # its own export adds nothing either
    db.note("q1", "d2", "hm")
    db.cant_judge("q1", "d3")
    db.export_journal(tmp_path / "out2.jsonl")
    assert LabelStore(tmp_path / "out2.jsonl").labels().rows() == db.labels().rows()
    bad = tmp_path / "bad.jsonl"
    bad.write_text(journal.read_text().splitlines()[0].replace('"d1"', '"d7"') + "\n")
    with pytest.raises(FileFormatError, match=r"bad\.jsonl:1: .*nothing was imported"):
        db.import_journal(bad)
    db.close()


def test_import_journal_on_the_class_goes_to_the_default_database(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    j = LabelStore(tmp_path / "me.jsonl", assessor="me")
    j.extend({"q1": {"d1": 1, "d2": 0}})
    assert sef.LabelStore.import_journal(j.path).added == 2
    assert LabelStore().labels().height == 2 and LabelStore().path == (
        tmp_path / "labels" / "labels.db")
    assert sef.LabelStore.import_journal(j.path).added == 0


def test_a_journal_store_keeps_labels_only(tmp_path):
    j = LabelStore(tmp_path / "j.jsonl", assessor="ana")
    j.append("q1", "d1", 1, seconds=2.5, note="looked twice")
    assert j.events()["seconds"].to_list() == [2.5]
    with pytest.raises(InvalidOptionError, match="import_journal"):
        j.cant_judge("q1", "d1")
    with pytest.raises(InvalidOptionError, match="is a journal, not a database"):
        j.import_journal(j.path)


# --------------------------------------------------------------------------- damage
def test_a_damaged_database_file_is_named_with_what_to_do(tmp_path):
    path = tmp_path / "labels.db"
    store = LabelStore(path, assessor="ana")
    store.extend({"q1": {f"d{i}": i % 3 for i in range(3000)}})
    store.close()
    data = bytearray(path.read_bytes())
    assert len(data) > 3 * 4096
    data[4096 + 100: 3 * 4096] = b"\x00garbage" * ((2 * 4096 - 100) // 8)  # damage pages 2-3
    path.write_bytes(bytes(data))
    with pytest.raises(FileFormatError) as err:
        s = LabelStore(path, assessor="ana")
        s.labels()
        s.backend.check()
    msg = str(err.value)
    assert str(path) in msg and "damaged" in msg and ".recover" in msg
    path.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(FileFormatError, match="damaged"):
        LabelStore(path)
    with pytest.raises(FileAccessError, match="is a folder"):
        LabelStore(tmp_path)
    with pytest.raises(InvalidOptionError, match="pass the URL as a string"):
        LabelStore(Path("postgresql://u@h/db"))


@contextlib.contextmanager
def tiny_disk(tmp_path: Path):
    """A 1 MiB tmpfs (as root), else None."""
    mnt = tmp_path / "tiny"
    mnt.mkdir()
    ok = os.geteuid() == 0 and subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)],
        capture_output=True).returncode == 0
    try:
        yield mnt if ok else None
    finally:
        if ok:
            subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_a_full_disk_names_the_file_and_drops_no_acknowledged_label(tmp_path):
    with tiny_disk(tmp_path) as mnt:
        path = (mnt if mnt is not None else tmp_path) / "labels.db"
        store = LabelStore(path, assessor="ana")
        if mnt is None:  # not root: SQLite's own size limit gives the same error
            store.backend.conn.execute("PRAGMA max_page_count = 40")
        acked = []
        with pytest.raises(FileAccessError) as err:
            for i in range(100_000):
                store.append("q1", f"d{i:06d}", 1, note="x" * 200)
                acked.append(f"d{i:06d}")
        msg = str(err.value)
        assert str(path.resolve()) in msg and "full" in msg and "Nothing was saved" in msg
        assert len(acked) >= 5
        store.close()
        if mnt is not None:  # free space: the file opens and holds every acknowledged label
            (mnt / "filler").unlink(missing_ok=True)
        back = sqlite3.connect(path).execute(
            "SELECT doc_id FROM events ORDER BY id").fetchall()
        assert [d for (d,) in back] == acked


def test_a_newer_schema_is_refused(tmp_path):
    path = tmp_path / "n.db"
    LabelStore(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO schema_version VALUES (99, 'later')")
    with pytest.raises(FileFormatError, match="schema version 99"):
        LabelStore(path)


# --------------------------------------------------------------------------- server
def test_postgres_going_away_and_coming_back(postgres_server, postgres_dsn):
    store = LabelStore(postgres_dsn, assessor="ana")
    store.append("q1", "d1", 1)
    postgres_server.stop()
    try:
        with pytest.raises(StoreUnavailableError) as err:
            store.append("q1", "d2", 2)
        assert f"127.0.0.1:{postgres_server.port}" in str(err.value)
        assert "Nothing of this call was saved" in str(err.value)
        assert not store.backend.ping()
    finally:
        postgres_server.start()
    store.append("q1", "d2", 2)  # reconnects by itself
    assert store.qrels().rows() == [("q1", "d1", 1), ("q1", "d2", 2)]
    store.close()


def test_postgres_password_is_not_shown():
    from searcheval_frames.evalset.labeldb.postgres import safe_dsn

    assert "secret" not in safe_dsn("postgresql://u:secret@h:1/db")


@settings(max_examples=40, deadline=None)
@given(ops=OPS, extra=st.sampled_from(["", "seconds", "meta", "blank"]))
def test_fast_journal_import_equals_the_exact_reader(tmp_path_factory, ops, extra):
    from searcheval_frames.evalset.labeldb.exchange import journal_events

    path = tmp_path_factory.mktemp("j") / "j.jsonl"
    j = LabelStore(path, assessor="ana")
    for op in ops:
        kind, who, q, d = op[:4]
        if kind == "retract":
            j.remove(q, d, assessor=who)
        elif kind == "label":
            j.append(q, d, op[4], assessor=who, seconds=op[5] if extra == "seconds" else None,
                     meta={"key": f"k{op[4]}"} if extra == "meta" else None)
    if extra == "blank":
        with path.open("ab") as fh:
            fh.write(b"\n")
    if not path.exists():
        return
    fast = journal_events(path)
    exact = journal_events(path, fast=False)
    assert fast == exact


def test_an_automatic_judge_caches_its_answers_in_the_database(target):
    pairs = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"],
                          "query": ["bm25", "bm25"],
                          "text": ["bm25 is a ranking function", "a cake recipe"]})
    calls = []

    def overlap(p):
        calls.append(p.height)
        return p.with_columns(relevance=pl.col("text").str.contains(pl.col("query")) * 2)

    first = sef.judge(pairs, overlap, journal=target, progress=False)
    again = sef.judge(pairs, overlap, journal=target, progress=False)
    assert (first.calls, again.calls, again.cached, sum(calls)) == (1, 0, 2, 2)
    store = LabelStore(target)
    keys = store.backend.query("SELECT cache_key FROM events ORDER BY id")
    assert len(keys) == 2 and [k for (k,) in keys] == [
        r["meta"]["key"] for r in store.meta_records()]
    assert all(len(k) == 64 for (k,) in keys)  # sha256: the content-addressed key
    assert sorted(store.qrels(assessor="judge:overlap").rows()) == [("q1", "d1", 2),
                                                                   ("q1", "d2", 0)]
    store.close()
