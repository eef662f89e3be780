"""``sef.systems.sqlite_fts``: SQLite's FTS5 full-text index, the embedded default.

It needs nothing installed (SQLite ships with Python): the documents are indexed in
memory (or in a file at ``path=``) and each query is answered with FTS5's ``bm25()``
rank. The shared pieces of the two BM25 systems live here too: the document table
(:func:`load_docs`), its content hash, the query's words (:func:`query_words`) and the
FTS5 index they are both built on (:class:`FtsIndex`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from ..errors import MissingColumnError
from ..frames.kinds import is_path, to_polars
from ..io.texts import read_docs
from ..options import check_float, option_error
from .base import Answer, System

__all__ = ["QUERY_FORM", "FtsIndex", "SqliteFts", "docs_hash", "fts_match", "load_docs", "query_words",
           "sqlite_fts"]

#: a word as FTS5's unicode61 tokenizer sees one: a run of letters and digits
_WORD = re.compile(r"[^\W_]+")
#: how a query becomes FTS5 terms (in the configuration: a change here asks again)
QUERY_FORM = "words-or-1"
_TOKENIZE = re.compile(r"^[A-Za-z0-9_ \"'=.-]+$")


def load_docs(docs: Any, fields: Sequence[str], id_field: str, func: str) -> pl.DataFrame:
    """``doc_id`` plus each of ``fields`` (strings, nulls as ""), one row per document.

    ``docs``: a dataframe of any kind, a dict ``{doc_id: text}`` (the text goes in the
    ``text`` field, or the first field when ``text`` is not one; the others are empty),
    or a JSON Lines / CSV / TSV / Parquet file.
    """
    if isinstance(docs, Mapping):
        into = "text" if "text" in fields else fields[0]
        df = pl.DataFrame({id_field: [str(k) for k in docs],
                           **{f: [str(v) if f == into else "" for v in docs.values()]
                              for f in fields}})
    elif is_path(docs):
        df = read_docs(docs, "docs")
    else:
        df = to_polars(docs, "docs")
    missing = [c for c in (id_field, *fields) if c not in df.columns]
    if missing:
        raise MissingColumnError(
            f"{func}(docs): no column {missing}; the documents have {df.columns}. Name "
            f"the id with id_field= and the text columns with fields=, e.g. "
            f"fields={tuple(c for c in df.columns if c != id_field)[:2]!r}")
    out = df.select(pl.col(id_field).cast(pl.String).alias("doc_id"),
                    *[pl.col(f).cast(pl.String).fill_null("") for f in fields])
    nulls = out.filter(pl.col("doc_id").is_null())
    if nulls.height:
        raise MissingColumnError(f"{func}(docs): {nulls.height} documents have no "
                                 f"{id_field}; every document needs an id")
    dup = out.filter(pl.col("doc_id").is_duplicated())["doc_id"].unique().sort()
    if dup.len():
        raise option_error(func, "docs", f"<{out.height} documents>",
                           f"document ids must be unique ({dup.len()} repeated, e.g. "
                           f"{dup.head(3).to_list()})", "drop the duplicates first")
    return out


def docs_hash(docs: pl.DataFrame) -> str:
    """sha256 of the documents' content (ids and fields, in order)."""
    h = hashlib.sha256()
    for row in docs.iter_rows():
        h.update(json.dumps(row, ensure_ascii=False).encode())
        h.update(b"\n")
    return h.hexdigest()


def query_words(query: str) -> list[str]:
    """The query's words, lower case, in order; a repeated word stays repeated (it counts
    twice, as in Elasticsearch's ``match`` query and FTS5's own sum over phrases).

    >>> query_words("HNSW vs. IVF, hnsw?")
    ['hnsw', 'vs', 'ivf', 'hnsw']
    """
    return [w.lower() for w in _WORD.findall(query)]


