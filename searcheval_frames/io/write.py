"""Writers of runs, qrels and query sets; every file goes through :func:`atomic_write`."""

from __future__ import annotations

import contextlib
import gzip
import os
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import polars as pl

from .. import frames
from ..errors import FileAccessError, MissingColumnError, UnwritableValueError
from ..options import option_error
from ._common import (
    EXTENSIONS,
    QUERY_ID_ALIASES,
    QUERY_TEXT_ALIASES,
    Format,
    PathLike,
    access_error,
    as_str,
    check_format,
    file_ext,
    find_alias,
)


def atomic_write(path: Path, payload: Callable[[Any], None], *, binary: bool = True) -> None:
    """Write through a temporary file in the same folder, fsync, then rename."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.exists():
        raise FileAccessError(f"{path}: the folder {folder} does not exist; create it first",
                              path=str(path))
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:  # name the target, not the temporary file
        raise access_error(exc, path, "write") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            if path.name.lower().endswith(".gz"):
                with gzip.GzipFile(fileobj=fh, mode="wb", filename="", mtime=0) as gz:
                    payload(gz)
            else:
                payload(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):  # name the target, not the temporary file
            raise access_error(exc, path, "write") from None
        raise


def _write_fmt(path: Path, fmt: str | None, default: str, func: str) -> str:
    check_format(fmt, func)
    return fmt or EXTENSIONS.get(file_ext(path), default)


def _no_space(df: pl.DataFrame, cols: Sequence[str], arg: str) -> None:
    for c in cols:
        bad = df.filter(pl.col(c).str.contains(r"\s") | (pl.col(c) == ""))
        if bad.height:
            from ..errors import format_rows

            raise UnwritableValueError(
                f"{arg}: column {c!r} has values that are empty or contain whitespace, which "
                f"the TREC format cannot hold:\n{format_rows(bad)}\nReplace the spaces "
                "(e.g. df.with_columns(pl.col(c).str.replace_all(r'\\s', '_'))) or write "
                "CSV/Parquet/JSONL instead"
            )


def _write_table(df: pl.DataFrame, path: Path, fmt: str) -> None:
    def payload(fh: Any) -> None:
        if fmt == "parquet":
            df.write_parquet(fh)
        elif fmt == "jsonl":
            df.write_ndjson(fh)
        else:
            df.write_csv(fh, separator="," if fmt == "csv" else "\t")

    atomic_write(path, payload)


def _ranked(run: pl.DataFrame, keep_rank: bool) -> pl.DataFrame:
    # each run and query where it first appears (a row number taken before the windows:
    # an int_range inside .over() counts within each group, so its min is always 0)
    first = [pl.col("_i").min().over("run").alias("_r"),
             pl.col("_i").min().over("run", "query_id").alias("_q")]
    df = run.with_columns(pl.int_range(pl.len()).alias("_i")).with_columns(first).drop("_i")
    if keep_rank and "rank" in df.columns:
        return df.sort("_r", "_q", "rank").drop("_r", "_q")
    df = df.sort(["_r", "_q", "score", "doc_id"], descending=[False, False, True, True])
    return df.with_columns(
        pl.int_range(1, pl.len() + 1).over("run", "query_id").cast(pl.Int64).alias("rank")
    ).drop("_r", "_q")


def write_run(
    run: Any,
    path: PathLike,
    *,
    format: Format | None = None,
    keep_rank: bool = False,
    iteration: str = "Q0",
    columns: Mapping[str, str] | None = None,
    name: str | None = None,
) -> Path:
    """Write a run (any frame :func:`~searcheval_frames.frames.run_frame` accepts).

    Parameters
    ----------
    run
        The run; several runs (the ``run`` column) go into one file, each with
        its own tag.
    path
        Target file; the format follows the extension (``.parquet``, ``.jsonl``,
        ``.csv``, ``.tsv``; anything else is TREC), ``.gz`` compresses text.
    format
        Force a format.
    keep_rank
        Keep the ``rank`` column as given. By default ranks are recomputed in
        trec_eval's order (score descending, ties by doc id descending) and rows
        are written in that order.
    iteration
        The second TREC column (``Q0``).
    columns
        Canonical name → your column name.
    name
        Run name when ``run`` has no run column.

    Returns
    -------
    pathlib.Path
        The written file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "bm25.run"
    >>> _ = write_run({"q1": {"d1": 1.0, "d2": 3.0}}, p, name="bm25")
    >>> p.read_text()
    'q1 Q0 d2 1 3.0 bm25\\nq1 Q0 d1 2 1.0 bm25\\n'
    """
    path = Path(path)
    df = frames.run_frame(run, columns=columns, name=name)
    df = _ranked(df, keep_rank)
    fmt = _write_fmt(path, format, "trec", "write_run")
    if fmt == "trec":
        _no_space(df, ["run", "query_id", "doc_id"], "run")
        if re.search(r"\s", iteration) or not iteration:
            raise option_error("write_run", "iteration", iteration, "must be one word",
                               "iteration='Q0'")
        lines = df.select(pl.concat_str(
            [pl.col("query_id"), pl.lit(iteration), pl.col("doc_id"),
             pl.col("rank").cast(pl.String), pl.col("score").cast(pl.String), pl.col("run")],
            separator=" ").alias("line"))
        atomic_write(path, lambda fh: lines.write_csv(fh, include_header=False,
                                                       quote_style="never"))
    else:
        _write_table(df.select("run", "query_id", "doc_id", "rank", "score"), path, fmt)
    return path


def write_qrels(
    qrels: Any,
    path: PathLike,
    *,
    format: Format | None = None,
    iteration: str = "0",
    columns: Mapping[str, str] | None = None,
) -> Path:
    """Write relevance judgments (TREC ``qid 0 docno rel`` unless the extension says otherwise).

    Parameters
    ----------
    qrels
        Any frame :func:`~searcheval_frames.frames.qrels_frame` accepts.
    path
        Target file (``.parquet``, ``.jsonl``, ``.csv``, ``.tsv``, else TREC; ``.gz`` ok).
    format
        Force a format.
    iteration
        The second TREC column (``0``).
    columns
        Canonical name → your column name.

    Returns
    -------
    pathlib.Path
        The written file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "qrels.txt"
    >>> _ = write_qrels({"q1": {"d1": 2}}, p)
    >>> p.read_text()
    'q1 0 d1 2\\n'
    """
    path = Path(path)
    df = frames.qrels_frame(qrels, columns=columns)
    fmt = _write_fmt(path, format, "trec", "write_qrels")
    if fmt == "trec":
        _no_space(df, ["query_id", "doc_id"], "qrels")
        lines = df.select(pl.concat_str(
            [pl.col("query_id"), pl.lit(iteration), pl.col("doc_id"),
             pl.col("relevance").cast(pl.String)], separator=" ").alias("line"))
        atomic_write(path, lambda fh: lines.write_csv(fh, include_header=False,
                                                       quote_style="never"))
    else:
        _write_table(df, path, fmt)
    return path


def write_queries(
    queries: Any,
    path: PathLike,
    *,
    format: Literal["trec", "csv", "tsv", "parquet", "jsonl"] | None = None,
    header: bool | None = None,
) -> Path:
    """Write a query set (``query_id``, ``query`` and optional metadata columns).

    Parameters
    ----------
    queries
        A pandas/polars frame with ``query_id`` and ``query`` columns (aliases
        such as ``qid``/``text`` are recognised), or a dict ``{query_id: text}``.
    path
        Target file. ``.tsv`` writes ``qid<TAB>text`` without a header (TREC DL
        style) when there is no metadata, ``.csv``/``.jsonl``/``.parquet`` as
        named; anything else with ``format="trec"`` writes ``<top>`` topics.
    format
        Force a format.
    header
        For TSV: write a header row (default: only when there are metadata columns).

    Returns
    -------
    pathlib.Path
        The written file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "queries.tsv"
    >>> _ = write_queries({"1": "what is bm25"}, p)
    >>> p.read_text()
    '1\\twhat is bm25\\n'
    """
    path = Path(path)
    if isinstance(queries, Mapping):
        df = pl.DataFrame({"query_id": [str(k) for k in queries],
                           "query": [str(v) for v in queries.values()]})
    else:
        df = frames.to_polars(queries, "queries")
        taken: set[str] = set()
        q = find_alias(df, "query_id", QUERY_ID_ALIASES, None, taken)
        if q:
            taken.add(q)
        t = find_alias(df, "query", QUERY_TEXT_ALIASES, None, taken)
        if q is None or t is None:
            raise MissingColumnError(
                f"queries: needs 'query_id' and 'query' columns; the columns are {df.columns}"
            )
        df = df.select(as_str(df, q).alias("query_id"), as_str(df, t).alias("query"),
                       pl.exclude(q, t))
    fmt = format or EXTENSIONS.get(file_ext(path), "tsv")
    check_format(fmt, "write_queries")
    if fmt == "tsv":
        with_header = header if header is not None else df.width > 2
        bad = df.filter(pl.any_horizontal(pl.col(pl.String).str.contains(r"[\t\n\r]")))
        if bad.height:
            from ..errors import format_rows

            raise UnwritableValueError(
                f"queries: TAB or newline characters inside values cannot be written as TSV:\n"
                f"{format_rows(bad)}\nClean the text or write .jsonl/.parquet"
            )
        atomic_write(path, lambda fh: df.write_csv(fh, separator="\t",
                                                    include_header=with_header,
                                                    quote_style="never"))
    elif fmt == "trec":
        tags = {"query_id": "num", "query": "title", "description": "desc",
                "narrative": "narr"}
        out = []
        for row in df.iter_rows(named=True):
            out.append("<top>\n" + "".join(
                f"<{tags[k]}>{v}</{tags[k]}>\n" for k, v in row.items()
                if k in tags and v is not None) + "</top>\n")
        text = "".join(out).encode()
        atomic_write(path, lambda fh: fh.write(text))
    else:
        _write_table(df, path, fmt)
    return path
