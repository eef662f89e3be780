"""One query asked well: timeout, retries with backoff and jitter, a rate, validation.

:func:`ask` (threads) and :func:`aask` (asyncio) return an :class:`Outcome` per query;
:func:`ask_batch` asks a batch through ``search_batch``. The runner (``runner.py``)
decides which and how many at once.

Retries: a :class:`~searcheval_frames.systems.base.TransientError` (HTTP 429/503, a
connection reset) or a timeout is asked again up to ``retries`` times, after
``uniform(0, min(cap, backoff * 2**attempt))`` seconds ("full jitter"), or at least the
server's ``Retry-After`` when it gave one. Any other exception, and an answer that
fails validation, is a failed query at once.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from dataclasses import dataclass
from typing import Any

from .answers import InvalidAnswer, parse_hits
from .base import Answer, RequestFailed, System, TransientError

__all__ = [
    "Outcome",
    "Plan",
    "QueryTimeout",
    "RateLimiter",
    "aask",
    "ask",
    "ask_batch",
    "backoff_delay",
    "paced",
]

BACKOFF_CAP = 30.0


class QueryTimeout(TransientError):
    """No answer within ``timeout`` seconds (a sync call keeps running in its thread)."""


class RateLimiter:
    """Requests spaced ``1/rate`` seconds apart, across threads (a token bucket of one)."""

    def __init__(self, rate: float | None) -> None:
        self.interval = 1.0 / rate if rate else 0.0
        self.next = 0.0
        self.lock = threading.Lock()

    def delay(self) -> float:
        """Reserve the next slot; the seconds to wait before using it."""
        if not self.interval:
            return 0.0
        with self.lock:
            now = time.monotonic()
            slot = max(now, self.next)
            self.next = slot + self.interval
        return slot - now


@dataclass
class Plan:
    """What every call of one ``retrieve`` shares."""

    system: System
    name: str
    k: int
    timeout: float | None
    retries: int
    backoff: float
    rate: RateLimiter


@dataclass
class Outcome:
    """One query's result: its hits (when answered) and how it went."""

    doc_ids: list[str] | None
    scores: list[float] | None
    seconds: float | None
    server_seconds: float | None
    attempts: int
    status: str
    error: str | None
    cached: bool = False


def backoff_delay(attempt: int, base: float, retry_after: float | None) -> float:
    """Full jitter: ``uniform(0, min(cap, base * 2**attempt))``, at least ``retry_after``.

    >>> 0 <= backoff_delay(2, 0.1, None) <= 0.4, backoff_delay(1, 0.1, 5.0)
    (True, 5.0)
    """
    jitter = random.uniform(0.0, min(BACKOFF_CAP, base * 2 ** attempt))
    return max(jitter, retry_after) if retry_after is not None else jitter