def fts_match(words: Sequence[str]) -> str:
    """An FTS5 MATCH expression: each word quoted (no operator or syntax survives), OR-ed.

    >>> fts_match(["hnsw", "ivf"])
    '"hnsw" OR "ivf"'
    """
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class FtsIndex:
    """The documents in an FTS5 table ``docs(<fields>, doc_id UNINDEXED)``.

    One connection shared by the threads of a run, behind a lock (a query takes
    microseconds to milliseconds; SQLite serialises a connection anyway). ``sef.retrieve``
    closes a system after each run and a system stays usable after ``close()``: a file's
    connection is opened again, an index in memory is kept.
    """

    def __init__(self, docs: pl.DataFrame, fields: Sequence[str], tokenize: str,
                 path: str | os.PathLike[str] | None, content: str) -> None:
        self.fields = list(fields)
        self.tokenize = tokenize
        self.lock = threading.Lock()
        self.path = None if path is None else str(path)
        self.db: sqlite3.Connection | None = sqlite3.connect(
            ":memory:" if path is None else str(path), check_same_thread=False)
        stamp = json.dumps({"fields": self.fields, "tokenize": tokenize, "docs": content})
        if path is not None and self._stamp() == stamp:
            return  # the file already holds this index
        cols = ", ".join([*map(_ident, self.fields), "doc_id UNINDEXED"])
        tok = tokenize.replace("'", "''")
        with self.conn:
            self.conn.execute("DROP TABLE IF EXISTS docs")
            self.conn.execute("DROP TABLE IF EXISTS sef_index")
            self.conn.execute(f"CREATE VIRTUAL TABLE docs USING fts5({cols}, tokenize='{tok}')")
            marks = ", ".join("?" * (len(self.fields) + 1))
            self.conn.executemany(f"INSERT INTO docs VALUES ({marks})",
                                  docs.select(*self.fields, "doc_id").iter_rows())
            self.conn.execute("CREATE TABLE sef_index (stamp TEXT)")
            self.conn.execute("INSERT INTO sef_index VALUES (?)", (stamp,))

    def _stamp(self) -> str | None:
        try:
            row = self.conn.execute("SELECT stamp FROM sef_index").fetchone()
        except sqlite3.DatabaseError:
            return None
        return None if row is None else str(row[0])

    def bm25(self, words: Sequence[str], k: int, weights: Sequence[float]) -> list[tuple[str, float]]:
        """The top ``k`` by FTS5's ``bm25()`` (negated: higher is better), ties by doc id
        descending (trec_eval's order)."""
        if not words:
            return []
        w = ", ".join(repr(float(x)) for x in weights)
        rank = f"bm25(docs, {w})" if w else "bm25(docs)"
        sql = (f"SELECT doc_id, -{rank} AS score FROM docs WHERE docs MATCH ? "
               "ORDER BY score DESC, doc_id DESC LIMIT ?")
        with self.lock:
            return self.conn.execute(sql, (fts_match(words), k)).fetchall()

    def tokens(self, words: Sequence[str]) -> list[list[str]]:
        """Each word's tokens by the index's tokenizer (stems with ``porter``)."""
        if not words:
            return []
        with self.lock, self.conn:
            if not self.conn.execute("SELECT 1 FROM temp.sqlite_master WHERE name = "
                                     "'sef_words'").fetchone():
                tok = self.tokenize.replace("'", "''")
                self.conn.execute(f"CREATE VIRTUAL TABLE temp.sef_words USING fts5(w, "
                                  f"tokenize='{tok}')")
                self.conn.execute("CREATE VIRTUAL TABLE temp.sef_word_terms USING "
                                  "fts5vocab(temp, sef_words, instance)")
            self.conn.executemany("INSERT INTO temp.sef_words(rowid, w) VALUES (?, ?)",
                                  enumerate(words))
            rows = self.conn.execute("SELECT doc, term FROM temp.sef_word_terms "
                                     "ORDER BY doc, offset").fetchall()
            self.conn.execute("DELETE FROM temp.sef_words")
        out: list[list[str]] = [[] for _ in words]
        for i, term in rows:
            out[i].append(term)
        return out

    def instances(self) -> pl.DataFrame:
        """``term, doc, col, tf``: each term's count per document (0-based row) and field."""
        with self.lock:
            self.conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.sef_terms USING "
                              "fts5vocab(main, docs, instance)")
            rows = self.conn.execute("SELECT term, doc - 1, col, count(*) FROM temp.sef_terms "
                                     "GROUP BY term, doc, col").fetchall()
        return pl.DataFrame(rows, schema={"term": pl.String, "doc": pl.Int64, "col": pl.String,
                                          "tf": pl.Int64}, orient="row")

    @property
    def conn(self) -> sqlite3.Connection:
        """The connection (a file's index is opened again after :meth:`close`)."""
        if self.db is None:
            self.db = sqlite3.connect(str(self.path), check_same_thread=False)
        return self.db

    def close(self) -> None:
        """Close a file's connection (reopened on next use); an index in memory lives
        as long as the object (closing it would lose it)."""
        if self.path is not None and self.db is not None:
            with self.lock:
                self.db.close()
                self.db = None


