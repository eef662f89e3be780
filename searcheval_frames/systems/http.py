"""``sef.systems.http``: any search engine behind an HTTP API, through httpx.

A request is described by templates: ``{query}``, ``{k}`` and ``{query_id}`` anywhere in
``params``, the ``json`` body or the url. A value that is exactly ``"{k}"`` becomes the
integer k (``{"size": "{k}"}`` sends ``{"size": 20}``); inside a longer string it is
written as text. The answer is read by dotted paths: ``hits`` to the list of hits
(``"hits.hits"``), ``doc_id`` and ``score`` inside each hit (``"_id"``, ``"_score"``,
``"fields.id.0"``: a number indexes a list).

Credentials come from the environment, never from code: ``auth_env="SEARCH_TOKEN"`` sends
``Authorization: Bearer <value>``, and a header value ``"{env:NAME}"`` is replaced by that
variable. They are never printed, and never part of ``config()``, the provenance or the
cache key; a header, parameter or url part that looks like a secret
(``Authorization``, ``api_key``, ``token``, ``user:password@``) is shown as ``"***"``.

Status codes: 429 and 503 (and 502/504) are transient (retried, honouring
``Retry-After``), as are connection errors; any other status >= 400 fails the query with
the status and the start of the body.
"""

from __future__ import annotations

import email.utils
import os
import re
import threading
import time
import urllib.parse
from typing import Any

from ..errors import RetrievalError
from ..optional import require
from ..options import check_choice, check_float, option_error
from .answers import InvalidAnswer
from .base import Answer, RequestFailed, System, TransientError

__all__ = ["HttpSystem", "dotted", "fill_template", "http", "is_secret_name",
           "retry_after_seconds"]

TRANSIENT_STATUS = frozenset({429, 502, 503, 504})
_FIELD = re.compile(r"\{(query|k|query_id)\}")
_ENV = re.compile(r"\{env:([A-Za-z_][A-Za-z0-9_]*)\}")
_SECRET = re.compile(
    r"(^|[-_.])(api[-_]?key|apikey|key|token|access[-_]?token|secret|password|passwd|pwd|"
    r"auth|authorization|cookie|credentials?|session|signature)([-_.]|$)", re.I)


def is_secret_name(name: str) -> bool:
    """Whether a header/parameter name looks like it holds a secret.

    >>> [is_secret_name(n) for n in ("Authorization", "x-api-key", "access_token", "keyword")]
    [True, True, True, False]
    """
    return bool(_SECRET.search(name))


