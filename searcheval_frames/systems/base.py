"""The protocol every search system follows, and plain functions made into systems.

A :class:`System` answers one query (``search``), optionally a batch (``search_batch``)
or asynchronously (``asearch``); ``sef.retrieve`` runs a query set through it. Adapters
(``sef.systems.http``, ``sqlite_fts``, ``elasticsearch``, ...) are Systems; a plain
function becomes one through :func:`as_system`.

>>> from searcheval_frames.systems import as_system
>>> s = as_system(lambda query, k: [("d1", 2.0), ("d2", 1.0)][:k], name="toy")
>>> s.kind, s.name, s.search("q1", "bm25", 1).hits
('function', 'toy', [('d1', 2.0)])
"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidOptionError
from ..frames.kinds import Kind, to_polars

__all__ = ["Answer", "FunctionSystem", "RequestFailed", "System", "TransientError", "as_system",
           "canonical_json", "split_batch"]


class TransientError(Exception):
    """A failure worth retrying (HTTP 429/503, a connection reset, a timeout).

    ``retry_after``: the seconds the server asked to wait (``Retry-After``), or None;
    ``status``: the HTTP status when there is one. ``sef.retrieve`` retries it with
    exponential backoff and full jitter, waiting at least ``retry_after``.
    """

    def __init__(self, message: str, *, retry_after: float | None = None,
                 status: int | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.status = status


class RequestFailed(Exception):
    """A failure not worth retrying (HTTP 400/404/500, ...): the query is recorded as
    failed with this message as it is (``status``: the HTTP status, when there is one)."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Answer:
    """One query's answer: raw ``hits`` and the engine's own time when it reports one.

    ``hits``: ``[(doc_id, score), ...]``, ``[{"doc_id": ..., "score": ...}, ...]`` or a
    frame with ``doc_id`` and ``score`` columns, best first. ``server_seconds``: the
    engine's time (Elasticsearch ``took`` / 1000), or None.
    """

    hits: Any
    server_seconds: float | None = None


def canonical_json(obj: Any) -> str:
    """The one JSON spelling of a configuration (sorted keys, no spaces) for hashing."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str, ensure_ascii=False)


class System:
    """Base class of every adapter: set ``kind``, implement ``search``.

    Optionally ``search_batch`` (set ``batch_size`` when one call for many queries is
    cheaper, e.g. ``_msearch``) and/or ``asearch`` (an ``async`` search: ``sef.retrieve``
    then runs queries with asyncio). ``config()`` returns the JSON-able configuration
    with secrets redacted (``"***"``); ``fingerprint()`` hashes it, and is the cache key's
    system part: a changed configuration asks again. ``cacheable``: whether the
    configuration determines the answers (True for adapters; False for plain functions,
    whose behaviour their code does not capture).
    """

    kind: str = "system"
    name: str = "system"
    batch_size: int | None = None
    cacheable: bool = True

    def config(self) -> dict[str, Any]:
        """The JSON-able configuration, secrets redacted."""
        return {}

    def fingerprint(self) -> str:
        """sha256 (hex) of the canonical JSON of ``{"kind": kind, "config": config()}``."""
        text = canonical_json({"kind": self.kind, "config": self.config()})
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def versions(self) -> dict[str, str]:
        """Versions of the client libraries the system uses, for the provenance (not part
        of the fingerprint: a client upgrade does not empty the cache)."""
        return {}

    def search(self, query_id: str, query: str, k: int) -> Answer:
        """Answer one query (raise :class:`TransientError` to have it retried)."""
        raise NotImplementedError(f"{type(self).__name__}.search is not implemented")

    def search_batch(self, items: list[tuple[str, str]], k: int) -> list[Answer | BaseException]:
        """Answer ``[(query_id, query), ...]``: an Answer or the exception, per item."""
        out: list[Answer | BaseException] = []
        for qid, query in items:
            try:
                out.append(self.search(qid, query, k))
            except Exception as exc:  # one failed query does not fail its batch
                out.append(exc)
        return out

    asearch: Callable[..., Any] | None = None
    """``async def asearch(query_id, query, k) -> Answer`` when the system is async."""

    def close(self) -> None:
        """Release clients and connections (default: nothing to release).

        ``sef.retrieve`` calls it when a run ends, so a system must stay usable after it:
        a client the system made is made again on next use; a client the caller passed
        in is the caller's to close."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} kind={self.kind!r} name={self.name!r}>"


def _code_hash(fn: Callable[..., Any]) -> str:
    code = getattr(fn, "__code__", None)
    try:
        text = inspect.getsource(fn)
    except (OSError, TypeError):
        text = repr(code.co_code if code is not None else fn)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _arity(fn: Callable[..., Any]) -> tuple[int, str | None]:
    """How many positional parameters ``fn`` takes, and the first one's name."""
    try:
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return 2, None
    return len(params), (params[0].name if params else None)


