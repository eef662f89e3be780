"""A labelling widget for JupyterLab: query, document, grade buttons, saved as you go.

Why anywidget (and not a composition of ipywidgets Buttons/HTML boxes): labelling is
fast only with the keyboard (a digit per document), and ipywidgets has no keyboard
events without a further extension (ipyevents). anywidget gives one small ES module
(``_static/label_widget.js``, no build step, no npm) with full control of keys and
layout, runs in JupyterLab 4, Notebook 7, VS Code and Colab through the anywidget
front end that ``pip install anywidget`` brings (a prebuilt lab extension, nothing to
enable), and still is an ipywidgets model, so the Python side receives each click as
a message. (anywidget depends on ipywidgets; both are in the ``labeling`` extra.)

Each grade given — by a click, a key or :meth:`LabelWidget.label` — is written to the
:class:`~searcheval_frames.LabelStore` journal (one line, ``fsync``) before
the widget moves to the next document, so a crashed or restarted kernel loses
nothing. Reopening a widget on the same store resumes at the first unlabelled
document.

>>> import searcheval_frames as sef  # doctest: +SKIP
>>> w = sef.label_widget(pool, store="labels/alice.jsonl", queries=queries, docs=docs,
...                      assessor="alice")  # doctest: +SKIP
>>> w  # displays it; or label in code: w.label(2)  # doctest: +SKIP
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

import polars as pl

from .._deprecation import old_spelling
from ..errors import EmptyInputError, InvalidOptionError
from ..io.texts import queries_table
from ..optional import require
from ..options import check_choice
from ._labels import docs_texts, pool_pairs
from .grades import Grades, grade_names, normalize_grades
from .old_calls import OLD_LABEL_WIDGET
from .store import LabelStore

_FEATURE = "sef.label_widget (without it, label with a sheet: sef.export_label_sheet)"
try:
    import anywidget
    import traitlets
except ModuleNotFoundError:  # the one friendly message naming the labeling extra
    require("anywidget", _FEATURE)
    require("traitlets", _FEATURE)
    raise

__all__ = ["LabelWidget", "label_widget"]

_STATIC = Path(__file__).parent / "_static"
_META_COLUMNS = ("best_rank", "n_runs", "runs", "priority", "weight")


class LabelWidget(anywidget.AnyWidget):
    """The widget made by :func:`label_widget` (see there); also drivable from code.

    Methods :meth:`label`, :meth:`next`, :meth:`prev`, :meth:`skip`, :meth:`clear` and
    :meth:`goto` (with :meth:`find`) do what the buttons do; :attr:`store` is the
    :class:`~searcheval_frames.LabelStore` the labels go to.
    """

    _esm = _STATIC / "label_widget.js"
    _css = _STATIC / "label_widget.css"

    item = traitlets.Dict().tag(sync=True)
    grades: traitlets.List[Any] = traitlets.List().tag(sync=True)
    progress = traitlets.Dict().tag(sync=True)
    status = traitlets.Unicode("").tag(sync=True)
    assessor = traitlets.Unicode("").tag(sync=True)
    saved_count = traitlets.Int(0).tag(sync=True)
    #: the journal's absolute path, shown in the widget
    journal = traitlets.Unicode("").tag(sync=True)
    #: an id of this kernel's widget: a view of another (older) kernel's widget sees a
    #: different one after the cell is run again
    session = traitlets.Unicode("").tag(sync=True)

    def __init__(
        self,
        store: LabelStore,
        items: list[dict[str, Any]],
        grades: Grades,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.store = store
        self._items = items
        self._grades = grades
        self._lookup = normalize_grades(grades)
        self._pos = -1
        self._query_rows: dict[str, list[int]] = {}
        for i, it in enumerate(items):
            self._query_rows.setdefault(it["query_id"], []).append(i)
        self._labels: dict[tuple[str, str], int] = {}
        self._reload_labels()
        self.grades = [[v, n] for v, n in grade_names(grades)]
        self.assessor = store.assessor
        self.journal = str(Path(store.path).resolve())
        self.session = secrets.token_hex(8)
        self._last_seq: dict[str, int] = {}
        self.on_msg(self._on_msg)
        self.goto(self._first_unlabelled(0))

    # ------------------------------------------------------------------ state
    def _reload_labels(self) -> None:
        lab = self.store.labels().filter(pl.col("assessor") == self.store.assessor)
        self._labels = {
            (q, d): v for q, d, v in lab.select("query_id", "doc_id", "label").iter_rows()
        }

    def _key(self, i: int) -> tuple[str, str]:
        it = self._items[i]
        return it["query_id"], it["doc_id"]

    def _first_unlabelled(self, start: int) -> int:
        n = len(self._items)
        for off in range(n):
            i = (start + off) % n
            if self._key(i) not in self._labels:
                return i
        return start if n else -1

    def _sync(self) -> None:
        total = len(self._items)
        done = sum(1 for i in range(total) if self._key(i) in self._labels)
        if 0 <= self._pos < total:
            it = dict(self._items[self._pos])
            it["index"] = self._pos
            it["label"] = self._labels.get(self._key(self._pos))
            rows = self._query_rows[it["query_id"]]
            q_done = sum(1 for i in rows if self._key(i) in self._labels)
            q_total = len(rows)
        else:
            it, q_done, q_total = {"index": -1}, 0, 0
        n_queries = len(self._query_rows)
        queries_done = sum(
            1
            for rows in self._query_rows.values()
            if all(self._key(i) in self._labels for i in rows)
        )
        self.progress = {
            "done": done,
            "total": total,
            "query_done": q_done,
            "query_total": q_total,
            "queries_done": queries_done,
            "n_queries": n_queries,
        }
        self.item = it

    @property
    def current(self) -> dict[str, Any] | None:
        """The document shown now (``query_id``, ``doc_id``, texts, current ``label``)."""
        return dict(self.item) if self.item.get("index", -1) >= 0 else None

    @property
    def position(self) -> int:
        """Index of the shown document in the pool (-1 for an empty pool)."""
        return self._pos

    def find(self, query_id: Any, doc_id: Any) -> int:
        """Index of a (query, document) in the pool, for :meth:`goto` and :meth:`label`."""
        key = (str(query_id), str(doc_id))
        for i in range(len(self._items)):
            if self._key(i) == key:
                return i
        raise InvalidOptionError(f"({query_id!r}, {doc_id!r}) is not in the pool of this widget")

    # ------------------------------------------------------------------ actions
    def goto(self, index: int) -> None:
        """Show the document at ``index`` (0-based, in pool order)."""
        if not self._items:
            self._pos = -1
        elif not 0 <= index < len(self._items):
            raise InvalidOptionError(f"index={index}: the pool has {len(self._items)} documents")
        else:
            self._pos = index
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
            nxt = self._first_unlabelled((self._pos + 1) % len(self._items))
            self.goto(nxt)

    def label(
        self, grade: Any, *, index: int | None = None, advance: bool = True
    ) -> dict[str, Any]:
        """Label the shown document (or the one at ``index``) and save it at once.

        The label is appended to the store's journal and ``fsync``-ed before this
        returns; then, when the labelled document is the one shown, the widget shows
        the next unlabelled document (``advance=True``). Labelling another document by
        ``index`` (e.g. a notebook cell labelling by code) leaves the view where it is.
        Returns the record written.
        """
        i = self._pos if index is None else index
        if not 0 <= i < len(self._items):
            raise EmptyInputError("label: no document is shown (the pool is empty)")
        q, d = self._key(i)
        rec = self.store.append(q, d, grade)
        self._labels[(q, d)] = rec["label"]
        self.saved_count += 1
        self.status = f"saved {q} / {d} = {rec['label']} ({rec['time'][11:19]} UTC)"
        if advance and i == self._pos:
            nxt = self._first_unlabelled((i + 1) % len(self._items))
            if self._key(nxt) in self._labels:  # everything is labelled
                self.status += " · all documents of the pool are labelled"
                nxt = min(i + 1, len(self._items) - 1)
            self.goto(nxt)
        else:
            self._sync()
        return rec

    def clear(self, *, index: int | None = None) -> None:
        """Retract the label of the shown document (the journal keeps the history)."""
        i = self._pos if index is None else index
        if not 0 <= i < len(self._items):
            return
        q, d = self._key(i)
        if (q, d) in self._labels:
            self.store.remove(q, d)
            del self._labels[(q, d)]
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

    def _on_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict):
            return
        action = content.get("action")
        if action == "ping":  # the view's heartbeat: answer, so it knows the kernel is here
            self.send({"pong": content.get("nonce"), "session": self.session})
            return
        view, seq = str(content.get("view", "")), content.get("seq")
        if isinstance(seq, int):
            if seq <= self._last_seq.get(view, 0):
                return  # a duplicate of an action already applied
            self._last_seq[view] = seq
        try:
            target = self._target(content)
            if action == "label":
                self.label(content.get("grade"), index=target)
            elif action == "clear":
                self.clear(index=target)
            elif action == "next":
                self.next()
            elif action == "prev":
                self.prev()
            elif action == "skip":
                self.skip()
        except Exception as exc:  # show it in the widget, the kernel keeps running
            self.status = f"error: {exc}"
        finally:
            if isinstance(seq, int):  # after the state changes: the view shows them first
                self.send({"ack": seq, "view": view, "session": self.session})

    def __repr__(self) -> str:
        p = self.progress
        return (
            f"LabelWidget({p.get('done', 0)}/{p.get('total', 0)} labelled by "
            f"{self.store.assessor!r} in {str(self.store.path)!r})"
        )


@old_spelling("label_widget", *OLD_LABEL_WIDGET)
def label_widget(
    pool: Any = None,
    *,
    store: LabelStore | str | os.PathLike[str] | None = None,
    queries: Any = None,
    docs: Any = None,
    grades: Grades = None,
    assessor: str | None = None,
    text_column: str | None = None,
    title_column: str | None = None,
    max_chars: int | None = 5000,
    order: str = "query",
) -> LabelWidget:
    """Label a pool in JupyterLab: one document at a time, every grade saved at once.

    Parameters
    ----------
    pool
        The documents to judge: a frame with ``query_id`` and ``doc_id`` (e.g.
        :func:`searcheval_frames.pool`).
    store
        A :class:`~searcheval_frames.LabelStore` or the path of its journal
        (``.jsonl``; created if missing). Reopening the same path resumes. Default:
        ``labels/<assessor>.jsonl`` in the working directory (never a temporary
        folder); the widget shows the path.
    queries
        Query texts: a frame ``query_id, query`` or a dict.
    docs
        Documents: a frame with ``doc_id`` and ``text`` (and ``title``) or a dict.
    grades
        The grade buttons: integers (default: the store's, else ``0, 1, 2, 3``) or a
        mapping ``{"not relevant": 0, "relevant": 1, ...}``. Keys 0–9 give the grade
        with that value.
    assessor
        Who labels (when ``store`` is a path); default: the login name.
    text_column, title_column, max_chars
        Which document columns to show; long texts are cut to ``max_chars``.
    order
        ``"query"`` (default): one query at a time — the queries in the order they
        first appear in the pool, within a query the best rank first (``best_rank``,
        else pool order), so the assessor reads a query once for all its documents.
        ``"pool"``: the pool's own row order.

    Returns
    -------
    LabelWidget
        Display it (last expression of a cell). It takes the keyboard focus when shown
        and says whether it has it; keys pressed faster than the kernel answers apply
        to the next documents in turn (each action carries a sequence number); when
        the kernel stops answering (restarted, crashed, or busy with another cell) it
        refuses input and says "disconnected — run the cell again". ``w.label(2)``, ``w.skip()``,
        ``w.next()`` do the same as the buttons; ``w.store.qrels()`` gives the labels.

    Examples
    --------
    >>> import polars as pl, tempfile, os, searcheval_frames as sef
    >>> pool = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"]})
    >>> path = os.path.join(tempfile.mkdtemp(), "labels.jsonl")
    >>> w = sef.label_widget(pool, store=path, docs={"d1": "text one", "d2": "text two"},
    ...                      assessor="alice")
    >>> _ = w.label(3)
    >>> w.current["doc_id"], sef.LabelStore(path).qrels().rows()
    ('d2', [('q1', 'd1', 3)])
    """
    check_choice("label_widget", "order", order, ("query", "pool"), example='order="pool"')
    if pool is None:
        raise InvalidOptionError(
            "label_widget: give the pool to label, e.g. label_widget(pool) or "
            "label_widget(pool, store='labels/alice.jsonl')"
        )
    if isinstance(store, LabelStore):
        if assessor is not None and assessor != store.assessor:
            raise InvalidOptionError(
                f"assessor={assessor!r} differs from the store's ({store.assessor!r}); open "
                "LabelStore(path, assessor=...) for that person or leave assessor out"
            )
        if grades is None:
            grades = store.grades
    else:
        store = LabelStore(
            store, assessor=assessor, grades=grades if grades is not None else (0, 1, 2, 3)
        )
    if grades is None:
        grades = (0, 1, 2, 3)
    normalize_grades(grades)  # validates
    if store.grades is None:
        store.grades = grades  # (the store's setter updates the labels it accepts)

    pairs = pool_pairs(pool)
    keep = ["query_id", "doc_id", *[c for c in _META_COLUMNS if c in pairs.columns]]
    table = pairs.select(keep).unique(["query_id", "doc_id"], keep="first", maintain_order=True)
    table = table.with_row_index("_order")
    if queries is not None:
        table = table.join(queries_table(queries), on="query_id", how="left")
    if docs is not None:
        table = table.join(
            docs_texts(docs, text_column, title_column, max_chars), on="doc_id", how="left"
        )
    if order == "query":  # queries by first appearance, then best rank within a query
        first = pl.col("_order").min().over("query_id")
        by = [first, "best_rank", "_order"] if "best_rank" in table.columns else [first, "_order"]
        table = table.sort(by, nulls_last=True).drop("_order")
    else:
        table = table.sort("_order").drop("_order")
    if "runs" in table.columns and isinstance(table.schema["runs"], pl.List):
        table = table.with_columns(pl.col("runs").list.join(", "))
    items = table.to_dicts()
    return LabelWidget(store, items, grades)
