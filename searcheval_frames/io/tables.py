"""CSV, TSV, JSON Lines and Parquet files as canonical run and qrels frames."""

from __future__ import annotations

import contextlib
import csv
import gzip
import io as _io
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import polars as pl

from .. import frames
from ..errors import EmptyInputError, FileFormatError, MissingColumnError
from ..frames.hazards import nested_hint
from ._common import as_str, check_file, find_alias, read_bytes
from ._lines import Problems, check_utf8, dup_problems, is_number, line_table, to_int


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def row_lines(first: int | pl.Series) -> pl.Expr:
    """The line numbers of a table's rows: from the first row's line on, or as listed."""
    if isinstance(first, pl.Series):
        return pl.lit(first.cast(pl.Int64)).alias("line_no")
    return pl.int_range(first, first + pl.len()).alias("line_no")


def read_table(path: Path, fmt: str) -> tuple[pl.DataFrame, int | pl.Series, str]:
    """Read csv/tsv/jsonl/parquet; return (frame, the first row's line number or every
    row's line number, label)."""
    if fmt == "parquet":
        # pyarrow, not polars' decoder: on corrupt bytes polars panics (a PanicException,
        # not an Exception) or even aborts the process on a huge allocation; pyarrow
        # raises, and full validation catches invalid UTF-8 before polars sees it
        import pyarrow.parquet as pq

        check_file(path)
        try:
            # (ParquetFile, not read_table: that imports pyarrow.dataset and pandas, 0.3 s)
            table = pq.ParquetFile(path).read()
            table.validate(full=True)
            df = pl.from_arrow(table)
        except (Exception, pl.exceptions.PanicException) as exc:
            raise FileFormatError(  # noqa: B904
                f"cannot read Parquet: {str(exc).splitlines()[0] if str(exc) else exc!r}",
                path=str(path), hint="check that the file is Parquet or pass format=")
        assert isinstance(df, pl.DataFrame)
        return df, 1, "row"
    data = read_bytes(path)
    if not data.strip():
        raise EmptyInputError(f"{path}: the file is empty (or only whitespace)")
    check_utf8(data, path)  # (polars names no line)
    if fmt == "jsonl":
        # polars skips blank lines: number the rows by the non-blank lines
        lines = line_table(data, path).filter(pl.col("text").str.strip_chars(" \t\r") != "")
        if data.lstrip()[:1] == b"[":
            try:
                return pl.DataFrame(json.loads(data)), 1, "record"
            except (ValueError, TypeError) as exc:
                raise FileFormatError(f"cannot read JSON: {exc}", path=str(path)) from None
        hint = ('each line of a JSON Lines file is one object like {"query_id": "1", '
                '"doc_id": "d1", "score": 2.5}')
        try:
            df = pl.read_ndjson(_io.BytesIO(data), infer_schema_length=None)
        except Exception as exc:
            for row in lines.iter_rows(named=True):  # (the first line Python rejects)
                try:
                    obj = json.loads(row["text"], parse_constant=_no_constant)
                    if not isinstance(obj, dict):
                        raise ValueError("not a JSON object")
                except ValueError as err:
                    raise FileFormatError(
                        f"not a JSON object ({err})", path=str(path), line_no=row["line_no"],
                        line=row["text"], hint=hint) from None
            raise FileFormatError(f"cannot read JSON Lines: {str(exc).splitlines()[0]}",
                                  path=str(path), hint=hint) from None
        if df.height != lines.height:  # (not expected: then rows are numbered 1, 2, ...)
            return df, 1, "record"
        return df, lines.get_column("line_no"), "line"
    sep = "," if fmt == "csv" else "\t"
    try:
        df = pl.read_csv(_io.BytesIO(data), separator=sep, infer_schema=False,
                         comment_prefix=None, truncate_ragged_lines=False)
    except pl.exceptions.ComputeError as exc:
        no, line = _long_line(data, sep)
        raise FileFormatError(f"cannot parse {fmt.upper()}: {str(exc).splitlines()[0]}",
                              path=str(path), line_no=no, line=line,
                              hint="every row needs as many fields as the header; quote "
                                   "fields that contain the separator") from None
    return df, 2, "line"


def _long_line(data: bytes, sep: str) -> tuple[int | None, str | None]:
    """The first line (after the header) with another number of fields than the header,
    blank lines included (polars names no line; it fails on a longer one)."""
    width = None
    pieces = data.decode("utf-8", errors="replace").split("\n")
    if pieces[-1] == "":
        pieces.pop()
    for no, raw in enumerate(pieces, start=1):
        text = raw[:-1] if raw.endswith("\r") else raw
        try:
            n = len(next(csv.reader([text], delimiter=sep))) if text else 0
        except csv.Error:  # (a lone CR: a field holding a line break)
            n = text.count(sep) + 1
        if width is None:
            width = n
        elif n != width:
            return no, text
    return None, None


def _table_lines(path: Path, line_nos: list[int]) -> dict[int, str]:
    """Text of some lines (error path only)."""
    wanted = set(line_nos)
    out: dict[int, str] = {}
    with open(path, "rb") as fh:
        gz = fh.read(2) == b"\x1f\x8b"
    opener: Callable[..., Any] = gzip.open if gz else open
    with contextlib.suppress(OSError), opener(path, "rt", encoding="utf-8", errors="replace") as fh:
        for i, line in enumerate(fh, start=1):
            if i in wanted:
                out[i] = line.rstrip("\n")
            if i >= max(wanted):
                break
    return out


