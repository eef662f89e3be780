"""The labelling widget's model (:class:`LabelWidget`): the Python side of the view.

It holds the items, asks the store what this assessor has judged (and, for a team, what
everyone has: :func:`~.labeldb.team.routing_order` picks the next pair), commits each
action before acknowledging it to the view, and answers the view's heartbeat (telling
it when the store cannot be reached). :func:`~searcheval_frames.label_widget` builds it.
"""

from __future__ import annotations

import secrets
import time
from pathlib import Path
from typing import Any

import polars as pl

from ..errors import EmptyInputError, InvalidOptionError, StoreUnavailableError
from ..optional import require
from .grades import Grades, grade_names, normalize_grades
from .labeldb.state import active_leases, current_judgements
from .labeldb.team import assessor_progress, format_eta, routing_order
from .store import LabelStore
from .widget_items import view_item

_FEATURE = "sef.label_widget (without it, label with a sheet: sef.export_label_sheet)"
try:
    import anywidget
    import traitlets
except ModuleNotFoundError:  # the one friendly message naming the labeling extra
    require("anywidget", _FEATURE)
    require("traitlets", _FEATURE)
    raise

__all__ = ["LabelWidget"]

_STATIC = Path(__file__).parent / "_static"
_KEY = ["query_id", "doc_id"]


