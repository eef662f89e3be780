"""The label store: an append-only, crash-safe JSON Lines journal of labels.

:class:`LabelStore` writes one label per line with the assessor and the time, with
``fsync`` before :meth:`LabelStore.append` returns. Reopening resumes; a process killed
mid-write loses at most the line being written (a torn last line is reported and set
aside, earlier lines are never touched).
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import polars as pl

from .._deprecation import outside_stacklevel
from ..errors import (
    FileAccessError,
    FileFormatError,
    InvalidOptionError,
    InvalidRelevanceError,
    SearchEvalWarning,
)
from ..frames import input_kind, qrels_frame, to_native
from ..io.write import atomic_write
from ._journal import CORE_KEYS, line_of, locked, parse_line
from ._labels import parse_label, pool_pairs
from .grades import Grades, grade_names, normalize_grades
from .policies import check_policy, settle

__all__ = ["LabelStore", "default_journal"]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _default_assessor() -> str:
    import getpass

    try:
        return getpass.getuser() or "assessor"
    except Exception:  # no user database (containers)
        return "assessor"


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

    name = assessor if assessor is not None else _default_assessor()
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", name).strip(".") or "assessor"
    return Path.cwd() / "labels" / f"{safe}.jsonl"


_RECORD_SCHEMA = {
    "query_id": pl.String,
    "doc_id": pl.String,
    "label": pl.Int64,
    "assessor": pl.String,
    "time": pl.String,
}


class LabelStore:
    """Append-only, crash-safe store of relevance labels (a JSON Lines journal).

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
    >>> _ = store.append("q1", "d1", 2)
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
        self.assessor = str(assessor) if assessor is not None else _default_assessor()
        self.path = Path(path) if path is not None else default_journal(self.assessor)
        self.grades = grades  # (also the lookup of accepted labels)
        self._fd: int | None = None
        self._offset = 0
        self._records: list[dict[str, Any]] = []
        #: torn trailing bytes found when the journal was read (a writer died mid-line)
        self.torn: bytes | None = None
        if self.path.exists() and self.path.is_dir():
            raise FileAccessError(f"path={str(path)!r} is a directory; give a file name")
        self._refresh()
        if self.torn is not None:
            warnings.warn(
                f"LabelStore: {self.path} ends with an incomplete line ({len(self.torn)} bytes, "
                "a writer was interrupted); it is ignored and will be moved to "
                f"{self.path.name}.torn on the next append. All complete labels are intact.",
                SearchEvalWarning,
                stacklevel=outside_stacklevel(),
            )

    @property
    def grades(self) -> Grades:
        """The accepted labels (see :func:`~searcheval_frames.evalset.grades.normalize_grades`);
        setting them checks them and updates what :meth:`append` accepts."""
        return self._grades

    @grades.setter
    def grades(self, grades: Grades) -> None:
        self._lookup = normalize_grades(grades)
        self._grades = grades

    # ------------------------------------------------------------------ reading

    def _refresh(self) -> None:
        """Read lines appended since the last read (by us or by another process)."""
        if not self.path.exists():
            return
        with open(self.path, "rb") as fh:
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
            try:
                rec = parse_line(line)
            except (ValueError, KeyError, TypeError) as exc:
                raise FileFormatError(
                    f"label journal has a damaged line ({exc})",
                    path=str(self.path),
                    line_no=line_no,
                    line=line.decode("utf-8", "replace")[:200],
                    hint="the line was damaged on disk or edited by hand; fix or delete that "
                    "line (the other lines are intact). After a deliberate edit, also delete "
                    'its "crc" field.',
                ) from exc
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
        df = pl.DataFrame(self._records, schema=_RECORD_SCHEMA, orient="row")
        return df.with_columns(
            pl.col("time").str.to_datetime("%Y-%m-%dT%H:%M:%S%.fZ", time_zone="UTC", strict=False)
        )

    def meta_records(self, start: int = 0) -> list[dict[str, Any]]:
        """Lines written with ``meta``, from the ``start``-th on, each with its ``index``
        (pass ``last["index"] + 1`` as ``start`` to read only what was appended since)."""
        self._refresh()
        return [{**r, "index": i} for i, r in enumerate(self._records[start:], start)
                if "meta" in r]

    def labels(self) -> pl.DataFrame:
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

    def qrels(
        self,
        *,
        assessor: str | None = None,
        policy: Literal["majority", "max", "min", "prefer"] | None = None,
        prefer: str | Sequence[str] | None = None,
    ) -> pl.DataFrame:
        """The labels as qrels ``query_id, doc_id, relevance``.

        With several assessors in the journal, pass ``assessor=`` to take one person's
        labels or a ``policy`` (see :func:`merge_labels`) to merge them; conflicting
        labels without a policy are an error.
        """
        lab = self.labels()
        if assessor is not None:
            lab = lab.filter(pl.col("assessor") == str(assessor))
        if lab.select("assessor").n_unique() > 1:
            check_policy(policy, None)
            long = lab.select("query_id", "doc_id", "assessor", "label")
            merged, _ = settle(long, input_kind(lab), policy, prefer=prefer)
            return merged
        return lab.select("query_id", "doc_id", pl.col("label").alias("relevance"))

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

    def __len__(self) -> int:
        return self.labels().height

    def __repr__(self) -> str:
        lab = self.labels()
        return (
            f"LabelStore({str(self.path)!r}, assessor={self.assessor!r}: {lab.height} labels, "
            f"{lab.select('query_id').n_unique()} queries, "
            f"{lab.select('assessor').n_unique()} assessor(s))"
        )

    # ------------------------------------------------------------------ writing
    def _open(self) -> int:
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            existed = self.path.exists()
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            if not existed:
                with contextlib.suppress(OSError):  # make the new file's name durable
                    dfd = os.open(self.path.parent, os.O_RDONLY)
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
        with open(self.path, "rb") as fh:
            fh.seek(max(0, size - 1))
            if fh.read(1) == b"\n":
                return
            fh.seek(0)
            data = fh.read()
        end = data.rfind(b"\n")
        keep = end + 1
        with open(self.path.with_name(self.path.name + ".torn"), "ab") as side:
            side.write(data[keep:] + b"\n")
            side.flush()
            os.fsync(side.fileno())
        os.truncate(self.path, keep)
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
    ) -> dict[str, Any]:
        """Record one label now (written and fsync-ed before returning).

        ``label`` is an integer (or a grade name when ``grades`` is a mapping). ``meta``:
        extra JSON fields kept on the line (provenance, e.g. an automatic judge's model
        and cache key; see :meth:`meta_records`). Returns the record written.
        """
        rec = self._record(query_id, doc_id, label, assessor, meta)
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
        try:
            value = parse_label(label, self._lookup)
        except (ValueError, TypeError, OverflowError):
            value = None
            bad = True
        else:
            bad = value is None
        if bad:
            allowed = (
                "an integer"
                if self._lookup is None
                else ", ".join(n for _, n in grade_names(self.grades))
            )
            raise InvalidRelevanceError(
                f"label={label!r} for ({query_id!r}, {doc_id!r}): not a valid label; use {allowed}."
            )
        for name, v in (("query_id", query_id), ("doc_id", doc_id)):
            if v is None or str(v) == "":
                raise InvalidOptionError(f"{name}={v!r}: an id is needed to store a label")
        rec = {
            "query_id": str(query_id),
            "doc_id": str(doc_id),
            "label": value,
            "assessor": self.assessor if assessor is None else str(assessor),
            "time": _now(),
        }
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
                "time": _now(),
            }
        )

    # ------------------------------------------------------------------ progress
    def remaining(self, pool: Any, *, assessor: str | None = None) -> Any:
        """Rows of ``pool`` that ``assessor`` (default: this store's) has not labelled."""
        kind = input_kind(pool)
        df = pool_pairs(pool)
        who = self.assessor if assessor is None else str(assessor)
        done = self.labels().filter(pl.col("assessor") == who).select("query_id", "doc_id")
        return to_native(df.join(done, on=["query_id", "doc_id"], how="anti"), kind)

    def progress(self, pool: Any, *, assessor: str | None = None) -> Any:
        """Per query of ``pool``: ``query_id, total, labelled, fraction`` (for ``assessor``)."""
        kind = input_kind(pool)
        df = pool_pairs(pool).select("query_id", "doc_id").unique(maintain_order=True)
        who = self.assessor if assessor is None else str(assessor)
        done = (
            self.labels()
            .filter(pl.col("assessor") == who)
            .select("query_id", "doc_id", pl.lit(True).alias("_done"))
        )
        out = (
            df.join(done, on=["query_id", "doc_id"], how="left")
            .group_by("query_id", maintain_order=True)
            .agg(
                pl.len().cast(pl.Int64).alias("total"),
                pl.col("_done").fill_null(False).sum().cast(pl.Int64).alias("labelled"),
            )
            .with_columns((pl.col("labelled") / pl.col("total")).alias("fraction"))
        )
        return to_native(out, kind)

    # ------------------------------------------------------------------ export
    def compact(self, path: str | os.PathLike[str] | None = None) -> Path:
        """Write the current labels (:meth:`labels`) to Parquet; the journal is untouched.

        The snapshot is written to a temporary file and renamed, so a crash never leaves
        a half-written file. Default path: the journal's with suffix ``.parquet``.
        """
        target = Path(path) if path is not None else self.path.with_suffix(".parquet")
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
        """Close the journal file (appending reopens it)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> LabelStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()
