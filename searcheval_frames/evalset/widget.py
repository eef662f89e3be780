"""A labelling widget for JupyterLab: query, document, grade buttons, saved as you go.

Why anywidget (and not a composition of ipywidgets Buttons/HTML boxes): labelling is
fast only with the keyboard (a digit per document), and ipywidgets has no keyboard
events without a further extension (ipyevents). anywidget gives one small ES module
(``_static/label_widget.js``, no build step, no npm) with full control of keys and
layout, runs in JupyterLab 4, Notebook 7, VS Code and Colab through the anywidget
front end that ``pip install anywidget`` brings, and still is an ipywidgets model, so
the Python side receives each click as a message. (anywidget depends on ipywidgets;
both are in the ``labeling`` extra.)

Each grade given — by a click, a key or :meth:`LabelWidget.label` — is committed to the
:class:`~searcheval_frames.LabelStore` before the widget says "saved" and moves on, so a
crashed or restarted kernel loses nothing. A team shares one store: each pair goes to
``per_pair`` distinct assessors, the fewest-judged pair first (:mod:`.labeldb.team`);
``mode="review"`` walks the pairs whose labels disagree and records an adjudicated label.

>>> import searcheval_frames as sef  # doctest: +SKIP
>>> w = sef.label_widget(pool, queries=queries, docs=docs, assessor="ana",
...                      per_pair=2)  # doctest: +SKIP
>>> w  # displays it; or label in code: w.label(2)  # doctest: +SKIP
"""

from __future__ import annotations

import os
from typing import Any

from .._deprecation import old_spelling
from ..errors import InvalidOptionError
from ..options import check_bool, check_choice, check_optional_int
from .grades import Grades, normalize_grades
from .labeldb.team import check_assign
from .old_calls import OLD_LABEL_WIDGET
from .store import LabelStore
from .widget_items import build_items, check_pool
from .widget_model import LabelWidget

__all__ = ["LabelWidget", "label_widget"]


@old_spelling("label_widget", *OLD_LABEL_WIDGET)
def label_widget(
    pool: Any = None,
    *,
    store: LabelStore | str | os.PathLike[str] | None = None,
    queries: Any = None,
    docs: Any = None,
    grades: Grades = None,
    assessor: str | None = None,
    per_pair: int | None = None,
    assign: dict[str, Any] | None = None,
    blind: bool = True,
    mode: str = "label",
    highlight: bool = True,
    text_column: str | None = None,
    title_column: str | None = None,
    max_chars: int | None = 5000,
    order: str = "query",
) -> LabelWidget:
    """Label a pool in JupyterLab, alone or as a team: every grade committed at once.

    Parameters
    ----------
    pool
        The documents to judge: a frame with ``query_id`` and ``doc_id`` (e.g.
        :func:`searcheval_frames.pool`). (``label_widget(store, pool)``, the order of
        earlier versions, still works with a ``DeprecationWarning``.)
    store
        A :class:`~searcheval_frames.LabelStore`, a database path, a
        ``"postgresql://..."`` URL, or a ``.jsonl`` journal of earlier versions. Default:
        ``labels/labels.db`` in the working directory (never a temporary folder), shared
        by every assessor on the machine; the widget shows where the labels go.
    queries
        Query texts: a frame ``query_id, query`` or a dict.
    docs
        Documents: a frame with ``doc_id`` and ``text`` (and ``title``) or a dict.
    grades
        The grade buttons: integers (default: the store's, else ``0, 1, 2, 3``) or a
        mapping ``{"not relevant": 0, "relevant": 1, ...}``. Keys 0–9 give the grade
        with that value.
    assessor
        Who labels (when ``store`` is not a store object); default: the login name.
    per_pair
        A team: each pair goes to this many distinct assessors; the next pair shown is
        one this assessor has not seen with the fewest labels, staying on the query on
        screen, best rank first. ``None`` (default): this assessor walks the whole pool.
    assign
        ``{"ana": [query ids], "ben": [...]}``: which queries each assessor judges.
    blind
        ``True`` (default): the assessor sees neither the run names nor the others'
        labels; ``False`` shows both.
    mode
        ``"label"`` (default), or ``"review"``: the pairs whose labels disagree
        (:meth:`~searcheval_frames.LabelStore.conflicts`), their labels shown (without
        names when blind), the grade given is recorded as the adjudicated label
        (``store.qrels(policy="adjudicated")``).
    highlight
        Mark the query's terms in the document (tokenised as the query is; ``False``
        turns it off).
    text_column, title_column, max_chars
        Which document columns to show; long texts are cut to ``max_chars``.
    order
        ``"query"`` (default): one query at a time, in the order they first appear in
        the pool, within a query the best rank first; ``"pool"``: the pool's row order.

    Returns
    -------
    LabelWidget
        Display it (last expression of a cell). Keys: a grade's digit labels, ``x``
        "can't judge", ``u`` undo the last label, ``n`` write a note (Enter saves it),
        ``s`` skip, ←/→ previous/next. It shows per-assessor progress with the median
        seconds per label and an ETA. When the kernel stops answering, or the store
        cannot be reached (a database server that went away), it says so and refuses
        input until it answers again — never a label silently dropped.

    Examples
    --------
    >>> import polars as pl, tempfile, os, searcheval_frames as sef
    >>> pool = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"]})
    >>> path = os.path.join(tempfile.mkdtemp(), "labels.db")
    >>> w = sef.label_widget(pool, store=path, docs={"d1": "text one", "d2": "text two"},
    ...                      assessor="alice")
    >>> _ = w.label(3)
    >>> w.current["doc_id"], sef.LabelStore(path).qrels().rows()
    ('d2', [('q1', 'd1', 3)])
    """
    check_pool(pool)
    check_choice("label_widget", "order", order, ("query", "pool"), example='order="pool"')
    check_choice("label_widget", "mode", mode, ("label", "review"), example='mode="review"')
    per_pair = check_optional_int("label_widget", "per_pair", per_pair, minimum=1,
                                  example="per_pair=2")
    check_bool("label_widget", "blind", blind)
    check_bool("label_widget", "highlight", highlight)
    assign_ = check_assign(assign)
    if isinstance(store, LabelStore):
        if assessor is not None and assessor != store.assessor:
            raise InvalidOptionError(
                f"assessor={assessor!r} differs from the store's ({store.assessor!r}); open "
                "LabelStore(path, assessor=...) for that person or leave assessor out")
        grades = store.grades if grades is None else grades
    else:
        store = LabelStore(store, assessor=assessor,
                           grades=grades if grades is not None else (0, 1, 2, 3))
    grades = (0, 1, 2, 3) if grades is None else grades
    normalize_grades(grades)  # validates
    if store.grades is None:
        store.grades = grades  # (the store's setter updates the labels it accepts)
    if assign_ is not None and store.assessor not in assign_:
        raise InvalidOptionError(
            f"label_widget(assign=...): no queries are assigned to {store.assessor!r}; the "
            f"assessors in assign= are {sorted(assign_)}")
    items = build_items(pool, queries=queries, docs=docs, text_column=text_column,
                        title_column=title_column, max_chars=max_chars, order=order)
    return LabelWidget(store, items, grades, mode=mode, per_pair=per_pair, assign=assign_,
                       blind=blind, highlight=highlight)
