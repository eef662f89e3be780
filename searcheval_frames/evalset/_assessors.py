"""Several assessors' labels as one long frame (private module, shared by merge and agreement)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import polars as pl

from ..errors import DuplicateRowsError, EmptyInputError, MissingColumnError, format_rows
from ..frames import find_column, input_kind, qrels_frame, to_polars
from .grades import ASSESSOR_COLUMNS
from .store import LabelStore

__all__ = ["long_labels"]


def long_labels(labels: Any, arg: str = "labels") -> tuple[pl.DataFrame, Any]:
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
                sub, _ = long_labels(lab, f"{arg}[{who!r}]")
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
            raise EmptyInputError(f"{arg}: no assessors given")
        df = pl.concat(parts)
    elif isinstance(labels, list | tuple):
        parts = [long_labels(x, f"{arg}[{i}]")[0] for i, x in enumerate(labels)]
        if not parts:
            raise EmptyInputError(f"{arg}: no assessors given")
        df = pl.concat(parts)
    else:
        kind = input_kind(labels)
        raw = to_polars(labels, arg)
        who = find_column(raw, ASSESSOR_COLUMNS)
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
