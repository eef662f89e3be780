"""The exact TREC run and qrels readers (line by line, every malformed line reported)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from .. import frames
from ._common import read_bytes
from ._lines import (
    Problems,
    data_lines,
    dup_problems,
    is_number,
    line_table,
    split_fields,
    to_int,
)
from .trec_fast import fast_trec_run


def exact_trec_run(path: Path, data: bytes) -> pl.DataFrame:
    lines = data_lines(line_table(data, path))
    df = split_fields(lines, 6)
    probs = Problems(path, "run")
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
        _joined_lines(ok, probs)
        probs.add(ok.filter(~is_number("f4")), pl.format(
            "the score {} is not a number (fields: qid iter docno rank score tag)",
            pl.col("f4")))
        probs.add(ok.filter(to_int("f3").is_null()), pl.format(
            "the rank {} is not an integer in the Int64 range (fields: qid iter docno rank "
            "score tag; are rank "
            "and score swapped?)", pl.col("f3")))
        if not probs.parts:
            dup_problems(
                ok.rename({"f0": "query_id", "f2": "doc_id"}),
                ["f5", "query_id", "doc_id"], probs, "document",
            )
    probs.raise_if_any()
    return df.select(
        pl.col("line_no"),
        pl.col("f0").alias("query_id"),
        pl.col("f2").alias("doc_id"),
        to_int("f3").alias("rank"),
        pl.col("f4").str.strip_chars().cast(pl.Float64).alias("score"),
        pl.col("f5").alias("tag"),
    )


#: Text after the run tag that is another result line, ``[qid] iter docno rank score``
#: (the qid is glued to the tag when the line break was lost without a space).
_RESULT_AFTER_TAG = r"^(\S+ )?\S+ \S+ [+-]?\d+ [+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?( |$)"


def _joined_lines(ok: pl.DataFrame, probs: Problems) -> None:
    """Report lines holding more than one result: text after the tag is tolerated (trec_eval
    ignores it; its own test runs have some), but not a lone carriage return (a file with
    CR line ends, or a line end lost) nor a second result line (a lost line break), whose
    documents would be silently dropped."""
    extra = ok.filter(pl.col("nf") > 6)
    if not extra.height:
        return
    probs.add(extra.filter(pl.col("text").str.contains("\r", literal=True)),
              "a carriage return (CR) inside the line: the file has old Mac (CR) line ends "
              "or lost a line break, so several results share one line; convert the line "
              "ends, e.g. `tr '\\r' '\\n' < in.run > out.run`")
    rest = extra.filter(~pl.col("text").str.contains("\r", literal=True)).with_columns(
        pl.col("text").str.strip_chars().str.replace_all(r"\s+", " ").str.splitn(" ", 7)
        .struct.field("field_6").alias("_after"))
    probs.add(rest.filter(pl.col("_after").str.contains(_RESULT_AFTER_TAG)),
              "two result lines joined (a line break was lost): the text after the run tag "
              "is another result (qid iter docno rank score ...); put it on its own line")


def read_trec_run(
    path: Path, rank: bool = True, mark: pl.DataFrame | None = None
) -> tuple[pl.DataFrame, frames.Blocks | None]:
    fast = fast_trec_run(path, rank, mark)
    if fast is None:
        return exact_trec_run(path, read_bytes(path)).drop("line_no"), None
    return fast


def read_trec_qrels(path: Path, data: bytes, subtopics: bool = False) -> pl.DataFrame:
    lines = data_lines(line_table(data, path))
    df = split_fields(lines, 4)
    probs = Problems(path, "qrels")
    if df.height:
        probs.add(df.filter(pl.col("nf") != 4), pl.format(
            "wrong number of fields: expected 4 (qid iter docno relevance), found {}",
            pl.col("nf")))
        ok = df.filter(pl.col("nf") == 4)
        probs.add(ok.filter(to_int("f3").is_null()), pl.format(
            "the relevance {} is not an integer (in the Int64 range)", pl.col("f3")))
        if not probs.parts:
            dup_problems(ok.rename({"f0": "query_id", "f2": "doc_id", "f1": "subtopic"}),
                          ["query_id", "doc_id"] + (["subtopic"] if subtopics else []),
                          probs, "judgment")
    probs.raise_if_any()
    return df.select(
        pl.col("f0").alias("query_id"),
        pl.col("f2").alias("doc_id"),
        to_int("f3").alias("relevance"),
        *([pl.col("f1").alias("subtopic")] if subtopics else []),
    )