def check_weights(func: str, weights: Any, fields: Sequence[str]) -> list[float]:
    """Column weights as floats in ``fields``' order (a dict by field name, or a list)."""
    if weights is None:
        return [1.0] * len(fields)
    example = f"weights={{{fields[0]!r}: 2.0}}"
    if isinstance(weights, Mapping):
        unknown = [f for f in weights if f not in fields]
        if unknown:
            raise option_error(func, "weights", weights, f"must name fields of {list(fields)}",
                               example)
        values = [weights.get(f, 1.0) for f in fields]
    elif isinstance(weights, Sequence) and not isinstance(weights, str) and \
            len(weights) == len(fields):
        values = list(weights)
    else:
        raise option_error(func, "weights", weights,
                           f"must be a dict by field or a list of {len(fields)} numbers", example)
    return [check_float(func, "weights", v, minimum=0, example=example) for v in values]


def check_fields(func: str, fields: Any) -> list[str]:
    if isinstance(fields, str):
        fields = [fields]
    if not isinstance(fields, Sequence) or not fields or \
            not all(isinstance(f, str) and f for f in fields) or len(set(fields)) != len(fields):
        raise option_error(func, "fields", fields, "must be distinct column names",
                           "fields=('title', 'text')")
    return list(fields)


def check_tokenize(func: str, tokenize: Any) -> str:
    if not isinstance(tokenize, str) or not _TOKENIZE.match(tokenize):
        raise option_error(func, "tokenize", tokenize, "must be an FTS5 tokenizer spec",
                           "tokenize='porter unicode61'")
    return tokenize


class SqliteFts(System):
    """SQLite FTS5 with ``bm25()``; see :func:`sqlite_fts`."""

    kind = "sqlite_fts"

    def __init__(self, docs: Any, fields: Sequence[str] = ("title", "text"), *,
                 id_field: str = "doc_id", path: str | os.PathLike[str] | None = None,
                 tokenize: str = "porter unicode61", weights: Any = None,
                 name: str = "sqlite_fts") -> None:
        func = "sqlite_fts"
        self.fields = check_fields(func, fields)
        self.tokenize = check_tokenize(func, tokenize)
        self.weights = check_weights(func, weights, self.fields)
        self.docs = load_docs(docs, self.fields, id_field, func)
        self.content = docs_hash(self.docs)
        self.path = None if path is None else str(Path(path))
        self.name = name
        self.index = FtsIndex(self.docs, self.fields, self.tokenize, path, self.content)

    def config(self) -> dict[str, Any]:
        return {"fields": self.fields, "tokenize": self.tokenize, "weights": self.weights,
                "docs": self.content, "n_docs": self.docs.height, "query": QUERY_FORM,
                "sqlite": sqlite3.sqlite_version}

    def search(self, query_id: str, query: str, k: int) -> Answer:
        return Answer(self.index.bm25(query_words(query), k, self.weights))

    def close(self) -> None:
        self.index.close()


