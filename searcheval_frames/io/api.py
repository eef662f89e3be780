"""The public readers of runs and qrels (one or several files, any format)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

import polars as pl

from .. import frames
from ..errors import EmptyInputError
from ..options import check_choice, option_error
from ._common import (
    Backend,
    Format,
    PathLike,
    as_backend,
    check_backend,
    check_format,
    detect_format,
    file_stem,
    path_list,
    read_bytes,
)
from .parquet import fast_parquet_run
from .queries import irds_qrels
from .tables import read_table, table_canonical
from .trec import read_trec_qrels, read_trec_run


def read_run(
    path: PathLike | Sequence[PathLike],
    *,
    format: Format | None = None,
    name: str | Sequence[str] | None = None,
    name_from: Literal["tag", "file"] = "tag",
    columns: Mapping[str, str] | None = None,
    backend: Backend = "polars",
    rank: bool = True,
) -> Any:
    """Read one or several run files into one canonical run frame.

    Parameters
    ----------
    path
        A file, or a list of files read into one frame (each keeps its name in
        the ``run`` column).
    format
        ``"trec"``, ``"csv"``, ``"tsv"``, ``"parquet"`` or ``"jsonl"``; by
        default detected from the extension and the content.
    name
        The run name (one per file for a list), overriding the tag column.
    name_from
        ``"tag"`` (default): the TREC tag column (or a ``run``/``tag``/``system``
        column of a table); files without one are named after the file.
        ``"file"``: always the file name (without ``.gz``/``.run``/``.txt``...).
    columns
        For tables: canonical name → your column name, e.g. ``{"score": "sim"}``.
    backend
        ``"polars"`` (default) or ``"pandas"``.
    rank
        Keep the file's rank column (default). ``rank=False`` skips it, which
        is faster; the evaluation ignores it anyway.

    Returns
    -------
    DataFrame
        ``run, query_id, doc_id, score, rank`` (``rank`` as in the file; the
        evaluation ignores it and orders by score, as trec_eval does).

    Raises
    ------
    FileFormatError
        A malformed line, with the file, the line number, the line and a hint.
    DuplicateRowsError
        Two files give the same run name (pass ``name=`` or ``name_from="file"``).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "bm25.run"
    >>> _ = p.write_text("1 Q0 d1 1 2.5 bm25\\n1 Q0 d2 2 1.5 bm25\\n")
    >>> read_run(p).row(0)
    ('bm25', '1', 'd1', 2.5, 1)
    """
    check_backend(backend, "read_run")
    out, blocks = read_runs(path, format, name, name_from, columns, rank)
    # recorded as checked, so that evaluate(read_run(path), ...) does not check it again
    return as_backend(frames.mark_checked(out, blocks), backend, "read_run")


def read_runs(
    path: PathLike | Sequence[PathLike],
    format: Format | None = None,
    name: str | Sequence[str] | None = None,
    name_from: Literal["tag", "file"] = "tag",
    columns: Mapping[str, str] | None = None,
    rank: bool = True,
    mark: pl.DataFrame | None = None,
) -> tuple[pl.DataFrame, frames.Blocks | None]:
    """:func:`read_run` as a polars frame, with its (run, query) blocks when known.

    ``mark``: ``query_id, doc_id`` pairs (the qrels) whose rows to list in
    ``blocks.marked`` (one TREC file only; a superset: join on the ids to use them).
    """
    check_format(format, "read_run")
    check_choice("read_run", "name_from", name_from, ("tag", "file"),
                 example="name_from='file' to name each run after its file")
    paths = path_list(path, "read_run")
    names: list[str | None]
    if name is None:
        names = [None] * len(paths)
    elif isinstance(name, str):
        if len(paths) > 1:
            raise option_error("read_run", "name", name, f"names one run but {len(paths)} "
                               "files were given; pass one name per file",
                               "name=['bm25', 'dense']")
        names = [name]
    else:
        names = list(name)
        if len(names) != len(paths):
            raise option_error("read_run", "name", name, f"has {len(names)} names for "
                               f"{len(paths)} files; give one per file",
                               "name=['bm25', 'dense']")
    parts = []
    seen: dict[str, Path] = {}
    blocks = None
    for p, nm in zip(paths, names, strict=True):
        df, blocks = _read_one_run(p, format, columns, rank, mark if len(paths) == 1 else None)
        if nm is not None or name_from == "file" or "tag" not in df.columns:
            run_name = nm if nm is not None else file_stem(p)
            df = df.with_columns(pl.lit(run_name).alias("run"))
            if blocks is not None and "tag" not in blocks.keys.columns:
                # (query blocks of a file without tags: one run, the blocks hold)
                blocks = replace(blocks, keys=blocks.keys.select(
                    pl.lit(run_name, pl.String).alias("run"), "query_id"))
            else:
                blocks = None  # the reader's blocks are by tag, the run is named otherwise
        else:
            df = df.with_columns(pl.col("tag").alias("run"))
            if blocks is not None:  # (tag, query) blocks are the (run, query) blocks
                blocks = replace(blocks, keys=blocks.keys.rename({"tag": "run"}))
        df = df.select("run", "query_id", "doc_id", "score",
                       pl.col("rank") if "rank" in df.columns else pl.lit(None, pl.Int64)
                       .alias("rank"))
        names_here = (df.get_column("run").unique(maintain_order=True).to_list()
                      if len(paths) > 1 else [])
        for r in names_here:
            if r in seen and len(paths) > 1:
                from ..errors import DuplicateRowsError

                raise DuplicateRowsError(
                    f"{p}: run name {r!r} is also the name of the run in {seen[r]}; the two "
                    "would mix in one frame. Pass name_from='file' to name runs after their "
                    "files, or name=[...] with one name per file"
                )
            seen[r] = p
        parts.append(df)
    out = parts[0] if len(parts) == 1 else pl.concat(parts, how="vertical_relaxed")
    if not rank or out["rank"].null_count() == out.height:
        out = out.drop("rank")
    # blocks of one file's rows in file order hold for the frame (same rows, same order)
    return out, (blocks if len(parts) == 1 else None)


def _read_one_run(
    p: Path, fmt: str | None, columns: Mapping[str, str] | None, rank: bool = True,
    mark: pl.DataFrame | None = None,
) -> tuple[pl.DataFrame, frames.Blocks | None]:
    fmt = fmt or detect_format(p, "run")
    if fmt == "trec":
        df, blocks = read_trec_run(p, rank, mark)
        if df.height == 0:
            raise EmptyInputError(f"{p}: the run file has no result lines (only comments or "
                                  "blank lines)")
        # (an expression: get_column would build a constant tag column's 7M values)
        if df.select(pl.col("tag").null_count() == pl.len()).item():
            df = df.drop("tag")
        return df, blocks
    if fmt == "parquet":
        fast = fast_parquet_run(p, columns)
        if fast is not None:
            return fast
    table, first, label = read_table(p, fmt)
    return table_canonical(table, p, first, label, fmt, "run", columns), None


def read_qrels(
    path: PathLike | Sequence[PathLike],
    *,
    format: Format | None = None,
    columns: Mapping[str, str] | None = None,
    backend: Backend = "polars",
    subtopics: bool = False,
) -> Any:
    """Read relevance judgments into the canonical qrels frame.

    Parameters
    ----------
    path
        A qrels file (TREC ``qid iter docno rel``, CSV/TSV with a header,
        Parquet, JSON Lines; gzip allowed), a list of files (concatenated), or
        ``"irds:<dataset-id>"`` to load them through ``ir_datasets``.
    format
        Force a format instead of detecting it.
    columns
        For tables: canonical name → your column name, e.g. ``{"relevance": "grade"}``.
    backend
        ``"polars"`` (default) or ``"pandas"``.
    subtopics
        Judgments per subtopic (diversity qrels, ``topic subtopic docno rel``): keep
        the second TREC column (or a table's ``subtopic`` column) as ``subtopic``.

    Returns
    -------
    DataFrame
        ``query_id, doc_id, relevance`` (Int64; negative = judged but unusable),
        plus ``subtopic`` with ``subtopics=True``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "qrels.txt"
    >>> _ = p.write_text("# graded\\n1 0 d1 2\\n1 0 d2 0\\n")
    >>> read_qrels(p).rows()
    [('1', 'd1', 2), ('1', 'd2', 0)]
    """
    check_format(format, "read_qrels")
    check_backend(backend, "read_qrels")
    if isinstance(path, str) and path.startswith("irds:"):
        return as_backend(irds_qrels(path[5:]), backend, "read_qrels")
    parts = []
    for p in path_list(path, "read_qrels"):
        fmt = format or detect_format(p, "qrels")
        if fmt == "trec":
            df = read_trec_qrels(p, read_bytes(p), subtopics)
        else:
            table, first, label = read_table(p, fmt)
            df = table_canonical(table, p, first, label, fmt, "qrels", columns, subtopics)
        if df.height == 0:
            raise EmptyInputError(f"{p}: the qrels file has no judgments")
        parts.append(df)
    out = parts[0] if len(parts) == 1 else pl.concat(parts)
    if len(parts) > 1:
        frames.qrels_frame(out, arg="qrels files", subtopics=subtopics)  # duplicates across files
    return as_backend(out, backend, "read_qrels")
