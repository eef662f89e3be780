"""``sef.systems.bm25``: FTS5's BM25 in numpy, with ``k1`` and ``b`` as knobs.

SQLite's ``bm25()`` fixes ``k1 = 1.2`` and ``b = 0.75``. A sweep over them needs the
formula itself: this system reads each term's counts out of the same FTS5 index
(``fts5vocab``: the same tokenizer, the same documents) and computes the same sum in
numpy, so ``bm25(docs, k1=1.2, b=0.75)`` ranks exactly as :func:`sqlite_fts` does.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from ..options import check_float
from .base import Answer, System
from .sqlite_fts import (
    QUERY_FORM,
    FtsIndex,
    check_fields,
    check_tokenize,
    check_weights,
    docs_hash,
    load_docs,
    query_words,
)

__all__ = ["BM25", "TermStats", "bm25"]


@dataclass(frozen=True)
class TermStats:
    """What BM25 needs of an index: per term the documents holding it and their
    per-field counts; the documents' lengths; their ids and tie order."""

    postings: dict[str, tuple[np.ndarray, np.ndarray]]  # term -> (docs, tf[docs, fields])
    lengths: np.ndarray  # tokens per document, all fields
    doc_ids: np.ndarray
    tie_order: np.ndarray  # position of each doc id in ascending id order

    @classmethod
    def from_index(cls, index: FtsIndex, docs: pl.DataFrame) -> TermStats:
        inst = index.instances()
        n = docs.height
        lengths = np.zeros(n, dtype=np.float64)
        per_doc = inst.group_by("doc").agg(pl.col("tf").sum())
        lengths[per_doc["doc"].to_numpy()] = per_doc["tf"].to_numpy()
        postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        if inst.height:  # (a corpus without a single token has no postings)
            wide = (inst.pivot(on="col", index=["term", "doc"], values="tf")
                    .fill_null(0).sort("term", "doc"))
            for f in index.fields:
                if f not in wide.columns:
                    wide = wide.with_columns(pl.lit(0, pl.Int64).alias(f))
            terms = wide["term"].to_numpy()
            docs_ix = wide["doc"].to_numpy()
            tf = wide.select(index.fields).to_numpy().astype(np.float64)
            starts = np.flatnonzero(np.r_[True, terms[1:] != terms[:-1]])
            ends = np.r_[starts[1:], len(terms)]
            postings = {str(terms[a]): (docs_ix[a:e], tf[a:e])
                        for a, e in zip(starts, ends, strict=True)}
        ids = docs["doc_id"].to_numpy()
        tie_order = np.empty(n, dtype=np.int64)
        tie_order[np.argsort(ids, kind="stable")] = np.arange(n)
        return cls(postings, lengths, ids, tie_order)


