"""Label sheets: a pool as a CSV or Parquet sheet to fill in, read back into qrels.

* :func:`export_label_sheet` writes one row per (query, document) with a blank label and
  a ``key`` checksum of the ids.
* :func:`import_label_sheet` reads the filled sheet back with validation: edited ids,
  rows outside the pool, unknown labels and conflicting repeats are errors naming the
  sheet row.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
import re
import warnings
from pathlib import Path
from typing import Any, Literal

import polars as pl

from .._deprecation import outside_stacklevel
from ..errors import (
    DuplicateRowsError,
    FileAccessError,
    FileFormatError,
    IdMismatchError,
    InvalidOptionError,
    InvalidRelevanceError,
    MissingColumnError,
    SearchEvalWarning,
    format_rows,
)
from ..frames import input_kind, to_native, to_polars
from ..io.texts import queries_table
from ..io.write import atomic_write
from ._labels import docs_texts, id_column, parse_label, pool_pairs
from .grades import Grades, grade_names, normalize_grades

__all__ = ["export_label_sheet", "import_label_sheet"]


def _row_key(query_id: str, doc_id: str) -> str:
    digest = hashlib.blake2b(f"{query_id}\x1f{doc_id}".encode(), digest_size=5).hexdigest()
    return "k" + digest  # the letter keeps spreadsheets from reading it as a number


def _keys(df: pl.DataFrame) -> pl.Series:
    return pl.Series(
        "key",
        [_row_key(q, d) for q, d in zip(df["query_id"], df["doc_id"], strict=True)],
        dtype=pl.String,
    )


def export_label_sheet(
    pool: Any,
    path: str | os.PathLike[str] | None = None,
    *,
    queries: Any = None,
    docs: Any = None,
    text_column: str | None = None,
    title_column: str | None = None,
    max_chars: int | None = 2000,
    label_column: str = "label",
) -> Any:
    """Write a pool as a sheet to fill in: one row per (query, document), a blank label.

    Parameters
    ----------
    pool
        A frame with ``query_id`` and ``doc_id`` (e.g. :func:`searcheval_frames.pool`).
        Its order is kept.
    path
        ``.csv`` (UTF-8 with a byte-order mark so that spreadsheet programs show accents
        right), ``.tsv`` or ``.parquet``; ``None`` only returns the frame.
    queries
        Query texts: a frame with ``query_id`` and ``query`` (or ``text``), or a dict.
    docs
        Document table with ``doc_id`` and ``text``/``title`` columns, or a dict
        ``{doc_id: text}``.
    text_column, title_column
        The document columns to show, when not ``text``/``title``.
    max_chars
        Cut long documents to this many characters (spreadsheet cells hold 32767); ``None``
        keeps them whole.
    label_column
        Name of the column to fill in.

    Returns
    -------
    DataFrame (the kind of ``pool``)
        ``query_id, doc_id`` [``query``] [``title``] [``text``], ``label`` (empty),
        ``notes`` (empty) and ``key``: a checksum of (query_id, doc_id) with which
        :func:`import_label_sheet` detects rows whose ids were edited (or mangled by a
        spreadsheet, e.g. ``007`` → ``7``).

    Examples
    --------
    >>> import polars as pl, searcheval_frames as sef
    >>> pool = pl.DataFrame({"query_id": ["q1"], "doc_id": ["d1"]})
    >>> sheet = sef.export_label_sheet(pool, queries={"q1": "what is bm25"},
    ...                                docs={"d1": "BM25 is a ranking function."})
    >>> sheet.columns
    ['query_id', 'doc_id', 'query', 'text', 'label', 'notes', 'key']
    """
    kind = input_kind(pool)
    df = pool_pairs(pool)
    if df.height == 0:
        warnings.warn("export_label_sheet: the pool is empty; the sheet has no rows",
                      SearchEvalWarning, stacklevel=outside_stacklevel())
    dup = df.filter(pl.struct("query_id", "doc_id").is_duplicated())
    if dup.height:
        raise DuplicateRowsError(
            f"pool: {dup.height} row(s) repeat a (query_id, doc_id) pair:\n"
            f"{format_rows(dup.select('query_id', 'doc_id'))}\nDrop duplicates first, e.g. "
            "pool.unique(['query_id', 'doc_id'], keep='first')."
        )
    if max_chars is not None and (isinstance(max_chars, bool) or int(max_chars) < 1):
        raise InvalidOptionError(f"max_chars={max_chars!r}: must be a positive integer or None")
    out = df.select("query_id", "doc_id").with_row_index("_order")
    if queries is not None:
        out = out.join(queries_table(queries), on="query_id", how="left")
    if docs is not None:
        out = out.join(
            docs_texts(docs, text_column, title_column, max_chars), on="doc_id", how="left"
        )
        missing = out.filter(
            pl.all_horizontal(pl.col(c).is_null() for c in ("title", "text") if c in out.columns)
        )
        if missing.height:
            warnings.warn(
                f"export_label_sheet: {missing.height} document(s) of the pool are not in "
                f"docs; their text is empty, e.g.\n{format_rows(missing.select('doc_id'))}",
                SearchEvalWarning,
                stacklevel=outside_stacklevel(),
            )
    out = (
        out.sort("_order")
        .drop("_order")
        .with_columns(
            pl.lit(None, dtype=pl.String).alias(label_column),
            pl.lit(None, dtype=pl.String).alias("notes"),
        )
    )
    out = out.with_columns(_keys(out))
    if path is not None:
        p = Path(path)
        suffix = p.suffix.lower()
        if suffix == ".parquet":
            atomic_write(p, lambda fh: out.write_parquet(fh))
        elif suffix in (".csv", ".tsv", ".txt"):
            atomic_write(p, lambda fh: out.write_csv(
                fh, include_bom=suffix == ".csv", separator="\t" if suffix != ".csv" else ","
            ))
        else:
            raise FileFormatError(
                f"path={str(path)!r}: unknown sheet format {suffix!r}; use .csv, .tsv or .parquet"
            )
    return to_native(out, kind)


def _line(raw: bytes, line_no: int) -> str:
    return raw.split(b"\n")[line_no - 1].rstrip(b"\r").decode("utf-8", "replace")[:200]


def _read_csv(raw: bytes, sep: str, path: Path) -> pl.DataFrame:
    """A CSV/TSV sheet as a frame of strings (empty cells null), checked record by record.

    The csv module reads it because it tracks the line of every record: a row whose
    number of cells differs from the header's (a separator or a quote added or removed)
    is refused with its line, where polars would pad it with nulls or read on after a
    stray quote and shift or swallow labels without a word.
    """
    hint = (
        "a separator or a quote was added or removed in this row (e.g. by editing the "
        "file as text); fix the row, or save the sheet again from the spreadsheet"
    )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_no = raw.count(b"\n", 0, exc.start) + 1
        raise FileFormatError(
            "the label sheet is not UTF-8 text",
            path=str(path),
            line_no=line_no,
            line=_line(raw, line_no),
            hint="save it from the spreadsheet as CSV (UTF-8)",
        ) from exc
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep, strict=True)
    records: list[list[str]] = []
    start = 1
    try:
        for rec in reader:
            if records and rec and len(rec) != len(records[0]):
                raise FileFormatError(
                    f"this row has {len(rec)} cells where the header has {len(records[0])}",
                    path=str(path),
                    line_no=start,
                    line=_line(raw, start),
                    hint=hint,
                )
            records.append(rec)
            start = reader.line_num + 1
    except csv.Error as exc:
        raise FileFormatError(
            f"this row is not valid CSV ({exc})",
            path=str(path),
            line_no=start,
            line=_line(raw, start),
            hint=hint,
        ) from exc
    if not records:
        raise FileFormatError("the label sheet is empty", path=str(path))
    header: list[str] = []
    seen: dict[str, int] = {}
    for name in records[0]:  # repeated names get a suffix, as polars does
        n = seen.get(name, -1) + 1
        seen[name] = n
        header.append(name if n == 0 else f"{name}_duplicated_{n - 1}")
    rows = records[1:]
    return pl.DataFrame(
        {c: [(r[i] or None) if r else None for r in rows] for i, c in enumerate(header)},
        schema=dict.fromkeys(header, pl.String),
    )


_KEY_TOKEN = re.compile(rb"(?<![0-9A-Za-z])k[0-9a-f]{10}(?![0-9A-Za-z])")


def _check_keys_kept(raw: bytes, df: pl.DataFrame, path: Path) -> None:
    """Refuse a sheet in which a row's key is not a cell of the key column.

    That happens when a stray quote or a lost line break joins a row to the one before
    (or to the header): the row is not read as a row of its own and its label would
    vanish.
    """
    keys: set[str] = set()
    if "key" in df.columns:
        keys = set(df.get_column("key").drop_nulls().str.strip_chars().to_list())
    for m in _KEY_TOKEN.finditer(raw):
        if m.group().decode() not in keys:
            line_no = raw.count(b"\n", 0, m.start()) + 1
            raise FileFormatError(
                f"the row key {m.group().decode()!r} is not in the key column: its row is "
                "not read as a row of its own (a stray quote or a lost line break joined it "
                "to the row above)",
                path=str(path),
                line_no=line_no,
                line=_line(raw, line_no),
                hint="restore the line break or remove the stray quote before this line, or "
                "save the sheet again from the spreadsheet",
            )


def _read_sheet(path: str | os.PathLike[str]) -> pl.DataFrame:
    p = Path(path)
    if not p.exists():
        raise FileAccessError(f"path={str(path)!r}: no such label sheet")
    suffix = p.suffix.lower()
    try:
        if suffix == ".parquet":
            df = pl.read_parquet(p)
        elif suffix in (".csv", ".tsv", ".txt"):
            raw = p.read_bytes()
            if raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            sep = "," if suffix == ".csv" else "\t"
            if suffix == ".csv" and raw.split(b"\n", 1)[0].count(b";") > raw.split(b"\n", 1)[
                0
            ].count(b","):
                sep = ";"  # spreadsheets in comma-decimal locales save with semicolons
            df = _read_csv(raw, sep, p)
            _check_keys_kept(raw, df, p)
        else:
            raise FileFormatError(
                f"path={str(path)!r}: unknown sheet format {suffix!r}; use .csv, .tsv or .parquet"
            )
    except (pl.exceptions.PolarsError, pl.exceptions.PanicException) as exc:
        # a damaged Parquet file can make the decoder panic instead of raising
        raise FileFormatError(
            f"cannot read the label sheet (the file is damaged or not a sheet): {exc}",
            path=str(path),
            hint="save it from the spreadsheet as CSV (UTF-8) or keep the Parquet file",
        ) from exc
    df = df.rename({c: c.strip() for c in df.columns})
    return df


def import_label_sheet(
    sheet: Any,
    *,
    pool: Any = None,
    grades: Grades = (0, 1, 2, 3),
    label_column: str = "label",
    unlabelled: Literal["skip", "error"] = "skip",
) -> Any:
    """Read a filled label sheet back as qrels, refusing anything suspicious.

    Parameters
    ----------
    sheet
        Path of a ``.csv``/``.tsv``/``.parquet`` sheet written by
        :func:`export_label_sheet` (and filled in), or the sheet as a frame.
    pool
        The pool the sheet was made from. When given, rows whose (query_id, doc_id) is
        not in it are an error.
    grades
        Accepted labels: integers (default ``0, 1, 2, 3``) or a mapping such as
        ``{"not relevant": 0, "relevant": 1}`` (names are matched case-insensitively, the
        numbers are accepted too). ``None`` accepts any integer.
    label_column
        The filled-in column.
    unlabelled
        Rows left blank are skipped with a warning (``"skip"``, default) or an error.

    Returns
    -------
    DataFrame
        qrels ``query_id, doc_id, relevance`` (polars for a path, else the kind of
        ``sheet``), in sheet order.

    Raises
    ------
    InvalidRelevanceError
        Labels that are not one of ``grades``.
    IdMismatchError
        Rows edited out of the pool: ids that do not match the sheet's ``key`` checksum,
        or pairs not in ``pool``.
    DuplicateRowsError
        The same (query, document) labelled twice with different labels (identical
        repeats are dropped with a warning).

    Examples
    --------
    >>> import polars as pl, searcheval_frames as sef
    >>> sheet = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"],
    ...                       "label": ["2", ""]})
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")  # one row is still blank
    ...     sef.import_label_sheet(sheet).rows()
    [('q1', 'd1', 2)]
    """
    df, kind, src, header = _sheet_frame(sheet)
    lookup = normalize_grades(grades)
    df = _checked_ids(df, src, header, label_column, pool)
    df = df.with_columns(pl.Series("relevance", _parsed_labels(df, label_column, lookup, grades,
                                                               src), dtype=pl.Int64))
    blank = df.filter(pl.col("relevance").is_null())
    if blank.height:
        if unlabelled == "error":
            raise InvalidRelevanceError(
                f"{src}: {blank.height} row(s) have no label:\n"
                f"{format_rows(blank.select('row', 'query_id', 'doc_id'))}\n"
                "Label them or pass unlabelled='skip'."
            )
        if unlabelled != "skip":
            raise InvalidOptionError(f"unlabelled={unlabelled!r}: use 'skip' or 'error'")
        warnings.warn(
            f"import_label_sheet: {blank.height} of {df.height} row(s) have no label yet and "
            "were skipped",
            SearchEvalWarning,
            stacklevel=outside_stacklevel(),
        )
    return to_native(_deduplicated(df.filter(pl.col("relevance").is_not_null()), src), kind)


def _sheet_frame(sheet: Any) -> tuple[pl.DataFrame, Any, str, str]:
    """The sheet as polars, the kind to give back, its name and where its header is."""
    if isinstance(sheet, str | os.PathLike):
        df = _read_sheet(sheet)
        src = f"sheet {str(sheet)!r}"
        # column problems are in the header row (Parquet: the file's schema)
        parquet = Path(sheet).suffix.lower() == ".parquet"
        return df, input_kind(df), src, f"{src}, {'schema' if parquet else 'header row (line 1)'}"
    return to_polars(sheet, "sheet"), input_kind(sheet), "sheet", "sheet"


def _checked_ids(df: pl.DataFrame, src: str, header: str, label_column: str,
                 pool: Any) -> pl.DataFrame:
    """``row`` (as a spreadsheet numbers it), ``query_id``, ``doc_id`` added; ids that are
    empty, edited (the ``key`` checksum) or outside ``pool`` refused."""
    qid = id_column(df, "query_id", header)
    did = id_column(df, "doc_id", header)
    if label_column not in df.columns:
        raise MissingColumnError(
            f"{header}: no {label_column!r} column to read labels from; the columns are "
            f"{df.columns}. Pass label_column='...' if you renamed it."
        )
    # Row numbers as a spreadsheet shows them: header is row 1.
    df = df.with_row_index("row", offset=2).with_columns(
        pl.col(qid).cast(pl.String).str.strip_chars().alias("query_id"),
        pl.col(did).cast(pl.String).str.strip_chars().alias("doc_id"),
        pl.col("row").cast(pl.Int64),
    )
    # ids
    bad_ids = df.filter(
        pl.col("query_id").is_null()
        | pl.col("doc_id").is_null()
        | (pl.col("query_id") == "")
        | (pl.col("doc_id") == "")
    )
    if bad_ids.height:
        raise IdMismatchError(
            f"{src}: {bad_ids.height} row(s) have an empty query_id or doc_id:\n"
            f"{format_rows(bad_ids.select('row', 'query_id', 'doc_id'))}\n"
            "Restore the ids from the exported sheet or delete those rows."
        )
    if "key" in df.columns:
        edited = df.filter(pl.col("key").is_not_null() & (pl.col("key").str.strip_chars() != ""))
        edited = edited.with_columns(_keys(edited).alias("_expected")).filter(
            pl.col("key").str.strip_chars() != pl.col("_expected")
        )
        if edited.height:
            raise IdMismatchError(
                f"{src}: {edited.height} row(s) were edited out of the pool: their query_id/"
                "doc_id no longer match the row's key checksum (edited ids, or a spreadsheet "
                "turned '007' into '7'):\n"
                f"{format_rows(edited.select('row', 'query_id', 'doc_id', 'key'))}\n"
                "Restore the original ids (format the id columns as text) or re-export the sheet."
            )
    if pool is not None:
        pairs = pool_pairs(pool).select("query_id", "doc_id").unique()
        outside = df.join(pairs, on=["query_id", "doc_id"], how="anti")
        if outside.height:
            raise IdMismatchError(
                f"{src}: {outside.height} row(s) are not in the pool:\n"
                f"{format_rows(outside.select('row', 'query_id', 'doc_id'))}\n"
                "Only label the exported rows; remove rows you added or fix edited ids."
            )
    return df


def _parsed_labels(df: pl.DataFrame, label_column: str, lookup: dict[str, int] | None,
                   grades: Grades, src: str) -> list[int | None]:
    """Each row's label as an integer (None when blank); unknown labels refused."""
    raw = df[label_column].to_list()
    parsed: list[int | None] = []
    bad_rows: list[int] = []
    for i, v in enumerate(raw):
        try:
            parsed.append(parse_label(v, lookup))
        except (ValueError, TypeError, OverflowError):
            parsed.append(None)
            bad_rows.append(i)
    if bad_rows:
        bad = df[bad_rows].select("row", "query_id", "doc_id", pl.col(label_column).cast(pl.String))
        allowed = (
            "any integer"
            if lookup is None
            else ", ".join(f"{n} ({v})" if n != str(v) else n for v, n in grade_names(grades))
        )
        raise InvalidRelevanceError(
            f"{src}: {len(bad_rows)} unknown label(s) in column {label_column!r}:\n"
            f"{format_rows(bad)}\nAllowed labels: {allowed}. Fix the cells or pass grades=."
        )
    return parsed


def _deduplicated(df: pl.DataFrame, src: str) -> pl.DataFrame:
    """``query_id, doc_id, relevance``: repeats with one label dropped (with a warning),
    repeats with different labels refused."""
    key = ["query_id", "doc_id"]
    dup = df.filter(pl.struct(key).is_duplicated())
    if dup.height:
        conflicting = (
            dup.group_by(key).agg(pl.col("relevance").n_unique().alias("n")).filter(pl.col("n") > 1)
        )
        if conflicting.height:
            rows = dup.join(conflicting.select(key), on=key, how="semi").sort([*key, "row"])
            raise DuplicateRowsError(
                f"{src}: {conflicting.height} (query, document) pair(s) are labelled twice "
                f"with different labels:\n"
                f"{format_rows(rows.select('row', 'query_id', 'doc_id', 'relevance'))}\n"
                "Keep one row per pair (or merge assessors with sef.merge_labels)."
            )
        warnings.warn(
            f"import_label_sheet: {dup.height - dup.select(key).unique().height} repeated "
            "row(s) with the same label were dropped",
            SearchEvalWarning,
            stacklevel=outside_stacklevel(),
        )
        df = df.unique(key, keep="first", maintain_order=True)
    return df.select("query_id", "doc_id", "relevance")
