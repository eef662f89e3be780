""":class:`LabelStore`: relevance labels in a database, SQLite by default, PostgreSQL for a team.

Every label, retraction, "can't judge", note and adjudication is one event row (assessor,
time, seconds taken), inserted in its own transaction and committed before the call
returns. The current labels are computed from the events (the latest judgement of each
assessor per pair), so nothing is ever overwritten and history is kept.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import secrets
import time
import types
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

import polars as pl

from ...errors import FileFormatError, InvalidOptionError, InvalidRelevanceError
from ...frames import input_kind, qrels_frame, to_native
from ...io.write import atomic_write
from ...options import check_choice, check_int
from .._labels import parse_label, pool_pairs
from ..grades import Grades, grade_names, normalize_grades
from ..policies import check_policy, settle
from .exchange import JournalImport, export_journal, import_journal
from .location import default_assessor, default_database, is_url, now
from .postgres import PostgresBackend
from .schema import SCHEMA_VERSION
from .sqlite import SQLiteBackend
from .state import (
    active_leases,
    current_judgements,
    events_frame,
    latest_labels,
    settle_adjudicated,
)
from .team import assessor_progress, check_assign, conflict_table, query_progress

__all__ = ["LabelStore", "default_database"]

JUDGEMENTS = ("label", "retract", "cant_judge")


class _OnDefaultStore:
    """A method that, called on the class (``LabelStore.import_journal(path)``), runs on
    the default store (``labels/labels.db``)."""

    def __init__(self, func: Any) -> None:
        self.func = func
        self.__doc__ = func.__doc__
        self.__name__ = func.__name__

    def __get__(self, obj: Any, owner: Any) -> Any:
        if obj is not None:
            return types.MethodType(self.func, obj)
        func = self.func

        def on_default(*args: Any, **kwargs: Any) -> Any:  # (opens the store when called)
            with owner() as store:
                return func(store, *args, **kwargs)

        return functools.wraps(func)(on_default)


class LabelStore:
    """Relevance labels in a database: SQLite by default, PostgreSQL for a team.

    Each :meth:`append` is one transaction, committed (with SQLite: ``fsync``-ed, WAL,
    ``synchronous=FULL``) before it returns, so a label shown as saved survives a killed
    kernel. Several processes and assessors share one store: SQLite waits for the lock
    (busy timeout), PostgreSQL serves a team. Labels are never overwritten: a new label
    supersedes the assessor's older one, :meth:`remove` retracts, :meth:`cant_judge` and
    :meth:`note` record the rest, :meth:`adjudicate` settles a conflict; each event keeps
    its assessor, time and the seconds it took.

    Parameters
    ----------
    url_or_path
        ``None`` (default): ``labels/labels.db`` in the working directory
        (:func:`default_database`); a file path: a SQLite database (created with its
        folder); ``"postgresql://user@host/db"``: a PostgreSQL database (the ``postgres``
        extra, psycopg), its schema created on first use. A ``.jsonl`` path opens a
        label journal of earlier versions (:class:`~searcheval_frames.evalset.journal.JournalStore`);
        move it in with :meth:`import_journal`.
    assessor
        Who is labelling (stored on every event); default: the login name.
    grades
        Accepted labels (integers or a mapping name→int); ``None`` accepts any integer.

    Examples
    --------
    >>> import tempfile, os, searcheval_frames as sef
    >>> path = os.path.join(tempfile.mkdtemp(), "labels.db")
    >>> store = sef.LabelStore(path, assessor="alice", grades=[0, 1, 2])
    >>> _ = store.append("q1", "d1", 2, seconds=4.5)
    >>> sef.LabelStore(path).qrels().rows()
    [('q1', 'd1', 2)]
    """

    #: journal-like formats by file suffix (registered by their subclasses)
    formats: ClassVar[dict[str, type[LabelStore]]] = {}

    def __init_subclass__(cls, *, suffixes: Sequence[str] = (), **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for suffix in suffixes:
            LabelStore.formats[suffix] = cls

    def __new__(cls, url_or_path: Any = None, *args: Any, **kwargs: Any) -> LabelStore:
        if cls is LabelStore and isinstance(url_or_path, str | os.PathLike) and not is_url(
                url_or_path):
            sub = LabelStore.formats.get(Path(url_or_path).suffix.lower())
            if sub is not None:
                return super().__new__(sub)
        return super().__new__(cls)

    def __init__(
        self,
        url_or_path: str | os.PathLike[str] | None = None,
        *,
        assessor: str | None = None,
        grades: Grades = None,
    ) -> None:
        self.assessor = str(assessor) if assessor is not None else default_assessor()
        self.grades = grades
        self.backend: Any
        if is_url(url_or_path):
            self.backend = PostgresBackend(str(url_or_path))
            self.path: Path | None = None
        else:
            self.path = Path(url_or_path) if url_or_path is not None else default_database()
            if str(self.path).split(":", 1)[0] in ("postgresql", "postgres"):
                raise InvalidOptionError(
                    f"LabelStore({url_or_path!r}): a PostgreSQL URL made into a path (its "
                    "'//' is lost); pass the URL as a string: "
                    "LabelStore('postgresql://user@host/db')")
            self.backend = SQLiteBackend(self.path)
        self.location = self.backend.location
        self.backend.create_schema()
        self.schema_version = self._check_version()

    def _check_version(self) -> int:
        rows = self.backend.query("SELECT max(version) FROM schema_version")
        version = rows[0][0] if rows and rows[0][0] is not None else None
        if version is None:
            self.backend.script([f"INSERT INTO schema_version (version, applied) "
                                 f"SELECT {SCHEMA_VERSION}, '{now()}' WHERE NOT EXISTS "
                                 "(SELECT 1 FROM schema_version)"])
            return SCHEMA_VERSION
        if version > SCHEMA_VERSION:
            raise FileFormatError(
                f"the label database has schema version {version}; this version of "
                f"searcheval_frames knows up to {SCHEMA_VERSION}", path=self.location,
                hint="upgrade searcheval_frames (pip install -U searcheval_frames)")
        return int(version)

    @property
    def grades(self) -> Grades:
        """The accepted labels; setting them checks them and updates what is accepted."""
        return self._grades

    @grades.setter
    def grades(self, grades: Grades) -> None:
        self._lookup = normalize_grades(grades)
        self._grades = grades

    # ------------------------------------------------------------------ checks
    def checked_label(self, label: Any, query_id: Any, doc_id: Any) -> int:
        """``label`` as an accepted integer, or :class:`InvalidRelevanceError`."""
        try:
            value = parse_label(label, self._lookup)
        except (ValueError, TypeError, OverflowError):
            value = None
        if value is None:
            allowed = ("an integer" if self._lookup is None
                       else ", ".join(n for _, n in grade_names(self.grades)))
            raise InvalidRelevanceError(
                f"label={label!r} for ({query_id!r}, {doc_id!r}): not a valid label; use "
                f"{allowed}.")
        return value

    @staticmethod
    def checked_ids(query_id: Any, doc_id: Any) -> tuple[str, str]:
        for name, v in (("query_id", query_id), ("doc_id", doc_id)):
            if v is None or str(v) == "":
                raise InvalidOptionError(f"{name}={v!r}: an id is needed to store a label")
        return str(query_id), str(doc_id)

    # ------------------------------------------------------------------ writing
    def _event(self, kind: str, query_id: Any, doc_id: Any, label: int | None, *,
               assessor: str | None, note: str | None = None, seconds: float | None = None,
               meta: dict[str, Any] | None = None, key: str | None = None) -> tuple[Any, ...]:
        q, d = self.checked_ids(query_id, doc_id)
        who = self.assessor if assessor is None else str(assessor)
        meta_text = json.dumps(meta, ensure_ascii=False, sort_keys=True) if meta else None
        cache_key = str(meta["key"]) if meta and meta.get("key") else None
        secs = None if seconds is None else float(seconds)
        # a live key: time-ordered (new keys go to the end of the unique index: few pages
        # touched per commit) and random (two processes never make the same one)
        return (key or f"{time.time_ns():x}-{secrets.token_hex(6)}", kind, q, d, who, label,
                None if note is None else str(note), now(), secs, meta_text, cache_key)

    @staticmethod
    def _as_record(row: tuple[Any, ...], meta: dict[str, Any] | None = None) -> dict[str, Any]:
        rec = {"query_id": row[2], "doc_id": row[3], "label": row[5], "assessor": row[4],
               "time": row[7], "kind": row[1], "seconds": row[8], "note": row[6]}
        if meta:
            rec.update({k: v for k, v in meta.items() if k not in rec})
        return rec

    def _commit(self, rows: list[tuple[Any, ...]]) -> None:
        self.backend.insert_events(rows)

    def append(self, query_id: Any, doc_id: Any, label: Any, *, assessor: str | None = None,
               meta: dict[str, Any] | None = None, seconds: float | None = None,
               note: str | None = None) -> dict[str, Any]:
        """Record one label now: committed (on disk) before this returns.

        ``label``: an integer (or a grade name when ``grades`` is a mapping);
        ``seconds``: how long it took (the widget measures it); ``note``: a remark kept
        with it; ``meta``: provenance kept as JSON (an automatic judge's model and cache
        key, see :meth:`meta_records`). Returns the record written.
        """
        value = self.checked_label(label, query_id, doc_id)
        row = self._event("label", query_id, doc_id, value, assessor=assessor, note=note,
                          seconds=seconds, meta=meta)
        self._commit([row])
        return self._as_record(row, meta)

    def append_many(self, items: Iterable[tuple[Any, Any, Any, dict[str, Any] | None]], *,
                    assessor: str | None = None) -> list[dict[str, Any]]:
        """Record several ``(query_id, doc_id, label, meta)`` in one transaction (all or
        none), each checked as by :meth:`append` before anything is written."""
        items = list(items)
        rows = [self._event("label", q, d, self.checked_label(lab, q, d), assessor=assessor,
                            meta=meta) for q, d, lab, meta in items]
        if rows:
            self._commit(rows)
        return [self._as_record(r, it[3]) for r, it in zip(rows, items, strict=True)]

    def extend(self, qrels: Any, *, assessor: str | None = None) -> int:
        """Append many labels (a qrels-like frame or dict) in one transaction; returns
        how many were written."""
        q = qrels_frame(qrels, arg="qrels")
        rows = [self._event("label", a, b, self.checked_label(c, a, b), assessor=assessor)
                for a, b, c in q.iter_rows()]
        if rows:
            self._commit(rows)
        return len(rows)

    def remove(self, query_id: Any, doc_id: Any, *, assessor: str | None = None) -> None:
        """Retract a label (an event: the history is kept)."""
        self._commit([self._event("retract", query_id, doc_id, None, assessor=assessor)])

    def cant_judge(self, query_id: Any, doc_id: Any, *, assessor: str | None = None,
                   seconds: float | None = None, note: str | None = None) -> dict[str, Any]:
        """Record that ``assessor`` cannot judge this pair (it counts as seen by them, not
        as a label; another assessor gets it)."""
        row = self._event("cant_judge", query_id, doc_id, None, assessor=assessor,
                          seconds=seconds, note=note)
        self._commit([row])
        return self._as_record(row)

    def note(self, query_id: Any, doc_id: Any, text: str, *,
             assessor: str | None = None) -> dict[str, Any]:
        """Keep a note on a pair (it changes no label)."""
        row = self._event("note", query_id, doc_id, None, assessor=assessor, note=str(text))
        self._commit([row])
        return self._as_record(row)

    def lease(self, query_id: Any, doc_id: Any, *, assessor: str | None = None) -> None:
        """Mark a pair as on ``assessor``'s screen (a team's widget does): routing sends
        it to nobody else for :attr:`lease_seconds` unless they judge it first."""
        row = self._event("lease", query_id, doc_id, None, assessor=assessor)
        self.backend.insert_events([row], durable=False)  # a hint: no fsync of its own

    #: how long a lease holds a pair for the assessor it was shown to
    lease_seconds: float = 600.0

    def leases(self) -> pl.DataFrame:
        """Pairs on an assessor's screen now (leased, not yet judged by them):
        ``query_id, doc_id, assessor``."""
        return active_leases(self.events(("lease", *JUDGEMENTS)), self.lease_seconds)

    def adjudicate(self, query_id: Any, doc_id: Any, label: Any, *,
                   assessor: str | None = None, note: str | None = None,
                   seconds: float | None = None) -> dict[str, Any]:
        """Settle a conflict: the label ``qrels(policy="adjudicated")`` takes for the pair."""
        value = self.checked_label(label, query_id, doc_id)
        row = self._event("adjudicate", query_id, doc_id, value, assessor=assessor,
                          note=note, seconds=seconds)
        self._commit([row])
        return self._as_record(row)

    # ------------------------------------------------------------------ reading
    def events(self, kinds: Sequence[str] | None = None, *,
               query_ids: Sequence[Any] | None = None) -> pl.DataFrame:
        """Every event, oldest first: ``id, kind, query_id, doc_id, assessor, label, note,
        time, seconds`` (``time`` a UTC datetime)."""
        qids = None if query_ids is None else [str(q) for q in query_ids]
        if qids is not None and len(qids) > 500:  # (a long IN list: read all, filter here)
            return events_frame(self.backend, kinds).filter(pl.col("query_id").is_in(qids))
        return events_frame(self.backend, kinds, qids)

    def records(self) -> pl.DataFrame:
        """Every label and retraction, oldest first: ``query_id, doc_id, label, assessor,
        time`` (as a journal's; ``label`` null for retractions), plus ``kind``,
        ``seconds`` and ``note``."""
        ev = self.events(JUDGEMENTS)
        return ev.select("query_id", "doc_id", "label", "assessor", "time", "kind", "seconds",
                         "note")

    def labels(self, *, with_time: bool = True) -> pl.DataFrame:
        """The current labels: each assessor's latest judgement per (query, document).

        Returns ``query_id, doc_id, assessor, label, time``; retracted labels and
        "can't judge" are absent. (``with_time=False`` leaves ``time`` as text: faster.)
        """
        return latest_labels(self.backend, with_time=with_time)

    def judgements(self, *, query_ids: Sequence[Any] | None = None) -> pl.DataFrame:
        """Each assessor's latest judgement per pair, "can't judge" included:
        ``query_id, doc_id, assessor, kind, label, time, seconds``."""
        return current_judgements(self.events(JUDGEMENTS, query_ids=query_ids))

    def notes(self) -> pl.DataFrame:
        """The notes: ``query_id, doc_id, assessor, note, time``."""
        return self.events(["note", "label", "cant_judge", "adjudicate"]).filter(
            pl.col("note").is_not_null()).select("query_id", "doc_id", "assessor", "note", "time")

    def meta_records(self, start: int = 0) -> list[dict[str, Any]]:
        """Labels written with ``meta`` (an automatic judge's), from event id ``start`` on,
        each with its ``index`` (pass ``last["index"] + 1`` to read only newer ones)."""
        rows = self.backend.query(
            "SELECT id, query_id, doc_id, label, assessor, time, meta FROM events WHERE "
            "meta IS NOT NULL AND kind = 'label' AND id >= ? ORDER BY id", (int(start),))
        return [{"query_id": q, "doc_id": d, "label": lab, "assessor": a, "time": t,
                 "meta": json.loads(m), "index": i} for i, q, d, lab, a, t, m in rows]

    def qrels(self, *, assessor: str | None = None,
              policy: Literal["majority", "max", "min", "prefer", "adjudicated"] | None = None,
              prefer: str | Sequence[str] | None = None,
              tie: Literal["max", "min"] | None = None) -> pl.DataFrame:
        """The labels as qrels ``query_id, doc_id, relevance``.

        With several assessors, pass ``assessor=`` for one person's labels or a
        ``policy``: those of :func:`~searcheval_frames.merge_labels` (``majority``,
        ``max``, ``min``, ``prefer``) or ``"adjudicated"`` (the label given in review
        for a conflicting pair, the agreed label for the rest; a conflict not yet
        reviewed is an error listing it). Conflicting labels without a policy are an
        error.
        """
        lab = self.labels(with_time=False)
        if assessor is not None:
            lab = lab.filter(pl.col("assessor") == str(assessor))
        long = lab.select("query_id", "doc_id", "assessor", "label")
        if policy == "adjudicated":
            return settle_adjudicated(long, self.events(["adjudicate"]))
        if lab.select("assessor").n_unique() > 1:
            check_policy(policy, tie)
            merged, _ = settle(long, input_kind(lab), policy, prefer=prefer, tie=tie)
            return merged
        return lab.select("query_id", "doc_id", pl.col("label").alias("relevance"))

    def get(self, query_id: Any, doc_id: Any, *, assessor: str | None = None) -> int | None:
        """The current label of one document by ``assessor`` (default: this store's)."""
        who = self.assessor if assessor is None else str(assessor)
        rows = self.backend.query(
            "SELECT kind, label FROM events WHERE query_id = ? AND doc_id = ? AND assessor = ? "
            "AND kind IN ('label', 'retract', 'cant_judge') ORDER BY id DESC LIMIT 1",
            (str(query_id), str(doc_id), who))
        return rows[0][1] if rows and rows[0][0] == "label" else None

    def __len__(self) -> int:
        return self.labels().height

    def __repr__(self) -> str:
        lab = self.labels()
        return (f"{type(self).__name__}({self.location!r}, assessor={self.assessor!r}: "
                f"{lab.height} labels, {lab.select('query_id').n_unique()} queries, "
                f"{lab.select('assessor').n_unique()} assessor(s))")

    # ------------------------------------------------------------------ pools
    def remaining(self, pool: Any, *, assessor: str | None = None) -> Any:
        """Rows of ``pool`` that ``assessor`` (default: this store's) has not labelled."""
        kind = input_kind(pool)
        df = pool_pairs(pool)
        who = self.assessor if assessor is None else str(assessor)
        done = self.labels().filter(pl.col("assessor") == who).select("query_id", "doc_id")
        return to_native(df.join(done, on=["query_id", "doc_id"], how="anti"), kind)

    def progress(self, pool: Any = None, *, by: Literal["assessor", "query"] | None = None,
                 assessor: str | None = None, per_pair: int = 1,
                 assign: dict[str, Sequence[Any]] | None = None) -> Any:
        """How far the labelling is.

        ``by="assessor"`` (the default without a pool): one row per assessor: ``done``
        (pairs labelled, of ``pool`` when given), ``cant_judge``, ``left`` (pairs of the
        pool still open to them: assigned to them by ``assign``, not seen by them, with
        fewer than ``per_pair`` labels; null without a pool), ``median_seconds`` per
        label, ``eta_seconds`` (``left`` × median) and ``eta`` as text.
        ``by="query"`` (the default with a pool): per query of the pool, for
        ``assessor`` (default: this store's): ``query_id, total, labelled, fraction``.
        """
        by = by if by is not None else ("assessor" if pool is None else "query")
        check_choice("LabelStore.progress", "by", by, ("assessor", "query"), example='by="query"')
        per_pair = check_int("LabelStore.progress", "per_pair", per_pair, minimum=1,
                             example="per_pair=2")
        kind = input_kind(pool) if pool is not None else input_kind(pl.DataFrame())
        if by == "query":
            if pool is None:
                raise InvalidOptionError("LabelStore.progress(by='query') needs the pool")
            who = self.assessor if assessor is None else str(assessor)
            return to_native(query_progress(self.labels(), pool_pairs(pool), who), kind)
        items = None if pool is None else pool_pairs(pool).select("query_id", "doc_id").unique(
            maintain_order=True)
        out = assessor_progress(self.judgements(), items, per_pair=per_pair,
                                assign=check_assign(assign, "LabelStore.progress"))
        if assessor is not None:
            out = out.filter(pl.col("assessor") == str(assessor))
        return to_native(out, kind)

    def conflicts(self) -> pl.DataFrame:
        """Pairs whose current labels disagree: ``query_id, doc_id``, one column per
        assessor (null where they gave none), ``n_labels``, and ``adjudicated`` (the label
        given in review, null while not reviewed; see ``label_widget(mode="review")``)."""
        return conflict_table(self.labels(), self.events(["adjudicate"]))

    # ------------------------------------------------------------------ exchange
    @_OnDefaultStore
    def import_journal(self, path: str | os.PathLike[str]) -> JournalImport:
        """Move a JSON-lines journal's labels into this database, idempotently.

        ``LabelStore.import_journal(path)`` (on the class) imports into the default
        database, ``labels/labels.db`` in the working directory.

        Every line (labels, retractions, an automatic judge's answers with their cache
        keys) becomes an event with the line's assessor and time, in one transaction;
        each has a natural key, so importing the same journal again adds nothing. Damaged
        lines are refused by number (nothing imported); a torn last line is left out and
        counted. The journal file is not changed.
        """
        return import_journal(self, path)

    def export_journal(self, path: str | os.PathLike[str]) -> Path:
        """Write every event as a JSON-lines journal (the exchange format; importing it
        into this or another database adds each event once)."""
        return export_journal(self, path)

    # ------------------------------------------------------------------ export
    def compact(self, path: str | os.PathLike[str] | None = None) -> Path:
        """Write the current labels (:meth:`labels`) to Parquet (written to a temporary
        file and renamed). Default path: the store's with suffix ``.parquet``."""
        if path is None and self.path is None:
            raise InvalidOptionError("compact: give a path (the store is a server database)")
        target = Path(path) if path is not None else Path(str(self.path)).with_suffix(".parquet")
        labels = self.labels()
        atomic_write(target, lambda fh: labels.write_parquet(fh))
        return target

    def write_qrels(self, path: str | os.PathLike[str], **qrels_kwargs: Any) -> Path:
        """Write :meth:`qrels` as a TREC qrels file ``query_id 0 doc_id relevance``."""
        q = self.qrels(**qrels_kwargs)
        target = Path(path)
        text = "".join(f"{a} 0 {b} {c}\n" for a, b, c in q.iter_rows())
        atomic_write(target, lambda fh: fh.write(text.encode("utf-8")))
        return target

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Close the connection (the next call reopens it for a server database)."""
        backend = getattr(self, "backend", None)
        if backend is not None:
            backend.close()

    def __enter__(self) -> LabelStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()
