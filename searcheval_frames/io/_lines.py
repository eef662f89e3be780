"""Text files as line frames: splitting, whitespace fields, and malformed-line reports."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from .. import frames
from ..errors import FileFormatError
from ._common import MAX_REPORTED, encoding_hint


def line_table(data: bytes, path: Path) -> pl.DataFrame:
    """One row per physical line: ``line_no`` (1-based) and ``text`` (no newline)."""
    if not data:
        return pl.DataFrame(schema={"line_no": pl.Int64, "text": pl.String})
    if len(data) < (8 << 20):
        # small files (qrels, query sets): Python's split is fast enough, and polars
        # would import pyarrow.compute (~0.1 s) to take the arrow array below
        try:
            pieces = data.decode("utf-8").split("\n")
        except UnicodeDecodeError:
            pieces = None
        if pieces is not None:
            if data.endswith(b"\n"):
                pieces.pop()
            text = pl.Series("text", pieces, dtype=pl.String).str.strip_suffix("\r")
            return pl.DataFrame({"line_no": pl.int_range(1, len(pieces) + 1, eager=True),
                                 "text": text})
    import pyarrow as pa

    buf = np.frombuffer(data, dtype=np.uint8)
    nl = np.flatnonzero(buf == 10)
    ends = nl if data.endswith(b"\n") else np.append(nl, len(data))
    n = len(ends)
    offsets = np.empty(n + 1, dtype=np.int64)
    offsets[0] = 0
    offsets[1:] = ends + 1
    offsets[-1] = min(offsets[-1], len(data))
    arr = pa.LargeStringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))
    try:
        arr.validate(full=True)
    except pa.ArrowInvalid:
        bad = _first_non_utf8_line(data)
        raise FileFormatError(
            "the file is not UTF-8 text", path=str(path), line_no=bad[0], line=bad[1],
            hint=encoding_hint(data),
        ) from None
    text = pl.Series("text", arr).str.strip_suffix("\n").str.strip_suffix("\r")
    return pl.DataFrame({"line_no": pl.int_range(1, n + 1, eager=True), "text": text})


def check_utf8(data: bytes, path: Path) -> None:
    """Raise a FileFormatError naming the first line that is not UTF-8."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        no, line = _first_non_utf8_line(data)
        raise FileFormatError(
            "the file is not UTF-8 text", path=str(path), line_no=no, line=line,
            hint=encoding_hint(data),
        ) from None


def _first_non_utf8_line(data: bytes) -> tuple[int, str]:
    for i, raw in enumerate(data.split(b"\n"), start=1):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            return i, raw.decode("utf-8", errors="replace")
    return 1, ""


def data_lines(lines: pl.DataFrame) -> pl.DataFrame:
    """Drop blank lines and ``#`` comment lines, keeping the original line numbers."""
    stripped = pl.col("text").str.strip_chars_start()
    return lines.filter((stripped != "") & ~stripped.str.starts_with("#"))


def split_fields(df: pl.DataFrame, n: int) -> pl.DataFrame:
    """Add ``nf`` (number of whitespace-separated fields) and ``f0..f{n-1}``.

    Lines whose only whitespace is single spaces between fields (almost all) are
    split on the space directly; the others (tabs, runs of spaces, padding, other
    Unicode whitespace) are first normalised to that form.
    """
    text = pl.col("text")
    messy = text.str.contains(r"[^\S ]|  |^ | $")
    df = df.with_row_index("_o")
    parts = [
        df.filter(~messy),
        df.filter(messy).with_columns(text.str.strip_chars().str.replace_all(r"\s+", " ")),
    ]
    # (rechunked: polars 2.1 panics in pl.format on the two-chunk columns after a filter)
    flat = pl.concat(parts).sort("_o").rechunk() if parts[1].height else parts[0]
    split = flat.select(text.str.splitn(" ", n + 1).alias("_s")).unnest("_s")
    return df.drop("_o").with_columns(
        (flat.get_column("text").str.count_matches(" ", literal=True) + 1)
        .cast(pl.UInt32).alias("nf"),
        *[split.to_series(i).alias(f"f{i}") for i in range(n)],
    )


