"""``sef.retrieve``: a query set through a system, into a run with its latency.

The plan: read the queries, look each one up in the cache, ask the rest (one at a time,
in ``max_concurrency`` threads, with asyncio for an async system, or in batches for a
system with ``batch_size``), store each answer as it arrives, then build the run and
latency frames in one go (numpy/polars, no loop over rows).
"""

from __future__ import annotations

import asyncio
import os
import platform
import sqlite3
import sys
import threading
import time
import warnings
from collections.abc import Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from datetime import UTC, datetime
from typing import Any

import numpy as np
import polars as pl

from ..errors import EmptyInputError, FileAccessError, RetrievalError, SearchEvalWarning
from ..frames.kinds import Kind, input_kind
from ..io.texts import queries_table
from ..options import check_choice, check_float, check_int, option_error
from ..version import __version__
from .base import FunctionSystem, System, as_system
from .cache import DEFAULT_CACHE, AnswerCache, cache_key
from .calls import Outcome, Plan, RateLimiter, aask, ask, ask_batch
from .result import LATENCY_SCHEMA, RUN_SCHEMA, RetrieveResult

__all__ = ["retrieve"]

#: runs at least this long show a progress bar (when tqdm is installed and progress=None)
PROGRESS_MIN_QUERIES = 200


def _queries(queries: Any, columns: Mapping[str, str] | None) -> tuple[pl.DataFrame, Kind]:
    """``query_id, query`` (every query with a text) and the kind to answer in."""
    if isinstance(queries, str | os.PathLike):
        from ..io.queries import read_queries

        df, kind = read_queries(queries, columns=columns).select("query_id", "query"), Kind("polars")
    else:
        kind = input_kind(queries)
        if columns:
            from ..frames.kinds import to_polars

            raw = to_polars(queries, "queries")
            queries = raw.rename({v: k for k, v in columns.items() if v in raw.columns})
        df = queries_table(queries)
        kind = Kind("polars") if kind.name == "dict" else kind
    if df.height == 0:
        raise EmptyInputError("retrieve: queries has no rows; there is nothing to ask.")
    empty = df.filter(pl.col("query").is_null() | pl.col("query").str.strip_chars().eq(""))
    if empty.height:
        raise EmptyInputError(
            f"retrieve: {empty.height} queries have no text: {empty['query_id'].head(5).to_list()}"
            "; give each a text or drop them first.")
    return df, kind


def _cache(cache: Any, system: System) -> AnswerCache | None:
    if cache is False or (cache is None and not system.cacheable):
        return None
    if cache is None or cache is True:
        path: Any = DEFAULT_CACHE
    elif isinstance(cache, str | os.PathLike):
        path = cache
    else:
        raise option_error("retrieve", "cache", cache,
                           "must be None (the default file), True, False (no cache) or a path",
                           "cache='.searcheval/retrieve-cache.db'")
    try:
        return AnswerCache(path)
    except (OSError, sqlite3.Error) as exc:
        raise FileAccessError(
            f"retrieve(cache={str(path)!r}): cannot open the answer cache ({exc}); pass "
            "another path, or cache=False to ask every query without one.",
            path=str(path)) from None


def _progress(total: int, progress: bool | None, name: str) -> Any:
    if progress is False or total == 0:
        return None
    interactive = sys.stderr.isatty() or "ipykernel" in sys.modules  # a terminal or a notebook
    if progress is None and (total < PROGRESS_MIN_QUERIES or not interactive):
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc=f"retrieve:{name}", unit="query")


