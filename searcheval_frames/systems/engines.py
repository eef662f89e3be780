"""``sef.systems.elasticsearch`` and ``sef.systems.opensearch``, through the official clients.

One query body per search (a dict template with ``"{query}"`` / ``"{k}"``), ``_msearch``
for batches (``batch_size`` queries per request), the engine's ``took`` as the answer's
``server_seconds``; HTTP 429/502/503/504 and lost connections are
:class:`TransientError` (the runner retries them, honouring ``Retry-After``), any other
error a failed query.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..optional import require
from ..options import check_int, option_error
from .base import Answer, RequestFailed, System, TransientError

__all__ = ["Engine", "elasticsearch", "fill_template", "opensearch"]

TRANSIENT = (429, 502, 503, 504)
_SLOT = re.compile(r"\{query\}|\{k\}")


def fill_template(template: Any, query: str, k: int) -> Any:
    """``template`` with ``"{query}"`` and ``"{k}"`` filled in, at any depth.

    A string that is exactly ``"{k}"`` becomes the integer ``k``; elsewhere both are
    replaced inside strings, in one pass (no ``str.format``: other braces stay as they
    are, and a query holding ``{k}`` is left alone).

    >>> fill_template({"size": "{k}", "query": {"match": {"text": "{query}"}}}, "hnsw", 5)
    {'size': 5, 'query': {'match': {'text': 'hnsw'}}}
    """
    if isinstance(template, str):
        if template == "{k}":
            return k
        return _SLOT.sub(lambda m: query if m.group() == "{query}" else str(k), template)
    if isinstance(template, Mapping):
        return {key: fill_template(v, query, k) for key, v in template.items()}
    if isinstance(template, list | tuple):
        return [fill_template(v, query, k) for v in template]
    return template


def _status_of(exc: BaseException) -> tuple[int | None, float | None]:
    """HTTP status and Retry-After of a client error (either client), if it has them."""
    meta = getattr(exc, "meta", None)
    status = getattr(meta, "status", None)
    headers = getattr(meta, "headers", None) or {}
    if status is None:
        code = getattr(exc, "status_code", None)
        status = code if isinstance(code, int) else None
        info = getattr(exc, "info", None)
        headers = getattr(info, "headers", None) or {}
    retry = headers.get("Retry-After") or headers.get("retry-after")
    try:
        after = float(retry) if retry is not None else None
    except ValueError:
        after = None
    return status, after


class Engine(System):
    """Elasticsearch or OpenSearch; see :func:`elasticsearch` and :func:`opensearch`."""

    def __init__(self, flavour: str, url_or_client: Any, index: str, query: Any = None, *,
                 fields: Sequence[str] = ("title", "text"), doc_id: str | None = None,
                 batch_size: int = 50, api_key_env: str | None = None,
                 auth_env: str | None = None, timeout: float | None = None,
                 name: str | None = None) -> None:
        func = flavour
        self.kind = flavour
        if not isinstance(index, str) or not index:
            raise option_error(func, "index", index, "must be an index name", "index='docs'")
        if query is not None and not isinstance(query, Mapping):
            raise option_error(func, "query", query, "must be a dict (the search body) with "
                               "'{query}' where the text goes",
                               "query={'query': {'match': {'text': '{query}'}}}")
        self.fields = [fields] if isinstance(fields, str) else list(fields)
        self.template = dict(query) if query is not None else {
            "query": {"multi_match": {"query": "{query}", "fields": self.fields}}}
        self.template.setdefault("size", "{k}")
        if doc_id is None:
            self.template.setdefault("_source", False)
        else:
            self.template.setdefault("_source", [doc_id])
        self.index = index
        self.doc_id = doc_id
        self.batch_size = check_int(func, "batch_size", batch_size, minimum=1,
                                    example="batch_size=50")
        self.name = name or f"{flavour}:{index}"
        self.owned = isinstance(url_or_client, str)
        self.made: Any = None
        self.timeout = timeout
        self.auth = {"api_key_env": api_key_env, "auth_env": auth_env}
        if self.owned:
            self.url = url_or_client
            self.made = self._client(url_or_client, api_key_env, auth_env, timeout)
        else:
            self.url = _client_url(url_or_client)
            self.made = url_or_client

    @property
    def client(self) -> Any:
        """The client (one made from a URL is made again after :meth:`close`)."""
        if self.made is None:
            self.made = self._client(self.url, self.auth["api_key_env"], self.auth["auth_env"],
                                     self.timeout)
        return self.made

    def _client(self, url: str, api_key_env: str | None, auth_env: str | None,
                timeout: float | None) -> Any:
        """A client that does not retry by itself (the runner retries, and counts)."""
        opts: dict[str, Any] = {}
        if api_key_env:
            opts["api_key"] = _env(self.kind, "api_key_env", api_key_env)
        if auth_env:
            user, _, pw = _env(self.kind, "auth_env", auth_env).partition(":")
            opts["basic_auth" if self.kind == "elasticsearch" else "http_auth"] = (user, pw)
        if self.kind == "elasticsearch":
            es = require("elasticsearch", "sef.systems.elasticsearch")
            return es.Elasticsearch(url, max_retries=0, retry_on_status=(),
                                    request_timeout=timeout, **opts)
        osp = require("opensearchpy", "sef.systems.opensearch")
        return osp.OpenSearch(hosts=[url], max_retries=0, retry_on_status=(),
                              timeout=timeout or 10, **opts)

    def config(self) -> dict[str, Any]:
        return {"url": self.url, "index": self.index, "query": self.template,
                "doc_id": self.doc_id, **self.auth}

    def body(self, query: str, k: int) -> dict[str, Any]:
        return fill_template(copy.deepcopy(self.template), query, k)

    def answer(self, query_id: str, resp: Mapping[str, Any]) -> Answer:
        try:
            hits = resp["hits"]["hits"]
        except (KeyError, TypeError):
            raise ValueError(f"{self.kind} {self.name!r}, query {query_id!r}: the response has "
                             f"no hits.hits (keys: {sorted(resp)[:8]})") from None
        took = resp.get("took")
        out = [(self._id(query_id, h), h.get("_score")) for h in hits]
        return Answer(out, server_seconds=None if took is None else float(took) / 1000)

    def _id(self, query_id: str, hit: Mapping[str, Any]) -> Any:
        if self.doc_id is None:
            return hit.get("_id")
        src = hit.get("_source") or {}
        if self.doc_id not in src:
            raise ValueError(f"{self.kind} {self.name!r}, query {query_id!r}: a hit has no "
                             f"_source.{self.doc_id} (it has {sorted(src)[:8]})")
        return src[self.doc_id]

    def transient(self, exc: BaseException) -> BaseException:
        """``exc`` as a TransientError when it is worth retrying, else as it is."""
        status, after = _status_of(exc)
        lost = type(exc).__name__ in ("ConnectionError", "ConnectionTimeout")
        if status in TRANSIENT or lost:
            return TransientError(f"{self.kind}: {type(exc).__name__} {status or ''}".strip(),
                                  retry_after=after, status=status)
        return exc

    def call(self, method: str, **kwargs: Any) -> Any:
        fn = getattr(self.client, method)
        try:
            resp = fn(index=self.index, **kwargs)
        except Exception as exc:
            err = self.transient(exc)
            if err is exc:
                raise
            raise err from exc
        return getattr(resp, "body", resp)

    def search(self, query_id: str, query: str, k: int) -> Answer:
        return self.answer(query_id, self.call("search", body=self.body(query, k)))

    def search_batch(self, items: list[tuple[str, str]], k: int) -> list[Answer | BaseException]:
        lines: list[dict[str, Any]] = []
        for _, query in items:
            lines += [{}, self.body(query, k)]
        resp = self.call("msearch", body=lines)
        out: list[Answer | BaseException] = []
        for (qid, _), item in zip(items, resp.get("responses", []), strict=False):
            if "error" in item:
                status = item.get("status")
                msg = f"{self.kind} {self.name!r}, query {qid!r}: {item['error']}"
                out.append(TransientError(msg, status=status) if status in TRANSIENT
                           else RequestFailed(msg, status=status))
                continue
            try:
                out.append(self.answer(qid, item))
            except ValueError as exc:
                out.append(exc)
        missing = len(items) - len(out)
        if missing:
            out += [RequestFailed(f"{self.kind} {self.name!r}: _msearch answered {len(out)} of "
                                 f"{len(items)} searches")] * missing
        return out

    def close(self) -> None:
        """Close a client made from a URL (made again on next use); a client passed in
        stays the caller's to close."""
        if self.owned and self.made is not None:
            self.made.close()
            self.made = None