def found_columns(df: pl.DataFrame, path: Path, fmt: str, kind: str,
                   columns: Mapping[str, str] | None, subtopics: bool = False) -> dict[str, str]:
    """Canonical name -> the table's column (by ``columns=`` or the known aliases)."""
    wanted = ("query_id", "doc_id") + (("relevance",) if kind == "qrels" else ())
    optional = ("score", "rank", "run") if kind == "run" else ("subtopic",) if subtopics else ()
    found: dict[str, str] = {}
    taken: set[str] = set()
    for canon in wanted + optional:
        c = find_alias(df, canon, frames.ALIASES[canon], columns, taken)
        if c is not None:
            found[canon] = c
            taken.add(c)
    missing = [c for c in wanted if c not in found]
    if kind == "run" and "score" not in found and "rank" not in found:
        missing.append("score")
    if missing:
        raise MissingColumnError(
            f"{path}: no column for {', '.join(map(repr, missing))}; the {fmt} columns are "
            f"{df.columns}. Recognised names for {missing[0]!r}: "
            f"{', '.join(frames.ALIASES[missing[0]])}. Rename the column or pass "
            f"columns={{{missing[0]!r}: 'your_column'}}"
        )
    for canon, col in found.items():  # list/struct columns (Parquet, JSON) cannot be cast
        if df.schema[col].is_nested():
            raise FileFormatError(
                f"column {col!r} (the {canon}) has type {df.schema[col]}, not one value per "
                "row", path=str(path), hint=nested_hint(df.schema[col], col).strip())
    return found


def table_canonical(df: pl.DataFrame, path: Path, first_line: int | pl.Series, label: str,
                     fmt: str, kind: str, columns: Mapping[str, str] | None,
                     subtopics: bool = False) -> pl.DataFrame:
    if df.height == 0:
        raise EmptyInputError(f"{path}: the file has no rows")
    found = found_columns(df, path, fmt, kind, columns, subtopics)
    # typed columns (Parquet, JSON numbers) stay typed: a float score or an integer label
    # needs no detour through text; text columns are parsed as in a CSV
    typed = {c for c in ("score", "rank", "relevance") if c in found and (
        df.schema[found[c]].is_numeric() if c == "score" else df.schema[found[c]].is_integer())}
    sel = [row_lines(first_line)]
    for canon, col in found.items():
        if canon in typed:
            dtype = pl.Float64 if canon == "score" else pl.Int64
            sel.append(pl.col(col).cast(dtype, strict=False).alias(canon))
        else:
            sel.append(as_str(df, col).alias(canon))
    raw = df.select(sel)
    # the text of a row, shown in error messages: built only for the rows reported
    text = pl.concat_str([pl.col(c).cast(pl.String).fill_null("") for c in found],
                         separator="," if fmt == "csv" else "\t").alias("text")
    probs = Problems(path, kind)

    def add(bad: pl.DataFrame, hint: Any) -> None:
        probs.add(bad.with_columns(text), hint)

    for c in ("query_id", "doc_id", "run"):  # (a short row has nulls at its end)
        if c in found:
            add(raw.filter(pl.col(c).is_null() | (pl.col(c).str.strip_chars() == "")),
                f"the {found[c]!r} field is empty")
    shown: dict[str, pl.Expr] = {c: pl.col(c).cast(pl.String).fill_null("(missing)")
                                 for c in ("score", "rank", "relevance") if c in found}
    if kind == "run":
        for c in ("score", "rank"):
            if c not in found:
                continue
            if c == "score":
                ok = pl.col(c).is_finite() if c in typed else is_number(c)
                add(raw.filter(~ok.fill_null(False)),
                    pl.format("the score {} is not a number", shown[c]))
            else:
                ok = pl.col(c).is_not_null() if c in typed else to_int(c).is_not_null()
                add(raw.filter(~ok), pl.format(
                    "the rank {} is not an integer (in the Int64 range)", shown[c]))
    else:
        ok = (pl.col("relevance").is_not_null() if "relevance" in typed
              else to_int("relevance").is_not_null())
        add(raw.filter(~ok), pl.format(
            "the relevance {} is not an integer (in the Int64 range)", shown["relevance"]))
    if not probs.parts:
        key: list[str] = [c for c in ("run", "query_id", "doc_id", "subtopic") if c in found]
        if frames.has_repeats(frames.key_hash(raw, key)):  # (rare: text only then)
            dup_problems(raw.with_columns(text), key, probs,
                          "document" if kind == "run" else "judgment")
    if probs.parts and fmt in ("csv", "tsv", "jsonl"):
        # replace reconstructed text with the real lines of the file
        nos = [int(n) for p in probs.parts for n in p["line_no"]]
        real = _table_lines(path, nos)
        probs.parts = [p.with_columns(pl.col("line_no").replace_strict(
            real, default=None, return_dtype=pl.String).fill_null(pl.col("text")).alias("text"))
            for p in probs.parts]
    probs.raise_if_any(label)
    out = raw.drop("line_no")
    if kind == "run":
        if "score" in found and "score" not in typed:
            out = out.with_columns(pl.col("score").str.strip_chars().cast(pl.Float64))
        if "rank" in found and "rank" not in typed:
            out = out.with_columns(to_int("rank"))
        if "score" not in found:
            out = out.with_columns((-pl.col("rank").cast(pl.Float64)).alias("score"))
        out = out.rename({"run": "tag"}) if "run" in out.columns else out
    elif "relevance" not in typed:
        out = out.with_columns(to_int("relevance"))
    return out
