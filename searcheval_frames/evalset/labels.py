"""Labelling: label sheets, the append-only label store, merging assessors, agreement.

* :func:`export_label_sheet` / :func:`import_label_sheet`: a pool as a CSV or Parquet
  sheet that a person fills in a spreadsheet, read back with validation into qrels.
* :class:`LabelStore`: an append-only JSON Lines journal, one label per line with the
  assessor and the time, written with ``fsync`` before :meth:`LabelStore.append`
  returns. Reopening resumes; a process killed mid-write loses at most the line being
  written (a torn last line is reported and set aside, earlier lines are never touched).
* :func:`merge_labels`: several assessors' labels → qrels plus a conflict report, with an
  explicit policy (majority, max, min, a preferred assessor); never a silent overwrite.
* :func:`agreement`: raw agreement, Cohen's kappa (plain, linear and quadratic
  weighted) per pair of assessors, Fleiss' kappa over all, confusion matrices.

>>> import searcheval_frames as sef
>>> labels = {"alice": {"q1": {"d1": 1, "d2": 0}}, "bob": {"q1": {"d1": 1, "d2": 1}}}
>>> qrels, conflicts = sef.merge_labels(labels, policy="max")
>>> conflicts.select("doc_id", "alice", "bob", "merged").row(0)
('d2', 0, 1, 1)
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, NamedTuple

import numpy as np
import polars as pl

from ..errors import (
    DuplicateRowsError,
    FileFormatError,
    InvalidRelevanceError,
    MissingColumnError,
    SearchEvalError,
    format_rows,
)
from ..frames import ALIASES, input_kind, qrels_frame, to_native

__all__ = [
    "Agreement",
    "LabelStore",
    "MergeResult",
    "agreement",
    "cohen_kappa",
    "confusion_matrix",
    "export_label_sheet",
    "fleiss_kappa",
    "import_label_sheet",
    "merge_labels",
]

Grades = Sequence[int] | Mapping[str, int] | None

TEXT_COLUMNS = ("text", "body", "contents", "content", "passage", "document", "doc_text")
TITLE_COLUMNS = ("title", "doc_title", "headline")
QUERY_COLUMNS = ("query", "text", "query_text", "question", "title")
ASSESSOR_COLUMNS = ("assessor", "annotator", "rater", "judge", "labeler", "labeller", "user")


# --------------------------------------------------------------------------- grades
def normalize_grades(grades: Grades, arg: str = "grades") -> dict[str, int] | None:
    """``grades`` as {accepted text: grade}; ``None`` accepts any integer.

    A sequence of integers ``[0, 1, 2, 3]`` accepts those numbers; a mapping
    ``{"not relevant": 0, "relevant": 1}`` accepts the names (case-insensitive) and the
    numbers.
    """
    if grades is None:
        return None
    out: dict[str, int] = {}
    if isinstance(grades, Mapping):
        items = list(grades.items())
    elif isinstance(grades, str | bytes):
        raise SearchEvalError(f"{arg}={grades!r}: give a list of integers or a mapping name→int")
    else:
        items = [(str(g), g) for g in grades]
    if not items:
        raise SearchEvalError(f"{arg}: at least one grade is needed, e.g. grades=[0, 1, 2, 3]")
    for name, value in items:
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise SearchEvalError(
                f"{arg}: grade {name!r} has value {value!r}; grades must be integers "
                "(0 = not relevant, 1, 2, ... graded)"
            )
        out[str(name).strip().lower()] = int(value)
        out[str(int(value))] = int(value)
    return out


def grade_names(grades: Grades) -> list[tuple[int, str]]:
    """[(grade, display name)] in grade order, for sheets and the widget."""
    if grades is None:
        return [(0, "0"), (1, "1")]
    if isinstance(grades, Mapping):
        pairs = [(int(v), str(k)) for k, v in grades.items()]
    else:
        pairs = [(int(g), str(int(g))) for g in grades]
    seen: dict[int, str] = {}
    for v, n in pairs:
        seen.setdefault(v, n)
    return sorted(seen.items())


def _parse_label(value: Any, lookup: dict[str, int] | None) -> int | None:
    """A cell's label → int; None for empty; raises ValueError for unknown."""
    if value is None:
        return None
    if isinstance(value, float):
        if value != value:
            return None
        if value != int(value):
            raise ValueError(value)
        value = int(value)
    if isinstance(value, bool):
        raise ValueError(value)
    if isinstance(value, int | np.integer):
        if lookup is not None and str(int(value)) not in lookup:
            raise ValueError(value)
        return int(value)
    text = str(value).strip()
    if not text:
        return None
    key = text.lower()
    if lookup is not None:
        if key in lookup:
            return lookup[key]
        try:
            as_num = float(text)
        except ValueError:
            raise ValueError(value) from None
        if as_num == int(as_num) and str(int(as_num)) in lookup:
            return int(as_num)
        raise ValueError(value)
    as_num = float(text)  # ValueError for words
    if as_num != int(as_num):
        raise ValueError(value)
    return int(as_num)


