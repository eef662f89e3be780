"""A real HTTP search service for the tests: SQLite FTS5 (bm25) over the bundled docs.

Started on 127.0.0.1 on a free port by the ``search_service`` fixture (tests/conftest.py),
or by hand::

    with SearchService() as svc:
        svc.url            # http://127.0.0.1:PORT
        svc.delay = 0.02   # a fixed service time per request
        svc.fault("status", query="how to use Pinecone", code=429, retry_after=1, times=1)
        svc.requests       # the request log: one dict per request (the queries it asked)

Endpoints
---------
``GET /search?q=...&k=...&qid=...`` or ``POST /search`` with ``{"query", "k", "query_id"}``
    ``{"took": ms, "hits": [{"id", "score", "title"}, ...]}``.
``POST /{index}/_search`` (Elasticsearch-compatible)
    a body ``{"query": {"match": {field: text}} | {"multi_match": {"query": text}} |
    {"query_string": {"query": text}} | {"match_all": {}}, "size": k}``; the answer has
    ``took``, ``timed_out``, ``_shards`` and ``hits.hits[]`` with ``_index``, ``_id``,
    ``_score``, ``_source``; every response carries ``X-Elastic-Product: Elasticsearch``
    (the official client checks it).
``POST /_msearch`` or ``/{index}/_msearch`` (NDJSON header/body pairs)
    ``{"took": ms, "responses": [..., {"status": 200}]}``; a fault on one query fails that
    item only (``{"error": ..., "status": code}``).
``GET /`` the cluster info the clients ask for; ``HEAD /{index}`` 200.

Faults (``svc.fault(kind, query=None, times=None, **params)``; ``query=None`` matches
every query, ``times`` bounds how many requests it hits, rules are tried in order):
``delay`` (``seconds``), ``status`` (``code``, ``retry_after``, ``body``), ``hang``
(``seconds``: sleep past the client's timeout, then answer), ``malformed`` (a truncated
JSON body with status 200), ``nohits`` (a JSON body without the ``hits`` key),
``duplicate`` (the first hit twice), ``nan`` (a NaN score), ``reset`` (the connection
closed without an answer).
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parents[1] / "data" / "example" / "docs.jsonl"
ES_VERSION = {"number": "8.15.0", "build_flavor": "default", "lucene_version": "9.11.1",
              "minimum_wire_compatibility_version": "7.17.0",
              "minimum_index_compatibility_version": "7.0.0"}


def fts_query(text: str) -> str:
    """A query's words OR-ed, each quoted, as an FTS5 MATCH expression ("" when none)."""
    return " OR ".join(f'"{w}"' for w in re.findall(r"\w+", text.lower()))


class Index:
    """The documents in an in-memory SQLite FTS5 table, ranked by ``bm25()``."""

    def __init__(self, docs: Path | list[dict[str, Any]] = DOCS) -> None:
        rows = ([json.loads(line) for line in docs.read_text(encoding="utf-8").splitlines()
                 if line.strip()] if isinstance(docs, Path) else docs)
        self.docs = {str(r["doc_id"]): r for r in rows}
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.db.execute("CREATE VIRTUAL TABLE docs USING fts5(doc_id UNINDEXED, title, text)")
        self.db.executemany("INSERT INTO docs VALUES (?, ?, ?)",
                            [(str(r["doc_id"]), r.get("title", ""), r.get("text", ""))
                             for r in rows])
        self.lock = threading.Lock()

    def search(self, query: str | None, k: int) -> list[tuple[str, float]]:
        """``[(doc_id, score)]`` best first (score = -bm25; ties by doc_id); None: all."""
        with self.lock:
            if query is None:
                rows = self.db.execute("SELECT doc_id, 1.0 FROM docs ORDER BY doc_id LIMIT ?",
                                       (k,)).fetchall()
            else:
                expr = fts_query(query)
                if not expr:
                    return []
                rows = self.db.execute(
                    "SELECT doc_id, -bm25(docs) AS s FROM docs WHERE docs MATCH ? "
                    "ORDER BY s DESC, doc_id LIMIT ?", (expr, k)).fetchall()
        return [(d, float(s)) for d, s in rows]


def es_query_text(query: Any) -> str | None:
    """The text of an Elasticsearch query body's first match/multi_match/query_string
    (None for match_all)."""
    if not isinstance(query, dict):
        return None
    if "match_all" in query:
        return None
    for key in ("multi_match", "query_string", "simple_query_string"):
        if key in query:
            return str(query[key]["query"])
    if "match" in query:
        value = next(iter(query["match"].values()))
        return str(value["query"] if isinstance(value, dict) else value)
    if "bool" in query:
        for clause in ("must", "should", "filter"):
            for sub in (query["bool"].get(clause) or []):
                text = es_query_text(sub)
                if text is not None:
                    return text
    raise ValueError(f"unsupported query: {json.dumps(query)[:200]}")


