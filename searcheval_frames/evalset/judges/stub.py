"""``StubServer``: a local OpenAI-compatible ``/v1/chat/completions`` for demos and tests.

It answers in the UMBRELA form (``##final score: N``) with a deterministic grade from
``grader(query, passage)`` (default: the share of the query's words found in the
passage), on 127.0.0.1 in a background thread, with optional faults: HTTP 429 or 500
every n-th request, malformed answers, slow answers, and a crash (every request after
the n-th has its connection dropped until :meth:`StubServer.recover`). It counts the answers it
gave per (query, passage), so a test can check that nothing was asked twice.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from .prompt import PromptTemplate, load_prompt

__all__ = ["StubServer", "overlap_grade"]

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(["a", "an", "and", "are", "as", "at", "be", "by", "do", "does", "for",
                   "from", "how", "i", "in", "is", "it", "of", "on", "or", "the", "to", "vs",
                   "what", "when", "where", "which", "who", "why", "with"])


def overlap_grade(query: str, passage: str) -> int:
    """0-3 from the share of the query's content words found in the passage.

    >>> overlap_grade("hnsw vs ivf index", "HNSW and IVF are two index types")
    3
    """
    words = {w for w in _WORD.findall(query.lower()) if w not in _STOP}
    if not words:
        return 0
    seen = set(_WORD.findall(passage.lower()))
    share = len(words & seen) / len(words)
    return 3 if share >= 0.75 else 2 if share >= 0.5 else 1 if share >= 0.25 else 0


class StubServer:
    """A deterministic OpenAI-compatible server on 127.0.0.1 (start / stop, or ``with``).

    Parameters
    ----------
    grader
        ``grader(query, passage) -> int``; default :func:`overlap_grade`.
    prompt
        The template the client uses (to find the query and passage in its message).
    rate_limit_every, error_every, malformed_every
        Every n-th request gets HTTP 429 (``Retry-After: 0``), HTTP 500, or an answer
        without a grade (0: never).
    always_malformed
        Passages (substrings) that always get an answer without a grade.
    delay
        Seconds to wait before each answer.
    crash_after
        After this many requests, drop every connection (a dead server) until
        :meth:`StubServer.recover`.
    writer
        ``writer(user message) -> answer`` for requests that are not the judge prompt
        (e.g. :func:`~searcheval_frames.generate_queries`' prompts); without one they get
        HTTP 400.

    Examples
    --------
    >>> import searcheval_frames as sef
    >>> with sef.judges.StubServer() as stub:
    ...     j = sef.judges.OpenAICompatible(stub.url, "stub", max_concurrency=2)
    ...     j.ask("hnsw index", "HNSW is a graph index")
    (3, '##final score: 3')
    """

    def __init__(
        self,
        grader: Callable[[str, str], int] | None = None,
        *,
        prompt: str | Path | PromptTemplate = "umbrela",
        rate_limit_every: int = 0,
        error_every: int = 0,
        malformed_every: int = 0,
        always_malformed: Iterable[str] = (),
        delay: float = 0.0,
        crash_after: int | None = None,
        writer: Callable[[str], str] | None = None,
    ) -> None:
        self.grader = grader or overlap_grade
        t = load_prompt(prompt)
        pattern = re.escape(t.user).replace(re.escape("{query}"), "(?P<query>.*?)", 1)
        pattern = pattern.replace(re.escape("{passage}"), "(?P<passage>.*?)", 1)
        self._pattern = re.compile(f"^{pattern}$", re.DOTALL)
        self.rate_limit_every = rate_limit_every
        self.error_every = error_every
        self.malformed_every = malformed_every
        self.always_malformed = tuple(always_malformed)
        self.delay = delay
        self.crash_after = crash_after
        self.writer = writer
        self.requests = 0
        #: answers with a grade given, per (query, passage)
        self.answers: Counter[tuple[str, str]] = Counter()
        self.faults: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("StubServer: start() it first")
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def recover(self) -> None:
        """Come back after a crash (``crash_after``)."""
        self.crash_after = None

    def _reply(self, n: int, messages: list[dict[str, Any]]) -> tuple[int, str | None, bool]:
        """(status, content, dropped) for the n-th request."""
        if self.crash_after is not None and n > self.crash_after:
            return 0, None, True
        if self.rate_limit_every and n % self.rate_limit_every == 0:
            return 429, None, False
        if self.error_every and n % self.error_every == 0:
            return 500, None, False
        user = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")
        m = self._pattern.match(user)
        if m is None and self.writer is not None:  # not a grading request: write an answer
            return 200, str(self.writer(user)), False
        if m is None:
            return 400, None, False
        q, p = m.group("query"), m.group("passage")
        if (self.malformed_every and n % self.malformed_every == 0) or any(
                s in p for s in self.always_malformed):
            self.faults["malformed"] += 1
            return 200, "This passage looks fairly relevant to me.", False
        with self._lock:
            self.answers[(q, p)] += 1
        return 200, f"##final score: {int(self.grader(q, p))}", False

    def start(self) -> StubServer:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with stub._lock:
                    stub.requests += 1
                    n = stub.requests
                try:
                    messages = json.loads(body)["messages"]
                except (ValueError, KeyError, TypeError):
                    messages = []
                status, content, dropped = stub._reply(n, messages)
                if stub.delay:
                    time.sleep(stub.delay)
                if dropped:
                    stub.faults["dropped"] += 1
                    self.close_connection = True
                    return
                if status != 200:
                    stub.faults[str(status)] += 1
                    payload = json.dumps({"error": {"message": f"stub: HTTP {status}"}}).encode()
                else:
                    payload = json.dumps({
                        "id": f"stub-{n}", "object": "chat.completion", "model": "stub",
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": content}}],
                    }).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                if status == 429:
                    self.send_header("Retry-After", "0")
                self.end_headers()
                self.wfile.write(payload)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> StubServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
