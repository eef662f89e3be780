"""The label widget's Python side: default journal path, query-at-a-time order, the
sequence-numbered protocol with the view (fast keys, duplicates, acks) and the heartbeat.

The browser side is driven for real in tests/test_widget_browser.py and
tests/test_notebook04_browser.py; here the view's messages are fed in directly.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import searcheval_frames as sef
from searcheval_frames.evalset.store import LabelStore, default_journal

pytest.importorskip("anywidget")

POOL = pl.DataFrame({
    "query_id": ["q10", "q33", "q10", "q2", "q33", "q10"],
    "doc_id": ["a", "b", "c", "d", "e", "f"],
    "best_rank": [3, 1, 1, 2, 2, 2],
})


def _sent(w) -> list[dict]:
    box: list[dict] = []
    w.send = lambda content, buffers=None: box.append(content)  # type: ignore[method-assign]
    return box


def test_default_journal_is_labels_folder_in_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = sef.label_widget(POOL, assessor="me")  # no path: labels/me.jsonl here
    assert w.store.path == tmp_path / "labels" / "me.jsonl"
    assert w.journal == str(tmp_path / "labels" / "me.jsonl")
    w.label(2)
    w.label(0)
    # a "restarted kernel": a new widget on the same cell's arguments resumes
    w2 = sef.label_widget(POOL, assessor="me")
    assert w2.progress["done"] == 2
    assert sorted(LabelStore(tmp_path / "labels" / "me.jsonl").qrels().rows()) == sorted(
        [(w.store.qrels()["query_id"][i], w.store.qrels()["doc_id"][i], g)
         for i, g in enumerate(w.store.qrels()["relevance"])])
    assert w2.current["doc_id"] not in set(w.store.qrels()["doc_id"])
    assert default_journal("me") == tmp_path / "labels" / "me.jsonl"
    assert "tmp" not in str(default_journal("x").relative_to(tmp_path))


def test_query_order_walks_one_query_at_a_time_best_rank_first(tmp_path):
    w = sef.label_widget(POOL, store=tmp_path / "l.jsonl", assessor="me")
    order = [w._items[i]["doc_id"] for i in range(len(w._items))]
    assert order == ["c", "f", "a", "b", "e", "d"]  # q10 (ranks 1,2,3), q33, q2
    old = sef.label_widget(POOL, store=tmp_path / "l.jsonl", assessor="me", order="pool")
    assert [it["doc_id"] for it in old._items] == list("abcdef")


def _reference_order(rows: list[tuple[str, str, int | None]]) -> list[tuple[str, str]]:
    """Slow reference: dedupe (first wins), queries by first appearance, then best rank
    (missing last), then pool position."""
    seen, kept = set(), []
    for q, d, r in rows:
        if (q, d) not in seen:
            seen.add((q, d))
            kept.append((q, d, r))
    first: dict[str, int] = {}
    for i, (q, _, _) in enumerate(kept):
        first.setdefault(q, i)
    idx = sorted(range(len(kept)), key=lambda i: (
        first[kept[i][0]], kept[i][2] is None, kept[i][2] or 0, i))
    return [(kept[i][0], kept[i][1]) for i in idx]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["q1", "q2", "q3", "q10"]),
                          st.sampled_from([f"d{i}" for i in range(8)]),
                          st.one_of(st.none(), st.integers(1, 20))), min_size=1, max_size=25))
def test_query_order_matches_a_slow_reference(tmp_path_factory, rows):
    pool = pl.DataFrame(rows, schema={"query_id": pl.String, "doc_id": pl.String,
                                      "best_rank": pl.Int64}, orient="row")
    path = tmp_path_factory.mktemp("w") / "l.jsonl"
    w = sef.label_widget(pool, store=path, assessor="me")
    assert [(it["query_id"], it["doc_id"]) for it in w._items] == _reference_order(rows)
    for other in ("q", 1):
        with pytest.raises(sef.errors.InvalidOptionError):
            sef.label_widget(pool, store=path, order=other)


def test_keys_faster_than_the_kernel_label_one_document_each(tmp_path):
    path = tmp_path / "l.jsonl"
    w = sef.label_widget(POOL, store=path, assessor="me", order="pool")
    sent = _sent(w)
    # three keys pressed 40 ms apart: the view still shows item 0 for all three; the
    # second and third say they were pressed while earlier actions were unanswered
    for seq, grade in [(1, 3), (2, 1), (3, 0)]:
        w._on_msg(w, {"action": "label", "grade": grade, "index": 0, "view": "v",
                      "seq": seq, "behind": seq > 1}, [])
    assert sorted(LabelStore(path).qrels().rows()) == [("q10", "a", 3), ("q10", "c", 0),
                                                       ("q33", "b", 1)]
    assert [m["ack"] for m in sent] == [1, 2, 3]
    assert all(m["session"] == w.session and m["view"] == "v" for m in sent)
    # the same message delivered twice is applied once
    w._on_msg(w, {"action": "label", "grade": 2, "index": 3, "view": "v", "seq": 3}, [])
    assert LabelStore(path).records().height == 3
    # a view that is up to date labels exactly what it shows
    w._on_msg(w, {"action": "label", "grade": 2, "index": 5, "view": "v", "seq": 4,
                  "behind": False}, [])
    assert ("q10", "f", 2) in LabelStore(path).qrels().rows()
    # a second view of the same widget keeps its own sequence
    w._on_msg(w, {"action": "label", "grade": 1, "index": 4, "view": "w", "seq": 1}, [])
    assert ("q33", "e", 1) in LabelStore(path).qrels().rows()


def test_ping_is_answered_with_the_session(tmp_path):
    w = sef.label_widget(POOL, store=tmp_path / "l.jsonl", assessor="me")
    sent = _sent(w)
    w._on_msg(w, {"action": "ping", "nonce": 7}, [])
    assert sent == [{"pong": 7, "session": w.session}]
    other = sef.label_widget(POOL, store=tmp_path / "l.jsonl", assessor="me")
    assert other.session != w.session  # a re-run cell is a new session
    assert LabelStore(tmp_path / "l.jsonl").records().height == 0


def test_pool_is_required(tmp_path):
    with pytest.raises(sef.SearchEvalError, match="give the pool"):
        sef.label_widget(store=tmp_path / "l.jsonl")


def test_widget_module_path_is_shown_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = sef.label_widget(POOL, store=Path("rel") / "x.jsonl", assessor="me")
    assert w.journal == str(tmp_path / "rel" / "x.jsonl")


def test_labelling_another_document_by_code_leaves_the_view(tmp_path):
    w = sef.label_widget(POOL, store=tmp_path / "l.jsonl", assessor="me")
    shown = w.position
    w.label(1, index=3)  # not the one on screen: the view stays
    assert w.position == shown and w.progress["done"] == 1
    w.label(0)  # the one on screen: the view moves on to the next unlabelled
    assert w.position not in (shown, 3)
    assert (w._items[w.position]["query_id"], w._items[w.position]["doc_id"]) not in {
        (q, d) for q, d, _ in LabelStore(tmp_path / "l.jsonl").qrels().rows()}
