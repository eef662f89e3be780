"""``sef.systems.rerank``: a second stage that re-scores another system's top N.

A small feature-based reranker (no model to download), the "after" of the demo: the
first stage's score, how much of the query (by idf) a document covers, in its title,
and how close together the matched terms are.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from ..options import check_float, check_int, option_error
from .base import Answer, System
from .sqlite_fts import FtsIndex, docs_hash, load_docs, query_words

__all__ = ["FEATURES", "Rerank", "proximity", "rerank"]

#: the features and their default weights (they sum to 1)
FEATURES = {"first_stage": 0.45, "coverage": 0.20, "title": 0.20, "proximity": 0.15}


def proximity(tokens: Sequence[str], terms: Sequence[str], n_query_terms: int) -> float:
    """How compact the smallest window holding every one of ``terms`` is, times the
    share of query terms matched: ``(m / window) * (m / n_query_terms)``, ``m`` the
    number of distinct ``terms`` (one matched term: ``1 / n_query_terms``).

    >>> proximity(["a", "x", "b", "a", "b"], ["a", "b"], 2)
    1.0
    >>> proximity(["a", "x", "x", "b"], ["a", "b"], 4)
    0.25
    """
    need = set(terms)
    m = len(need)
    if m == 0 or n_query_terms == 0:
        return 0.0
    if m == 1:
        return 1.0 / n_query_terms
    last: dict[str, int] = {}
    best = len(tokens) + 1
    for i, tok in enumerate(tokens):
        if tok in need:
            last[tok] = i
            if len(last) == m:
                best = min(best, i - min(last.values()) + 1)
    return 0.0 if best > len(tokens) else (m / best) * (m / n_query_terms)


class Rerank(System):
    """Re-scores the top ``depth`` of ``first``; see :func:`rerank`."""

    kind = "rerank"

    def __init__(self, first: System, docs: Any, *, depth: int = 30,
                 weights: Mapping[str, float] | None = None, fields: Sequence[str] = ("title", "text"),
                 id_field: str = "doc_id", tokenize: str = "porter unicode61",
                 name: str | None = None) -> None:
        func = "rerank"
        if not isinstance(first, System):
            raise option_error(func, "first", type(first).__name__, "must be a sef.systems System",
                               "rerank(sef.systems.sqlite_fts(docs), docs)")
        self.first = first
        self.depth = check_int(func, "depth", depth, minimum=1, example="depth=30")
        weights = dict(FEATURES if weights is None else weights)
        unknown = sorted(set(weights) - set(FEATURES))
        if unknown:
            raise option_error(func, "weights", weights, f"must name features of {list(FEATURES)}",
                               "weights={'first_stage': 0.5, 'coverage': 0.5}")
        self.weights = {f: check_float(func, "weights", weights.get(f, 0.0), minimum=0)
                        for f in FEATURES}
        table = load_docs(docs, list(fields), id_field, func)
        self.content = docs_hash(table)
        self.fields = list(fields)
        self.name = name or f"{first.name}-rerank"
        index = FtsIndex(table.head(0), self.fields, tokenize, None, self.content)
        title = self.fields[0]
        texts = table.select(pl.concat_str(self.fields, separator="\n")).to_series().to_list()
        self.tokens = dict(zip(table["doc_id"].to_list(), index.tokens(texts), strict=True))
        self.title = dict(zip(table["doc_id"].to_list(),
                              map(set, index.tokens(table[title].to_list())), strict=True))
        df = Counter(t for toks in self.tokens.values() for t in set(toks))
        n = table.height
        self.idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
        self.index = index

    def config(self) -> dict[str, Any]:
        return {"first": {"kind": self.first.kind, "config": self.first.config()},
                "depth": self.depth, "weights": self.weights, "fields": self.fields,
                "docs": self.content}

    def features(self, query: str, hits: Sequence[tuple[str, float]]) -> dict[str, list[float]]:
        """Each candidate's features (in ``hits``' order)."""
        terms = list(dict.fromkeys(t for w in self.index.tokens(query_words(query)) for t in w))
        q_idf = {t: self.idf.get(t, 0.0) for t in terms}
        idf_total = sum(q_idf.values()) or 1.0
        top = max((s for _, s in hits), default=0.0) or 1.0
        out: dict[str, list[float]] = {f: [] for f in FEATURES}
        for doc, score in hits:
            toks = self.tokens.get(doc, [])
            present = set(toks)
            out["first_stage"].append(score / top)
            out["coverage"].append(sum(v for t, v in q_idf.items() if t in present) / idf_total)
            out["title"].append(sum(v for t, v in q_idf.items() if t in self.title.get(doc, ()))
                                / idf_total)
            out["proximity"].append(proximity(toks, [t for t in terms if t in present], len(terms)))
        return out

    def search(self, query_id: str, query: str, k: int) -> Answer:
        first = self.first.search(query_id, query, self.depth)
        hits = [(str(d), float(s)) for d, s in _pairs(first.hits)]
        feats = self.features(query, hits)
        scores = [sum(self.weights[f] * feats[f][i] for f in FEATURES) for i in range(len(hits))]
        ranked = sorted(zip((d for d, _ in hits), scores, strict=True),
                        key=lambda x: (x[1], x[0]), reverse=True)
        return Answer(ranked[:k], server_seconds=first.server_seconds)

    def close(self) -> None:
        """Close the first stage (the tokenizer's index is in memory: kept)."""
        self.first.close()


def _pairs(hits: Any) -> list[tuple[Any, Any]]:
    if isinstance(hits, list) and hits and isinstance(hits[0], dict):
        return [(h["doc_id"], h["score"]) for h in hits]
    return list(hits)


def rerank(first: System, docs: Any, *, depth: int = 30,
           weights: Mapping[str, float] | None = None, fields: Sequence[str] = ("title", "text"),
           id_field: str = "doc_id", tokenize: str = "porter unicode61",
           name: str | None = None) -> Rerank:
    """A two-stage system: ``first``'s top ``depth`` re-scored by four features.

    .. math::

        s(d) = w_1 \\frac{s_1(d)}{\\max_{d'} s_1(d')} + w_2\\, \\mathrm{cov}(d)
        + w_3\\, \\mathrm{cov}_{\\mathrm{title}}(d) + w_4\\, \\mathrm{prox}(d)

    where :math:`s_1` is the first stage's score, :math:`\\mathrm{cov}` the idf-weighted
    share of the query's terms (Lucene's idf, :math:`\\ln(1 + (N - n_t + 0.5) /
    (n_t + 0.5))`) that the document holds, :math:`\\mathrm{cov}_{\\mathrm{title}}` the
    same in its title (the first of ``fields``), and :math:`\\mathrm{prox}` the
    compactness of the smallest window holding the matched terms (:func:`proximity`).
    Terms are the FTS5 tokenizer's (Porter stems by default). The answer holds the
    re-scored candidates only (at most ``depth``), as a cascade does; ties by doc id,
    descending.

    Parameters
    ----------
    first
        The first stage, any :class:`~searcheval_frames.systems.System` (e.g.
        :func:`~searcheval_frames.systems.sqlite_fts`).
    docs, fields, id_field, tokenize
        The documents the features read (as for ``sqlite_fts``).
    depth
        How many of the first stage's hits are re-scored.
    weights
        The features' weights (default :data:`FEATURES`: 0.45, 0.20, 0.20, 0.15).
    name
        The run name (default ``"<first's name>-rerank"``).

    Examples
    --------
    >>> import polars as pl
    >>> from searcheval_frames.systems import rerank, sqlite_fts
    >>> docs = pl.DataFrame({"doc_id": ["d1", "d2", "d3", "d4", "d5"],
    ...     "title": ["HNSW index", "Notes", "Soup", "Bread", "Tea"],
    ...     "text": ["How the graph is built, layer by layer.", "hnsw hnsw hnsw", "a soup",
    ...              "a loaf", "green index"]})
    >>> fts = sqlite_fts(docs)
    >>> [d for d, _ in fts.search("q1", "hnsw index", k=3).hits]
    ['d2', 'd1', 'd5']
    >>> [d for d, _ in rerank(fts, docs, depth=3).search("q1", "hnsw index", k=3).hits]
    ['d1', 'd2', 'd5']
    """
    return Rerank(first, docs, depth=depth, weights=weights, fields=fields,
                  id_field=id_field, tokenize=tokenize, name=name)