# --------------------------------------------------------------------------- sheets
def _row_key(query_id: str, doc_id: str) -> str:
    digest = hashlib.blake2b(f"{query_id}\x1f{doc_id}".encode(), digest_size=5).hexdigest()
    return "k" + digest  # the letter keeps spreadsheets from reading it as a number


def _keys(df: pl.DataFrame) -> pl.Series:
    return pl.Series(
        "key",
        [_row_key(q, d) for q, d in zip(df["query_id"], df["doc_id"], strict=True)],
        dtype=pl.String,
    )


def _find_column(df: pl.DataFrame, names: Sequence[str], exclude: Sequence[str] = ()) -> str | None:
    lower = {c.lower(): c for c in reversed(df.columns) if c not in exclude}
    for n in names:
        if n in lower:
            return lower[n]
    return None


def _to_polars_frame(obj: Any, arg: str) -> pl.DataFrame:
    from ..frames import _to_polars

    return _to_polars(obj, arg)


def _id_column(df: pl.DataFrame, canon: str, arg: str) -> str:
    col = _find_column(df, ALIASES[canon])
    if col is None:
        raise MissingColumnError(
            f"{arg}: no {canon!r} column; the columns are {df.columns}. Recognised names: "
            f"{', '.join(ALIASES[canon])}."
        )
    return col


def _queries_table(queries: Any) -> pl.DataFrame:
    if isinstance(queries, Mapping):
        return pl.DataFrame(
            {"query_id": [str(k) for k in queries], "query": [str(v) for v in queries.values()]}
        )
    df = _to_polars_frame(queries, "queries")
    qid = _id_column(df, "query_id", "queries")
    text = _find_column(df, QUERY_COLUMNS, exclude=[qid])
    if text is None:
        raise MissingColumnError(
            f"queries: no query text column; the columns are {df.columns}. Recognised "
            f"names: {', '.join(QUERY_COLUMNS)}."
        )
    return df.select(
        pl.col(qid).cast(pl.String).alias("query_id"), pl.col(text).cast(pl.String).alias("query")
    ).unique("query_id", keep="first")


def _docs_table(
    docs: Any, text_column: str | None, title_column: str | None, max_chars: int | None
) -> pl.DataFrame:
    if isinstance(docs, Mapping):
        df = pl.DataFrame(
            {"doc_id": [str(k) for k in docs], "text": [str(v) for v in docs.values()]}
        )
    else:
        df = _to_polars_frame(docs, "docs")
    did = _id_column(df, "doc_id", "docs")
    text = text_column or _find_column(df, TEXT_COLUMNS, exclude=[did])
    title = title_column or _find_column(df, TITLE_COLUMNS, exclude=[did, text or ""])
    for name, col in (("text_column", text_column), ("title_column", title_column)):
        if col is not None and col not in df.columns:
            raise MissingColumnError(
                f"{name}={col!r}: docs has no such column; it has {df.columns}"
            )
    if text is None and title is None:
        raise MissingColumnError(
            f"docs: no text or title column; the columns are {df.columns}. Pass "
            "text_column='...' (recognised: " + ", ".join(TEXT_COLUMNS) + ")."
        )
    cols = [pl.col(did).cast(pl.String).alias("doc_id")]
    if title is not None:
        cols.append(pl.col(title).cast(pl.String).alias("title"))
    if text is not None:
        t = pl.col(text).cast(pl.String)
        if max_chars is not None:
            t = (
                pl.when(t.str.len_chars() > max_chars)
                .then(t.str.slice(0, max_chars) + pl.lit("…"))
                .otherwise(t)
            )
        cols.append(t.alias("text"))
    return df.select(cols).unique("doc_id", keep="first")


