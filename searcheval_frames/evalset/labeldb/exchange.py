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

import io
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from ...errors import FileAccessError, InvalidOptionError
from ...io.write import atomic_write
from .._journal import checked_line, crc, line_of
from .schema import KINDS

__all__ = ["JournalImport", "export_journal", "fast_events", "import_journal", "journal_events"]


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


def journal_events(path: Path, *, fast: bool = True) -> tuple[list[tuple[Any, ...]], int, int]:
    """The event rows of a journal file, its complete line count and torn tail bytes
    (``fast``: by polars when every line allows it, see :func:`fast_events`)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise FileAccessError(f"cannot read the journal {path}: {exc}", path=str(path)) from exc
    end = data.rfind(b"\n")
    complete, torn = (data[: end + 1], len(data) - end - 1) if end >= 0 else (b"", len(data))
    quick = fast_events(complete) if fast else None
    if quick is not None:
        return quick, complete.count(b"\n"), torn
    rows: list[tuple[Any, ...]] = []
    seen: dict[str, int] = {}
    lines = complete.split(b"\n")[:-1]
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        rec = checked_line(line, str(path), no, then="nothing was imported")
        meta = dict(rec.get("meta") or {})
        kind = _kind(rec, meta)
        note = meta.pop("note", None)
        seconds = meta.pop("seconds", None)
        given = meta.pop("event", None)
        natural = "\x1f".join((kind, rec["assessor"], rec["query_id"], rec["doc_id"],
                               str(rec["label"]), rec["time"]))
        seen[natural] = seen.get(natural, 0) + 1
        key = str(given) if given else f"j:{natural}\x1f{seen[natural]}"
        label = rec["label"] if kind in ("label", "adjudicate") else None
        rows.append((key, kind, rec["query_id"], rec["doc_id"], rec["assessor"], label,
                     None if note is None else str(note), rec["time"],
                     None if seconds is None else float(seconds),
                     json.dumps(meta, ensure_ascii=False, sort_keys=True) if meta else None,
                     str(meta["key"]) if meta.get("key") else None))
    return rows, len(lines), torn


_PLAIN = {"query_id", "doc_id", "label", "assessor", "time", "crc", "kind", "note", "seconds",
          "event"}


def fast_events(complete: bytes) -> list[tuple[Any, ...]] | None:
    """The events of whole journal lines by polars, or None when a line needs the exact
    reader: no or a wrong checksum, a blank line, a label that is not an integer, ids that
    are not text, provenance fields (an automatic judge's). Same rows as the exact path."""
    if not complete:
        return None
    lines = complete.split(b"\n")[:-1]
    for line in lines:
        cut = line.rfind(b',"crc":"')
        if cut < 0 or not line.endswith(b'"}') or crc(line[:cut]).encode() != line[cut + 8:-2]:
            return None
    try:
        df = pl.read_ndjson(io.BytesIO(complete), infer_schema_length=None)
    except Exception:  # anything odd: the exact reader names the line
        return None
    types = df.schema
    if (set(df.columns) - _PLAIN or not {"query_id", "doc_id", "label"} <= set(df.columns)
            or types["query_id"] != pl.String or types["doc_id"] != pl.String
            or types["label"] not in (pl.Int64, pl.Null)):
        return None
    col = {c: (pl.col(c) if c in df.columns else pl.lit(None, dtype=pl.String))
           for c in ("assessor", "time", "kind", "note", "event")}
    given_kind = col["kind"].cast(pl.String)
    kind = (pl.when(given_kind.is_in(["cant_judge", "note", "adjudicate", "lease"]))
            .then(given_kind).when(pl.col("label").is_null()).then(pl.lit("retract"))
            .otherwise(pl.lit("label")))
    df = df.with_columns(kind.alias("_kind"),
                         col["assessor"].cast(pl.String).fill_null("").alias("_who"),
                         col["time"].cast(pl.String).fill_null("").alias("_time"))
    natural = pl.concat_str([pl.col("_kind"), "_who", "query_id", "doc_id",
                             pl.col("label").cast(pl.String).fill_null("None"), "_time"],
                            separator="\x1f")
    n = pl.int_range(1, pl.len() + 1).over(natural)
    key = pl.coalesce(col["event"].cast(pl.String),
                      pl.concat_str([pl.lit("j:"), natural, pl.lit("\x1f"), n.cast(pl.String)]))
    secs = pl.col("seconds").cast(pl.Float64) if "seconds" in df.columns else pl.lit(None)
    label = pl.when(pl.col("_kind").is_in(["label", "adjudicate"])).then(pl.col("label"))
    out = df.select(key.alias("k"), "_kind", "query_id", "doc_id", "_who",
                    label.cast(pl.Int64).alias("l"), col["note"].cast(pl.String).alias("n"),
                    "_time", secs.cast(pl.Float64).alias("s"),
                    pl.lit(None, dtype=pl.String).alias("m"),
                    pl.lit(None, dtype=pl.String).alias("c"))
    return out.rows()


def _need_database(store: Any, what: str) -> None:
    if getattr(store, "backend", None) is None:
        raise InvalidOptionError(
            f"{what}: {store.location} is a journal, not a database; open one: "
            f"sef.LabelStore('labels/labels.db').{what}(path)")


def import_journal(store: Any, path: str | os.PathLike[str]) -> JournalImport:
    """Move a journal's labels into ``store`` (one transaction; idempotent)."""
    _need_database(store, "import_journal")
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
    _need_database(store, "export_journal")
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
