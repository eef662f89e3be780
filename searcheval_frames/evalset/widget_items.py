"""What the labelling widget shows: the pool as items, and one item as the view gets it.

* :func:`build_items`: the pool, its texts and its order (a query at a time, best rank
  first, or the pool's order) as a list of item dicts.
* :func:`view_item`: one item for the view: blind (no run names, no other assessor's
  label) or not, the query's terms highlighted as segments (:mod:`.highlight`).
* :func:`check_pool`: a pool was given (``label_widget(pool, store=...)``; the older
  ``label_widget(store, pool)`` warns through ``old_calls``).
"""

from __future__ import annotations

import os
from typing import Any

import polars as pl

from ..errors import InvalidOptionError
from ..io.texts import queries_table
from ._labels import docs_texts, pool_pairs
from .highlight import query_terms, segments
from .store import LabelStore

__all__ = ["BLIND_COLUMNS", "build_items", "check_pool", "view_item"]

META_COLUMNS = ("best_rank", "n_runs", "runs", "priority", "weight")
#: what a blind assessor does not see: which runs retrieved the document
BLIND_COLUMNS = ("runs", "n_runs")


def _is_store_like(x: Any) -> bool:
    return isinstance(x, LabelStore | str | os.PathLike)


def check_pool(pool: Any) -> None:
    """A pool to label was given (the store comes by name: ``store=``; the old order
    ``label_widget(store, pool)`` is turned around by ``evalset/old_calls.py``)."""
    if pool is None or _is_store_like(pool):
        raise InvalidOptionError(
            "label_widget: give the pool to label, e.g. label_widget(pool) or "
            "label_widget(pool, store='labels/labels.db')")


def build_items(pool: Any, *, queries: Any, docs: Any, text_column: str | None,
                title_column: str | None, max_chars: int | None, order: str
                ) -> list[dict[str, Any]]:
    """The pool's unique pairs with their texts, in the widget's order."""
    pairs = pool_pairs(pool)
    keep = ["query_id", "doc_id", *[c for c in META_COLUMNS if c in pairs.columns]]
    table = pairs.select(keep).unique(["query_id", "doc_id"], keep="first", maintain_order=True)
    table = table.with_row_index("_order")
    if queries is not None:
        table = table.join(queries_table(queries), on="query_id", how="left")
    if docs is not None:
        table = table.join(
            docs_texts(docs, text_column, title_column, max_chars), on="doc_id", how="left")
    if order == "query":  # queries by first appearance, then best rank within a query
        first = pl.col("_order").min().over("query_id")
        by = [first, "best_rank", "_order"] if "best_rank" in table.columns else [first, "_order"]
        table = table.sort(by, nulls_last=True).drop("_order")
    else:
        table = table.sort("_order").drop("_order")
    if "runs" in table.columns and isinstance(table.schema["runs"], pl.List):
        table = table.with_columns(pl.col("runs").list.join(", "))
    return table.to_dicts()


def view_item(item: dict[str, Any], *, index: int, blind: bool, highlight: bool,
              others: list[list[Any]] | None = None) -> dict[str, Any]:
    """One item as the view gets it: texts, highlight segments, what blind hides.

    ``others``: ``[[assessor, label], ...]`` of the pair's other labels: shown when not
    blind (in review they are shown always, without names when blind).
    """
    out = {k: v for k, v in item.items() if not (blind and k in BLIND_COLUMNS)}
    out["index"] = index
    if highlight:
        terms = query_terms(item.get("query"))
        out["query_segments"] = segments(item.get("query"), terms)
        out["title_segments"] = segments(item.get("title"), terms)
        out["text_segments"] = segments(item.get("text"), terms)
    if others is not None:
        out["others"] = [["" if blind else str(a), int(v)] for a, v in others]
    return out
