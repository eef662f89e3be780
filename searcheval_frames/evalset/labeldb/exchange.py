"""Label journals in and out of a database: nothing already labelled is lost.

:func:`import_journal` moves a JSON-lines journal of earlier versions (or one written by
:func:`export_journal`) into a store, idempotently: each line gets a natural key (its
assessor, ids, label, time and kind, and which repeat of an identical line it is), so
importing the same journal twice adds nothing. Lines are checked as the journal reader
checks them (CRC, damaged lines named by number); a torn last line (a writer killed
mid-line) is left out and reported. :func:`export_journal` writes the events back as a
journal (the exchange format), each line keeping its event key.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import FileAccessError, FileFormatError
from ...io.write import atomic_write
from .._journal import line_of, parse_line
from .schema import KINDS

__all__ = ["JournalImport", "export_journal", "import_journal", "journal_events"]


@dataclass(frozen=True)
class JournalImport:
    """What :meth:`~searcheval_frames.LabelStore.import_journal` did."""

    path: Path
    #: complete lines read
    lines: int
    #: events added to the database
    added: int
    #: events already in it (an earlier import)
    already: int
    #: bytes of a torn last line left out (a writer was killed mid-line), else 0
    torn_bytes: int

    def __repr__(self) -> str:
        torn = f", a torn last line of {self.torn_bytes} bytes left out" if self.torn_bytes else ""
        return (f"JournalImport({str(self.path)!r}: {self.lines} lines, {self.added} added, "
                f"{self.already} already there{torn})")


def _kind(rec: dict[str, Any], meta: dict[str, Any]) -> str:
    kind = meta.pop("kind", None)
    if kind in KINDS and kind != "label":
        return str(kind)
    return "label" if rec["label"] is not None else "retract"


def journal_events(path: Path) -> tuple[list[tuple[Any, ...]], int, int]:
    """The event rows of a journal file, its complete line count and torn tail bytes."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise FileAccessError(f"cannot read the journal {path}: {exc}", path=str(path)) from exc
    end = data.rfind(b"\n")
    complete, torn = (data[: end + 1], len(data) - end - 1) if end >= 0 else (b"", len(data))
    rows: list[tuple[Any, ...]] = []
    seen: dict[str, int] = {}
    lines = complete.split(b"\n")[:-1]
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = parse_line(line)
        except (ValueError, KeyError, TypeError) as exc:
            raise FileFormatError(
                f"label journal has a damaged line ({exc}); nothing was imported",
                path=str(path), line_no=no, line=line.decode("utf-8", "replace")[:200],
                hint="fix or delete that line (the other lines are intact), then import "
                "again; after a deliberate edit also delete its \"crc\" field") from exc
        meta = dict(rec.get("meta") or {})
        kind = _kind(rec, meta)
        note = meta.pop("note", None)
        seconds = meta.pop("seconds", None)
        given = meta.pop("event", None)
        natural = "\x1f".join((kind, rec["assessor"], rec["query_id"], rec["doc_id"],
                               str(rec["label"]), rec["time"]))
        seen[natural] = seen.get(natural, 0) + 1
        key = str(given) if given else "j:" + hashlib.blake2b(
            f"{natural}\x1f{seen[natural]}".encode(), digest_size=16).hexdigest()
        label = rec["label"] if kind in ("label", "adjudicate") else None
        rows.append((key, kind, rec["query_id"], rec["doc_id"], rec["assessor"], label,
                     None if note is None else str(note), rec["time"],
                     None if seconds is None else float(seconds),
                     json.dumps(meta, ensure_ascii=False, sort_keys=True) if meta else None,
                     str(meta["key"]) if meta.get("key") else None))
    return rows, len(lines), torn


def import_journal(store: Any, path: str | os.PathLike[str]) -> JournalImport:
    """Move a journal's labels into ``store`` (one transaction; idempotent)."""
    src = Path(path)
    if not src.is_file():
        raise FileAccessError(f"no journal at {src} (give the .jsonl file of a LabelStore)",
                              path=str(src))
    rows, lines, torn = journal_events(src)
    added = store.backend.insert_events(rows) if rows else 0
    return JournalImport(src, lines, added, len(rows) - added, torn)


_EXPORT = ("SELECT event_key, kind, query_id, doc_id, assessor, label, note, time, seconds, "
           "meta FROM events ORDER BY id")


def export_journal(store: Any, path: str | os.PathLike[str]) -> Path:
    """Write every event of ``store`` as a journal (written to a temporary file, renamed)."""
    target = Path(path)
    rows = store.backend.query(_EXPORT)

    def write(fh: Any) -> None:
        for key, kind, q, d, who, label, note, time, seconds, meta in rows:
            rec: dict[str, Any] = {"query_id": q, "doc_id": d, "label": label,
                                   "assessor": who, "time": time}
            if kind not in ("label", "retract"):
                rec["kind"] = kind
            if note is not None:
                rec["note"] = note
            if seconds is not None:
                rec["seconds"] = seconds
            rec.update(json.loads(meta) if meta else {})
            rec["event"] = key
            fh.write(line_of(rec))

    atomic_write(target, write)
    return target