def fill_template(obj: Any, values: dict[str, Any]) -> Any:
    """``obj`` with ``{query}``, ``{k}``, ``{query_id}`` filled in (see the module docstring).

    >>> fill_template({"q": "{query}", "size": "{k}", "x": ["id:{query_id}"]},
    ...               {"query": "bm25", "k": 5, "query_id": "q1"})
    {'q': 'bm25', 'size': 5, 'x': ['id:q1']}
    """
    if isinstance(obj, str):
        whole = _FIELD.fullmatch(obj)
        if whole:
            return values[whole.group(1)]
        return _FIELD.sub(lambda m: str(values[m.group(1)]), obj)
    if isinstance(obj, dict):
        return {key: fill_template(v, values) for key, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [fill_template(v, values) for v in obj]
    return obj


def dotted(obj: Any, path: str) -> Any:
    """The value at a dotted path (``"hits.hits"``, ``"fields.id.0"``); KeyError if absent.

    ``"."`` is the value itself (a response that is the list of hits).

    >>> dotted({"hits": {"hits": [1, 2]}}, "hits.hits"), dotted({"f": {"id": ["a"]}}, "f.id.0")
    ([1, 2], 'a')
    >>> dotted([{"id": "d1"}], ".")
    [{'id': 'd1'}]
    """
    if path == ".":
        return obj
    for part in path.split("."):
        if isinstance(obj, list) and part.lstrip("-").isdigit():
            try:
                obj = obj[int(part)]
            except IndexError:
                raise KeyError(path) from None
        elif isinstance(obj, dict) and part in obj:
            obj = obj[part]
        else:
            raise KeyError(path)
    return obj


def retry_after_seconds(value: str | None) -> float | None:
    """A ``Retry-After`` header as seconds (a number, or an HTTP date), or None.

    >>> retry_after_seconds("2"), retry_after_seconds(None), retry_after_seconds("soon")
    (2.0, None, None)
    """
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _redact(obj: Any) -> Any:
    """Values under secret-looking names as ``"***"`` (an ``{env:NAME}`` template stays)."""
    if isinstance(obj, dict):
        return {k: ("***" if is_secret_name(str(k)) and not (
            isinstance(v, str) and _ENV.fullmatch(v)) else _redact(v)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_redact(v) for v in obj]
    return obj


def _redact_url(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rsplit("@", 1)[1]
    query = urllib.parse.urlencode(
        [(k, "***" if is_secret_name(k) else v)
         for k, v in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)], safe="{}")
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _env(name: str, where: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise RetrievalError(
            f"http({where}): the environment variable {name} is not set (or empty); set it "
            f"to the credential, e.g. export {name}=...")
    return value


class HttpSystem(System):
    """A search engine behind an HTTP API (see :func:`http`)."""

    kind = "http"

    def __init__(self, url: str, *, method: str = "GET", params: dict[str, Any] | None = None,
                 json: Any = None, headers: dict[str, str] | None = None, hits: str = "hits",
                 doc_id: str = "id", score: str = "score", auth_env: str | None = None,
                 server_time: str | None = None, server_time_unit: str = "ms",
                 timeout: float = 30.0, name: str | None = None) -> None:
        self.url, self.method = url, method.upper()
        self.params, self.json, self.headers = params, json, dict(headers or {})
        self.hits_path, self.doc_id_path, self.score_path = hits, doc_id, score
        self.auth_env, self.server_time, self.unit = auth_env, server_time, server_time_unit
        self.timeout = timeout
        self.name = name or (urllib.parse.urlsplit(url).hostname or "http")
        self.send_headers = {k: _ENV.sub(lambda m: _env(m.group(1), "headers=..."), v)
                             for k, v in self.headers.items()}
        if auth_env:
            self.send_headers["Authorization"] = f"Bearer {_env(auth_env, f'auth_env={auth_env!r}')}"
        self.client: Any = None
        self.lock = threading.Lock()

    def config(self) -> dict[str, Any]:
        return {"url": _redact_url(self.url), "method": self.method,
                "params": _redact(self.params), "json": _redact(self.json),
                "headers": _redact(self.headers), "hits": self.hits_path,
                "doc_id": self.doc_id_path, "score": self.score_path,
                "auth_env": self.auth_env, "server_time": self.server_time,
                "server_time_unit": self.unit}

    def versions(self) -> dict[str, str]:
        return {"httpx": str(require("httpx", "sef.systems.http").__version__)}

    def _client(self) -> Any:
        with self.lock:  # one client, however many threads ask at once
            if self.client is None:
                httpx = require("httpx", "sef.systems.http")
                self.client = httpx.Client(timeout=self.timeout, follow_redirects=True,
                                           limits=httpx.Limits(max_connections=256,
                                                               max_keepalive_connections=64))
            return self.client

    def request(self, query_id: str, query: str, k: int) -> Any:
        """Send one request; the response (status checked: transient or failed)."""
        httpx = require("httpx", "sef.systems.http")
        values = {"query": query, "k": k, "query_id": query_id}
        url = _FIELD.sub(lambda m: urllib.parse.quote(str(values[m.group(1)])), self.url)
        try:
            resp = self._client().request(
                self.method, url, params=fill_template(self.params, values),
                json=fill_template(self.json, values) if self.json is not None else None,
                headers=self.send_headers)
        except httpx.TransportError as exc:
            raise TransientError(f"{type(exc).__name__}: {exc}") from None
        if resp.status_code in TRANSIENT_STATUS:
            raise TransientError(f"HTTP {resp.status_code}: {resp.text[:200]}",
                                 retry_after=retry_after_seconds(resp.headers.get("Retry-After")),
                                 status=resp.status_code)
        if resp.status_code >= 400:
            raise RequestFailed(f"HTTP {resp.status_code} from {_redact_url(str(resp.url))}: "
                                f"{resp.text[:200]!r}", status=resp.status_code)
        return resp

    def search(self, query_id: str, query: str, k: int) -> Answer:
        resp = self.request(query_id, query, k)
        try:
            body = resp.json()
        except ValueError:
            raise InvalidAnswer(f"the response is not JSON: {resp.text[:120]!r}") from None
        return self.parse(body)

    def parse(self, body: Any) -> Answer:
        """An Answer from a decoded response body, by the dotted paths."""
        try:
            raw = dotted(body, self.hits_path)
        except KeyError:
            keys = sorted(body) if isinstance(body, dict) else type(body).__name__
            raise InvalidAnswer(f"the response has no {self.hits_path!r} (hits=); its keys "
                                f"are {keys}") from None
        if not isinstance(raw, list):
            raise InvalidAnswer(f"{self.hits_path!r} in the response is "
                                f"{type(raw).__name__}, not a list of hits")
        pairs = []
        for i, hit in enumerate(raw):
            try:
                pairs.append((dotted(hit, self.doc_id_path), dotted(hit, self.score_path)))
            except KeyError as exc:
                raise InvalidAnswer(f"hit {i + 1} has no {exc.args[0]!r}: {hit!r:.160}") from None
        seconds = None
        if self.server_time is not None:
            try:
                took = float(dotted(body, self.server_time))
                seconds = took / 1000.0 if self.unit == "ms" else took
            except (KeyError, TypeError, ValueError):
                seconds = None
        return Answer(pairs, server_seconds=seconds)

    def close(self) -> None:
        with self.lock:
            if self.client is not None:
                self.client.close()
                self.client = None


def http(url: str, method: str = "GET", params: dict[str, Any] | None = None,
         json: Any = None, headers: dict[str, str] | None = None, hits: str = "hits",
         doc_id: str = "id", score: str = "score", auth_env: str | None = None, *,
         server_time: str | None = None, server_time_unit: str = "ms",
         timeout: float = 30.0, name: str | None = None) -> HttpSystem:
    """A search engine behind an HTTP API, as a system for ``sef.retrieve``.

    Parameters
    ----------
    url
        The endpoint; ``{query}``, ``{k}``, ``{query_id}`` may appear (url-encoded).
    method
        ``"GET"`` or ``"POST"``.
    params, json
        The query-string parameters and the JSON body, with ``{query}``, ``{k}``,
        ``{query_id}`` templates (an exact ``"{k}"`` is sent as an integer).
    headers
        Extra headers; ``"{env:NAME}"`` in a value is the environment variable NAME.
    hits, doc_id, score
        Dotted paths: to the list of hits in the response, and to the id and the score in
        each hit (``"hits.hits"``, ``"_id"``, ``"_score"``); ``hits="."`` when the response
        is the list itself.
    auth_env
        An environment variable holding a token sent as ``Authorization: Bearer ...``.
    server_time, server_time_unit
        A dotted path to the engine's own time in the response (``"took"``) and its unit
        (``"ms"`` or ``"s"``), recorded as ``server_seconds``.
    timeout
        httpx's timeout in seconds (connect, read, write).
    name
        The run name (default: the url's host).

    Examples
    --------
    >>> import searcheval_frames as sef
    >>> es = sef.systems.http("http://localhost:9200/docs/_search", method="POST",
    ...     json={"query": {"match": {"text": "{query}"}}, "size": "{k}"},
    ...     hits="hits.hits", doc_id="_id", score="_score", server_time="took")
    >>> es.config()["json"]
    {'query': {'match': {'text': '{query}'}}, 'size': '{k}'}
    >>> sef.systems.http("https://user:pw@example.com/s", params={"api_key": "abc"}).config()["params"]
    {'api_key': '***'}
    """
    check_choice("http", "method", method.upper() if isinstance(method, str) else method,
                 ("GET", "POST", "PUT"))
    check_choice("http", "server_time_unit", server_time_unit, ("ms", "s"))
    check_float("http", "timeout", timeout, minimum=0, open_min=True, example="timeout=30")
    for arg, value in (("hits", hits), ("doc_id", doc_id), ("score", score)):
        if not isinstance(value, str) or not value:
            raise option_error("http", arg, value, "must be a dotted path (text)",
                               f"{arg}='hits.hits'" if arg == "hits" else f"{arg}='_id'")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise option_error("http", "url", url, "must be an http:// or https:// url",
                           "url='http://localhost:9200/docs/_search'")
    return HttpSystem(url, method=method, params=params, json=json, headers=headers, hits=hits,
                      doc_id=doc_id, score=score, auth_env=auth_env, server_time=server_time,
                      server_time_unit=server_time_unit, timeout=timeout, name=name)
