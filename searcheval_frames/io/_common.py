"""Shared pieces of the io package: paths, bytes (gzip), format detection, options.

Also the column lookup (:func:`find_alias`, :func:`as_str`) that the table, query
and writer modules share.
"""

from __future__ import annotations

import gzip
import os
import re
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import polars as pl

from .. import frames
from ..errors import FileAccessError, FileFormatError, MissingColumnError
from ..options import check_choice, option_error

PathLike = str | os.PathLike[str]
Backend = Literal["polars", "pandas"]
Format = Literal["trec", "csv", "tsv", "parquet", "jsonl"]

_FORMATS = ("trec", "csv", "tsv", "parquet", "jsonl")
EXTENSIONS = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".csv": "csv",
    ".tsv": "tsv",
}
#: Extensions dropped when a file name becomes a run name.
_NAME_EXT = (".gz", ".run", ".runs", ".txt", ".trec", ".res", ".tsv", ".csv", ".parquet",
             ".pq", ".jsonl", ".ndjson", ".json", ".qrels")
MAX_REPORTED = 3
#: The UTF-8 byte order mark some editors put at the start of a text file.
_BOM = b"\xef\xbb\xbf"

QUERY_ID_ALIASES = (*frames.ALIASES["query_id"], "id", "_id", "num", "number", "qno")
QUERY_TEXT_ALIASES = ("query", "text", "title", "query_text", "question", "querytext",
                      "query_string")


def read_bytes(path: Path) -> bytes:
    """The file's bytes, gunzipped when compressed; a missing file or a folder is a
    :class:`FileAccessError` naming it."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise FileAccessError(
            f"{path}: no such file; check the path (relative paths start at {Path.cwd()})",
            path=str(path)) from None
    except IsADirectoryError:
        raise FileAccessError(f"{path}: is a folder, not a file; give the file inside it",
                              path=str(path)) from None
    except OSError as exc:
        raise access_error(exc, path, "read") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise FileFormatError(
                f"gzip data is corrupt ({exc})", path=str(path),
                hint="re-download or re-compress the file",
            ) from None
    data = data[3:] if data[:3] == _BOM else data
    if data[:4] != b"PAR1" and _utf16(data):  # (ASCII as UTF-16 without a BOM is valid UTF-8)
        no = data[: data.index(b"\x00")].count(b"\n") + 1 if b"\x00" in data else 1
        line = data.split(b"\n")[no - 1].decode("utf-8", errors="replace")
        raise FileFormatError("the file is UTF-16, not UTF-8 text", path=str(path),
                              line_no=no, line=line, hint=encoding_hint(data))
    return data


def _utf16(data: bytes) -> bool:
    """A UTF-16 byte order mark, or NUL bytes in a quarter of the first 4 KiB or more
    (ASCII text in UTF-16 is every other byte NUL)."""
    head = data[:4096]
    return head[:2] in (b"\xff\xfe", b"\xfe\xff") or (
        bool(head) and head.count(0) * 4 >= len(head))


def encoding_hint(data: bytes) -> str:
    """How to convert a file that is not UTF-8: UTF-16 (a byte order mark or NUL bytes
    between ASCII characters) needs ``iconv -f utf-16``, not the latin1 of most others."""
    if _utf16(data):
        return ("the file is UTF-16 (as Windows tools write it), not UTF-8: convert it with "
                "`iconv -f utf-16 -t utf-8 in > out` (PowerShell: "
                "`Get-Content in | Set-Content -Encoding utf8 out`)")
    return ("convert it with `iconv -f latin1 -t utf-8` (or the file is binary: "
            "pass format='parquet' for Parquet)")


def check_file(path: Path) -> None:
    """Refuse a missing file, a folder or an unreadable file before reading it."""
    if not path.exists():
        raise FileAccessError(
            f"{path}: no such file; check the path (relative paths start at {Path.cwd()})",
            path=str(path))
    if path.is_dir():
        raise FileAccessError(f"{path}: is a folder, not a file; give the file inside it",
                              path=str(path))
    try:
        with open(path, "rb") as fh:
            fh.read(1)
    except OSError as exc:
        raise access_error(exc, path, "read") from None


def access_error(exc: OSError, path: PathLike, doing: str) -> FileAccessError:
    """An OSError met while reading or writing ``path`` as a :class:`FileAccessError`
    that names ``path`` (not a temporary file) and says what to do."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    if isinstance(exc, PermissionError):
        fix = (f"you may not {doing} it: check its permissions (ls -l) and owner, or "
               f"{doing} another path")
    elif isinstance(exc, IsADirectoryError):
        fix = "it is a folder, not a file; give the file inside it"
    elif isinstance(exc, FileNotFoundError):
        fix = f"check the path (relative paths start at {Path.cwd()})"
    else:
        fix = "check the path, the disk and the file system"
    return FileAccessError(f"{path}: cannot {doing} the file ({reason}); {fix}", path=str(path))


