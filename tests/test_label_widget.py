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
from searcheval_frames.evalset.store import LabelStore, default_database, default_journal

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


def test_default_store_is_labels_db_in_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = sef.label_widget(POOL, assessor="me")  # no path: labels/labels.db here
    assert w.store.path == tmp_path / "labels" / "labels.db"
    assert w.journal == str(tmp_path / "labels" / "labels.db")
    w.label(2)
    w.label(0)
    # a "restarted kernel": a new widget on the same cell's arguments resumes
    w2 = sef.label_widget(POOL, assessor="me")
    assert w2.progress["done"] == 2
    # another assessor on this machine shares the file and starts from zero
    other = sef.label_widget(POOL, assessor="you")
    assert other.store.path == w.store.path and other.progress["done"] == 0
    assert sorted(LabelStore(tmp_path / "labels" / "labels.db").qrels().rows()) == sorted(
        [(w.store.qrels()["query_id"][i], w.store.qrels()["doc_id"][i], g)
         for i, g in enumerate(w.store.qrels()["relevance"])])
    assert w2.current["doc_id"] not in set(w.store.qrels()["doc_id"])
    assert default_journal("me") == tmp_path / "labels" / "me.jsonl"
    assert default_database() == tmp_path / "labels" / "labels.db"
    assert "tmp" not in str(default_database().relative_to(tmp_path))


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


# --------------------------------------------------------------------------- issue #33
TEAM_POOL = pl.DataFrame({
    "query_id": ["q1"] * 4 + ["q2"] * 3,
    "doc_id": ["a", "b", "c", "d", "e", "f", "g"],
    "best_rank": [1, 2, 3, 4, 1, 2, 3],
    "runs": [["bm25"], ["bm25", "dense"], ["dense"], ["bm25"], ["dense"], ["bm25"], ["x"]],
})


def _drain(widgets, rng_order) -> list[tuple[str, str, str]]:
    """Let the widgets label in turn (rng_order: whose turn) until none has work."""
    given = []
    active = list(widgets)
    for who in rng_order:
        w = widgets[who]
        if w not in active:
            continue
        if w.current is None:
            active.remove(w)
            if not active:
                break
            continue
        it = w.current
        w.label(1 if who == "ana" else 0)
        given.append((who, it["query_id"], it["doc_id"]))
    for w in widgets.values():  # drain the rest one by one
        while w.current is not None:
            it = w.current
            w.label(1)
            given.append((w.store.assessor, it["query_id"], it["doc_id"]))
    return given


@pytest.mark.parametrize("per_pair", [1, 2, 3])
def test_team_routing_gives_each_pair_to_n_distinct_assessors(tmp_path, per_pair):
    path = tmp_path / "team.db"
    names = ["ana", "ben", "cy"]
    widgets = {n: sef.label_widget(TEAM_POOL, store=path, assessor=n, per_pair=per_pair)
               for n in names}
    order = [names[i % 3] for i in (0, 1, 1, 2, 0, 0, 2, 1, 2, 2, 0, 1) * 4]
    given = _drain(widgets, order)
    assert len(given) == len(set(given))  # nobody saw a pair twice
    per = {}
    for who, q, d in given:
        per.setdefault((q, d), set()).add(who)
    assert {k: len(v) for k, v in per.items()} == {k: per_pair for k in TEAM_POOL.select(
        "query_id", "doc_id").rows()}
    store = LabelStore(path)
    assert store.labels().height == per_pair * TEAM_POOL.height
    prog = store.progress(TEAM_POOL, by="assessor", per_pair=per_pair)
    assert prog["left"].sum() == 0 and prog["done"].sum() == per_pair * TEAM_POOL.height


def _routing_reference(items, seen, counts, who_seen, per_pair, assign, who, current):
    """Slow reference of the next pairs for ``who``."""
    out = []
    for pos, (q, d) in enumerate(items):
        if assign is not None and q not in assign.get(who, []):
            continue
        if (q, d) in who_seen or counts.get((q, d), 0) >= per_pair:
            continue
        out.append((counts.get((q, d), 0), q != (current or ""), pos, (q, d)))
    return [x[3] for x in sorted(out)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["ana", "ben", "cy"]),
                          st.integers(0, 6), st.sampled_from(["label", "cant_judge"])),
                max_size=15),
       st.integers(1, 3), st.booleans(), st.sampled_from([None, "q1", "q2"]))
