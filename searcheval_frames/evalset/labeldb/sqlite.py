"""The SQLite backend of the label store: one file, WAL, one transaction per label.

Several processes on one machine share the file: WAL lets readers work while one writer
commits; writers of this package queue on an advisory lock on ``<file>.lock`` (``flock``:
the kernel wakes the next writer as soon as one commits, where SQLite's own busy handler
polls with sleeps of up to 100 ms and starves some writers), and a busy timeout covers
any other program writing the file.
``synchronous=FULL``: a commit is on disk (the WAL ``fsync``-ed) before it returns, so
a label the widget shows as saved survives a killed process and a power cut. SQLite's
errors are translated into ones that name the file and say what to do.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ...errors import FileAccessError, FileFormatError
from .schema import EVENT_COLUMNS, create_statements

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: SQLite's busy timeout alone
    fcntl = None  # type: ignore[assignment]

__all__ = ["SQLiteBackend"]

_INSERT = (f"INSERT INTO events ({', '.join(EVENT_COLUMNS)}) VALUES "
           f"({', '.join('?' for _ in EVENT_COLUMNS)}) ON CONFLICT (event_key) DO NOTHING")

_DAMAGED = ("malformed", "not a database", "file is encrypted", "disk i/o error")


class SQLiteBackend:
    """Events in a SQLite file (created with its folder when missing)."""

    dialect = "sqlite"

    def __init__(self, path: Path, *, busy_timeout_s: float = 30.0) -> None:
        self.path = Path(path)
        self.location = str(self.path.resolve())
        self._lock = threading.RLock()
        if self.path.is_dir():
            raise FileAccessError(f"{self.location} is a folder; give a database file name "
                                  "such as labels/labels.db", path=self.location)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise FileAccessError(f"cannot create the folder of {self.location}: {exc}",
                                  path=self.location) from exc
        self._lock_fd: int | None = None
        with contextlib.suppress(OSError):  # (no lock file: SQLite's busy timeout alone)
            self._lock_fd = os.open(f"{self.path}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        with self.guard("open"):
            self.conn = sqlite3.connect(self.path, timeout=busy_timeout_s,
                                        isolation_level=None, check_same_thread=False)
            self.conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
            self.conn.execute("PRAGMA journal_mode = WAL")
            self.conn.execute("PRAGMA synchronous = FULL")
            self.conn.execute("PRAGMA foreign_keys = ON")

    # ------------------------------------------------------------------ errors
    @contextlib.contextmanager
    def guard(self, doing: str) -> Iterator[None]:
        """Translate sqlite3's errors into ones that name the file and say what to do."""
        try:
            yield
        except sqlite3.Error as exc:
            raise self.translate(exc, doing) from exc

    def translate(self, exc: sqlite3.Error, doing: str) -> Exception:
        text = str(exc)
        low = text.lower()
        unsaved = " Nothing was saved by this call." if doing == "write" else ""
        if "full" in low:
            return FileAccessError(
                f"{self.location}: the disk (or the database's size limit) is full "
                f"(SQLite: {text}).{unsaved} Free some space on that disk, or move the "
                "database elsewhere with LabelStore('other/place/labels.db'), then label "
                "again; every label acknowledged before is in the file.", path=self.location)
        if any(w in low for w in _DAMAGED):
            return FileFormatError(
                f"the label database is damaged (SQLite: {text}).{unsaved}",
                path=self.location,
                hint="keep a copy of the file; recover what it holds with "
                f"`sqlite3 {self.location} .recover | sqlite3 recovered.db` and open "
                "recovered.db, or restore a backup (LabelStore.export_journal makes one)")
        if "locked" in low or "busy" in low:
            return FileAccessError(
                f"{self.location}: the database stayed locked by another process longer "
                f"than the busy timeout (SQLite: {text}).{unsaved} Try again; if it "
                "persists, look for a process holding the file (a stuck notebook).",
                path=self.location)
        if "readonly" in low or "read-only" in low or "unable to open" in low:
            return FileAccessError(
                f"{self.location}: cannot write the database (SQLite: {text}).{unsaved} "
                "Check the file's and its folder's permissions (SQLite writes "
                "<file>-wal and <file>-shm beside it).", path=self.location)
        return FileAccessError(f"{self.location}: SQLite error while trying to {doing}: "
                               f"{text}.{unsaved}", path=self.location)

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """Hold the writers' queue lock (``flock`` on ``<file>.lock``) while writing."""
        if self._lock_fd is None or fcntl is None:
            yield
            return
        fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)

    @contextlib.contextmanager
    def _synchronous(self, durable: bool) -> Iterator[None]:
        if durable:
            yield
            return
        self.conn.execute("PRAGMA synchronous = NORMAL")
        try:
            yield
        finally:
            self.conn.execute("PRAGMA synchronous = FULL")

    # ------------------------------------------------------------------ statements
    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock, self.guard("read"):
            return self.conn.execute(sql, tuple(params)).fetchall()

    def script(self, statements: Sequence[str]) -> None:
        """Run statements in one write transaction (schema creation, migrations)."""
        with self._lock, self.writing(), self.guard("write"):
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                for sql in statements:
                    self.conn.execute(sql)
                self.conn.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    self.conn.execute("ROLLBACK")
                raise

    def insert_events(self, rows: Sequence[Sequence[Any]], *, durable: bool = True) -> int:
        """Insert event ``rows`` (:data:`EVENT_COLUMNS`) in one transaction, committed (on
        disk) when this returns; the number added (a known ``event_key`` adds nothing).
        ``durable=False`` (a lease, a hint): committed without its own ``fsync`` (the
        next durable commit carries it to disk)."""
        sql = _INSERT
        with self._lock, self.writing(), self.guard("write"), self._synchronous(durable):
            before = self.conn.total_changes
            if len(rows) == 1:  # one statement is one transaction
                self.conn.execute(sql, tuple(rows[0]))
            else:
                self.conn.execute("BEGIN IMMEDIATE")
                try:
                    self.conn.executemany(sql, rows)
                    self.conn.execute("COMMIT")
                except BaseException:
                    with contextlib.suppress(sqlite3.Error):
                        self.conn.execute("ROLLBACK")
                    raise
            return self.conn.total_changes - before

    def create_schema(self) -> None:
        """Create the schema unless it is there (a write transaction only when needed)."""
        if not self.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                          "name = 'schema_version'"):
            self.script(create_statements(self.dialect))

    def check(self) -> None:
        """A quick integrity check of the file (raises the translated error)."""
        with self._lock, self.guard("read"):
            row = self.conn.execute("PRAGMA quick_check").fetchone()
        if row is None or row[0] != "ok":
            raise self.translate(sqlite3.DatabaseError(
                f"database disk image is malformed ({row[0] if row else 'no answer'})"), "read")

    def ping(self) -> bool:
        return True

    def close(self) -> None:
        with self._lock, contextlib.suppress(sqlite3.Error):
            self.conn.close()
        if self._lock_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._lock_fd)
            self._lock_fd = None
