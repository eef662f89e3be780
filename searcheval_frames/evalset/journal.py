"""The label journal of earlier versions: an append-only, crash-safe JSON Lines file.

``LabelStore("labels/alice.jsonl")`` opens one as a :class:`JournalStore` (the
database store is the default since issue #33; move a journal in with
:meth:`~searcheval_frames.LabelStore.import_journal`). It writes one label per line with the assessor and the time, with
``fsync`` before :meth:`LabelStore.append` returns. Reopening resumes; a process killed
mid-write loses at most the line being written (a torn last line is reported and set
aside, earlier lines are never touched).
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import polars as pl

from .._deprecation import outside_stacklevel
from ..errors import FileAccessError, InvalidOptionError, SearchEvalWarning
from ..frames import qrels_frame
from ._journal import CORE_KEYS, checked_line, line_of, locked
from .grades import Grades
from .labeldb.location import default_assessor, now
from .labeldb.state import EVENTS_SCHEMA, parse_time
from .labeldb.store import LabelStore

__all__ = ["JournalStore", "default_journal"]

#: how a JournalStore says where its labels belong now (its repr and the widget show it)
HINT = ("a JSON-lines journal of earlier versions: move it into the database with "
        "sef.LabelStore().import_journal(path)")


def default_journal(assessor: str | None = None) -> Path:
    """Where labels go when no path is given: ``labels/<assessor>.jsonl`` (absolute).

    The folder is ``labels/`` in the working directory (a notebook's kernel starts in the
    notebook's folder), never a temporary folder: restart the kernel, run the cell again,
    and the store finds every label given. Characters other than letters, digits, ``.``,
    ``-`` and ``_`` in the assessor's name become ``_``.

    Examples
    --------
    >>> from searcheval_frames.evalset.store import default_journal
    >>> p = default_journal("Ana María")
    >>> p.parent.name, p.name, p.is_absolute()
    ('labels', 'Ana_Mar_a.jsonl', True)
    """
    import re

    name = assessor if assessor is not None else default_assessor()
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", name).strip(".") or "assessor"
    return Path.cwd() / "labels" / f"{safe}.jsonl"


_NOT_JUDGEMENTS = ("note", "adjudicate")


def _kind_of(rec: dict[str, Any]) -> str:
    kind = rec.get("meta", {}).get("kind")
    if kind:
        return str(kind)
    return "label" if rec["label"] is not None else "retract"


_RECORD_SCHEMA = {
    "query_id": pl.String,
    "doc_id": pl.String,
    "label": pl.Int64,
    "assessor": pl.String,
    "time": pl.String,
}


class JournalStore(LabelStore, suffixes=(".jsonl", ".ndjson")):
    """Append-only, crash-safe store of relevance labels in a JSON Lines journal.

    What ``LabelStore(path)`` opens for a ``.jsonl`` path: the journal format of earlier
    versions, kept so that nothing labelled is lost and as an exchange format. Reading,
    qrels, merging and the widget work on it as before; a database store
    (:class:`~searcheval_frames.LabelStore`) adds the team workflow, and
    :meth:`~searcheval_frames.LabelStore.import_journal` moves a journal into one.

    Every :meth:`append` writes one line ``{"query_id", "doc_id", "label", "assessor",
    "time", "crc"}`` with a single ``write`` under an exclusive file lock, then ``fsync``;
    when it returns, the label is on disk. ``crc`` is a checksum of the rest of the line:
    a line damaged on disk is reported with its line number, never read as another
    label (lines without ``crc``, from older journals or typed by hand, are read as
    they are). Lines are never rewritten: a new label for the same
    (query, document, assessor) supersedes the older one, :meth:`remove` appends a
    retraction (``label: null``). Opening the file again resumes where the assessor
    stopped. A writer killed mid-line leaves a torn last line: it is ignored and reported
    on open (:attr:`torn`), and moved to ``<path>.torn`` before the next append, so no
    complete label is ever lost or corrupted.

    Parameters
    ----------
    path
        The journal file (created if missing), e.g. ``"labels/alice.jsonl"``. Default
        (``None``): ``labels/<assessor>.jsonl`` in the working directory — a stable,
        visible place (:func:`default_journal`), so a restarted kernel that runs the same
        cell again finds the labels it gave.
    assessor
        Who is labelling (stored on every line); default: the login name.
    grades
        Accepted labels (integers or a mapping name→int); ``None`` accepts any integer.

    Examples
    --------
    >>> import tempfile, os, searcheval_frames as sef
    >>> path = os.path.join(tempfile.mkdtemp(), "labels.jsonl")
    >>> store = sef.LabelStore(path, assessor="alice", grades=[0, 1, 2])
    >>> type(store).__name__, store.append("q1", "d1", 2)["label"]
    ('JournalStore', 2)
    >>> sef.LabelStore(path).qrels().rows()
    [('q1', 'd1', 2)]
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        assessor: str | None = None,
        grades: Grades = None,
    ) -> None:
        self.assessor = str(assessor) if assessor is not None else default_assessor()
        #: the journal file (also ``path``)
        self.file: Path = Path(path) if path is not None else default_journal(self.assessor)
        self.path = self.file
        self.location = str(self.file)
        self.hint = HINT
        self.grades = grades  # (also the lookup of accepted labels)
        self._fd: int | None = None
        self._offset = 0
        self._records: list[dict[str, Any]] = []
        #: torn trailing bytes found when the journal was read (a writer died mid-line)
        self.torn: bytes | None = None
        if self.file.exists() and self.file.is_dir():
            raise FileAccessError(f"path={str(path)!r} is a directory; give a file name")
        self._refresh()
        if self.torn is not None:
            warnings.warn(
                f"LabelStore: {self.file} ends with an incomplete line ({len(self.torn)} bytes, "
                "a writer was interrupted); it is ignored and will be moved to "
                f"{self.file.name}.torn on the next append. All complete labels are intact.",
                SearchEvalWarning,
                stacklevel=outside_stacklevel(),
            )

    # ------------------------------------------------------------------ reading

    def _refresh(self) -> None:
        """Read lines appended since the last read (by us or by another process)."""
        if not self.file.exists():
            return
        with open(self.file, "rb") as fh:
            fh.seek(self._offset)
            data = fh.read()
        if not data:
            self.torn = None
            return
        end = data.rfind(b"\n")
        complete, tail = (data[: end + 1], data[end + 1 :]) if end >= 0 else (b"", data)
        self.torn = tail or None
        if not complete:
            return
        start_line = self._line_count_before()
        for i, line in enumerate(complete.split(b"\n")[:-1]):
            line_no = start_line + i + 1
            if not line or line.isspace():
                continue
            rec = checked_line(line, str(self.file), line_no)
            self._records.append(rec)
        self._lines_read = start_line + complete.count(b"\n")
        self._offset += len(complete)

    def _line_count_before(self) -> int:
        return getattr(self, "_lines_read", 0)

    def records(self) -> pl.DataFrame:
        """Every journal line, oldest first: ``query_id, doc_id, label, assessor, time``.

        ``label`` is null for retractions (:meth:`remove`); ``time`` is UTC.
        """
        self._refresh()
        rows = [r for r in self._records if r.get("meta", {}).get("kind") not in _NOT_JUDGEMENTS]
        df = pl.DataFrame(rows, schema=_RECORD_SCHEMA, orient="row")
        return df.with_columns(
            pl.col("time").str.to_datetime("%Y-%m-%dT%H:%M:%S%.fZ", time_zone="UTC", strict=False)
        )

    def events(self, kinds: Any = None, *, query_ids: Any = None) -> pl.DataFrame:
        """The journal's lines as the events of a database store (``id``: the line's
        index; ``kind``: ``label``, ``retract`` or ``cant_judge``)."""
        self._refresh()
        rows = [(i, _kind_of(r), r["query_id"], r["doc_id"], r["assessor"], r["label"],
                 r.get("meta", {}).get("note"), r["time"], r.get("meta", {}).get("seconds"))
                for i, r in enumerate(self._records)]
        df = pl.DataFrame(rows, schema=EVENTS_SCHEMA, orient="row").with_columns(parse_time())
        if query_ids is not None:
            df = df.filter(pl.col("query_id").is_in([str(q) for q in query_ids]))
        return df if kinds is None else df.filter(pl.col("kind").is_in(list(kinds)))

    def _commit(self, rows: list[tuple[Any, ...]]) -> None:
        raise InvalidOptionError(
            f"{self.file} is {HINT}, which keeps labels and retractions only; for notes, "
            "\"can't judge\" and adjudications open a database store")

    def meta_records(self, start: int = 0) -> list[dict[str, Any]]:
        """Lines written with ``meta``, from the ``start``-th on, each with its ``index``
        (pass ``last["index"] + 1`` as ``start`` to read only what was appended since)."""
        self._refresh()
        return [{**r, "index": i} for i, r in enumerate(self._records[start:], start)
                if "meta" in r]

    def labels(self, *, with_time: bool = True) -> pl.DataFrame:
        """The current labels: the latest line per (assessor, query, document).

        Returns ``query_id, doc_id, assessor, label, time``; retracted labels are absent.
        """
        rec = self.records().with_row_index("_seq")
        latest = (
            rec.sort("_seq")
            .group_by(["assessor", "query_id", "doc_id"], maintain_order=True)
            .last()
            .filter(pl.col("label").is_not_null())
            .sort("_seq")
        )
        return latest.select("query_id", "doc_id", "assessor", "label", "time")

    def get(self, query_id: Any, doc_id: Any, *, assessor: str | None = None) -> int | None:
        """The current label of one document by ``assessor`` (default: this store's)."""
        who = self.assessor if assessor is None else str(assessor)
        self._refresh()
        value: int | None = None
        q, d = str(query_id), str(doc_id)
        for rec in self._records:
            if rec["query_id"] == q and rec["doc_id"] == d and rec["assessor"] == who:
                value = rec["label"]
        return value

    # ------------------------------------------------------------------ writing
    def _open(self) -> int:
        if self._fd is None:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            existed = self.file.exists()
            self._fd = os.open(self.file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            if not existed:
                with contextlib.suppress(OSError):  # make the new file's name durable
                    dfd = os.open(self.file.parent, os.O_RDONLY)
                    try:
                        os.fsync(dfd)
                    finally:
                        os.close(dfd)
        return self._fd

    def _repair_tail(self, fd: int) -> None:
        """Under the lock: set aside a torn last line so the next line starts clean."""
        size = os.fstat(fd).st_size
        if size == 0:
            return
        with open(self.file, "rb") as fh:
            fh.seek(max(0, size - 1))
            if fh.read(1) == b"\n":
                return
            fh.seek(0)
            data = fh.read()
        end = data.rfind(b"\n")
        keep = end + 1
        with open(self.file.with_name(self.file.name + ".torn"), "ab") as side:
            side.write(data[keep:] + b"\n")
            side.flush()
            os.fsync(side.fileno())
        os.truncate(self.file, keep)
        os.fsync(fd)
        if self._offset > keep:  # pragma: no cover - we never read past a torn tail
            self._offset = keep
        self.torn = None

    def _write(self, rec: dict[str, Any] | list[dict[str, Any]]) -> None:
        line = b"".join(line_of(r) for r in (rec if isinstance(rec, list) else [rec]))
        fd = self._open()
        with locked(fd):
            self._repair_tail(fd)
            view = memoryview(line)
            while view:
                n = os.write(fd, view)
                view = view[n:]
            os.fsync(fd)
        self._refresh()

    def append(
        self,
        query_id: Any,
        doc_id: Any,
        label: Any,
        *,
        assessor: str | None = None,
        meta: dict[str, Any] | None = None,
        seconds: float | None = None,
        note: str | None = None,
    ) -> dict[str, Any]:
        """Record one label now (written and fsync-ed before returning).

        ``label`` is an integer (or a grade name when ``grades`` is a mapping). ``meta``:
        extra JSON fields kept on the line (provenance, e.g. an automatic judge's model
        and cache key; see :meth:`meta_records`); ``seconds`` and ``note`` are kept on
        the line too. Returns the record written.
        """
        extra = {**(meta or {}), **({"seconds": float(seconds)} if seconds is not None else {}),
                 **({"note": str(note)} if note is not None else {})}
        rec = self._record(query_id, doc_id, label, assessor, extra or None)
        self._write(rec)
        return rec

    def append_many(
        self, items: Iterable[tuple[Any, Any, Any, dict[str, Any] | None]], *,
        assessor: str | None = None,
    ) -> list[dict[str, Any]]:
        """Record several ``(query_id, doc_id, label, meta)`` with one write and one fsync.

        Each is checked as by :meth:`append` before anything is written; a writer killed
        mid-write leaves whole lines and at most one torn last line, as with :meth:`append`.
        """
        recs = [self._record(q, d, lab, assessor, meta) for q, d, lab, meta in items]
        if recs:
            self._write(recs)
        return recs

    def _record(self, query_id: Any, doc_id: Any, label: Any, assessor: str | None,
                meta: dict[str, Any] | None) -> dict[str, Any]:
        value = self.checked_label(label, query_id, doc_id)
        q, d = self.checked_ids(query_id, doc_id)
        rec = {"query_id": q, "doc_id": d, "label": value,
               "assessor": self.assessor if assessor is None else str(assessor), "time": now()}
        rec.update({k: v for k, v in (meta or {}).items() if k not in CORE_KEYS})
        return rec

    def extend(self, qrels: Any, *, assessor: str | None = None) -> int:
        """Append many labels (a qrels-like frame or dict); returns how many were written."""
        q = qrels_frame(qrels, arg="qrels")
        n = 0
        for qid, did, rel in q.iter_rows():
            self.append(qid, did, rel, assessor=assessor)
            n += 1
        return n

    def remove(self, query_id: Any, doc_id: Any, *, assessor: str | None = None) -> None:
        """Retract a label (appends a ``label: null`` line; history is kept)."""
        self._write(
            {
                "query_id": str(query_id),
                "doc_id": str(doc_id),
                "label": None,
                "assessor": self.assessor if assessor is None else str(assessor),
                "time": now(),
            }
        )

    def __repr__(self) -> str:
        return f"{super().__repr__()}: {HINT}"

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Close the journal file (appending reopens it)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()
