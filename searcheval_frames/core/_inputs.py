"""The inputs of an evaluation as canonical frames, shared by every way to evaluate.

Runs and qrels from frames or files, the flat qrels and what a measure needs of them:
used by :func:`.evaluate.evaluate`, the curves, the command line, fusion and ``scale``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import polars as pl

from ..frames import Blocks, is_path, qrels_frame, run_frame, run_frame_blocks
from ..measures import Measure

__all__ = ["by_subtopic", "flat_qrels", "qrels_from", "run_from", "whole_frame"]


def run_from(
    obj: Any,
    qrels: pl.DataFrame,
    columns: Mapping[str, str] | None = None,
    name_from: Literal["tag", "file"] = "tag",
) -> tuple[pl.DataFrame, Blocks | None]:
    """Canonical run and its (run, query) blocks, from a user object or run file(s).

    A run file comes with its query blocks and the rows of judged documents, found
    while it is read (the reader marks the ``qrels``' (query, doc) pairs); files are
    validated line by line while they are read, so the frame checks are not repeated.
    """
    if not is_path(obj):
        return run_frame_blocks(obj, columns=columns)
    from ..io.api import read_runs

    df, blocks = read_runs(obj, name_from=name_from, columns=columns, rank=False,
                          mark=qrels.select("query_id", "doc_id"))
    return (df if blocks is not None else run_frame(df, validate=False)), blocks


def by_subtopic(m: Measure) -> bool:
    """Measures computed from judgments per subtopic (alpha-nDCG)."""
    return m.definition.subtopics


def whole_frame(m: Measure) -> bool:
    """Measures computed by the family from whole frames (``per_query``), not by ``agg``."""
    return m.definition.whole_frames


def flat_qrels(qrels: pl.DataFrame) -> pl.DataFrame:
    """One label per (query, doc): the largest over subtopics when qrels have them."""
    if "subtopic" not in qrels.columns:
        return qrels
    return qrels.group_by("query_id", "doc_id", maintain_order=True).agg(
        pl.col("relevance").max()
    )


def qrels_from(
    obj: Any, columns: Mapping[str, str] | None, subtopics: bool = False
) -> pl.DataFrame:
    """Canonical qrels from a user object, or from file path(s) read with :mod:`.io`.

    Files are validated line by line while they are read, so the frame-level checks
    are not repeated for them.
    """
    if is_path(obj):
        from .. import io

        return qrels_frame(io.read_qrels(obj, columns=columns, subtopics=subtopics),
                           validate=False, subtopics=subtopics)
    return qrels_frame(obj, columns=columns, subtopics=subtopics)
