"""The PostgreSQL backend of the label store: a team's labels on one server (psycopg).

One connection per store, autocommit off: each call is one transaction, committed
before it returns. A server that goes away (stopped, restarted, the network) raises
:class:`~searcheval_frames.errors.StoreUnavailableError` naming the server; nothing of
that call is half-saved, and the next call reconnects. The schema is created on first
use under an advisory lock, so several assessors opening a new database at once create
it once.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from ...errors import StoreUnavailableError
from ...optional import require
from .schema import EVENT_COLUMNS, create_statements

__all__ = ["PostgresBackend", "safe_dsn"]

_LOCK_ID = 0x5EF1ABE1  # the advisory lock that serialises schema creation
_INSERT = (f"INSERT INTO events ({', '.join(EVENT_COLUMNS)}) VALUES "
           f"({', '.join('%s' for _ in EVENT_COLUMNS)}) ON CONFLICT (event_key) DO NOTHING")


def safe_dsn(dsn: str) -> str:
    """The DSN without its password, for messages.

    >>> safe_dsn("postgresql://ana:secret@db.example:5432/labels")
    'postgresql://ana:***@db.example:5432/labels'
    """
    return re.sub(r"(//[^:/@]+):[^@]*@", r"\1:***@", dsn)


class PostgresBackend:
    """Events in a PostgreSQL database given by its DSN (``postgresql://...``)."""

    dialect = "postgres"

    def __init__(self, dsn: str, *, connect_timeout_s: int = 5) -> None:
        self.psycopg = require("psycopg", "LabelStore('postgresql://...')")
        self.dsn = dsn
        self.location = safe_dsn(dsn)
        self.connect_timeout_s = connect_timeout_s
        self._lock = threading.RLock()
        self.conn: Any = None
        self._connect()

    def _connect(self) -> Any:
        if self.conn is None or self.conn.closed:
            with self.guard("connect"):
                self.conn = self.psycopg.connect(self.dsn, connect_timeout=self.connect_timeout_s)
        return self.conn

    @contextlib.contextmanager
    def guard(self, doing: str) -> Iterator[None]:
        """A lost connection → :class:`StoreUnavailableError`; the next call reconnects."""
        ps = self.psycopg
        try:
            yield
        except (ps.OperationalError, ps.InterfaceError) as exc:
            self._drop()
            unsaved = " Nothing of this call was saved." if doing == "write" else ""
            raise StoreUnavailableError(
                f"the label database {self.location} cannot be reached while trying to "
                f"{doing} ({str(exc).strip().splitlines()[0] if str(exc).strip() else exc!r})."
                f"{unsaved} Check that the server is running and reachable; the store "
                "reconnects on its next call, and every label acknowledged before is kept."
            ) from exc
        except ps.Error:
            if self.conn is not None and not self.conn.closed:
                with contextlib.suppress(ps.Error):
                    self.conn.rollback()
            raise

    def _drop(self) -> None:
        if self.conn is not None:
            with contextlib.suppress(Exception):
                self.conn.close()
        self.conn = None

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock, self.guard("read"):
            conn = self._connect()
            with conn.cursor() as cur:
                cur.execute(sql.replace("?", "%s"), tuple(params))
                rows = cur.fetchall()
            conn.rollback()  # end the read transaction (no snapshot kept open)
            return rows

    def script(self, statements: Sequence[str]) -> None:
        with self._lock, self.guard("write"):
            conn = self._connect()
            with conn.cursor() as cur:
                cur.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_ID,))
                for sql in statements:
                    cur.execute(sql)
            conn.commit()

    def insert_events(self, rows: Sequence[Sequence[Any]], *, durable: bool = True) -> int:
        """Insert event rows in one transaction, committed when this returns; the number
        added (a known ``event_key`` adds nothing). Many rows go through ``COPY``.
        ``durable=False`` (a lease, a hint): ``synchronous_commit = off`` for it."""
        with self._lock, self.guard("write"):
            conn = self._connect()
            with conn.cursor() as cur:
                if not durable:
                    cur.execute("SET LOCAL synchronous_commit = off")
                if len(rows) <= 64:
                    n = 0
                    for row in rows:
                        cur.execute(_INSERT, tuple(row))
                        n += max(cur.rowcount, 0)
                else:
                    n = self._copy(cur, rows)
            conn.commit()
            return n

    @staticmethod
    def _copy(cur: Any, rows: Sequence[Sequence[Any]]) -> int:
        cols = ", ".join(EVENT_COLUMNS)
        cur.execute("CREATE TEMP TABLE IF NOT EXISTS events_in (LIKE events INCLUDING DEFAULTS"
                    " INCLUDING IDENTITY) ON COMMIT DELETE ROWS")
        with cur.copy(f"COPY events_in ({cols}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        cur.execute(f"INSERT INTO events ({cols}) SELECT {cols} FROM events_in ORDER BY id "
                    "ON CONFLICT (event_key) DO NOTHING")
        return max(cur.rowcount, 0)

    def create_schema(self) -> None:
        """Create the schema unless it is there (under the advisory lock when needed)."""
        if self.query("SELECT to_regclass('schema_version')") == [(None,)]:
            self.script(create_statements(self.dialect))

    def check(self) -> None:
        self.query("SELECT 1")

    def ping(self) -> bool:
        """Whether the server answers now (reconnecting if needed)."""
        try:
            self.query("SELECT 1")
        except StoreUnavailableError:
            return False
        return True

    def close(self) -> None:
        with self._lock:
            self._drop()