class BM25(System):
    """BM25 in numpy over an FTS5 index's term statistics; see :func:`bm25`."""

    kind = "bm25"

    def __init__(self, docs: Any, fields: Sequence[str] = ("title", "text"), *,
                 k1: float = 1.2, b: float = 0.75, id_field: str = "doc_id",
                 tokenize: str = "porter unicode61", weights: Any = None,
                 name: str = "bm25", _shared: tuple[Any, ...] | None = None) -> None:
        func = "bm25"
        self.k1 = check_float(func, "k1", k1, minimum=0, example="k1=1.2")
        self.b = check_float(func, "b", b, minimum=0, maximum=1, example="b=0.75")
        self.fields = check_fields(func, fields)
        self.weights = check_weights(func, weights, self.fields)
        self.name = name
        if _shared is not None:  # with_params: the same documents and index
            self.docs, self.content, self.index, self.stats, self.tokenize = _shared
            return
        self.tokenize = check_tokenize(func, tokenize)
        self.docs = load_docs(docs, self.fields, id_field, func)
        self.content = docs_hash(self.docs)
        self.index = FtsIndex(self.docs, self.fields, self.tokenize, None, self.content)
        self.stats = TermStats.from_index(self.index, self.docs)

    def with_params(self, *, k1: float | None = None, b: float | None = None,
                    weights: Any = None, name: str | None = None) -> BM25:
        """The same index with other knobs (no re-indexing: the sweep's ``make_system``)."""
        return BM25(None, self.fields, k1=self.k1 if k1 is None else k1,
                    b=self.b if b is None else b,
                    weights=self.weights if weights is None else weights,
                    name=self.name if name is None else name,
                    _shared=(self.docs, self.content, self.index, self.stats, self.tokenize))

    def config(self) -> dict[str, Any]:
        return {"k1": self.k1, "b": self.b, "fields": self.fields, "tokenize": self.tokenize,
                "weights": self.weights, "docs": self.content, "n_docs": self.docs.height,
                "query": QUERY_FORM, "sqlite": sqlite3.sqlite_version}

    def scores(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """Every document's score and whether it matched a query term."""
        st = self.stats
        n = len(st.lengths)
        total = np.zeros(n, dtype=np.float64)
        matched = np.zeros(n, dtype=bool)
        avgdl = st.lengths.sum() / n if n else 0.0
        w = np.asarray(self.weights, dtype=np.float64)
        norm = self.k1 * (1 - self.b + self.b * st.lengths / avgdl) if avgdl else \
            np.full(n, self.k1 * (1 - self.b))
        for word in self.index.tokens(query_words(query)):
            for term in word:  # a word the tokenizer splits counts as its tokens
                if term not in st.postings:
                    continue
                docs, tf = st.postings[term]
                idf = max(float(np.log((n - len(docs) + 0.5) / (len(docs) + 0.5))), 1e-6)
                f = tf @ w
                total[docs] += idf * f * (self.k1 + 1) / (f + norm[docs])
                matched[docs] = True
        return total, matched

    def search(self, query_id: str, query: str, k: int) -> Answer:
        total, matched = self.scores(query)
        hit = np.flatnonzero(matched)
        order = hit[np.lexsort((-self.stats.tie_order[hit], -total[hit]))][:k]
        return Answer(list(zip(self.stats.doc_ids[order].tolist(), total[order].tolist(),
                               strict=True)))


def bm25(docs: Any, fields: Sequence[str] = ("title", "text"), *, k1: float = 1.2,
         b: float = 0.75, id_field: str = "doc_id", tokenize: str = "porter unicode61",
         weights: Any = None, name: str = "bm25") -> BM25:
    """BM25 with ``k1`` and ``b`` as knobs: FTS5's formula, computed in numpy.

    The documents are indexed with SQLite FTS5 (as :func:`sqlite_fts`: same tokenizer,
    same query words, OR semantics); the score is

    .. math::

        \\mathrm{score}(d, q) = \\sum_{t \\in q} \\mathrm{idf}(t)
        \\frac{f_{t,d} (k_1 + 1)}{f_{t,d} + k_1 (1 - b + b\\, |d| / \\overline{|d|})},
        \\quad \\mathrm{idf}(t) = \\max\\Big(10^{-6}, \\ln \\frac{N - n_t + 0.5}{n_t + 0.5}\\Big)

    with :math:`f_{t,d} = \\sum_c w_c\\, \\mathrm{tf}_{t,d,c}`. At ``k1=1.2, b=0.75`` it
    equals ``sqlite_fts``'s ``-bm25()`` (tested to 1e-9). Robertson's idf without the
    ``+1`` of Lucene: a term in more than half the documents gets the floor
    :math:`10^{-6}`, as in FTS5.

    Parameters
    ----------
    docs, fields, id_field, tokenize, weights, name
        As for :func:`~searcheval_frames.systems.sqlite_fts` (the index is in memory).
    k1
        Term-frequency saturation (>= 0; 0: a term counts once, whatever its frequency).
    b
        Length normalisation in [0, 1] (0: none; 1: full).

    Returns
    -------
    BM25
        A :class:`~searcheval_frames.systems.System`; ``.with_params(k1=, b=)`` gives the
        same index with other knobs (what ``sef.sweep``'s ``make_system`` should call).

    References
    ----------
    Robertson, S. and Zaragoza, H. (2009). The Probabilistic Relevance Framework: BM25
    and Beyond. Foundations and Trends in Information Retrieval 3(4).

    Examples
    --------
    >>> from searcheval_frames.systems import bm25
    >>> docs = {"d1": "hnsw hnsw graph", "d2": "hnsw graph index for vectors", "d3": "ivf"}
    >>> base = bm25(docs)
    >>> [d for d, _ in base.search("q1", "hnsw", k=5).hits]
    ['d1', 'd2']
    >>> flat = base.with_params(k1=0.0)  # a term counts once: a tie, doc ids descending
    >>> [d for d, _ in flat.search("q1", "hnsw", k=5).hits]
    ['d2', 'd1']
    """
    return BM25(docs, fields, k1=k1, b=b, id_field=id_field, tokenize=tokenize,
                weights=weights, name=name)