class LabelWidget(anywidget.AnyWidget):
    """The widget made by :func:`label_widget` (see there); also drivable from code.

    Methods :meth:`label`, :meth:`cant_judge`, :meth:`note`, :meth:`undo`, :meth:`next`,
    :meth:`prev`, :meth:`skip`, :meth:`clear` and :meth:`goto` (with :meth:`find`) do
    what the buttons and keys do; :attr:`store` is the
    :class:`~searcheval_frames.LabelStore` the labels go to.
    """

    _esm = _STATIC / "label_widget.js"
    _css = _STATIC / "label_widget.css"

    item = traitlets.Dict().tag(sync=True)
    grades: traitlets.List[Any] = traitlets.List().tag(sync=True)
    progress = traitlets.Dict().tag(sync=True)
    #: per assessor: done, left, median seconds, ETA (the store's progress)
    team: traitlets.List[Any] = traitlets.List().tag(sync=True)
    status = traitlets.Unicode("").tag(sync=True)
    assessor = traitlets.Unicode("").tag(sync=True)
    saved_count = traitlets.Int(0).tag(sync=True)
    #: where the labels go (a database file, a server without its password, a journal)
    journal = traitlets.Unicode("").tag(sync=True)
    #: "label" or "review"
    mode = traitlets.Unicode("label").tag(sync=True)
    #: False while the store cannot be reached: the view refuses input
    store_ok = traitlets.Bool(True).tag(sync=True)
    #: an id of this kernel's widget: a view of another (older) kernel's widget sees a
    #: different one after the cell is run again
    session = traitlets.Unicode("").tag(sync=True)

    def __init__(self, store: LabelStore, items: list[dict[str, Any]], grades: Grades, *,
                 mode: str = "label", per_pair: int | None = None,
                 assign: dict[str, list[str]] | None = None, blind: bool = True,
                 highlight: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.store = store
        self._items = items
        self._grades = grades
        self._lookup = normalize_grades(grades)
        self._team = per_pair is not None or assign is not None
        self._per_pair = per_pair if per_pair is not None else 1 << 30
        self._assign = assign
        self._blind, self._highlight = blind, highlight
        self._pos = -1
        self._index: dict[tuple[str, str], int] = {}
        self._table = pl.DataFrame()
        self._query_rows: dict[str, list[int]] = {}
        self._others: dict[tuple[str, str], list[list[Any]]] = {}
        self._reindex()
        self._mine: dict[tuple[str, str], Any] = {}
        self._judgements = pl.DataFrame()
        self._leases: pl.DataFrame | None = None
        self._undo: list[tuple[str, str]] = []
        self._shown_at = time.monotonic()
        self._last_try = 0.0
        self._team_at = 0.0
        self._left = 0
        self._last_seq: dict[str, int] = {}
        self.mode = mode
        self.grades = [[v, n] for v, n in grade_names(grades)]
        self.assessor = store.assessor
        self.journal = str(Path(store.path).resolve()) if store.path else store.location
        hint = getattr(store, "hint", "")
        self.session = secrets.token_hex(8)
        self.on_msg(self._on_msg)
        self._reload()
        if mode == "review":
            self._items_for_review()
        self.goto(self._next_index(0))
        if hint:
            self.status = f"{self.journal} is {hint}"

    # ------------------------------------------------------------------ state
    def _reload(self) -> None:
        """This assessor's judgements (and everyone's, for routing) from the store."""
        if self.mode == "review":
            adj = self.store.events(["adjudicate"], query_ids=list(self._query_rows))
            self._mine = {(q, d): v for q, d, v in adj.select(*_KEY, "label").iter_rows()}
            return
        if self._team:  # one read for both
            events = self.store.events(("lease", "label", "retract", "cant_judge"),
                                       query_ids=list(self._query_rows))
            self._leases = active_leases(events, self.store.lease_seconds)
            self._judgements = current_judgements(events.filter(pl.col("kind") != "lease"))
        else:
            self._judgements = self.store.judgements(query_ids=list(self._query_rows))
        mine = self._judgements.filter(pl.col("assessor") == self.store.assessor)
        self._mine = {(q, d): (v if k == "label" else "x")
                      for q, d, k, v in mine.select(*_KEY, "kind", "label").iter_rows()}

    def _items_for_review(self) -> None:
        conf = self.store.conflicts().join(self._table.select(_KEY), on=_KEY, how="semi")
        names = [c for c in conf.columns if c not in (*_KEY, "n_labels", "adjudicated")]
        self._others = {(r["query_id"], r["doc_id"]): [[a, r[a]] for a in names
                                                        if r[a] is not None]
                        for r in conf.to_dicts()}
        keep = [i for i, it in enumerate(self._items)
                if (it["query_id"], it["doc_id"]) in self._others]
        self._items = [self._items[i] for i in keep]
        self._reindex()

    def _reindex(self) -> None:
        self._index = {(it["query_id"], it["doc_id"]): i for i, it in enumerate(self._items)}
        self._table = pl.DataFrame({"query_id": [it["query_id"] for it in self._items],
                                    "doc_id": [it["doc_id"] for it in self._items]},
                                   schema={"query_id": pl.String, "doc_id": pl.String}
                                   ).with_row_index("_pos")
        self._query_rows = {}
        for i, it in enumerate(self._items):
            self._query_rows.setdefault(it["query_id"], []).append(i)

    def _key(self, i: int) -> tuple[str, str]:
        it = self._items[i]
        return it["query_id"], it["doc_id"]

    def _mine_ok(self, i: int) -> bool:
        """Whether item ``i`` is for this assessor (``assign=``)."""
        return self._assign is None or self._items[i]["query_id"] in self._assign.get(
            self.store.assessor, [])

    def _next_index(self, start: int, *, not_this: bool = False) -> int:
        """The next item to show: routed (a team), else the first unseen from ``start``
        (``not_this``: another than the one shown, when there is one: a skip)."""
        n = len(self._items)
        if n == 0:
            return -1
        if self._team and self.mode == "label":
            cur = self._items[self._pos]["query_id"] if 0 <= self._pos < n else None
            order = routing_order(self._table, self._judgements, self.store.assessor,
                                  per_pair=self._per_pair, assign=self._assign,
                                  current_query=cur, leases=self._leases)
            self._left = order.height
            if not_this and order.height > 1:
                order = order.filter(pl.col("_pos") != self._pos)
            return int(order["_pos"][0]) if order.height else -1
        for off in range(n):
            i = (start + off) % n
            if self._key(i) not in self._mine and self._mine_ok(i):
                return i
        if self.mode == "review":
            return -1  # every conflict has its adjudicated label
        return start % n if self._mine_ok(start % n) else -1

    def _sync(self) -> None:
        eligible = [i for i in range(len(self._items)) if self._mine_ok(i)]
        done = sum(1 for i in eligible if self._key(i) in self._mine)
        total = len(eligible)
        if self._team and self.mode == "label":  # a team: what is left for me, routed
            total = done + self._left
        if 0 <= self._pos < len(self._items):
            key = self._key(self._pos)
            others = self._others_of(key)
            it = view_item(self._items[self._pos], index=self._pos, blind=self._blind,
                           highlight=self._highlight, others=others)
            mine = self._mine.get(key)
            it["label"] = mine if isinstance(mine, int) else None
            it["cant_judge"] = mine == "x"
            rows = self._query_rows[it["query_id"]]
            q_done = sum(1 for i in rows if self._key(i) in self._mine)
            q_total = len(rows)
        else:
            it, q_done, q_total = {"index": -1}, 0, 0
        queries_done = sum(1 for rows in self._query_rows.values()
                           if all(self._key(i) in self._mine for i in rows))
        self.progress = {"done": done, "total": max(total, done), "query_done": q_done,
                         "query_total": q_total, "queries_done": queries_done,
                         "n_queries": len(self._query_rows)}
        self._sync_team()
        self.item = it
        self._shown_at = time.monotonic()

    def _others_of(self, key: tuple[str, str]) -> list[list[Any]] | None:
        if self.mode == "review":
            return self._others.get(key, [])
        if self._blind or self._judgements.is_empty():
            return None
        rows = self._judgements.filter(
            (pl.col("query_id") == key[0]) & (pl.col("doc_id") == key[1])
            & (pl.col("assessor") != self.store.assessor) & (pl.col("kind") == "label"))
        return [[a, v] for a, v in rows.select("assessor", "label").iter_rows()]

    def _sync_team(self) -> None:
        if self.mode == "review" or self._judgements.is_empty():
            self.team = []
            return
        me = self.store.assessor
        if time.monotonic() - self._team_at < 2.0 and any(r["me"] for r in self.team):
            # (others' rows at most every 2 s: they move slowly; mine now)
            done = sum(1 for k, v in self._mine.items() if v != "x" and k in self._index)
            left = self.progress["total"] - self.progress["done"]
            self.team = [{**r, "done": done, "left": left,
                          "eta": format_eta(left * r["median_seconds"])
                          if r["median_seconds"] is not None else None}
                         if r["me"] else r for r in self.team]
            return
        self._team_at = time.monotonic()
        prog = assessor_progress(self._judgements, self._table.select(_KEY),
                                 per_pair=self._per_pair if self._team else 1 << 30,
                                 assign=self._assign)
        self.team = [{"assessor": r["assessor"], "done": r["done"], "left": r["left"],
                      "median_seconds": r["median_seconds"], "eta": r["eta"],
                      "me": r["assessor"] == me} for r in prog.to_dicts()]

    @property
    def current(self) -> dict[str, Any] | None:
        """The document shown now (``query_id``, ``doc_id``, texts, current ``label``)."""
        return dict(self.item) if self.item.get("index", -1) >= 0 else None

    @property
    def position(self) -> int:
        """Index of the shown document in the pool (-1: nothing to show)."""
        return self._pos

    def find(self, query_id: Any, doc_id: Any) -> int:
        """Index of a (query, document) in the pool, for :meth:`goto` and :meth:`label`."""
        i = self._index.get((str(query_id), str(doc_id)))
        if i is None:
            raise InvalidOptionError(
                f"({query_id!r}, {doc_id!r}) is not in the pool of this widget")
        return i

    # ------------------------------------------------------------------ actions
    def goto(self, index: int) -> None:
        """Show the document at ``index`` (0-based, in pool order; -1 shows nothing)."""
        if not self._items or index == -1:
            self._pos = -1
        elif not 0 <= index < len(self._items):
            raise InvalidOptionError(f"index={index}: the pool has {len(self._items)} documents")
        else:
            self._pos = index
        if self._team and self._pos >= 0 and self.mode == "label" and self._key(
                self._pos) not in self._mine and getattr(self.store, "backend", None):
            self.store.lease(*self._key(self._pos))  # reserve it while it is on screen
        self._sync()

    def next(self) -> None:
        """Show the next document (labelled or not)."""
        if self._items:
            self.goto(min(self._pos + 1, len(self._items) - 1))

    def prev(self) -> None:
        """Show the previous document."""
        if self._items:
            self.goto(max(self._pos - 1, 0))

    def skip(self) -> None:
        """Leave this document unlabelled; show the next unlabelled one."""
        if self._items:
            if self._team:
                self._reload()  # route on what the others did since this pair was shown
            self.goto(self._next_index((self._pos + 1) % len(self._items), not_this=True))

    def _target_index(self, index: int | None) -> int:
        i = self._pos if index is None else index
        if not 0 <= i < len(self._items):
            raise EmptyInputError("label: no document is shown (nothing is left to label)")
        return i

    def _advance(self, i: int, advance: bool, what: str) -> None:
        self.saved_count += 1  # (committed: the view shows "saved" now, before routing)
        self.status = what
        self._reload()
        if advance and i == self._pos:
            nxt = self._next_index((i + 1) % len(self._items))
            if nxt == -1 or self._key(nxt) in self._mine:
                self.status += (" · all documents of the pool are labelled" if not self._team
                                else " · nothing is left for you to judge")
                nxt = -1 if self._team or self.mode == "review" else min(
                    i + 1, len(self._items) - 1)
            self.goto(nxt)
        else:
            self._sync()

    def _seconds(self, i: int) -> float | None:
        return round(time.monotonic() - self._shown_at, 3) if i == self._pos else None

    def label(self, grade: Any, *, index: int | None = None, advance: bool = True
              ) -> dict[str, Any]:
        """Label the shown document (or the one at ``index``), committed at once.

        The label is committed to the store (with the seconds since the document was
        shown) before this returns; then, when the labelled document is the one shown,
        the widget shows the next one (``advance=True``). In review mode the grade is
        the adjudicated label of the pair. Returns the record written.
        """
        i = self._target_index(index)
        q, d = self._key(i)
        secs = self._seconds(i)
        if self.mode == "review":
            rec = self.store.adjudicate(q, d, grade, seconds=secs)
            what = "adjudicated"
        else:
            rec = self.store.append(q, d, grade, seconds=secs)
            what = "saved"
        self._undo.append((q, d))
        t = str(rec["time"])[11:19]
        self._advance(i, advance, f"{what} {q} / {d} = {rec['label']} ({t} UTC)")
        return rec

    def cant_judge(self, *, index: int | None = None) -> dict[str, Any]:
        """Record "can't judge" for the shown document (another assessor gets it)."""
        i = self._target_index(index)
        q, d = self._key(i)
        rec = self.store.cant_judge(q, d, seconds=self._seconds(i))
        self._undo.append((q, d))
        self._advance(i, True, f"saved {q} / {d}: can't judge")
        return rec

    def note(self, text: str, *, index: int | None = None) -> dict[str, Any]:
        """Keep a note on the shown document (it changes no label)."""
        i = self._target_index(index)
        q, d = self._key(i)
        rec = self.store.note(q, d, text)
        self.saved_count += 1
        self.status = f"note saved on {q} / {d}"
        return rec

    def undo(self) -> None:
        """Take back the last label (or "can't judge") given in this widget and show that
        document again (the store keeps the history)."""
        if not self._undo or self.mode == "review":
            self.status = "nothing to undo" if self.mode == "label" else \
                "undo: give the adjudicated label again to change it"
            return
        q, d = self._undo.pop()
        self.store.remove(q, d)
        self._reload()
        self.saved_count += 1
        self.status = f"undone: {q} / {d}"
        self.goto(self._index[(q, d)])

    def clear(self, *, index: int | None = None) -> None:
        """Retract the label of the shown document (the store keeps the history)."""
        i = self._pos if index is None else index
        if not 0 <= i < len(self._items):
            return
        q, d = self._key(i)
        if (q, d) in self._mine and self.mode == "label":
            self.store.remove(q, d)
            self._reload()
            self.saved_count += 1
            self.status = f"cleared {q} / {d}"
        self._sync()

    def _target(self, content: dict[str, Any]) -> int | None:
        """The pool index an action from the view applies to.

        ``index`` is the document on screen when the key was pressed; ``behind`` says
        the view had sent earlier actions whose result it had not shown yet (keys faster
        than the round trip). Those earlier actions were applied first (messages are
        handled in order), so the key is for the document they led to: the current one.
        """
        index = content.get("index")
        if content.get("behind"):
            return self._pos if self._pos >= 0 else None
        return index if isinstance(index, int) and index >= 0 else None

    def _on_ping(self, content: dict[str, Any]) -> None:
        backend: Any = getattr(self.store, "backend", None)
        server = backend is not None and backend.dialect == "postgres"
        if self.store_ok and server and time.monotonic() - self._last_try > 2:
            self._last_try = time.monotonic()  # a server that went away: say so before a key
            if not backend.ping():
                self.store_ok = False
                self.status = (f"error: the label store {self.journal} cannot be reached; "
                               "input is refused until it answers again")
        elif not self.store_ok and backend is not None and time.monotonic() - self._last_try > 2:
            self._last_try = time.monotonic()
            if backend.ping():
                self.store_ok = True
                self._reload()
                self._sync()
                self.status = f"the label store is back ({self.journal}); labelling again"
        self.send({"pong": content.get("nonce"), "session": self.session})

    def _apply(self, action: Any, content: dict[str, Any]) -> None:
        target = self._target(content)
        if action == "label":
            self.label(content.get("grade"), index=target)
        elif action == "cant_judge":
            self.cant_judge(index=target)
        elif action == "note":
            self.note(str(content.get("text", "")), index=target)
        elif action == "undo":
            self.undo()
        elif action == "clear":
            self.clear(index=target)
        elif action in ("next", "prev", "skip"):
            getattr(self, action)()

    def _on_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict):
            return
        action = content.get("action")
        if action == "ping":  # the view's heartbeat: answer, so it knows the kernel is here
            self._on_ping(content)
            return
        view, seq = str(content.get("view", "")), content.get("seq")
        if isinstance(seq, int):
            if seq <= self._last_seq.get(view, 0):
                return  # a duplicate of an action already applied
            self._last_seq[view] = seq
        try:
            if not self.store_ok:
                raise StoreUnavailableError(f"the label store {self.journal} is unreachable; "
                                            "input is refused until it answers again")
            self._apply(action, content)
        except StoreUnavailableError as exc:
            self.store_ok = False
            self._last_try = time.monotonic()
            self.status = f"error: not saved: {exc}"
        except Exception as exc:  # show it in the widget, the kernel keeps running
            self.status = f"error: {exc}"
        finally:
            if isinstance(seq, int):  # after the state changes: the view shows them first
                self.send({"ack": seq, "view": view, "session": self.session})

    def __repr__(self) -> str:
        p = self.progress
        return (f"LabelWidget({p.get('done', 0)}/{p.get('total', 0)} "
                f"{'adjudicated' if self.mode == 'review' else 'labelled'} by "
                f"{self.store.assessor!r} in {self.journal!r})")

