"""The answers already asked: a SQLite database, one row per (system, query, k).

The key is sha256 of the system's fingerprint, the query text and k, so a re-run asks
nothing it already has and a changed configuration (another fingerprint) asks again.
Each answer is committed as it arrives (WAL journal), so a run killed half way and
started again resumes: the answered queries come from here, the rest are asked.
Only answered queries are kept; failures are asked again on the next run.

The default file is ``.searcheval/retrieve-cache.db`` under the working directory.

>>> import tempfile, pathlib
>>> c = AnswerCache(pathlib.Path(tempfile.mkdtemp()) / "c.db")
>>> key = cache_key("f" * 64, "what is bm25", 10)
>>> c.put(key, "f" * 64, "what is bm25", 10, ["d1"], [2.5], 0.01, None, 1)
>>> c.get_many([key])[key][:2], c.get_many([key], "f" * 64, 10)[key][:2]
((['d1'], [2.5]), (['d1'], [2.5]))
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

__all__ = ["DEFAULT_CACHE", "AnswerCache", "cache_key"]

DEFAULT_CACHE = Path(".searcheval") / "retrieve-cache.db"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL,
    query TEXT NOT NULL,
    k INTEGER NOT NULL,
    doc_ids TEXT NOT NULL,
    scores TEXT NOT NULL,
    seconds REAL,
    server_seconds REAL,
    attempts INTEGER,
    created REAL DEFAULT (julianday('now'))
)"""
_INDEX = "CREATE INDEX IF NOT EXISTS answers_system ON answers (fingerprint, k)"


def cache_key(fingerprint: str, query: str, k: int) -> str:
    """sha256 (hex) of the fingerprint, k and the query text (the fingerprint is hex and
    k an integer, so the NUL-separated text is unambiguous)."""
    raw = f"{fingerprint}\x00{k}\x00{query}"
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()


class AnswerCache:
    """A SQLite file of answers, safe to share between the threads of one run."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.lock = threading.Lock()
        self.db = sqlite3.connect(self.path, check_same_thread=False, timeout=30.0,
                                  isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute(_SCHEMA)
        self.db.execute(_INDEX)

    def get_many(self, keys: Sequence[str], fingerprint: str | None = None, k: int | None = None
                 ) -> dict[str, tuple[list[str], list[float], float | None, float | None, int]]:
        """``key -> (doc_ids, scores, seconds, server_seconds, attempts)`` for the keys
        found. With ``fingerprint`` and ``k`` the system's rows are read by the index and
        matched here (no temporary table); the lists of all rows are decoded by two
        ``json.loads`` calls, not two per row."""
        with self.lock:
            if fingerprint is not None and k is not None:
                rows = self.db.execute(
                    "SELECT key, doc_ids, scores, seconds, server_seconds, attempts FROM answers "
                    "WHERE fingerprint = ? AND k = ?", (fingerprint, k)).fetchall()
                wanted = set(keys)
                rows = [r for r in rows if r[0] in wanted]
            else:
                self.db.execute("CREATE TEMP TABLE IF NOT EXISTS wanted (key TEXT PRIMARY KEY)")
                self.db.execute("DELETE FROM wanted")
                self.db.executemany("INSERT OR IGNORE INTO wanted VALUES (?)", ((x,) for x in keys))
                rows = self.db.execute(
                    "SELECT a.key, a.doc_ids, a.scores, a.seconds, a.server_seconds, a.attempts "
                    "FROM answers a JOIN wanted w ON a.key = w.key").fetchall()
        if not rows:
            return {}
        ids = json.loads("[" + ",".join(r[1] for r in rows) + "]")
        scores = json.loads("[" + ",".join(r[2] for r in rows) + "]")
        return {r[0]: (i, s, r[3], r[4], r[5]) for r, i, s in zip(rows, ids, scores, strict=True)}

    def put(self, key: str, fingerprint: str, query: str, k: int, doc_ids: list[str],
            scores: list[float], seconds: float | None, server_seconds: float | None,
            attempts: int) -> None:
        """Store (and commit) one answer."""
        row = (key, fingerprint, query, k, json.dumps(doc_ids, ensure_ascii=False),
               json.dumps(scores), seconds, server_seconds, attempts)
        with self.lock:
            self.db.execute(
                "INSERT OR REPLACE INTO answers (key, fingerprint, query, k, doc_ids, scores, "
                "seconds, server_seconds, attempts) VALUES (?,?,?,?,?,?,?,?,?)", row)

    def close(self) -> None:
        with self.lock:
            self.db.close()