def _client_url(client: Any) -> str:
    """A given client's first node URL (for the configuration), or its class name."""
    try:
        nodes = client.transport.node_pool.all()
        return str(nodes[0].base_url)
    except Exception:
        hosts = getattr(getattr(client, "transport", None), "hosts", None)
        if hosts:
            h = hosts[0]
            return f"{h.get('scheme', 'http')}://{h.get('host')}:{h.get('port')}"
        return type(client).__name__


def _env(func: str, option: str, name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise option_error(func, option, name, "must name a set environment variable "
                           "(the credential is read from it, never stored)",
                           f"{option}='ES_API_KEY'")
    return value


def elasticsearch(url_or_client: Any, index: str, query: Mapping[str, Any] | None = None, *,
                  fields: Sequence[str] = ("title", "text"), doc_id: str | None = None,
                  batch_size: int = 50, api_key_env: str | None = None,
                  auth_env: str | None = None, timeout: float | None = None,
                  name: str | None = None) -> Engine:
    """An Elasticsearch index as a search system, through the official client.

    Each search sends ``query`` (the search body) with ``"{query}"`` replaced by the
    query text and ``"{k}"`` by the depth (:func:`fill_template`); ``size`` is
    ``"{k}"`` unless the template sets it. Batches go through ``_msearch``
    (``batch_size`` searches per request, when ``sef.retrieve`` asks for batches). The
    response's ``took`` (milliseconds) is the answer's ``server_seconds``, so the
    latency table shows the engine's time beside the client's.

    Parameters
    ----------
    url_or_client
        ``"http://localhost:9200"`` (a client is made that does not retry by itself:
        ``sef.retrieve`` retries and counts the attempts), or an
        ``elasticsearch.Elasticsearch`` client (used as it is, with its own retries).
    index
        The index (or a comma-separated list, or an alias).
    query
        The search body template (default ``{"query": {"multi_match": {"query":
        "{query}", "fields": fields}}}``).
    fields
        The default template's fields.
    doc_id
        A ``_source`` field holding the document id (default: the hit's ``_id``).
    batch_size
        Searches per ``_msearch`` request.
    api_key_env, auth_env
        Environment variables holding an API key, or ``user:password``; the
        configuration records the variables' names, never their values.
    timeout
        The client's request timeout in seconds (a client made from a URL).
    name
        The run name (default ``"elasticsearch:<index>"``).

    Examples
    --------
    >>> body = {"query": {"match": {"text": "{query}"}}, "size": "{k}"}
    >>> es = elasticsearch("http://localhost:9200", "docs", body)  # doctest: +SKIP
    >>> run = sef.retrieve(es, "queries.tsv", k=20)  # doctest: +SKIP
    """
    return Engine("elasticsearch", url_or_client, index, query, fields=fields, doc_id=doc_id,
                  batch_size=batch_size, api_key_env=api_key_env, auth_env=auth_env,
                  timeout=timeout, name=name)


def opensearch(url_or_client: Any, index: str, query: Mapping[str, Any] | None = None, *,
               fields: Sequence[str] = ("title", "text"), doc_id: str | None = None,
               batch_size: int = 50, api_key_env: str | None = None,
               auth_env: str | None = None, timeout: float | None = None,
               name: str | None = None) -> Engine:
    """An OpenSearch index as a search system, through ``opensearch-py``.

    The same as :func:`elasticsearch` (template, ``_msearch``, ``took``, retries),
    with an ``opensearchpy.OpenSearch`` client.

    Examples
    --------
    >>> os_ = opensearch("http://localhost:9200", "docs")  # doctest: +SKIP
    """
    return Engine("opensearch", url_or_client, index, query, fields=fields, doc_id=doc_id,
                  batch_size=batch_size, api_key_env=api_key_env, auth_env=auth_env,
                  timeout=timeout, name=name)
