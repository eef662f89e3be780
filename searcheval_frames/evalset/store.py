"""The label store: :class:`LabelStore` (a database: SQLite by default, PostgreSQL for a
team) and the journal of earlier versions (:class:`JournalStore`, a ``.jsonl`` path).

The implementation lives in :mod:`searcheval_frames.evalset.labeldb` (the database) and
:mod:`searcheval_frames.evalset.journal` (the journal); this module is where both are
imported from, so ``LabelStore("x.jsonl")`` finds the journal format.

>>> import os, tempfile
>>> from searcheval_frames.evalset.store import LabelStore
>>> d = tempfile.mkdtemp()
>>> [type(LabelStore(os.path.join(d, name))).__name__ for name in ("l.db", "old.jsonl")]
['LabelStore', 'JournalStore']
"""

from __future__ import annotations

from .journal import JournalStore, default_journal
from .labeldb.store import LabelStore, default_database

__all__ = ["JournalStore", "LabelStore", "default_database", "default_journal"]