def _describe(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if isinstance(exc, TransientError | InvalidAnswer | RequestFailed) else f"{type(exc).__name__}: {text}"


def _failed(exc: BaseException, seconds: float | None, attempts: int) -> Outcome:
    status = ("timeout" if isinstance(exc, QueryTimeout)
              else "invalid" if isinstance(exc, InvalidAnswer) else "error")
    return Outcome(None, None, seconds, None, attempts, status, _describe(exc))


def _answered(answer: Any, k: int, seconds: float, attempts: int) -> Outcome:
    if not isinstance(answer, Answer):
        answer = Answer(answer)
    ids, scores = parse_hits(answer.hits, k)
    return Outcome(ids, scores, seconds, answer.server_seconds, attempts, "ok", None)


def call_in_thread(fn: Any, timeout: float) -> Any:
    """``fn()`` in a daemon thread; :class:`QueryTimeout` when it has not returned in
    ``timeout`` seconds (the thread cannot be killed: it runs on, its answer unused)."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed to the caller below
            box["error"] = exc

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise QueryTimeout(f"no answer within timeout={timeout} s")
    if "error" in box:
        raise box["error"]
    return box["value"]


def paced(plan: Plan) -> float:
    """Wait for the next slot of the rate; the ``perf_counter`` the request starts at."""
    wait = plan.rate.delay()
    if wait:
        time.sleep(wait)
    return time.perf_counter()


def ask(plan: Plan, query_id: str, query: str) -> Outcome:
    """Ask one query (sync system), with the plan's timeout, retries and rate."""
    system, k = plan.system, plan.k
    attempt = 0
    while True:
        attempt += 1
        start = paced(plan)
        try:
            if plan.timeout is None:
                answer = system.search(query_id, query, k)
            else:
                answer = call_in_thread(lambda: system.search(query_id, query, k), plan.timeout)
            seconds = time.perf_counter() - start
            return _answered(answer, k, seconds, attempt)
        except TransientError as exc:
            seconds = time.perf_counter() - start
            if attempt > plan.retries:
                return _failed(exc, seconds, attempt)
            time.sleep(backoff_delay(attempt, plan.backoff, exc.retry_after))
        except Exception as exc:
            return _failed(exc, time.perf_counter() - start, attempt)


async def aask(plan: Plan, query_id: str, query: str) -> Outcome:
    """Ask one query of an async system (``asearch``), timeouts cancelling the call."""
    asearch = plan.system.asearch
    assert asearch is not None
    attempt = 0
    while True:
        attempt += 1
        wait = plan.rate.delay()
        if wait:
            await asyncio.sleep(wait)
        start = time.perf_counter()
        try:
            try:
                answer = await asyncio.wait_for(asearch(query_id, query, plan.k), plan.timeout)
            except TimeoutError:
                raise QueryTimeout(f"no answer within timeout={plan.timeout} s") from None
            return _answered(answer, plan.k, time.perf_counter() - start, attempt)
        except TransientError as exc:
            seconds = time.perf_counter() - start
            if attempt > plan.retries:
                return _failed(exc, seconds, attempt)
            await asyncio.sleep(backoff_delay(attempt, plan.backoff, exc.retry_after))
        except Exception as exc:
            return _failed(exc, time.perf_counter() - start, attempt)


def _batch_call(plan: Plan, items: list[tuple[str, str]]) -> list[Any]:
    system, k = plan.system, plan.k
    if plan.timeout is None:
        out = system.search_batch(items, k)
    else:
        out = call_in_thread(lambda: system.search_batch(items, k), plan.timeout)
    if not isinstance(out, list) or len(out) != len(items):
        n = len(out) if isinstance(out, list) else type(out).__name__
        raise InvalidAnswer(f"search_batch returned {n} answers for {len(items)} queries")
    return out


def ask_batch(plan: Plan, items: list[tuple[str, str]]) -> list[Outcome]:
    """Ask a batch; transient failures (of the batch or of some items) are asked again,
    the failed items only, after the backoff."""
    done: dict[int, Outcome] = {}
    todo = list(range(len(items)))
    attempt = 0
    while todo:
        attempt += 1
        start = paced(plan)
        try:
            answers: list[Any] = _batch_call(plan, [items[i] for i in todo])
        except Exception as exc:  # the whole batch failed: each item gets the error
            answers = [exc] * len(todo)
        seconds = time.perf_counter() - start  # each query of a batch waited for all of it
        again, after = [], None
        for i, answer in zip(todo, answers, strict=True):
            if isinstance(answer, TransientError) and attempt <= plan.retries:
                again.append(i)
                after = max(after or 0.0, answer.retry_after or 0.0) if answer.retry_after else after
            elif isinstance(answer, BaseException):
                done[i] = _failed(answer, seconds, attempt)
            else:
                try:
                    done[i] = _answered(answer, plan.k, seconds, attempt)
                except InvalidAnswer as exc:
                    done[i] = _failed(exc, seconds, attempt)
        todo = again
        if todo:
            time.sleep(backoff_delay(attempt, plan.backoff, after))
    return [done[i] for i in range(len(items))]
