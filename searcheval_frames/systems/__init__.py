"""Running a search system: ``sef.retrieve`` and the adapters of ``sef.systems``.

* ``base``: the protocol (:class:`System`, :class:`Answer`, :class:`TransientError`) and
  plain functions as systems (:func:`as_system`);
* ``answers``: each answer checked (duplicates, NaN scores, more than k hits, ids);
* ``calls``: one query asked with timeout, retries (backoff, jitter, Retry-After), rate;
* ``runner``: :func:`retrieve` (threads, asyncio or batches; the cache; the frames);
* ``cache``: answers already asked, in SQLite, keyed on fingerprint, query text and k;
* ``result``: :class:`RetrieveResult`, :func:`combine_runs`, :func:`latency_of`.

Adapters build a System: :func:`function`, ``http`` (and, with their client libraries,
the other engines): ``sqlite_fts`` (SQLite FTS5, nothing to install) and ``bm25`` (its
formula in numpy, with ``k1``/``b``), ``rerank`` (a second stage), ``postgres``,
``elasticsearch``, ``opensearch``, ``retriever`` (LangChain / LlamaIndex); see
docs/systems.md.

>>> import searcheval_frames as sef
>>> r = sef.retrieve(lambda query, k: [("d1", 1.0)], {"q1": "hello"}, name="toy")
>>> r.frame.rows()
[('q1', 'd1', 1, 1.0, 'toy')]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .base import Answer, FunctionSystem, RequestFailed, System, TransientError, as_system
from .bm25 import BM25, bm25
from .engines import Engine, elasticsearch, opensearch
from .http import HttpSystem, http
from .postgres import Postgres, postgres
from .rerank import Rerank, rerank
from .result import RetrieveResult, combine_runs, latency_of
from .retriever import Retriever, retriever
from .runner import retrieve
from .sqlite_fts import SqliteFts, sqlite_fts

__all__ = [
    "BM25",
    "Answer",
    "Engine",
    "FunctionSystem",
    "HttpSystem",
    "Postgres",
    "RequestFailed",
    "Rerank",
    "RetrieveResult",
    "Retriever",
    "SqliteFts",
    "System",
    "TransientError",
    "as_system",
    "bm25",
    "combine_runs",
    "elasticsearch",
    "function",
    "http",
    "latency_of",
    "opensearch",
    "postgres",
    "rerank",
    "retrieve",
    "retriever",
    "sqlite_fts",
]


def function(fn: Callable[..., Any], *, name: str | None = None, batch: bool | None = None,
             batch_size: int = 256) -> FunctionSystem:
    """A Python function as a system (what ``sef.retrieve`` does with a function).

    ``batch=True`` marks a batch function ``fn(queries_frame, k)`` (also recognised when
    its first parameter is named ``queries``), given ``batch_size`` queries per call.

    >>> import searcheval_frames as sef
    >>> sef.systems.function(lambda query, k: [], name="empty").name
    'empty'
    """
    return FunctionSystem(fn, name=name, batch=batch, batch_size=batch_size)
