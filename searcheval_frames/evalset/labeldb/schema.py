"""The label database's schema, one for SQLite and PostgreSQL, versioned for migrations.

One table of events, append-only: every label, retraction, "can't judge", note and
adjudication is a row with its assessor, its time (UTC, ISO 8601) and the seconds it
took; a "lease" marks a pair shown to a team's assessor (see ``team.routing_order``). ``event_key`` is unique: a random key for a live event (a retried commit adds it
once), a natural key for an imported journal line (importing twice adds nothing).
``cache_key`` holds an automatic judge's content-addressed key (the judges' cache).
``schema_version`` records the version the database was created or migrated to.
"""

from __future__ import annotations

__all__ = ["EVENT_COLUMNS", "KINDS", "SCHEMA_VERSION", "create_statements"]

#: the version this code writes; a database at a higher version is refused
SCHEMA_VERSION = 1

#: what an event records ("lease": a pair shown to an assessor of a team, reserved for
#: them a while so that two people are not routed the same pair at once)
KINDS = ("label", "retract", "cant_judge", "note", "adjudicate", "lease")

#: the columns a new event is inserted with, in order
EVENT_COLUMNS = ("event_key", "kind", "query_id", "doc_id", "assessor", "label", "note",
                 "time", "seconds", "meta", "cache_key")


def create_statements(dialect: str) -> list[str]:
    """The statements that create the schema (idempotent: ``IF NOT EXISTS``)."""
    ident = ("INTEGER PRIMARY KEY AUTOINCREMENT" if dialect == "sqlite"
             else "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY")
    real = "REAL" if dialect == "sqlite" else "DOUBLE PRECISION"
    kinds = ", ".join(f"'{k}'" for k in KINDS)
    return [
        "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL, "
        "applied TEXT NOT NULL)",
        f"""CREATE TABLE IF NOT EXISTS events (
            id {ident},
            event_key TEXT NOT NULL UNIQUE,
            kind TEXT NOT NULL CHECK (kind IN ({kinds})),
            query_id TEXT NOT NULL CHECK (query_id <> ''),
            doc_id TEXT NOT NULL CHECK (doc_id <> ''),
            assessor TEXT NOT NULL,
            label INTEGER,
            note TEXT,
            time TEXT NOT NULL,
            seconds {real},
            meta TEXT,
            cache_key TEXT,
            CHECK ((kind IN ('label', 'adjudicate')) = (label IS NOT NULL))
        )""",
        # one secondary index (each index is pages written by every commit): a pair's
        # events by assessor, for get(), the current labels and conflicts
        "CREATE INDEX IF NOT EXISTS events_pair ON events (query_id, doc_id, assessor)",
    ]
