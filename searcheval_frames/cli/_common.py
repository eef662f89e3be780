"""What the commands of the CLI share (private module): exit codes, one-line errors, reading runs."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import polars as pl

from ..errors import DuplicateRowsError, FileFormatError

if TYPE_CHECKING:
    from ..frames import Blocks

EXIT_OK = 0
EXIT_INPUT = 1
EXIT_USAGE = 2


def one_line(exc: BaseException) -> str:
    if isinstance(exc, FileFormatError) and exc.path is not None:
        first = str(exc).split("\n", 1)[0]
        text = first
        if exc.line is not None:
            text += f" | line {exc.line_no}: {exc.line!r}"
        if exc.hint:
            text += f" | fix: {exc.hint}"
        return text
    return " ".join(str(exc).split())


def os_error_line(exc: OSError) -> str:
    """An OSError that escaped the readers and writers as one line naming the file."""
    where = f"{exc.filename}: " if exc.filename else ""
    reason = exc.strerror or str(exc) or type(exc).__name__
    return f"{where}{reason} ({type(exc).__name__}); check the path and its permissions"


def columns_arg(text: str) -> dict[str, str]:
    """``query_id=question,doc_id=url`` -> ``{"query_id": "question", "doc_id": "url"}``."""
    out = {}
    for part in text.split(","):
        canon, eq, yours = part.partition("=")
        if not eq or not canon.strip() or not yours.strip():
            raise argparse.ArgumentTypeError(
                f"{part!r} is not CANONICAL=YOURS; e.g. --columns query_id=question,doc_id=url")
        out[canon.strip()] = yours.strip()
    return out


def add_columns_argument(parser: argparse.ArgumentParser) -> None:
    """``--columns CANON=YOURS,...``, the same for every command that reads tables."""
    parser.add_argument(
        "--columns", metavar="CANON=YOURS,...", type=columns_arg,
        help="your column names in CSV/TSV/JSONL/Parquet runs and qrels, e.g. --columns "
             "run=system,query_id=question,doc_id=url,score=similarity,relevance=grade")


def read_runs(
    paths: Sequence[str], name_from: str, qrels: pl.DataFrame,
    columns: dict[str, str] | None = None,
) -> tuple[pl.DataFrame, Blocks | None]:
    """All run files in one frame, with the blocks (and judged rows) of a single file;
    ``columns``: the runs' column names (tables)."""
    from ..core._inputs import run_from
    from ..io import read_run

    if len(paths) == 1 and not columns:  # read once, as sef.evaluate reads a path
        df, blocks = run_from(paths[0], qrels, name_from=name_from)  # type: ignore[arg-type]
        return df.select("run", "query_id", "doc_id", "score"), blocks
    parts = [read_run(p, name_from=name_from, columns=columns)  # type: ignore[arg-type]
             for p in paths]
    names = [tuple(p.get_column("run").unique(maintain_order=True).to_list()) for p in parts]
    flat = [n for ns in names for n in ns]
    if len(flat) != len(set(flat)):
        # several files share a tag (e.g. every Anserini run says "Anserini"):
        # name those runs after their files
        print("searcheval: note: several runs have the same tag; naming runs after their "
              "files (use --name-from file to always do so)", file=sys.stderr)
        parts = [read_run(p, name_from="file", columns=columns) for p in paths]
        flat = [p.get_column("run")[0] for p in parts]
        if len(flat) != len(set(flat)):
            raise DuplicateRowsError(
                "two run files have the same name; rename one of them so that the runs "
                "can be told apart"
            )
    cols = ["run", "query_id", "doc_id", "score"]
    return pl.concat([p.select(cols) for p in parts], how="vertical_relaxed"), None