class SearchService:
    """The service: its index, faults, request log and server thread."""

    def __init__(self, docs: Path | list[dict[str, Any]] = DOCS, *, delay: float = 0.0) -> None:
        self.index = Index(docs)
        self.delay = delay
        self.in_flight = self.max_in_flight = 0
        self.token: str | None = None  # when set, requests need "Authorization: Bearer <token>"
        self.rules: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.server: ThreadingHTTPServer | None = None
        self.thread: threading.Thread | None = None

    # -- control ------------------------------------------------------------------
    @property
    def url(self) -> str:
        assert self.server is not None, "start() the service first"
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> SearchService:
        handler = type("Handler", (_Handler,), {"service": self})
        self.server = _Server(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.stopping.clear()
        self.thread = threading.Thread(target=self.server.serve_forever,
                                       kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
        if self.thread is not None:
            self.thread.join(5)
        self.server = self.thread = None

    def __enter__(self) -> SearchService:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def reset(self) -> None:
        """No faults, no delay, an empty log."""
        with self.lock:
            self.rules.clear()
            self.requests.clear()
        self.delay = 0.0
        self.in_flight = self.max_in_flight = 0
        self.token = None

    def fault(self, kind: str, *, query: str | None = None, times: int | None = None,
              **params: Any) -> None:
        """Add a fault rule (see the module docstring)."""
        known = {"delay", "status", "hang", "malformed", "nohits", "duplicate", "nan", "reset"}
        assert kind in known, f"unknown fault {kind!r}; use one of {sorted(known)}"
        with self.lock:
            self.rules.append({"kind": kind, "query": query, "times": times, **params})

    def asked(self, query: str | None = None) -> list[str]:
        """The query texts asked, in order (with repeats), or the asks of one query."""
        with self.lock:
            texts = [q for r in self.requests for q in r["queries"]]
        return texts if query is None else [q for q in texts if q == query]

    # -- serving ------------------------------------------------------------------
    def take_fault(self, query: str | None) -> dict[str, Any] | None:
        """The first rule matching ``query`` (its ``times`` counted down), or None."""
        with self.lock:
            for rule in self.rules:
                if rule["query"] not in (None, query) or rule["times"] == 0:
                    continue
                if rule["times"] is not None:
                    rule["times"] -= 1
                return dict(rule)
        return None

    def log(self, method: str, path: str, queries: list[str], faults: list[str | None],
            status: int, **extra: Any) -> None:
        with self.lock:
            self.requests.append({"t": time.time(), "method": method, "path": path,
                                  "queries": queries, "faults": faults, "status": status,
                                  **extra})

    def service_time(self) -> None:
        """The fixed service time (``delay``), counting how many requests are in it at
        once (``max_in_flight``: the client's real concurrency, seen from the server)."""
        if not self.delay:
            return
        with self.lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            self.sleep(self.delay)
        finally:
            with self.lock:
                self.in_flight -= 1

    def sleep(self, seconds: float) -> None:
        """Sleep, but wake when the service stops (so a hang never outlives a test)."""
        self.stopping.wait(seconds)


def _hits_json(hits: list[tuple[str, float]], index: Index) -> list[dict[str, Any]]:
    return [{"id": d, "score": s, "title": index.docs[d].get("title", "")} for d, s in hits]


def _es_hits(hits: list[tuple[str, float]], index: Index, name: str) -> dict[str, Any]:
    return {"total": {"value": len(hits), "relation": "eq"},
            "max_score": hits[0][1] if hits else None,
            "hits": [{"_index": name, "_id": d, "_score": s, "_source": index.docs[d]}
                     for d, s in hits]}


def _apply_hit_fault(rule: dict[str, Any] | None, hits: list[tuple[str, float]]
                     ) -> list[tuple[str, float]]:
    if rule and rule["kind"] == "duplicate" and hits:
        return [hits[0], *hits[:-1]] if len(hits) > 1 else hits * 2
    if rule and rule["kind"] == "nan" and hits:
        return [(hits[0][0], float("nan")), *hits[1:]]
    return hits


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away (killed, timed out) is no error of the service."""
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    service: SearchService
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body leave at once (no 40 ms ACK delay)

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    # -- plumbing -----------------------------------------------------------------
    def _body(self) -> bytes:
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _send(self, status: int, payload: Any, *, raw: bytes | None = None,
              headers: dict[str, str] | None = None) -> None:
        body = raw if raw is not None else json.dumps(payload).encode("utf-8")
        self.send_response(status)
        accept = self.headers.get("Accept") or ""
        ctype = (accept.split(",")[0].strip() if "vnd.elasticsearch+json" in accept
                 else "application/json")
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Elastic-Product", "Elasticsearch")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _fault_response(self, rule: dict[str, Any] | None) -> bool:
        """Apply a request-level fault; True when it already answered."""
        svc = self.service
        if rule is None:
            return False
        kind = rule["kind"]
        if kind == "delay":
            svc.sleep(float(rule.get("seconds", 0.1)))
        elif kind == "hang":
            svc.sleep(float(rule.get("seconds", 5.0)))
        elif kind == "status":
            extra = ({"Retry-After": str(rule["retry_after"])}
                     if rule.get("retry_after") is not None else {})
            body = rule.get("body", f"injected error {rule.get('code', 500)}")
            self._send(int(rule.get("code", 500)), None, raw=body.encode(), headers=extra)
            return True
        elif kind == "malformed":
            self._send(200, None, raw=b'{"took": 1, "hits": [{"id": "d0')
            return True
        elif kind == "reset":
            self.close_connection = True
            self.connection.shutdown(2)
            return True
        return False

    # -- routes -------------------------------------------------------------------
    def do_HEAD(self) -> None:
        self._send(200, {})

    def _refused(self) -> bool:
        token = self.service.token
        if token and self.headers.get("Authorization") != f"Bearer {token}":
            self._body()
            self._send(401, {"error": "missing or wrong bearer token"})
            return True
        return False

    def do_GET(self) -> None:
        if self._refused():
            return
        url = urllib.parse.urlsplit(self.path)
        if url.path == "/":
            self._send(200, {"name": "sef-test", "cluster_name": "sef-test",
                             "version": ES_VERSION, "tagline": "You Know, for Search"})
            return
        if url.path == "/search":
            q = urllib.parse.parse_qs(url.query)
            self._simple(q.get("q", [""])[0], q.get("k", ["10"])[0])
            return
        if url.path.endswith("/_search"):
            self._es_search(url.path, self._json_body())
            return
        self._send(404, {"error": f"no route {url.path}"})

    def do_POST(self) -> None:
        if self._refused():
            return
        url = urllib.parse.urlsplit(self.path)
        if url.path == "/search":
            body = self._json_body()
            self._simple(str(body.get("query", "")), body.get("k", 10))
        elif url.path.endswith("/_msearch"):
            self._msearch(url.path)
        elif url.path.endswith("/_search"):
            self._es_search(url.path, self._json_body())
        else:
            self._send(404, {"error": f"no route {url.path}"})

    def _json_body(self) -> dict[str, Any]:
        raw = self._body()
        return json.loads(raw) if raw.strip() else {}

    def _simple(self, query: str, k: Any) -> None:
        """``k`` as sent (text from a query string, a JSON value from a body): logged."""
        svc = self.service
        start = time.perf_counter()
        rule = svc.take_fault(query)
        svc.log(self.command, "/search", [query], [rule and rule["kind"]],
                int(rule.get("code", 200)) if rule and rule["kind"] == "status" else 200, k=k)
        svc.service_time()
        if self._fault_response(rule):
            return
        hits = _apply_hit_fault(rule, svc.index.search(query, int(k)))
        took = int((time.perf_counter() - start) * 1000)
        if rule and rule["kind"] == "nohits":
            self._send(200, {"took": took, "results": _hits_json(hits, svc.index)})
            return
        self._send(200, {"took": took, "hits": _hits_json(hits, svc.index)})

    def _es_search(self, path: str, body: dict[str, Any]) -> None:
        svc = self.service
        start = time.perf_counter()
        name = path.strip("/").split("/")[0] if path.count("/") > 1 else "_all"
        text = es_query_text(body.get("query", {"match_all": {}}))
        rule = svc.take_fault(text)
        svc.log(self.command, path, [text or ""], [rule and rule["kind"]], 200)
        svc.service_time()
        if self._fault_response(rule):
            return
        hits = _apply_hit_fault(rule, svc.index.search(text, int(body.get("size", 10))))
        took = int((time.perf_counter() - start) * 1000)
        out = {"took": took, "timed_out": False,
               "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
               "hits": _es_hits(hits, svc.index, name)}
        if rule and rule["kind"] == "nohits":
            del out["hits"]
        self._send(200, out)

    def _msearch(self, path: str) -> None:
        svc = self.service
        start = time.perf_counter()
        lines = [json.loads(x) for x in self._body().decode("utf-8").splitlines() if x.strip()]
        default = path.strip("/").split("/")[0] if path.count("/") > 1 else "_all"
        pairs = list(zip(lines[0::2], lines[1::2], strict=True))
        texts = [es_query_text(b.get("query", {"match_all": {}})) for _, b in pairs]
        rules = [svc.take_fault(t) for t in texts]
        svc.log(self.command, path, [t or "" for t in texts], [r and r["kind"] for r in rules],
                200)
        svc.service_time()
        responses = []
        for (head, body), text, rule in zip(pairs, texts, rules, strict=True):
            if rule and rule["kind"] == "status":
                responses.append({"error": {"type": "injected", "reason": "injected error"},
                                  "status": int(rule.get("code", 500))})
                continue
            if rule and rule["kind"] in ("delay", "hang"):
                svc.sleep(float(rule.get("seconds", 0.1)))
            hits = _apply_hit_fault(rule, svc.index.search(text, int(body.get("size", 10))))
            responses.append({"took": int((time.perf_counter() - start) * 1000),
                              "timed_out": False, "status": 200,
                              "hits": _es_hits(hits, svc.index, head.get("index", default))})
        self._send(200, {"took": int((time.perf_counter() - start) * 1000),
                         "responses": responses})


if __name__ == "__main__":  # python tests/search_service.py: serve until Ctrl-C
    import sys

    with SearchService(delay=float(sys.argv[1]) if len(sys.argv) > 1 else 0.0) as service:
        print(service.url, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