class Problems:
    """Collects malformed lines; raises one FileFormatError naming the first ones."""

    def __init__(self, path: Path, what: str) -> None:
        self.path = path
        self.what = what
        self.parts: list[pl.DataFrame] = []
        self.line_nos: list[pl.Series] = []

    def add(self, bad: pl.DataFrame, hint: pl.Expr | str) -> None:
        if bad.height:
            h = pl.lit(hint) if isinstance(hint, str) else hint
            self.parts.append(
                bad.head(50).rechunk().select(  # (see split_fields)
                    pl.col("line_no").cast(pl.Int64), pl.col("text"), h.alias("hint")
                )
            )
            self.line_nos.append(bad.get_column("line_no").cast(pl.Int64))

    def raise_if_any(self, line_label: str = "line") -> None:
        if not self.parts:
            return
        allp = pl.concat(self.parts).sort("line_no", maintain_order=True)
        allp = allp.unique("line_no", keep="first", maintain_order=True)
        total = pl.concat(self.line_nos).n_unique()
        first = allp.row(0, named=True)
        msg = f"{total} malformed {line_label}(s) in this {self.what} file; the first: " \
              f"{first['hint']}"
        more = allp.slice(1, MAX_REPORTED - 1)
        if more.height:
            msg += "; also " + "; ".join(
                f"{line_label} {r['line_no']}: {r['hint']} ({r['text']!r})"
                for r in more.iter_rows(named=True)
            )
        raise FileFormatError(
            msg,
            path=str(self.path),
            line_no=first["line_no"],
            line=first["text"],
            hint=_HINT_FIX.get(self.what, ""),
        )


_HINT_FIX = {
    "run": "a TREC run line is `qid iter docno rank score tag` (e.g. `301 Q0 FBIS3-10 1 "
           "12.5 bm25`); fix or delete the line, or pass format='csv'/'tsv' for a file "
           "with a header",
    "qrels": "a TREC qrels line is `qid iter docno relevance` (e.g. `301 0 FBIS3-10 1`) with "
             "an integer relevance; fix or delete the line",
    "queries": "a query line is `qid<TAB>query text`; fix or delete the line",
}


def is_number(col: str) -> pl.Expr:
    """Whether each value of the text column ``col`` is a finite number."""
    return pl.col(col).str.strip_chars().cast(pl.Float64, strict=False).is_not_null() & (
        pl.col(col).str.strip_chars().cast(pl.Float64, strict=False).is_finite()
    )


_INT_RE = r"^\s*[+-]?[0-9]+(\.0*)?\s*$"


def to_int(col: str) -> pl.Expr:
    """An integer field (``3``, ``+3``, ``3.0``) as Int64; null when it is not one or is
    outside the Int64 range (no detour through Float64, which rounds above 2**53)."""
    c = pl.col(col).str.strip_chars()
    return pl.when(c.str.contains(_INT_RE)).then(
        c.str.replace(r"\.0*$", "").cast(pl.Int64, strict=False))


def dup_problems(df: pl.DataFrame, key: list[str], probs: Problems, what: str) -> None:
    """Report duplicated keys with the line of the first occurrence."""
    if df.height == 0:
        return
    if not frames.has_repeats(frames.key_hash(df, key)):
        return
    d = df.with_columns(pl.col("line_no").min().over(key).alias("_first"))
    d = d.filter(pl.col("line_no") != pl.col("_first"))
    probs.add(
        d,
        pl.format(
            "duplicate " + what + ": document {} appears again in query {} (first on line {})",
            pl.col("doc_id"), pl.col("query_id"), pl.col("_first"),
        ),
    )