def _pool_pairs(pool: Any, arg: str = "pool") -> pl.DataFrame:
    df = _to_polars_frame(pool, arg)
    qid = _id_column(df, "query_id", arg)
    did = _id_column(df, "doc_id", arg)
    return df.with_columns(
        pl.col(qid).cast(pl.String).alias("query_id"), pl.col(did).cast(pl.String).alias("doc_id")
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
    df = _pool_pairs(pool)
    if df.height == 0:
        warnings.warn("export_label_sheet: the pool is empty; the sheet has no rows", stacklevel=2)
    dup = df.filter(pl.struct("query_id", "doc_id").is_duplicated())
    if dup.height:
        raise DuplicateRowsError(
            f"pool: {dup.height} row(s) repeat a (query_id, doc_id) pair:\n"
            f"{format_rows(dup.select('query_id', 'doc_id'))}\nDrop duplicates first, e.g. "
            "pool.unique(['query_id', 'doc_id'], keep='first')."
        )
    if max_chars is not None and (isinstance(max_chars, bool) or int(max_chars) < 1):
        raise SearchEvalError(f"max_chars={max_chars!r}: must be a positive integer or None")
    out = df.select("query_id", "doc_id").with_row_index("_order")
    if queries is not None:
        out = out.join(_queries_table(queries), on="query_id", how="left")
    if docs is not None:
        out = out.join(
            _docs_table(docs, text_column, title_column, max_chars), on="doc_id", how="left"
        )
        missing = out.filter(
            pl.all_horizontal(pl.col(c).is_null() for c in ("title", "text") if c in out.columns)
        )
        if missing.height:
            warnings.warn(
                f"export_label_sheet: {missing.height} document(s) of the pool are not in "
                f"docs; their text is empty, e.g.\n{format_rows(missing.select('doc_id'))}",
                stacklevel=2,
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
            out.write_parquet(p)
        elif suffix in (".csv", ".tsv", ".txt"):
            out.write_csv(
                p, include_bom=suffix == ".csv", separator="\t" if suffix != ".csv" else ","
            )
        else:
            raise SearchEvalError(
                f"path={str(path)!r}: unknown sheet format {suffix!r}; use .csv, .tsv or .parquet"
            )
    return to_native(out, kind)


def _read_sheet(path: str | os.PathLike[str]) -> pl.DataFrame:
    p = Path(path)
    if not p.exists():
        raise SearchEvalError(f"path={str(path)!r}: no such label sheet")
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
            df = pl.read_csv(raw, separator=sep, infer_schema=False)
        else:
            raise SearchEvalError(
                f"path={str(path)!r}: unknown sheet format {suffix!r}; use .csv, .tsv or .parquet"
            )
    except pl.exceptions.PolarsError as exc:
        raise FileFormatError(
            f"cannot read the label sheet: {exc}",
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
    SearchEvalError
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
    if isinstance(sheet, str | os.PathLike):
        df = _read_sheet(sheet)
        kind = input_kind(df)
        src = f"sheet {str(sheet)!r}"
    else:
        kind = input_kind(sheet)
        df = _to_polars_frame(sheet, "sheet")
        src = "sheet"
    lookup = normalize_grades(grades)
    qid = _id_column(df, "query_id", src)
    did = _id_column(df, "doc_id", src)
    if label_column not in df.columns:
        raise MissingColumnError(
            f"{src}: no {label_column!r} column to read labels from; the columns are "
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
        raise SearchEvalError(
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
            raise SearchEvalError(
                f"{src}: {edited.height} row(s) were edited out of the pool: their query_id/"
                "doc_id no longer match the row's key checksum (edited ids, or a spreadsheet "
                "turned '007' into '7'):\n"
                f"{format_rows(edited.select('row', 'query_id', 'doc_id', 'key'))}\n"
                "Restore the original ids (format the id columns as text) or re-export the sheet."
            )
    if pool is not None:
        pairs = _pool_pairs(pool).select("query_id", "doc_id").unique()
        outside = df.join(pairs, on=["query_id", "doc_id"], how="anti")
        if outside.height:
            raise SearchEvalError(
                f"{src}: {outside.height} row(s) are not in the pool:\n"
                f"{format_rows(outside.select('row', 'query_id', 'doc_id'))}\n"
                "Only label the exported rows; remove rows you added or fix edited ids."
            )
    # labels
    raw = df[label_column].to_list()
    parsed: list[int | None] = []
    bad_rows: list[int] = []
    for i, v in enumerate(raw):
        try:
            parsed.append(_parse_label(v, lookup))
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
    df = df.with_columns(pl.Series("relevance", parsed, dtype=pl.Int64))
    blank = df.filter(pl.col("relevance").is_null())
    if blank.height:
        if unlabelled == "error":
            raise SearchEvalError(
                f"{src}: {blank.height} row(s) have no label:\n"
                f"{format_rows(blank.select('row', 'query_id', 'doc_id'))}\n"
                "Label them or pass unlabelled='skip'."
            )
        if unlabelled != "skip":
            raise SearchEvalError(f"unlabelled={unlabelled!r}: use 'skip' or 'error'")
        warnings.warn(
            f"import_label_sheet: {blank.height} of {df.height} row(s) have no label yet and "
            "were skipped",
            stacklevel=2,
        )
    df = df.filter(pl.col("relevance").is_not_null())
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
            stacklevel=2,
        )
        df = df.unique(key, keep="first", maintain_order=True)
    out = df.select("query_id", "doc_id", "relevance")
    return to_native(out, kind)


# --------------------------------------------------------------------------- store
def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _default_assessor() -> str:
    import getpass

    try:
        return getpass.getuser() or "assessor"
    except Exception:  # no user database (containers)
        return "assessor"


@contextlib.contextmanager
def _locked(fd: int):
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
    "time"}`` with a single ``write`` under an exclusive file lock, then ``fsync``; when
    it returns, the label is on disk. Lines are never rewritten: a new label for the same
    (query, document, assessor) supersedes the older one, :meth:`remove` appends a
    retraction (``label: null``). Opening the file again resumes where the assessor
    stopped. A writer killed mid-line leaves a torn last line: it is ignored and reported
    on open (:attr:`torn`), and moved to ``<path>.torn`` before the next append, so no
    complete label is ever lost or corrupted.

    Parameters
    ----------
    path
        The journal file (created if missing), e.g. ``"labels/alice.jsonl"``.
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
        path: str | os.PathLike[str],
        *,
        assessor: str | None = None,
        grades: Grades = None,
    ) -> None:
        self.path = Path(path)
        self.assessor = str(assessor) if assessor is not None else _default_assessor()
        self.grades = grades
        self._lookup = normalize_grades(grades)
        self._fd: int | None = None
        self._offset = 0
        self._records: list[dict[str, Any]] = []
        #: torn trailing bytes found when the journal was read (a writer died mid-line)
        self.torn: bytes | None = None
        if self.path.exists() and self.path.is_dir():
            raise SearchEvalError(f"path={str(path)!r} is a directory; give a file name")
        self._refresh()
        if self.torn is not None:
            warnings.warn(
                f"LabelStore: {self.path} ends with an incomplete line ({len(self.torn)} bytes, "
                "a writer was interrupted); it is ignored and will be moved to "
                f"{self.path.name}.torn on the next append. All complete labels are intact.",
                stacklevel=2,
            )

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
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                rec = {
                    "query_id": str(rec["query_id"]),
                    "doc_id": str(rec["doc_id"]),
                    "label": None if rec.get("label") is None else int(rec["label"]),
                    "assessor": str(rec.get("assessor") or ""),
                    "time": str(rec.get("time") or ""),
                }
            except (ValueError, KeyError, TypeError) as exc:
                raise FileFormatError(
                    f"label journal has a damaged line ({exc})",
                    path=str(self.path),
                    line_no=line_no,
                    line=line.decode("utf-8", "replace")[:200],
                    hint="a line in the middle was edited by hand; fix or delete that line "
                    "(the other lines are intact)",
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
            merged, _ = merge_labels(lab, policy=policy, prefer=prefer)
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

    def _write(self, rec: dict[str, Any]) -> None:
        line = (json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        fd = self._open()
        with _locked(fd):
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
    ) -> dict[str, Any]:
        """Record one label now (written and fsync-ed before returning).

        ``label`` is an integer (or a grade name when ``grades`` is a mapping). Returns the
        record written.
        """
        try:
            value = _parse_label(label, self._lookup)
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
                raise SearchEvalError(f"{name}={v!r}: an id is needed to store a label")
        rec = {
            "query_id": str(query_id),
            "doc_id": str(doc_id),
            "label": value,
            "assessor": self.assessor if assessor is None else str(assessor),
            "time": _now(),
        }
        self._write(rec)
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
        df = _pool_pairs(pool)
        who = self.assessor if assessor is None else str(assessor)
        done = self.labels().filter(pl.col("assessor") == who).select("query_id", "doc_id")
        return to_native(df.join(done, on=["query_id", "doc_id"], how="anti"), kind)

    def progress(self, pool: Any, *, assessor: str | None = None) -> Any:
        """Per query of ``pool``: ``query_id, total, labelled, fraction`` (for ``assessor``)."""
        kind = input_kind(pool)
        df = _pool_pairs(pool).select("query_id", "doc_id").unique(maintain_order=True)
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
        tmp = target.with_name(target.name + ".tmp")
        self.labels().write_parquet(tmp)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, target)
        return target

    def write_qrels(self, path: str | os.PathLike[str], **qrels_kwargs: Any) -> Path:
        """Write :meth:`qrels` as a TREC qrels file ``query_id 0 doc_id relevance``."""
        q = self.qrels(**qrels_kwargs)
        target = Path(path)
        tmp = target.with_name(target.name + ".tmp")
        text = "".join(f"{a} 0 {b} {c}\n" for a, b, c in q.iter_rows())
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
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


# --------------------------------------------------------------------------- merging
def _long_labels(labels: Any, arg: str = "labels") -> tuple[pl.DataFrame, Any]:
    """Any assessors' labels → ``query_id, doc_id, assessor, label`` (+ the output kind)."""
    kind = input_kind(pl.DataFrame())
    if isinstance(labels, LabelStore):
        df = labels.labels().select("query_id", "doc_id", "assessor", "label")
    elif isinstance(labels, str | os.PathLike):
        df = LabelStore(labels).labels().select("query_id", "doc_id", "assessor", "label")
    elif isinstance(labels, Mapping):
        parts = []
        for who, lab in labels.items():
            if isinstance(lab, LabelStore | str | os.PathLike):
                sub, _ = _long_labels(lab, f"{arg}[{who!r}]")
                sub = sub.with_columns(pl.lit(str(who)).alias("assessor"))
            else:
                sub = qrels_frame(lab, arg=f"{arg}[{who!r}]").select(
                    "query_id",
                    "doc_id",
                    pl.lit(str(who)).alias("assessor"),
                    pl.col("relevance").alias("label"),
                )
                kind = input_kind(lab) if not isinstance(lab, Mapping) else kind
            parts.append(sub)
        if not parts:
            raise SearchEvalError(f"{arg}: no assessors given")
        df = pl.concat(parts)
    elif isinstance(labels, list | tuple):
        parts = [_long_labels(x, f"{arg}[{i}]")[0] for i, x in enumerate(labels)]
        if not parts:
            raise SearchEvalError(f"{arg}: no assessors given")
        df = pl.concat(parts)
    else:
        kind = input_kind(labels)
        raw = _to_polars_frame(labels, arg)
        who = _find_column(raw, ASSESSOR_COLUMNS)
        if who is None:
            raise MissingColumnError(
                f"{arg}: no assessor column; the columns are {raw.columns}. Recognised names: "
                f"{', '.join(ASSESSOR_COLUMNS)}; or pass a dict {{assessor: qrels}}."
            )
        q = qrels_frame(raw.drop(who), arg=arg, validate=False)
        df = q.select(
            "query_id",
            "doc_id",
            raw[who].cast(pl.String).alias("assessor"),
            pl.col("relevance").alias("label"),
        )
    df = df.select(
        pl.col("query_id").cast(pl.String),
        pl.col("doc_id").cast(pl.String),
        pl.col("assessor").cast(pl.String),
        pl.col("label").cast(pl.Int64),
    )
    key = ["assessor", "query_id", "doc_id"]
    dup = df.filter(pl.struct(key).is_duplicated())
    if dup.height:
        raise DuplicateRowsError(
            f"{arg}: an assessor labels the same document more than once:\n"
            f"{format_rows(dup.sort(key))}\nKeep each assessor's latest label (a LabelStore "
            "does that for you)."
        )
    return df, kind


class MergeResult(NamedTuple):
    """What :func:`merge_labels` returns: ``qrels, conflicts = merge_labels(...)``."""

    qrels: Any
    conflicts: Any


_POLICIES = ("majority", "max", "min", "prefer")


def merge_labels(
    labels: Any,
    policy: Literal["majority", "max", "min", "prefer"] | None = None,
    *,
    prefer: str | Sequence[str] | None = None,
    tie: Literal["max", "min"] | None = None,
) -> MergeResult:
    """Merge several assessors' labels into one qrels, reporting every conflict.

    Parameters
    ----------
    labels
        A dict ``{assessor: qrels}`` (frames, pytrec_eval dicts, :class:`LabelStore`
        objects or journal paths), a list of stores/paths, one :class:`LabelStore`, or a
        long frame with an ``assessor`` column plus ``query_id, doc_id, relevance``.
    policy
        How to settle documents that assessors labelled differently:
        ``None`` (default): conflicts are an error (listing them);
        ``"majority"``: the most frequent label (ties need ``tie=``);
        ``"max"`` / ``"min"``: the highest / lowest label;
        ``"prefer"``: the label of the first assessor in ``prefer`` who labelled it.
    prefer
        Assessor name(s), in order of authority, for ``policy="prefer"``.
    tie
        For ``"majority"``: settle ties by the ``"max"`` or ``"min"`` of the tied labels
        (without it a tie is an error).

    Returns
    -------
    MergeResult
        ``(qrels, conflicts)``. ``qrels``: ``query_id, doc_id, relevance`` for every
        document labelled by anyone. ``conflicts``: one row per document with different
        labels: ``query_id, doc_id``, one column per assessor (null where they did not
        label it), ``merged`` and ``rule`` (how it was settled).

    Examples
    --------
    >>> import searcheval_frames as sef
    >>> labels = {"a": {"q1": {"d1": 2}}, "b": {"q1": {"d1": 0}}, "c": {"q1": {"d1": 2}}}
    >>> qrels, conflicts = sef.merge_labels(labels, policy="majority")
    >>> qrels.rows(), conflicts["rule"].to_list()
    ([('q1', 'd1', 2)], ['majority'])
    """
    if policy is not None and policy not in _POLICIES:
        raise SearchEvalError(
            f"policy={policy!r}: use 'majority', 'max', 'min' or 'prefer' (with prefer=...), "
            "or None to refuse conflicts"
        )
    if tie is not None and tie not in ("max", "min"):
        raise SearchEvalError(f"tie={tie!r}: use 'max' or 'min'")
    df, kind = _long_labels(labels)
    assessors = df["assessor"].unique(maintain_order=True).sort().to_list()
    prefer_list: list[str] = []
    if policy == "prefer":
        if prefer is None:
            raise SearchEvalError(
                "policy='prefer' needs prefer='name' (or a list, in order of authority); the "
                f"assessors are {assessors}"
            )
        prefer_list = [prefer] if isinstance(prefer, str) else [str(p) for p in prefer]
        unknown = [p for p in prefer_list if p not in assessors]
        if unknown:
            raise SearchEvalError(
                f"prefer={prefer!r}: no labels by {unknown}; the assessors are {assessors}"
            )
    reserved = {"query_id", "doc_id", "merged", "rule"}
    clash = [a for a in assessors if a in reserved]
    if clash:
        raise SearchEvalError(
            f"labels: assessor name(s) {clash} clash with report columns; rename the assessors"
        )
    key = ["query_id", "doc_id"]
    stats = df.group_by(key, maintain_order=True).agg(
        pl.col("label").n_unique().alias("_n"),
        pl.col("label").max().alias("_max"),
        pl.col("label").min().alias("_min"),
    )
    agreed = stats.filter(pl.col("_n") == 1).select(*key, pl.col("_max").alias("relevance"))
    conflict_keys = stats.filter(pl.col("_n") > 1).select(key)
    wide = df.join(conflict_keys, on=key, how="semi").pivot(
        on="assessor", index=key, values="label", aggregate_function=None
    )
    for a in assessors:
        if a not in wide.columns:
            wide = wide.with_columns(pl.lit(None, dtype=pl.Int64).alias(a))
    wide = wide.select(*key, *assessors).sort(key)
    if wide.height and policy is None:
        raise SearchEvalError(
            f"labels: {wide.height} document(s) got different labels from different "
            f"assessors:\n{format_rows(wide)}\nChoose how to settle them: "
            "policy='majority' (tie='max'), 'max', 'min', or policy='prefer', prefer='name'. "
            "The conflicts are listed in the second value merge_labels returns."
        )
    conf = df.join(conflict_keys, on=key, how="semi")
    if policy in ("max", "min"):
        agg = pl.col("label").max() if policy == "max" else pl.col("label").min()
        settled = conf.group_by(key).agg(agg.alias("merged"), pl.lit(policy).alias("rule"))
    elif policy == "majority":
        counts = conf.group_by([*key, "label"]).agg(pl.len().alias("_c"))
        top = counts.filter(pl.col("_c") == pl.col("_c").max().over(key))
        ties = top.group_by(key).agg(pl.len().alias("_k")).filter(pl.col("_k") > 1)
        if ties.height and tie is None:
            shown = wide.join(ties.select(key), on=key, how="semi")
            raise SearchEvalError(
                f"policy='majority': {ties.height} document(s) have no majority (a tie):\n"
                f"{format_rows(shown)}\nPass tie='max' or tie='min', or use policy='prefer'."
            )
        pick = pl.col("label").max() if tie != "min" else pl.col("label").min()
        settled = top.group_by(key).agg(
            pick.alias("merged"),
            pl.when(pl.len() > 1)
            .then(pl.lit(f"majority (tie → {tie})"))
            .otherwise(pl.lit("majority"))
            .alias("rule"),
        )
    elif policy == "prefer":
        order = {a: i for i, a in enumerate(prefer_list)}
        ranked_ = conf.filter(pl.col("assessor").is_in(prefer_list)).with_columns(
            pl.col("assessor").replace_strict(order, return_dtype=pl.Int64).alias("_o")
        )
        settled = (
            ranked_.sort("_o")
            .group_by(key)
            .agg(
                pl.col("label").first().alias("merged"),
                (pl.lit("prefer ") + pl.col("assessor").first()).alias("rule"),
            )
        )
        unsettled = conflict_keys.join(settled.select(key), on=key, how="anti")
        if unsettled.height:
            shown = wide.join(unsettled, on=key, how="semi")
            raise SearchEvalError(
                f"policy='prefer': {unsettled.height} conflicting document(s) were not "
                f"labelled by any of {prefer_list}:\n{format_rows(shown)}\nAdd more names "
                "to prefer= or use another policy."
            )
    else:
        settled = pl.DataFrame(
            schema={
                "query_id": pl.String,
                "doc_id": pl.String,
                "merged": pl.Int64,
                "rule": pl.String,
            }
        )
    conflicts = wide.join(settled.select(*key, "merged", "rule"), on=key, how="left").sort(key)
    first_seen = df.select(key).unique(maintain_order=True).with_row_index("_o")
    qrels = (
        pl.concat([agreed, settled.select(*key, pl.col("merged").alias("relevance"))])
        .join(first_seen, on=key, how="left")
        .sort("_o")
        .drop("_o")
    )
    return MergeResult(to_native(qrels, kind), to_native(conflicts, kind))


# --------------------------------------------------------------------------- agreement
def confusion_matrix(
    a: Sequence[int] | np.ndarray,
    b: Sequence[int] | np.ndarray,
    categories: Sequence[int] | np.ndarray,
) -> np.ndarray:
    """Counts ``m[i, j]``: items labelled ``categories[i]`` by a and ``categories[j]`` by b."""
    cats = np.asarray(categories)
    ia = np.searchsorted(cats, np.asarray(a))
    ib = np.searchsorted(cats, np.asarray(b))
    m = np.zeros((len(cats), len(cats)), dtype=np.int64)
    np.add.at(m, (ia, ib), 1)
    return m


def cohen_kappa(
    a: Sequence[int] | np.ndarray,
    b: Sequence[int] | np.ndarray,
    *,
    weights: Literal["linear", "quadratic"] | None = None,
    categories: Sequence[int] | None = None,
) -> float:
    """Cohen's kappa of two assessors' labels on the same items (optionally weighted).

    Weighted kappa uses disagreement weights ``|i - j|`` (linear) or ``(i - j)**2``
    (quadratic) over the grade values; ``categories`` defaults to every integer between
    the smallest and the largest label, so that 0 vs 3 weighs three times 0 vs 1. Returns
    NaN when chance agreement is 1 (both give one and the same label throughout).

    >>> cohen_kappa([0, 1, 1, 0], [0, 1, 0, 0])
    0.5
    """
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    if a.shape != b.shape or a.ndim != 1:
        raise SearchEvalError("cohen_kappa: a and b must be 1-d sequences of the same length")
    if a.size == 0:
        return float("nan")
    if categories is None:
        lo, hi = int(min(a.min(), b.min())), int(max(a.max(), b.max()))
        cats = np.arange(lo, hi + 1)
    else:
        cats = np.unique(np.asarray(categories, dtype=np.int64))
        if not np.isin(a, cats).all() or not np.isin(b, cats).all():
            raise SearchEvalError("cohen_kappa: a label is not among categories")
    m = confusion_matrix(a, b, cats).astype(np.float64)
    n = m.sum()
    expected = np.outer(m.sum(axis=1), m.sum(axis=0)) / n
    if weights is None:
        w = 1.0 - np.eye(len(cats))
    elif weights in ("linear", "quadratic"):
        diff = np.abs(cats[:, None] - cats[None, :]).astype(np.float64)
        w = diff if weights == "linear" else diff**2
    else:
        raise SearchEvalError(f"weights={weights!r}: use None, 'linear' or 'quadratic'")
    denom = float((w * expected).sum())
    if denom == 0.0:
        return float("nan")
    return float(1.0 - (w * m).sum() / denom)


def fleiss_kappa(counts: np.ndarray | Sequence[Sequence[int]]) -> float:
    """Fleiss' kappa from an items × categories table of counts (same raters per item).

    >>> round(fleiss_kappa([[2, 0], [0, 2], [1, 1]]), 6)  # 3 items, 2 raters each
    0.333333
    """
    t = np.asarray(counts, dtype=np.float64)
    if t.ndim != 2 or t.shape[0] == 0:
        raise SearchEvalError("fleiss_kappa: counts must be a non-empty items × categories table")
    raters = t.sum(axis=1)
    if not np.all(raters == raters[0]) or raters[0] < 2:
        raise SearchEvalError(
            "fleiss_kappa: every item needs the same number (>= 2) of ratings; keep only the "
            "items all assessors labelled"
        )
    m = raters[0]
    n_items = t.shape[0]
    p_item = ((t * t).sum(axis=1) - m) / (m * (m - 1))
    p_bar = p_item.mean()
    p_cat = t.sum(axis=0) / (n_items * m)
    p_e = float((p_cat**2).sum())
    if p_e == 1.0:
        return float("nan")
    return float((p_bar - p_e) / (1.0 - p_e))


@dataclass
class Agreement:
    """Agreement between assessors, from :func:`agreement`.

    Attributes
    ----------
    pairs
        One row per pair of assessors: ``assessor_a, assessor_b, n_items`` (documents
        both labelled), ``raw_agreement``, ``cohen_kappa``, ``weighted_kappa_linear``,
        ``weighted_kappa_quadratic``.
    fleiss_kappa
        Fleiss' kappa over the documents every assessor labelled (NaN if none).
    fleiss_items
        How many documents that is.
    assessors, categories
        The assessors (sorted) and the grade values used.
    """

    pairs: Any
    fleiss_kappa: float
    fleiss_items: int
    assessors: list[str]
    categories: list[int]
    _long: pl.DataFrame = field(repr=False)
    _kind: Any = field(repr=False)

    def confusion(self, a: str | None = None, b: str | None = None) -> Any:
        """Confusion matrix of two assessors (default: the first pair) as a frame.

        Rows: ``a``'s label (column named after ``a``); columns ``"<b>=<grade>"``: counts
        of documents both labelled.
        """
        if a is None and b is None:
            if len(self.assessors) < 2:
                raise SearchEvalError("confusion: needs two assessors")
            a, b = self.assessors[0], self.assessors[1]
        for name, who in (("a", a), ("b", b)):
            if who not in self.assessors:
                raise SearchEvalError(f"{name}={who!r}: not an assessor; they are {self.assessors}")
        xa, xb = _paired(self._long, str(a), str(b))
        m = confusion_matrix(xa, xb, self.categories)
        out = pl.DataFrame({str(a): self.categories}).with_columns(
            pl.Series(f"{b}={c}", m[:, j]) for j, c in enumerate(self.categories)
        )
        return to_native(out, self._kind)

    def __repr__(self) -> str:
        return (
            f"Agreement({len(self.assessors)} assessors, fleiss_kappa={self.fleiss_kappa:.4f} "
            f"on {self.fleiss_items} documents)\n{self.pairs!r}"
        )


def _paired(df: pl.DataFrame, a: str, b: str) -> tuple[np.ndarray, np.ndarray]:
    key = ["query_id", "doc_id"]
    la = df.filter(pl.col("assessor") == a).select(*key, pl.col("label").alias("a"))
    lb = df.filter(pl.col("assessor") == b).select(*key, pl.col("label").alias("b"))
    both = la.join(lb, on=key, how="inner").sort(key)
    return both["a"].to_numpy(), both["b"].to_numpy()


def agreement(labels: Any, *, grades: Sequence[int] | None = None) -> Agreement:
    """Inter-assessor agreement: raw agreement, Cohen's and weighted kappa, Fleiss' kappa.

    Parameters
    ----------
    labels
        Several assessors' labels, as for :func:`merge_labels` (dict ``{assessor:
        qrels}``, stores, journal paths or a frame with an ``assessor`` column).
    grades
        The grade scale (e.g. ``[0, 1, 2, 3]``); default: every integer from the lowest
        to the highest label seen. Weighted kappas weigh disagreements by grade distance.

    Returns
    -------
    Agreement
        ``.pairs`` (a frame, one row per pair of assessors), ``.fleiss_kappa`` (over the
        documents all assessors labelled), ``.confusion(a, b)`` (a frame).

    Examples
    --------
    >>> import searcheval_frames as sef
    >>> labels = {"a": {"q1": {"d1": 1, "d2": 0, "d3": 1, "d4": 0}},
    ...           "b": {"q1": {"d1": 1, "d2": 0, "d3": 0, "d4": 0}}}
    >>> ag = sef.agreement(labels)
    >>> ag.pairs.select("raw_agreement", "cohen_kappa").row(0)
    (0.75, 0.5)
    """
    df, kind = _long_labels(labels)
    assessors = sorted(df["assessor"].unique().to_list())
    if len(assessors) < 2:
        raise SearchEvalError(f"labels: agreement needs at least two assessors; found {assessors}")
    if grades is not None:
        cats = sorted({int(g) for g in grades})
        outside = df.filter(~pl.col("label").is_in(cats))
        if outside.height:
            raise InvalidRelevanceError(
                f"labels: {outside.height} label(s) are not in grades={list(grades)}:\n"
                f"{format_rows(outside)}"
            )
    else:
        lo, hi = df["label"].min(), df["label"].max()
        cats = list(range(int(lo), int(hi) + 1))  # type: ignore[arg-type]
    rows = []
    for i, a in enumerate(assessors):
        for b in assessors[i + 1 :]:
            xa, xb = _paired(df, a, b)
            n = int(xa.size)
            if n == 0:
                raw = ck = kl = kq = float("nan")
            else:
                raw = float((xa == xb).mean())
                ck = cohen_kappa(xa, xb, categories=cats)
                kl = cohen_kappa(xa, xb, weights="linear", categories=cats)
                kq = cohen_kappa(xa, xb, weights="quadratic", categories=cats)
            rows.append((a, b, n, raw, ck, kl, kq))
    pairs = pl.DataFrame(
        rows,
        schema={
            "assessor_a": pl.String,
            "assessor_b": pl.String,
            "n_items": pl.Int64,
            "raw_agreement": pl.Float64,
            "cohen_kappa": pl.Float64,
            "weighted_kappa_linear": pl.Float64,
            "weighted_kappa_quadratic": pl.Float64,
        },
        orient="row",
    )
    key = ["query_id", "doc_id"]
    full = df.filter(pl.len().over(key) == len(assessors))
    if full.height:
        counts = (
            full.group_by([*key, "label"])
            .agg(pl.len().alias("c"))
            .pivot(on="label", index=key, values="c")
            .fill_null(0)
        )
        label_cols = [c for c in counts.columns if c not in key]
        fk = fleiss_kappa(counts.select(label_cols).to_numpy())
        n_full = counts.height
    else:
        fk, n_full = float("nan"), 0
    return Agreement(
        pairs=to_native(pairs, kind),
        fleiss_kappa=fk,
        fleiss_items=n_full,
        assessors=assessors,
        categories=cats,
        _long=df,
        _kind=kind,
    )
