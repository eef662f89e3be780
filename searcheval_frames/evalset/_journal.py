"""The label journal's line format: one JSON object a line, closed by a CRC-32.

Shared by :mod:`searcheval_frames.evalset.store` (which writes and reads journals);
private to :mod:`searcheval_frames.evalset`, with public names.
"""

from __future__ import annotations

import contextlib
import json
import zlib
from typing import Any

from ..errors import FileFormatError
from ._labels import parse_label

__all__ = ["CORE_KEYS", "checked_line", "crc", "line_of", "locked", "parse_line"]


@contextlib.contextmanager
def locked(fd: int):
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: single-writer use only
        yield
        return
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


def crc(body: bytes) -> str:
    return f"{zlib.crc32(body):08x}"


def line_of(rec: dict[str, Any]) -> bytes:
    """One journal line: the record as compact JSON, ending with a checksum of the rest.

    ``{"query_id":"q1",...,"time":"...","crc":"1a2b3c4d"}``: ``crc`` is the CRC-32 of
    the bytes before ``,"crc":``, so a line changed on disk (a flipped byte that still
    parses, e.g. another id) is refused instead of read as another label.
    """
    body = json.dumps(rec, ensure_ascii=False, separators=(",", ":")).encode()[:-1]
    return body + b',"crc":"' + crc(body).encode() + b'"}\n'


def parse_line(line: bytes) -> dict[str, Any]:
    """A journal line → record; ValueError / KeyError / TypeError if it is damaged.

    Lines without ``crc`` (journals written before it, or edited by hand) are read
    without the check; ``label`` must be present (``null`` for a retraction).
    """
    try:  # (a line we wrote is UTF-8: decoded once, without json.loads' encoding sniffing)
        obj = _DECODE(line.decode())
    except ValueError:  # anything else (a byte-order mark, UTF-16): as json.loads reads it
        obj = json.loads(line)
    if not isinstance(obj, dict):
        raise TypeError(f"a line is a JSON object, not {type(obj).__name__}")
    if "crc" in obj:
        body = line.rstrip(b"\r")
        cut = body.rfind(b',"crc":')
        if cut < 0 or body[cut:] != b',"crc":"' + str(obj["crc"]).encode() + b'"}' or (
            crc(body[:cut]) != obj["crc"]
        ):
            raise ValueError("its checksum does not match: it changed after it was written")
    label = obj["label"]
    if label is not None and type(label) is not int:  # (an int is its own label)
        label = parse_label(label, None)
        if label is None:
            raise ValueError(f"label {obj['label']!r} is not an integer")
    rec = {
        "query_id": str(obj["query_id"]),
        "doc_id": str(obj["doc_id"]),
        "label": label,
        "assessor": str(obj.get("assessor") or ""),
        "time": str(obj.get("time") or ""),
    }
    extra = obj.copy()
    for k in CORE_KEYS:
        extra.pop(k, None)
    if extra:  # provenance written with append(meta=...), e.g. an automatic judge's
        rec["meta"] = extra
    return rec


CORE_KEYS = frozenset({"query_id", "doc_id", "label", "assessor", "time", "crc"})
_DECODE = json.JSONDecoder().decode


def checked_line(line: bytes, path: str, line_no: int, *, then: str = "") -> dict[str, Any]:
    """:func:`parse_line`, a damaged line raised as a :class:`FileFormatError` naming the
    file and the line (``then``: what happened to the rest, e.g. "nothing was imported")."""
    try:
        return parse_line(line)
    except (ValueError, KeyError, TypeError) as exc:
        raise FileFormatError(
            f"label journal has a damaged line ({exc}){'; ' + then if then else ''}",
            path=path, line_no=line_no, line=line.decode("utf-8", "replace")[:200],
            hint="the line was damaged on disk or edited by hand; fix or delete that line (the "
            "other lines are intact). After a deliberate edit, also delete its \"crc\" field.",
        ) from exc
