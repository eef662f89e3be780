"""Merging several assessors' labels into one qrels, with a report of every conflict.

>>> import searcheval_frames as sef
>>> labels = {"alice": {"q1": {"d1": 1, "d2": 0}}, "bob": {"q1": {"d1": 1, "d2": 1}}}
>>> qrels, conflicts = sef.merge_labels(labels, policy="max")
>>> conflicts.select("doc_id", "alice", "bob", "merged").row(0)
('d2', 0, 1, 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from ._assessors import long_labels
from .policies import MergeResult, check_policy, settle

__all__ = ["MergeResult", "merge_labels"]


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
    df, kind = long_labels(labels)
    return settle(df, kind, policy, prefer=prefer, tie=tie)