class _Run:
    """The bookkeeping of one retrieve call: outcomes by position, the cache, the bar."""

    def __init__(self, plan: Plan, qids: list[str], texts: list[str], cache: AnswerCache | None,
                 on_error: str, bar: Any) -> None:
        self.plan, self.qids, self.texts = plan, qids, texts
        self.cache, self.on_error, self.bar = cache, on_error, bar
        self.fingerprint = plan.system.fingerprint()
        self.outcomes: list[Outcome | None] = [None] * len(qids)
        self.keys: list[str] = []

    def load_cached(self) -> list[int]:
        """Fill the cached outcomes; the positions still to ask."""
        if self.cache is None:
            return list(range(len(self.qids)))
        k, fp = self.plan.k, self.fingerprint
        self.keys = [cache_key(fp, t, k) for t in self.texts]
        found = self.cache.get_many(self.keys, fp, k)
        todo = []
        for i, key in enumerate(self.keys):
            hit = found.get(key)
            if hit is None:
                todo.append(i)
            else:
                self.outcomes[i] = Outcome(hit[0], hit[1], hit[2], hit[3], hit[4], "ok", None,
                                           cached=True)
        return todo

    def record(self, i: int, out: Outcome) -> None:
        """Keep one outcome: cache it when answered, stop the run on a failure when asked."""
        self.outcomes[i] = out
        if out.status == "ok" and self.cache is not None:
            assert out.doc_ids is not None and out.scores is not None
            self.cache.put(self.keys[i], self.fingerprint, self.texts[i], self.plan.k,
                           out.doc_ids, out.scores, out.seconds, out.server_seconds,
                           out.attempts)
        if self.bar is not None:
            self.bar.update(1)
        if out.status != "ok" and self.on_error == "raise":
            raise RetrievalError(
                f"retrieve: system {self.plan.name!r} ({self.plan.system.kind}) failed on "
                f"query {self.qids[i]!r} ({self.texts[i]!r:.80}) after {out.attempts} "
                f"attempt(s): {out.status}: {out.error}. Pass on_error='record' to record "
                "failed queries in .latency and go on.")


def _sequential(run: _Run, todo: list[int]) -> None:
    for i in todo:
        run.record(i, ask(run.plan, run.qids[i], run.texts[i]))


def _chunks(todo: list[int], size: int) -> Iterator[list[int]]:
    for start in range(0, len(todo), size):
        yield todo[start:start + size]


def _threaded(run: _Run, todo: list[int], workers: int) -> None:
    plan = run.plan
    size = plan.system.batch_size
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="sef-retrieve")
    futures: dict[Future[Any], list[int]] = {}
    try:
        if size:
            for part in _chunks(todo, size):
                items = [(run.qids[i], run.texts[i]) for i in part]
                futures[pool.submit(ask_batch, plan, items)] = part
        else:
            for i in todo:
                futures[pool.submit(ask, plan, run.qids[i], run.texts[i])] = [i]
        for fut in as_completed(futures):  # waiters installed once, not per completion
            res = fut.result()
            for i, out in zip(futures[fut], res if size else [res], strict=True):
                run.record(i, out)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _asyncio(run: _Run, todo: list[int], workers: int) -> None:
    async def main() -> None:
        sem = asyncio.Semaphore(workers)

        async def one(i: int) -> None:
            async with sem:
                out = await aask(run.plan, run.qids[i], run.texts[i])
            run.record(i, out)

        tasks = [asyncio.ensure_future(one(i)) for i in todo]
        try:
            await asyncio.gather(*tasks)
        finally:
            for t in tasks:
                t.cancel()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(main())
        return
    # inside a running loop (a notebook): run ours in a thread of its own
    box: dict[str, BaseException] = {}

    def target() -> None:
        try:
            asyncio.run(main())
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=target)
    worker.start()
    worker.join()
    if "error" in box:
        raise box["error"]


def _frames(run: _Run) -> tuple[pl.DataFrame, pl.DataFrame]:
    outs = run.outcomes
    n = len(outs)
    lengths = np.fromiter((len(o.doc_ids) if o and o.doc_ids else 0 for o in outs), np.int64, n)
    docs: list[str] = []
    scores: list[float] = []
    for o in outs:
        if o is not None and o.doc_ids:
            docs.extend(o.doc_ids)
            scores.extend(o.scores or ())
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    qidx = np.repeat(np.arange(n), lengths)
    qids = pl.Series("query_id", run.qids, pl.String)
    frame = pl.DataFrame({
        "query_id": qids.gather(qidx) if qidx.size else pl.Series([], dtype=pl.String),
        "doc_id": pl.Series(docs, dtype=pl.String),
        "rank": np.arange(lengths.sum(), dtype=np.int64) - starts + 1,
        "score": pl.Series(scores, dtype=pl.Float64),
    }).with_columns(pl.lit(run.plan.name).alias("run")).cast(RUN_SCHEMA)  # type: ignore[arg-type]
    lat = pl.DataFrame({
        "query_id": run.qids,
        "run": [run.plan.name] * n,
        "seconds": [o.seconds if o else None for o in outs],
        "server_seconds": [o.server_seconds if o else None for o in outs],
        "attempts": [o.attempts if o else 0 for o in outs],
        "status": [o.status if o else "not asked" for o in outs],
        "error": [o.error if o else None for o in outs],
        "cached": [o.cached if o else False for o in outs],
    }, schema=LATENCY_SCHEMA)
    return frame, lat