def head_text(path: Path, n: int = 65536) -> str:
    """The first ``n`` bytes of the file (gunzipped) as text, for format detection."""
    check_file(path)
    with open(path, "rb") as fh:
        raw = fh.read(n)
    if raw[:2] == b"\x1f\x8b":
        with gzip.open(path, "rb") as gz:
            try:
                raw = gz.read(n)
            except (OSError, EOFError, zlib.error):
                raw = b""
    if raw[:4] == b"PAR1":
        return "PAR1"
    if raw[:3] == _BOM:
        raw = raw[3:]
    return raw.decode("utf-8", errors="replace")


def file_stem(path: Path) -> str:
    """The file name without its run/data extensions (``bm25.run.gz`` -> ``bm25``)."""
    name = path.name
    changed = True
    while changed:
        changed = False
        for ext in _NAME_EXT:
            if name.lower().endswith(ext) and len(name) > len(ext):
                name = name[: -len(ext)]
                changed = True
    return name


def file_ext(path: Path) -> str:
    """The last extension in lower case, ignoring ``.gz``."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    return suffixes[-1] if suffixes else ""


def first_data_line(head: str) -> str | None:
    """The first line that is neither blank nor a ``#`` comment."""
    for line in head.splitlines():
        s = line.strip()
        if s and not s.startswith("#"):
            return line
    return None


def _looks_like_header(line: str, aliases: Sequence[str]) -> bool:
    tokens = [t.strip().strip('"').strip("'").lower() for t in re.split(r"[,\t;]| +", line)]
    return any(t in aliases for t in tokens if t)


def detect_format(path: PathLike, kind: Literal["run", "qrels", "queries"] = "run") -> str:
    """Guess the format of a file from its extension and its first bytes.

    Parameters
    ----------
    path
        The file.
    kind
        What the file holds: ``"run"``, ``"qrels"`` or ``"queries"``.

    Returns
    -------
    str
        ``"trec"``, ``"csv"``, ``"tsv"``, ``"parquet"`` or ``"jsonl"``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "bm25.run"
    >>> _ = p.write_text("1 Q0 d1 1 2.5 bm25\\n")
    >>> detect_format(p)
    'trec'
    """
    path = Path(path)
    head = head_text(path)
    if head == "PAR1":
        return "parquet"
    ext = EXTENSIONS.get(file_ext(path))
    if ext == "parquet":
        return "parquet"
    first = first_data_line(head)
    if first is None:
        return ext or "trec"
    if kind == "queries" and first.lstrip().startswith("<"):
        return "trec"
    if first.lstrip().startswith("{"):
        return "jsonl"
    aliases = QUERY_ID_ALIASES if kind == "queries" else frames.ALIASES["query_id"]
    header = _looks_like_header(first, aliases)
    if ext in ("csv", "tsv", "jsonl"):
        if ext == "tsv" and not header and kind != "queries":
            return "trec"
        return ext
    if header:
        if "\t" in first:
            return "tsv"
        if "," in first:
            return "csv"
    if kind == "queries" and "\t" in first:
        return "tsv"
    return "trec"


def path_list(path: PathLike | Sequence[PathLike], func: str) -> list[Path]:
    """One path or several as a list; ``func`` (the reader called) names an empty list."""
    if isinstance(path, str | os.PathLike):
        return [Path(path)]
    out = [Path(p) for p in path]
    if not out:
        raise option_error(func, "path", path, "must name at least one file",
                           "path=['bm25.run', 'dense.run']")
    return out


def check_format(fmt: str | None, func: str) -> None:
    """``format=`` of the reader or writer ``func``: a known format, or None to detect it."""
    if fmt is not None:
        check_choice(func, "format", fmt, (*_FORMATS, None),
                     example="format='trec', or None to detect it from the file")


def check_backend(backend: Any, func: str) -> None:
    """``backend=`` of the reader ``func``, checked before the file is read."""
    check_choice(func, "backend", backend, ("polars", "pandas"), example="backend='pandas'")


def as_backend(df: pl.DataFrame, backend: str, func: str) -> Any:
    """``df`` as the ``backend`` the caller of ``func`` asked for."""
    check_backend(backend, func)
    return df.to_pandas() if backend == "pandas" else df


def find_alias(df: pl.DataFrame, canon: str, aliases: Sequence[str],
               columns: Mapping[str, str] | None, taken: set[str]) -> str | None:
    """The column of ``df`` for ``canon``: ``columns[canon]`` if given, else the first of
    ``aliases`` present and not ``taken`` (case-insensitive)."""
    if columns and canon in columns:
        if columns[canon] not in df.columns:
            raise MissingColumnError(
                f"columns= maps {canon!r} to {columns[canon]!r}, but the file has no such "
                f"column; its columns are {df.columns}"
            )
        return columns[canon]
    lower = {c.lower(): c for c in reversed(df.columns)}
    for a in aliases:
        c = lower.get(a)
        if c is not None and c not in taken:
            return c
    return None


def as_str(df: pl.DataFrame, col: str) -> pl.Expr:
    """``col`` as text ids (integral floats without their ``.0``)."""
    dtype = df.schema[col]
    if dtype == pl.String:
        return pl.col(col)
    if dtype.is_float():
        return pl.when(pl.col(col) == pl.col(col).floor()).then(
            pl.col(col).cast(pl.Int64, strict=False).cast(pl.String)
        ).otherwise(pl.col(col).cast(pl.String))
    return pl.col(col).cast(pl.String)
