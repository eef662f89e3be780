"""``sef.systems.postgres``: a SQL query per search, through psycopg (3).

One connection per thread (psycopg connections are not shared between threads), opened
on first use, in autocommit mode (a search never leaves a transaction open), closed by
``close()``. A lost connection is a :class:`TransientError` (retried, on a new
connection); an error in the SQL is a failed query.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from ..optional import require
from ..options import option_error
from .base import Answer, System, TransientError

__all__ = ["EXAMPLE_SQL", "Postgres", "postgres", "redact_dsn"]

#: full-text search with ts_rank and OR semantics (any query word matches)
EXAMPLE_SQL = """
SELECT doc_id, ts_rank(tsv, q) AS score
FROM docs, (SELECT replace(plainto_tsquery('english', %(query)s)::text, '&', '|')::tsquery
             AS q) AS query
WHERE tsv @@ q
ORDER BY score DESC, doc_id DESC
LIMIT %(k)s
"""


def redact_dsn(dsn: str) -> str:
    """The DSN with its password replaced by ``***`` (URI or key=value form).

    >>> redact_dsn("postgresql://ann:s3cret@db.example:5432/search")
    'postgresql://ann:***@db.example:5432/search'
    >>> redact_dsn("host=db user=ann password=s3cret dbname=search")
    'host=db user=ann password=*** dbname=search'
    """
    from urllib.parse import urlsplit, urlunsplit

    if "://" in dsn:
        parts = urlsplit(dsn)
        if parts.password is None:
            return dsn
        netloc = parts.netloc.rsplit("@", 1)
        user = netloc[0].split(":", 1)[0]
        query = "&".join("password=***" if q.startswith("password=") else q
                         for q in parts.query.split("&")) if parts.query else ""
        return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc[1]}", query=query))
    import re

    return re.sub(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", r"\1***", dsn)


class Postgres(System):
    """A SQL search; see :func:`postgres`."""

    kind = "postgres"

    def __init__(self, dsn: str, sql: str = EXAMPLE_SQL, params: Mapping[str, Any] | None = None,
                 *, name: str = "postgres") -> None:
        func = "postgres"
        if not isinstance(dsn, str) or not dsn:
            raise option_error(func, "dsn", dsn, "must be a connection string",
                               "dsn='postgresql://user@localhost/search'")
        if not isinstance(sql, str) or "%(query)s" not in sql:
            raise option_error(func, "sql", sql, "must be a SQL string using %(query)s "
                               "(and %(k)s)", "sql=EXAMPLE_SQL (from searcheval_frames.systems.postgres)")
        if params is not None and not isinstance(params, Mapping):
            raise option_error(func, "params", params, "must be a dict of extra parameters",
                               "params={'lang': 'english'}")
        self.psycopg = require("psycopg", "sef.systems.postgres")
        self.dsn = dsn
        self.sql = sql
        self.params = dict(params or {})
        self.name = name
        self.local = threading.local()
        self.lock = threading.Lock()
        self.conns: list[Any] = []

    def config(self) -> dict[str, Any]:
        return {"dsn": redact_dsn(self.dsn), "sql": self.sql.strip(), "params": self.params}

    def connection(self) -> Any:
        conn = getattr(self.local, "conn", None)
        if conn is None or conn.closed:
            conn = self.psycopg.connect(self.dsn, autocommit=True)
            self.local.conn = conn
            with self.lock:
                self.conns.append(conn)
        return conn

    def search(self, query_id: str, query: str, k: int) -> Answer:
        args = {**self.params, "query": query, "k": k, "query_id": query_id}
        try:
            with self.connection().cursor() as cur:
                cur.execute(self.sql, args)
                names = [c.name for c in cur.description or []]
                rows = cur.fetchall()
        except self.psycopg.OperationalError as exc:
            conn, self.local.conn = self.local.conn, None  # the next attempt reconnects
            if conn is not None:
                conn.close()
            raise TransientError(f"postgres: {str(exc).strip().splitlines()[0]}") from exc
        if len(names) < 2:
            raise ValueError(f"postgres {self.name!r}, query {query_id!r}: the SQL returns "
                             f"columns {names}; it must return doc_id and score")
        i = names.index("doc_id") if "doc_id" in names else 0
        j = names.index("score") if "score" in names else 1
        return Answer([(str(r[i]), None if r[j] is None else float(r[j])) for r in rows])

    def close(self) -> None:
        with self.lock:
            conns, self.conns = self.conns, []
        for conn in conns:
            conn.close()


def postgres(dsn: str, sql: str = EXAMPLE_SQL, params: Mapping[str, Any] | None = None, *,
             name: str = "postgres") -> Postgres:
    """A search system that runs a SQL query in PostgreSQL for each search.

    The SQL gets the named parameters ``%(query)s`` (the query text), ``%(k)s`` (the
    depth), ``%(query_id)s`` and those of ``params``, and returns the hits as rows with
    columns ``doc_id`` and ``score`` (or the first two columns), best first. The
    default, :data:`EXAMPLE_SQL`, is full-text search over a table
    ``docs(doc_id text, tsv tsvector)`` ranked by ``ts_rank``, with any query word
    matching (``plainto_tsquery`` ANDs the words; a ``replace`` of ``&`` by ``|`` ORs
    them); ``print(EXAMPLE_SQL)`` shows it.

    A pgvector search is the same call with a vector parameter
    (``ORDER BY embedding <=> %(vector)s::vector``), but the vector of each query must
    come from an embedding model: wrap it as a function system instead
    (``sef.retrieve(lambda q, k: ..., queries)``).

    Parameters
    ----------
    dsn
        A libpq connection string (``"postgresql://user:pw@host/db"`` or
        ``"host=... dbname=..."``); its password is shown as ``***`` in ``config()``
        and the run's provenance.
    sql
        The query (see above).
    params
        Extra named parameters (e.g. ``{"lang": "english"}`` for ``%(lang)s``).
    name
        The run name.

    Examples
    --------
    >>> pg = postgres("postgresql://ann:s3cret@localhost/search")  # connects on first search
    >>> pg.config()["dsn"]
    'postgresql://ann:***@localhost/search'
    """
    return Postgres(dsn, sql, params, name=name)
