"""Merging several assessors' labels into one qrels, with a report of every conflict.

>>> import searcheval_frames as sef
>>> labels = {"alice": {"q1": {"d1": 1, "d2": 0}}, "bob": {"q1": {"d1": 1, "d2": 1}}}
>>> qrels, conflicts = sef.merge_labels(labels, policy="max")
>>> conflicts.select("doc_id", "alice", "bob", "merged").row(0)
('d2', 0, 1, 1)
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import polars as pl

from ..errors import DuplicateRowsError, MissingColumnError, SearchEvalError, format_rows
from ..frames import input_kind, qrels_frame
from .grades import ASSESSOR_COLUMNS, _find_column, _to_polars_frame
from .policies import MergeResult, check_policy, settle
from .store import LabelStore

__all__ = ["MergeResult", "merge_labels"]


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
    check_policy(policy, tie)
    df, kind = _long_labels(labels)
    return settle(df, kind, policy, prefer=prefer, tie=tie)