def _warn_failures(lat: pl.DataFrame, name: str, kind: str) -> None:
    bad = lat.filter(pl.col("status") != "ok")
    if bad.height == 0:
        return
    shown = "; ".join(f"{q} ({s}: {str(e)[:80]})" for q, s, e in
                      bad.head(5).select("query_id", "status", "error").iter_rows())
    more = f"; and {bad.height - 5} more" if bad.height > 5 else ""
    warnings.warn(
        f"retrieve: system {name!r} ({kind}) failed on {bad.height} of {lat.height} queries, "
        f"which have no rows in the run: {shown}{more}. See result.latency (status, error); "
        "a re-run asks them again (answered queries come from the cache).",
        SearchEvalWarning, stacklevel=3)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _versions() -> dict[str, str]:
    return {"searcheval_frames": __version__, "python": platform.python_version(),
            "polars": pl.__version__}


def _check(k: Any, max_concurrency: Any, rate: Any, timeout: Any, retries: Any,
           on_error: Any, name: Any, progress: Any) -> None:
    check_int("retrieve", "k", k, minimum=1, example="k=20")
    check_int("retrieve", "max_concurrency", max_concurrency, minimum=1,
              example="max_concurrency=8")
    check_int("retrieve", "retries", retries, minimum=0, example="retries=3")
    if rate is not None:
        check_float("retrieve", "rate", rate, minimum=0, open_min=True,
                    what="requests per second, or None", example="rate=10")
    if timeout is not None:
        check_float("retrieve", "timeout", timeout, minimum=0, open_min=True,
                    what="seconds per request, or None", example="timeout=10")
    check_choice("retrieve", "on_error", on_error, ("record", "raise"))
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise option_error("retrieve", "name", name, "must be a non-empty string or None",
                           "name='bm25'")
    if progress not in (None, True, False):
        raise option_error("retrieve", "progress", progress, "must be None, True or False",
                           "progress=False")


def _dispatch(run: _Run, todo: list[int], max_concurrency: int) -> None:
    system = run.plan.system
    if system.asearch is not None and not system.batch_size:
        _asyncio(run, todo, max_concurrency)
    elif max_concurrency == 1 and not system.batch_size:
        _sequential(run, todo)
    else:
        _threaded(run, todo, max_concurrency)


