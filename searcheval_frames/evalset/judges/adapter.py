"""``OpenAICompatible``: an LLM relevance judge over ``/v1/chat/completions``.

One HTTP client: ``httpx`` (extra ``[judges]``). It is what the ``openai`` package is
built on, it is already installed with JupyterLab, its ``Client`` is thread-safe with a
connection pool, and using it directly keeps every retry visible to us: the ``openai``
package retries 429 / 5xx on its own, which would hide calls from the budget and the
journal. The same request works with OpenAI, vLLM, Ollama and llama.cpp's server.
"""

from __future__ import annotations

import contextlib
import os
import random
import threading
import time
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from ...errors import InvalidOptionError
from ...frames import input_kind, to_native
from ...optional import require
from ...options import check_float, check_int
from .prompt import JudgeAnswerError, PromptTemplate, load_prompt, parse_grade

__all__ = ["OpenAICompatible"]

_F = "OpenAICompatible"
_RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


class OpenAICompatible:
    """A relevance judge that asks a chat model served at an OpenAI-compatible endpoint.

    Each (query, document) pair is one ``POST {base_url}/chat/completions`` with the
    prompt template filled in; the grade is read from the answer with
    :func:`~searcheval_frames.evalset.judges.prompt.parse_grade`. HTTP 429 and 5xx,
    timeouts and dropped connections are retried with exponential backoff and jitter
    (``Retry-After`` honoured); an answer without a grade is retried too, and after
    ``retries`` attempts raises :class:`JudgeAnswerError` — it is never read as 0.

    Parameters
    ----------
    base_url
        E.g. ``"https://api.openai.com/v1"``, ``"http://localhost:8000/v1"`` (vLLM),
        ``"http://localhost:11434/v1"`` (Ollama).
    model
        The model name the server expects.
    api_key_env
        Environment variable holding the key (sent as ``Authorization: Bearer``); unset
        is fine for local servers.
    prompt
        ``"umbrela"`` (shipped, 0-3), a template file, or template text.
    temperature, max_tokens, seed
        Sampling parameters sent with each request (part of the cache key).
    max_concurrency
        Requests in flight at once.
    timeout
        Seconds per request.
    retries
        Attempts per pair beyond the first (transport errors, 429 / 5xx, no grade).
    grades
        The grades the prompt asks for.

    Examples
    --------
    >>> import searcheval_frames as sef
    >>> j = sef.judges.OpenAICompatible("http://127.0.0.1:9/v1", "llama3.1:8b")
    >>> j.name, j.params["temperature"]
    ('llama3.1:8b', 0.0)
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str | None = "OPENAI_API_KEY",
        prompt: str | Path | PromptTemplate = "umbrela",
        temperature: float = 0.0,
        max_tokens: int = 64,
        seed: int | None = None,
        max_concurrency: int = 8,
        timeout: float = 60.0,
        retries: int = 4,
        backoff: float = 0.5,
        grades: tuple[int, ...] = (0, 1, 2, 3),
    ) -> None:
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise InvalidOptionError(
                f"{_F}(base_url={base_url!r}): must be an http(s) URL ending in /v1; got "
                f"{base_url!r}. Example: base_url='http://localhost:11434/v1'"
            )
        self.base_url = base_url.rstrip("/")
        self.model = str(model)
        self.api_key_env = api_key_env
        self.template = load_prompt(prompt)
        self.temperature = check_float(_F, "temperature", temperature, minimum=0, maximum=2,
                                       example="temperature=0")
        self.max_tokens = check_int(_F, "max_tokens", max_tokens, minimum=1,
                                    example="max_tokens=64")
        self.seed = seed
        self.max_concurrency = check_int(_F, "max_concurrency", max_concurrency, minimum=1,
                                         example="max_concurrency=8")
        self.timeout = check_float(_F, "timeout", timeout, minimum=0, open_min=True,
                                   example="timeout=60")
        self.retries = check_int(_F, "retries", retries, minimum=0, example="retries=4")
        self.backoff = check_float(_F, "backoff", backoff, minimum=0, example="backoff=0.5")
        self.grades = tuple(int(g) for g in grades)
        self.name = self.model
        self._client: Any = None
        self._closer: Any = None  # closes the client when the judge is dropped
        self._lock = threading.Lock()  # one client, made once, shared by the threads
        #: HTTP requests sent (including retries) since this judge was made
        self.requests = 0

    # -------------------------------------------------------------- identity
    @property
    def params(self) -> dict[str, Any]:
        """The sampling parameters sent with every request (part of the cache key)."""
        out: dict[str, Any] = {"temperature": self.temperature, "max_tokens": self.max_tokens}
        if self.seed is not None:
            out["seed"] = self.seed
        return out

    def identity(self) -> dict[str, Any]:
        """What makes an answer this judge's: template, model, parameters, grades."""
        return {"template": self.template.text, "model": self.model, "params": self.params,
                "grades": list(self.grades)}

    def __repr__(self) -> str:
        return (f"OpenAICompatible({self.base_url!r}, model={self.model!r}, "
                f"prompt={self.template.name!r}, max_concurrency={self.max_concurrency})")

    # -------------------------------------------------------------- calls
    def _http(self) -> Any:
        with self._lock:
            return self._client or self._make_client()

    def _make_client(self) -> Any:
        if self._client is None:
            httpx = require("httpx", "sef.judges.OpenAICompatible")
            headers = {"Content-Type": "application/json"}
            key = os.environ.get(self.api_key_env) if self.api_key_env else None
            if key:
                headers["Authorization"] = f"Bearer {key}"
            limits = httpx.Limits(max_connections=self.max_concurrency,
                                  max_keepalive_connections=self.max_concurrency)
            self._client = httpx.Client(base_url=self.base_url, headers=headers,
                                        timeout=self.timeout, limits=limits)
            # a judge made in a notebook cell is rarely closed: its pooled connections are
            # closed when it is dropped, not left to the garbage collector's warnings
            self._closer = weakref.finalize(self, self._client.close)
        return self._client

    def _wait(self, attempt: int, retry_after: str | None) -> None:
        delay = self.backoff * (2**attempt) * (0.5 + random.random())
        if retry_after:
            with contextlib.suppress(ValueError):
                delay = max(delay, float(retry_after))
        time.sleep(min(delay, 60.0))

    def ask(self, query: str, passage: str) -> tuple[int, str]:
        """Grade one pair: ``(grade, answer text)``; raises :class:`JudgeAnswerError`."""
        return self.chat(self.template.messages(query, passage),
                         lambda answer: (parse_grade(answer, self.grades), answer))

    def chat(self, messages: list[dict[str, str]], parse: Any = None) -> Any:
        """One chat completion with the retries of :meth:`ask`: ``parse(answer)`` (default:
        the answer text) is returned; a :class:`JudgeAnswerError` from ``parse`` is retried
        like a transport error (so are 429 / 5xx and answers that are not completions)."""
        client = self._http()  # first: says how to install httpx when it is missing
        import httpx

        body = {"model": self.model, "messages": messages, **self.params}
        last = ""
        status: int | None = None
        retry_after: str | None = None
        for attempt in range(self.retries + 1):
            if attempt:
                self._wait(attempt - 1, retry_after)
            retry_after = None
            with self._lock:
                self.requests += 1
            try:
                r = client.post("/chat/completions", json=body)
            except httpx.TransportError as exc:  # timeouts, refused / dropped connections
                last, status = f"{type(exc).__name__}: {exc}", None
                continue
            status = r.status_code
            if status in _RETRY_STATUS:
                last, retry_after = f"HTTP {status}: {r.text[:200]}", r.headers.get("retry-after")
                continue
            if status >= 400:
                raise JudgeAnswerError(f"HTTP {status} from {self.base_url}: {r.text[:300]}",
                                       answer=r.text[:1000], status=status)
            try:
                answer = str(r.json()["choices"][0]["message"]["content"] or "")
            except (ValueError, KeyError, IndexError, TypeError):
                last = f"not a chat completion: {r.text[:200]}"
                continue
            try:
                return answer if parse is None else parse(answer)
            except JudgeAnswerError as exc:
                last = str(exc)
        raise JudgeAnswerError(
            f"no usable answer after {self.retries + 1} attempt(s); last: {last}", answer=last,
            status=status,
        )

    def __call__(self, pairs: Any) -> Any:
        """Grade a frame of pairs (``query`` and ``text`` columns) one request at a time."""
        kind = input_kind(pairs)
        df = pairs if isinstance(pairs, pl.DataFrame) else pl.from_pandas(pairs)
        grades, answers = [], []
        for q, t in df.select("query", "text").iter_rows():
            g, a = self.ask(q, t)
            grades.append(g)
            answers.append(a)
        out = df.select("query_id", "doc_id").with_columns(
            pl.Series("relevance", grades, dtype=pl.Int64),
            pl.Series("rationale", answers, dtype=pl.String))
        return to_native(out, kind)

    def close(self) -> None:
        """Close the HTTP connections (the judge opens new ones if it is used again)."""
        if self._closer is not None:
            self._closer()  # closes the client once
        self._client = self._closer = None

    def __enter__(self) -> OpenAICompatible:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getstate__(self) -> Mapping[str, Any]:
        state = dict(self.__dict__)
        state["_client"] = state["_closer"] = None
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

