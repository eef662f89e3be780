"""The exact TREC run and qrels readers (line by line, every malformed line reported)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from .. import frames
from .common import _read_bytes
from .lines import (
    _data_lines,
    _dup_problems,
    _is_number,
    _lines,
    _Problems,
    _split_fields,
    _to_int,
)
from .trec_fast import _fast_trec_run


def _exact_trec_run(path: Path, data: bytes) -> pl.DataFrame:
    lines = _data_lines(_lines(data, path))
    df = _split_fields(lines, 6)
    probs = _Problems(path, "run")
    if df.height:
        few = df.filter(pl.col("nf") < 5)
        probs.add(few, pl.format(
            "wrong number of fields: expected 6 (qid iter docno rank score tag), found {}",
            pl.col("nf")))
        five = df.filter(pl.col("nf") == 5)
        if five.height and five.height != df.height:
            probs.add(five, "wrong number of fields: 5 fields (no run tag) while other lines "
                            "have 6 or more; add the tag")
        ok = df.filter((pl.col("nf") >= 6) | ((pl.col("nf") == 5) & (five.height == df.height)))
        probs.add(ok.filter(~_is_number("f4")), pl.format(
            "the score {} is not a number (fields: qid iter docno rank score tag)",
            pl.col("f4")))
        probs.add(ok.filter(_to_int("f3").is_null()), pl.format(
            "the rank {} is not an integer in the Int64 range (fields: qid iter docno rank "
            "score tag; are rank "
            "and score swapped?)", pl.col("f3")))
        if not probs.parts:
            _dup_problems(
                ok.rename({"f0": "query_id", "f2": "doc_id"}),
                ["f5", "query_id", "doc_id"], probs, "document",
            )
    probs.raise_if_any()
    return df.select(
        pl.col("line_no"),
        pl.col("f0").alias("query_id"),
        pl.col("f2").alias("doc_id"),
        _to_int("f3").alias("rank"),
        pl.col("f4").str.strip_chars().cast(pl.Float64).alias("score"),
        pl.col("f5").alias("tag"),
    )


def _read_trec_run(
    path: Path, rank: bool = True, mark: pl.DataFrame | None = None
) -> tuple[pl.DataFrame, frames.Blocks | None]:
    fast = _fast_trec_run(path, rank, mark)
    if fast is None:
        return _exact_trec_run(path, _read_bytes(path)).drop("line_no"), None
    return fast


def _read_trec_qrels(path: Path, data: bytes, subtopics: bool = False) -> pl.DataFrame:
    lines = _data_lines(_lines(data, path))
    df = _split_fields(lines, 4)
    probs = _Problems(path, "qrels")
    if df.height:
        probs.add(df.filter(pl.col("nf") != 4), pl.format(
            "wrong number of fields: expected 4 (qid iter docno relevance), found {}",
            pl.col("nf")))
        ok = df.filter(pl.col("nf") == 4)
        probs.add(ok.filter(_to_int("f3").is_null()), pl.format(
            "the relevance {} is not an integer (in the Int64 range)", pl.col("f3")))
        if not probs.parts:
            _dup_problems(ok.rename({"f0": "query_id", "f2": "doc_id", "f1": "subtopic"}),
                          ["query_id", "doc_id"] + (["subtopic"] if subtopics else []),
                          probs, "judgment")
    probs.raise_if_any()
    return df.select(
        pl.col("f0").alias("query_id"),
        pl.col("f2").alias("doc_id"),
        _to_int("f3").alias("relevance"),
        *([pl.col("f1").alias("subtopic")] if subtopics else []),
    )
