"""Where labels go and who gives them: the default database, the assessor's name, the time
stamp of an event, and whether a target names a PostgreSQL server."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = ["default_assessor", "default_database", "is_url", "now"]


def now() -> str:
    """The time now in UTC, ISO 8601 with microseconds and ``Z``."""
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def default_assessor() -> str:
    import getpass

    try:
        return getpass.getuser() or "assessor"
    except Exception:  # no user database (containers)
        return "assessor"


def default_database() -> Path:
    """Where labels go when no path is given: ``labels/labels.db`` in the working directory.

    One file shared by every assessor on the machine (each label carries its assessor),
    never a temporary folder: restart the kernel, run the cell again, and the store finds
    every label given.

    >>> from searcheval_frames.evalset.store import default_database
    >>> p = default_database()
    >>> p.parent.name, p.name, p.is_absolute()
    ('labels', 'labels.db', True)
    """
    return Path.cwd() / "labels" / "labels.db"


def is_url(target: Any) -> bool:
    """Whether ``target`` names a PostgreSQL database (``postgresql://...``)."""
    return isinstance(target, str) and target.split("://", 1)[0] in ("postgresql", "postgres")