def test_routing_order_matches_a_slow_reference(judged, per_pair, use_assign, current):
    from searcheval_frames.evalset.labeldb.team import routing_order

    items = TEAM_POOL.select("query_id", "doc_id").rows()
    rows = {}
    for who, i, kind in judged:  # latest judgement per (who, pair)
        rows[(who, *items[i])] = kind
    judgements = pl.DataFrame(
        [(q, d, who, kind) for (who, q, d), kind in rows.items()],
        schema={"query_id": pl.String, "doc_id": pl.String, "assessor": pl.String,
                "kind": pl.String}, orient="row")
    counts = {}
    for (_, q, d), kind in rows.items():
        if kind == "label":
            counts[(q, d)] = counts.get((q, d), 0) + 1
    assign = {"ana": ["q2"], "ben": ["q1", "q2"]} if use_assign else None
    table = TEAM_POOL.select("query_id", "doc_id").with_row_index("_pos")
    for who in ("ana", "ben"):
        got = routing_order(table, judgements, who, per_pair=per_pair, assign=assign,
                            current_query=current)
        seen = {(q, d) for (w, q, d) in rows if w == who}
        want = _routing_reference(items, None, counts, seen, per_pair, assign, who, current)
        assert got.select("query_id", "doc_id").rows() == want


def test_keys_x_u_and_notes_and_seconds(tmp_path):
    path = tmp_path / "k.db"
    w = sef.label_widget(POOL, store=path, assessor="me", order="pool")
    sent = _sent(w)
    msg = {"view": "v", "behind": False}
    w._on_msg(w, {"action": "label", "grade": 2, "index": 0, "seq": 1, **msg}, [])
    w._on_msg(w, {"action": "cant_judge", "index": 1, "seq": 2, **msg}, [])
    assert w.current["doc_id"] == "c"
    w._on_msg(w, {"action": "note", "text": "odd <b>doc</b>", "index": 2, "seq": 3, **msg}, [])
    w._on_msg(w, {"action": "undo", "seq": 4, **msg}, [])  # takes back "can't judge" of b
    assert w.current["doc_id"] == "b" and w.current["cant_judge"] is False
    assert [m["ack"] for m in sent] == [1, 2, 3, 4]
    store = LabelStore(path)
    assert store.events()["kind"].to_list() == ["label", "cant_judge", "note", "retract"]
    assert store.notes().select("doc_id", "note").rows() == [("c", "odd <b>doc</b>")]
    secs = store.events()["seconds"][0]
    assert secs is not None and 0 <= secs < 60
    w._on_msg(w, {"action": "undo", "seq": 5, **msg}, [])
    w._on_msg(w, {"action": "undo", "seq": 6, **msg}, [])
    assert w.status == "nothing to undo" and store.labels().height == 0


def test_highlight_blind_and_others(tmp_path):
    path = tmp_path / "h.db"
    queries = {"q1": "HNSW index", "q2": "bm25"}
    docs = {"a": "An <script>alert(1)</script> hnsw Index.", "e": "BM25 and bm25s"}
    sef.LabelStore(path, assessor="ben").append("q1", "a", 3)
    w = sef.label_widget(TEAM_POOL, store=path, assessor="ana", queries=queries, docs=docs)
    it = w.current
    assert it["doc_id"] == "a" and "runs" not in it and "others" not in it  # blind
    assert it["text_segments"] == [["An <script>alert(1)</script> ", False],
                                   ["hnsw Index", True], [".", False]] or it[
        "text_segments"] == [["An <script>alert(1)</script> ", False], ["hnsw", True],
                             [" ", False], ["Index", True], [".", False]]
    assert "".join(s for s, _ in it["text_segments"]) == docs["a"]
    seen = sef.label_widget(TEAM_POOL, store=path, assessor="ana", queries=queries, docs=docs,
                            blind=False, highlight=False)
    assert seen.current["others"] == [["ben", 3]] and seen.current["runs"] == "bm25"
    assert "text_segments" not in seen.current


def test_review_mode_adjudicates_conflicts(tmp_path):
    path = tmp_path / "r.db"
    s = LabelStore(path, assessor="ana")
    s.extend({"q1": {"a": 1, "b": 0, "c": 2}})
    s.extend({"q1": {"a": 1, "b": 2, "c": 0}}, assessor="ben")
    w = sef.label_widget(TEAM_POOL, store=path, assessor="lead", mode="review")
    assert [it["doc_id"] for it in w._items] == ["b", "c"]
    assert w.current["others"] == [["", 0], ["", 2]]  # blind: labels without names
    assert w.progress["total"] == 2
    w.label(1)
    assert w.current["doc_id"] == "c"
    w.label(2)
    assert w.current is None and "adjudicated" in w.status
    assert sorted(s.qrels(policy="adjudicated").rows()) == [("q1", "a", 1), ("q1", "b", 1),
                                                             ("q1", "c", 2)]
    assert s.conflicts()["adjudicated"].to_list() == [1, 2]
    named = sef.label_widget(TEAM_POOL, store=path, assessor="lead", mode="review", blind=False)
    assert named.current is None  # nothing left to review
    assert "1" not in named.team  # no team rows in review