def retrieve(
    system: Any,
    queries: Any,
    k: int = 20,
    *,
    name: str | None = None,
    max_concurrency: int = 1,
    rate: float | None = None,
    timeout: float | None = None,
    retries: int = 3,
    on_error: str = "record",
    cache: str | os.PathLike[str] | bool | None = None,
    progress: bool | None = None,
    columns: Mapping[str, str] | None = None,
    backoff: float = 0.1,
) -> RetrieveResult:
    """Run a query set through a search system: a run with its latency and provenance.

    Parameters
    ----------
    system
        A :class:`~searcheval_frames.systems.System` (``sef.systems.http(...)``, ...) or a
        function: ``fn(query, k)``, ``fn(query_id, query, k)``, ``async def``, or a batch
        function ``fn(queries, k)`` over a queries frame. It returns the hits best first:
        ``[(doc_id, score), ...]``, ``[{"doc_id": ..., "score": ...}, ...]`` or a frame.
    queries
        ``query_id, query`` as any frame, a dict ``{query_id: text}``, or a query file
        (read with ``sef.read_queries``).
    k
        How many hits to ask for; an answer with more is refused.
    name
        The run's name (default: the system's name).
    max_concurrency
        Queries in flight at once: threads for a sync system, asyncio tasks for an async
        one, batches in flight for a system with ``batch_size``.
    rate
        At most this many requests per second (spaced evenly), or None.
    timeout
        Seconds per request; a request past it is a failed query with status
        ``timeout`` (retried like a transient error). A sync function cannot be
        stopped: it runs on in its thread, its answer unused.
    retries
        Asks again after a transient failure (:class:`TransientError`: HTTP 429/503, a
        connection error; or a timeout), waiting ``uniform(0, backoff * 2**attempt)``
        seconds (full jitter, capped at 30 s), and at least the ``Retry-After`` the
        server gave.
    on_error
        ``"record"``: a failed query is recorded in ``.latency`` (status, error,
        attempts), has no rows in the run, and one warning names the failed queries.
        ``"raise"``: the first failure stops the run with a :class:`RetrievalError`
        naming the query and the system (answers so far stay in the cache).
    cache
        None: ``.searcheval/retrieve-cache.db`` for adapters; no cache for a plain
        function (its code does not capture what it depends on), unless a path (or
        True, the default file) is given. A path: that SQLite file. False: no cache. Keyed on the system's fingerprint,
        the query text and k; each answer committed as it arrives.
    progress
        A tqdm bar (when tqdm is installed): None shows it on a terminal or in a notebook
        for runs of 200 queries or more; True always; False never.
    columns
        ``{"query_id": ..., "query": ...}`` naming your queries' columns.
    backoff
        The base of the exponential backoff, in seconds.

    Returns
    -------
    RetrieveResult
        ``.frame`` (``query_id, doc_id, rank, score, run`` in the queries' frame kind;
        rank is the system's order), ``.latency``, ``.summary()``, ``.provenance``.

    Examples
    --------
    >>> import searcheval_frames as sef
    >>> docs = {"d1": "bm25 ranking", "d2": "dense retrieval", "d3": "bm25 tuning"}
    >>> def search(query, k):
    ...     words = set(query.split())
    ...     hits = [(d, float(len(words & set(t.split())))) for d, t in docs.items()]
    ...     return sorted([h for h in hits if h[1] > 0], key=lambda h: -h[1])[:k]
    >>> result = sef.retrieve(search, {"q1": "bm25 tuning", "q2": "dense"}, k=2, name="overlap")
    >>> result.frame.rows()
    [('q1', 'd3', 1, 2.0, 'overlap'), ('q1', 'd1', 2, 1.0, 'overlap'), ('q2', 'd2', 1, 1.0, 'overlap')]
    >>> result.latency["status"].to_list()
    ['ok', 'ok']
    """
    _check(k, max_concurrency, rate, timeout, retries, on_error, name, progress)
    check_float("retrieve", "backoff", backoff, minimum=0, example="backoff=0.1")
    sys_ = as_system(system, name=name)
    run_name = name or sys_.name
    df, kind = _queries(queries, columns)
    if isinstance(sys_, FunctionSystem):
        sys_.frame_kind = kind  # a batch function is given frames of the queries' kind
    plan = Plan(sys_, run_name, k, timeout, retries, backoff, RateLimiter(rate))
    store = _cache(cache, sys_)
    started, t0 = _now(), time.perf_counter()
    run = _Run(plan, df["query_id"].to_list(), df["query"].to_list(), store, on_error, None)
    try:
        todo = run.load_cached()
        run.bar = _progress(len(todo), progress, run_name)
        if todo:
            _dispatch(run, todo, max_concurrency)
    finally:
        if run.bar is not None:
            run.bar.close()
        if store is not None:
            store.close()
        sys_.close()  # a System stays usable after close(): clients reopen on next use
    wall = time.perf_counter() - t0
    frame, lat = _frames(run)
    _warn_failures(lat, run_name, sys_.kind)
    prov = {"adapter": sys_.kind, "name": run_name, "config": sys_.config(),
            "fingerprint": run.fingerprint, "k": k, "queries": df.height,
            "asked": len(todo), "start": started, "end": _now(),
            "options": {"max_concurrency": max_concurrency, "rate": rate, "timeout": timeout,
                        "retries": retries, "on_error": on_error},
            "cache": str(store.path) if store is not None else None,
            "versions": {**_versions(), **sys_.versions()}}
    return RetrieveResult(frame, lat, prov, run_name, kind, wall)