class FunctionSystem(System):
    """A Python function as a system.

    ``fn(query, k)`` or ``fn(query_id, query, k)`` per query, ``async def`` for asyncio,
    or a batch function ``fn(queries, k)`` over a queries frame (``query_id, query``;
    recognised by its first parameter being named ``queries``, or by ``batch=True``)
    returning a run frame (``query_id, doc_id, score``), a dict ``{query_id: hits}`` or
    a list of hits in the queries' order. ``batch_size`` queries are given per call.
    """

    kind = "function"
    cacheable = False

    def __init__(self, fn: Callable[..., Any], *, name: str | None = None,
                 batch: bool | None = None, batch_size: int = 256) -> None:
        if not callable(fn):
            raise InvalidOptionError(
                f"as_system(system={fn!r}): must be a System or a function fn(query, k); "
                f"got {type(fn).__name__}. Example: sef.retrieve(lambda query, k: [...], queries)")
        self.fn = fn
        n, first = _arity(fn)
        if n not in (2, 3):
            raise InvalidOptionError(
                f"as_system(system={getattr(fn, '__name__', fn)!r}): a function system takes "
                f"(query, k), (query_id, query, k) or (queries, k); got {n} positional "
                "parameters. Example: def search(query, k): return [(doc_id, score), ...]")
        self.with_id = n == 3
        self.frame_kind = Kind("polars")  # the kind of frame a batch function is given
        self.batch = bool(batch) if batch is not None else (n == 2 and first == "queries")
        self.batch_size = batch_size if self.batch else None
        self.name = name or getattr(fn, "__name__", "function").strip("<>") or "function"
        if inspect.iscoroutinefunction(fn) and not self.batch:
            self.asearch = self._asearch

    def config(self) -> dict[str, Any]:
        qual = f"{getattr(self.fn, '__module__', '')}.{getattr(self.fn, '__qualname__', '')}"
        return {"function": qual, "code": _code_hash(self.fn), "batch": self.batch}

    def search(self, query_id: str, query: str, k: int) -> Answer:
        out = self.fn(query_id, query, k) if self.with_id else self.fn(query, k)
        return out if isinstance(out, Answer) else Answer(out)

    def search_batch(self, items: list[tuple[str, str]], k: int) -> list[Answer | BaseException]:
        if not self.batch:
            return super().search_batch(items, k)
        import polars as pl

        from ..frames.kinds import to_native

        frame = pl.DataFrame({"query_id": [q for q, _ in items], "query": [t for _, t in items]},
                             schema={"query_id": pl.String, "query": pl.String})
        return split_batch(self.fn(to_native(frame, self.frame_kind), k), items)

    async def _asearch(self, query_id: str, query: str, k: int) -> Answer:
        out = await (self.fn(query_id, query, k) if self.with_id else self.fn(query, k))
        return out if isinstance(out, Answer) else Answer(out)


def split_batch(out: Any, items: list[tuple[str, str]]) -> list[Answer | BaseException]:
    """A batch function's output as one Answer per item: a list in the items' order, a
    dict ``{query_id: hits}`` or a frame with ``query_id, doc_id, score`` (a query with no
    rows or no key has no hits)."""
    from .answers import InvalidAnswer

    qids = [q for q, _ in items]
    if isinstance(out, list | tuple):
        if len(out) != len(items):
            raise InvalidAnswer(f"the batch function returned {len(out)} answers for "
                                f"{len(items)} queries")
        return [a if isinstance(a, Answer) else Answer(a) for a in out]
    if isinstance(out, dict):
        extra = sorted(set(map(str, out)) - set(qids))
        if extra:
            raise InvalidAnswer(f"the batch function answered queries it was not asked: "
                                f"{extra[:5]}")
        by_id = {str(q): a for q, a in out.items()}
        return [Answer(by_id.get(q, [])) for q in qids]
    import polars as pl

    df = to_polars(out, "the batch function's answer")
    if "query_id" not in df.columns:
        raise InvalidAnswer(f"the batch function's frame has no query_id column; its columns "
                            f"are {df.columns}")
    df = df.with_columns(pl.col("query_id").cast(pl.String))
    parts = {str(key[0]): part.drop("query_id")
             for key, part in df.partition_by("query_id", as_dict=True, maintain_order=True).items()}
    extra = sorted(set(parts) - set(qids))
    if extra:
        raise InvalidAnswer(f"the batch function answered queries it was not asked: {extra[:5]}")
    return [Answer(parts.get(q, [])) for q in qids]


def as_system(obj: Any, *, name: str | None = None) -> System:
    """``obj`` as a :class:`System`: a System as it is, a function as a FunctionSystem.

    Examples
    --------
    >>> from searcheval_frames.systems import as_system
    >>> def search(query_id, query, k):
    ...     return [{"doc_id": "d1", "score": 1.0}]
    >>> as_system(search).search("q1", "hello", 10).hits
    [{'doc_id': 'd1', 'score': 1.0}]
    """
    if isinstance(obj, System):
        return obj
    return FunctionSystem(obj, name=name)
