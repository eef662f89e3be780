"""The label database: :class:`~searcheval_frames.LabelStore` over SQLite (default) or
PostgreSQL.

Modules, low to high: ``schema`` (the one schema, versioned), ``sqlite`` and ``postgres``
(the backends: transactions, errors that name the file or server), ``state`` (current
labels from the events), ``team`` (routing, progress, conflicts), ``exchange``
(journals in and out), ``store`` (:class:`LabelStore`).
"""

from .store import LabelStore, default_database

__all__ = ["LabelStore", "default_database"]