def sqlite_fts(docs: Any, fields: Sequence[str] = ("title", "text"), *,
               id_field: str = "doc_id", path: str | os.PathLike[str] | None = None,
               tokenize: str = "porter unicode61", weights: Any = None,
               name: str = "sqlite_fts") -> SqliteFts:
    """A search system over ``docs`` with SQLite FTS5's BM25 (nothing to install).

    Each query's words (runs of letters and digits, lower-cased) are quoted and OR-ed
    (``"hnsw" OR "ivf"``), as a BM25 engine's default query does, so no FTS5 syntax in a
    query can break it; a repeated word counts twice (the sum below runs over the
    query's words, as Elasticsearch's ``match`` query does); a query without a word
    returns no hits. The score
    is ``-bm25(docs, w_1, ..., w_n)`` (higher is better), FTS5's Okapi BM25 with
    ``k1 = 1.2``, ``b = 0.75`` fixed:

    .. math::

        \\mathrm{score}(d, q) = \\sum_{t \\in q} \\mathrm{idf}(t)
        \\frac{f_{t,d} (k_1 + 1)}{f_{t,d} + k_1 (1 - b + b\\, |d| / \\overline{|d|})},
        \\quad \\mathrm{idf}(t) = \\max\\Big(10^{-6}, \\ln \\frac{N - n_t + 0.5}{n_t + 0.5}\\Big)

    where :math:`f_{t,d} = \\sum_c w_c\\, \\mathrm{tf}_{t,d,c}` weights each field's term
    count, :math:`|d|` counts the document's tokens over all fields, and :math:`n_t`
    the documents holding :math:`t`. For other ``k1`` / ``b`` use
    :func:`~searcheval_frames.systems.bm25`, the same formula in numpy with both knobs.

    Parameters
    ----------
    docs
        A dataframe (any kind), a ``{doc_id: text}`` dict, or a document file
        (JSON Lines, CSV, TSV, Parquet), e.g. ``"data/example/docs.jsonl"``.
    fields
        The columns indexed and searched (default ``("title", "text")``).
    id_field
        The document id column.
    path
        Keep the index in this SQLite file (reused while documents and options are the
        same, rebuilt otherwise); default in memory.
    tokenize
        FTS5's tokenizer (default ``"porter unicode61"``: Porter stems, case and
        diacritics folded; ``"unicode61"`` without stemming).
    weights
        Each field's weight in ``bm25()`` (a dict by field, or a list), the sweepable
        knob: ``{"title": 2.0}`` counts a title match twice. Default 1 each.
    name
        The run name (``sef.retrieve(name=)`` overrides it).

    Returns
    -------
    SqliteFts
        A :class:`~searcheval_frames.systems.System`; ``config()`` records the fields,
        the tokenizer, the weights and the documents' sha256 (so changed documents
        change the fingerprint and the cache asks again).

    References
    ----------
    SQLite FTS5, "the bm25() function": https://www.sqlite.org/fts5.html#the_bm25_function

    Examples
    --------
    >>> from searcheval_frames.systems import sqlite_fts
    >>> docs = {"d1": "HNSW is a graph index", "d2": "IVF partitions vectors into lists",
    ...         "d3": "a cooking recipe"}
    >>> fts = sqlite_fts(docs)
    >>> [doc for doc, _ in fts.search("q1", "HNSW or IVF index?", k=10).hits]
    ['d1', 'd2']
    >>> fts.search("q2", "?!", k=10).hits
    []
    """
    return SqliteFts(docs, fields, id_field=id_field, path=path, tokenize=tokenize,
                     weights=weights, name=name)
