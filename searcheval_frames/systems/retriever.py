"""``sef.systems.retriever``: LangChain and LlamaIndex retrievers, duck-typed.

No import of either library: a LangChain retriever is an object with ``.invoke(query)``
returning ``Document``s (``.metadata``, ``.id``), a LlamaIndex retriever one with
``.retrieve(query)`` returning ``NodeWithScore``s (``.node.metadata``,
``.node.node_id``, ``.score``).
"""

from __future__ import annotations

import math
from typing import Any

from ..options import check_bool, option_error
from .base import Answer, System

__all__ = ["Retriever", "retriever"]


def _version(obj: Any) -> str | None:
    mod = type(obj).__module__.split(".")[0]
    try:
        from importlib.metadata import version

        return version(mod.replace("_", "-"))
    except Exception:
        return None


class Retriever(System):
    """A LangChain or LlamaIndex retriever as a System; see :func:`retriever`."""

    kind = "retriever"

    def __init__(self, obj: Any, doc_id: str = "id", score: str | None = None, *,
                 collapse: bool = False, name: str | None = None) -> None:
        func = "retriever"
        if callable(getattr(obj, "retrieve", None)):
            self.style = "llamaindex"
        elif callable(getattr(obj, "invoke", None)):
            self.style = "langchain"
        else:
            raise option_error(func, "obj", type(obj).__name__,
                               "must have .invoke(query) (LangChain) or .retrieve(query) "
                               "(LlamaIndex)", "retriever(vectorstore.as_retriever(), "
                               "doc_id='source')")
        if not isinstance(doc_id, str) or not doc_id:
            raise option_error(func, "doc_id", doc_id, "must be a metadata key",
                               "doc_id='source'")
        if score is not None and not isinstance(score, str):
            raise option_error(func, "score", score, "must be a metadata key or None",
                               "score='relevance_score'")
        self.obj = obj
        self.doc_id = doc_id
        self.score_key = score
        self.collapse = check_bool(func, "collapse", collapse)
        self.name = name or type(obj).__name__

    def config(self) -> dict[str, Any]:
        return {"class": f"{type(self.obj).__module__}.{type(self.obj).__qualname__}",
                "style": self.style, "doc_id": self.doc_id, "score": self.score_key,
                "collapse": self.collapse, "version": _version(self.obj)}

    def _item(self, query_id: str, i: int, item: Any) -> tuple[str, float | None]:
        node = item.node if self.style == "llamaindex" and hasattr(item, "node") else item
        meta = getattr(node, "metadata", None) or {}
        doc = meta.get(self.doc_id)
        if doc is None:
            doc = getattr(node, "node_id" if self.style == "llamaindex" else "id", None)
        if doc is None:
            raise ValueError(
                f"retriever {self.name!r}, query {query_id!r}: result {i + 1} has no "
                f"metadata[{self.doc_id!r}] and no id; its metadata keys are "
                f"{sorted(meta)[:8]}. Pass doc_id= one of them")
        if self.score_key is not None:
            value = meta.get(self.score_key)
        else:
            value = getattr(item, "score", None) if self.style == "llamaindex" else None
        return str(doc), None if value is None else float(value)

    def search(self, query_id: str, query: str, k: int) -> Answer:
        found = (self.obj.retrieve(query) if self.style == "llamaindex"
                 else self.obj.invoke(query))
        items = [self._item(query_id, i, it) for i, it in enumerate(found)]
        if self.collapse:  # chunks -> documents: each document's first (best) chunk
            first: dict[str, float | None] = {}
            for d, s in items:
                first.setdefault(d, s)
            items = list(first.items())
        if any(s is None or (isinstance(s, float) and math.isnan(s)) for _, s in items):
            # no scores: the retriever's order, as 1/rank (higher is better)
            return Answer([(d, 1.0 / r) for r, (d, _) in enumerate(items[:k], start=1)])
        return Answer(items[:k])


def retriever(obj: Any, doc_id: str = "id", score: str | None = None, *,
              collapse: bool = False, name: str | None = None) -> Retriever:
    """A LangChain or LlamaIndex retriever as a search system (duck-typed).

    * LangChain (``BaseRetriever`` and anything with ``.invoke(query) -> [Document]``):
      the id is ``doc.metadata[doc_id]``, else ``doc.id``; the score is
      ``doc.metadata[score]`` when ``score=`` names a key.
    * LlamaIndex (``.retrieve(query) -> [NodeWithScore]``): the id is
      ``node.metadata[doc_id]``, else ``node.node_id``; the score is ``.score`` (or
      ``node.metadata[score]``).

    When any result has no score (LangChain's ``Document`` has none), every result
    gets a rank-based score, :math:`1 / \\mathrm{rank}` in the retriever's order, so
    the run keeps that order. The retriever decides how many results it returns
    (LangChain: ``search_kwargs={"k": 20}``); the answer keeps its first ``k``.

    Parameters
    ----------
    obj
        The retriever.
    doc_id
        The metadata key holding the document id (default ``"id"``, then the
        object's own id).
    score
        A metadata key holding the score, or None (LlamaIndex: ``.score``).
    collapse
        Chunks to documents: keep each document's first result (a retriever over
        chunks returns a document several times, which ``sef.retrieve`` refuses).
    name
        The run name (default the retriever's class name).

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> class Chunks:  # LangChain-shaped: .invoke(query) -> documents
    ...     def invoke(self, query):
    ...         return [NS(metadata={"source": "d2"}, id=None),
    ...                 NS(metadata={"source": "d1"}, id=None)]
    >>> retriever(Chunks(), doc_id="source").search("q1", "hnsw", k=5).hits
    [('d2', 1.0), ('d1', 0.5)]
    """
    return Retriever(obj, doc_id, score, collapse=collapse, name=name)