def test_assign_restricts_queries_and_old_order_warns(tmp_path):
    path = tmp_path / "a.db"
    w = sef.label_widget(TEAM_POOL, store=path, assessor="ana", assign={"ana": ["q2"]})
    assert w.current["query_id"] == "q2" and w.progress["total"] == 3
    with pytest.raises(sef.errors.InvalidOptionError, match="no queries are assigned to 'ben'"):
        sef.label_widget(TEAM_POOL, store=path, assessor="ben", assign={"ana": ["q2"]})
    with pytest.raises(sef.errors.InvalidOptionError, match="assign"):
        sef.label_widget(TEAM_POOL, store=path, assessor="ana", assign=["q2"])
    with pytest.warns(DeprecationWarning, match=r"call label_widget\(pool, store='.*a\.db'"):
        old = sef.label_widget(str(path), TEAM_POOL, assessor="ana")
    assert old.store.path == path
    with pytest.raises(sef.errors.InvalidOptionError, match="mode="):
        sef.label_widget(TEAM_POOL, store=path, mode="adjudicate")


def test_widget_refuses_input_while_postgres_is_away(postgres_server, postgres_dsn):
    w = sef.label_widget(TEAM_POOL, store=postgres_dsn, assessor="ana", per_pair=2)
    sent = _sent(w)
    w.label(2)
    postgres_server.stop()
    try:
        w._on_msg(w, {"action": "label", "grade": 1, "index": w.position, "view": "v",
                      "seq": 1}, [])
        assert w.store_ok is False and "not saved" in w.status
        assert sent[-1]["ack"] == 1  # answered: the view knows what happened
        w._on_msg(w, {"action": "label", "grade": 1, "index": w.position, "view": "v",
                      "seq": 2}, [])  # refused without trying
        w._last_try = 0
        w._on_msg(w, {"action": "ping", "nonce": 1}, [])
        assert w.store_ok is False
    finally:
        postgres_server.start()
    w._last_try = 0
    w._on_msg(w, {"action": "ping", "nonce": 2}, [])
    assert w.store_ok is True and "back" in w.status
    w._on_msg(w, {"action": "label", "grade": 1, "index": w.position, "view": "v", "seq": 3}, [])
    assert LabelStore(postgres_dsn).labels().height == 2


def test_my_progress_row_agrees_with_the_bars(tmp_path):
    w = sef.label_widget(TEAM_POOL, store=tmp_path / "p.db", assessor="ana")
    for _ in range(3):
        w.label(1)
        me = next(r for r in w.team if r["me"])
        assert (me["done"], me["left"]) == (w.progress["done"],
                                            w.progress["total"] - w.progress["done"])


def test_a_lease_is_the_pair_on_screen_only(tmp_path):
    path = tmp_path / "l.db"
    ana = sef.label_widget(TEAM_POOL, store=path, assessor="ana", per_pair=1)
    assert ana.current["doc_id"] == "a"
    store = LabelStore(path)
    assert store.leases().select("doc_id", "assessor").rows() == [("a", "ana")]
    ana.skip()  # ana moves on: "a" is free again, her lease is the pair she sees now
    shown = ana.current["doc_id"]
    assert store.leases().select("doc_id", "assessor").rows() == [(shown, "ana")]
    ben = sef.label_widget(TEAM_POOL, store=path, assessor="ben", per_pair=1)
    assert ben.current["doc_id"] == "a"
    ana.label(1)  # judged: no lease left for that pair, a new one for her next pair
    held = dict(store.leases().select("assessor", "doc_id").rows())
    assert held["ben"] == "a" and held["ana"] not in ("a", shown)


@settings(max_examples=12, deadline=None)
@given(order=st.lists(st.sampled_from(["ana", "ben", "cy"]), min_size=5, max_size=40),
       per_pair=st.integers(1, 3), skips=st.sets(st.integers(0, 39), max_size=4))
def test_team_routing_under_any_interleaving(tmp_path_factory, order, per_pair, skips):
    """Three people labelling in any order (and skipping now and then): each pair ends
    with exactly ``per_pair`` distinct assessors, none twice, and while they work no
    pair gets more than ``per_pair`` labels."""
    path = tmp_path_factory.mktemp("team") / "t.db"
    widgets = {n: sef.label_widget(TEAM_POOL, store=path, assessor=n, per_pair=per_pair)
               for n in ("ana", "ben", "cy")}
    given = []
    for k, who in enumerate(order):
        w = widgets[who]
        if w.current is None:
            continue
        if k in skips:
            w.skip()
            continue
        it = w.current
        w.label(k % 4)
        given.append((who, it["query_id"], it["doc_id"]))
        counts = LabelStore(path).labels().group_by("query_id", "doc_id").len()["len"]
        assert counts.max() <= per_pair
    given += _drain(widgets, [])
    assert len(given) == len(set(given))
    per = {}
    for who, q, d in given:
        per.setdefault((q, d), set()).add(who)
    assert sorted(len(v) for v in per.values()) == [per_pair] * TEAM_POOL.height
