"""How conflicting labels of several assessors are settled (the merge policies).

:func:`settle` takes the long frame ``query_id, doc_id, assessor, label`` (one label per
assessor and document) and returns :class:`MergeResult` ``(qrels, conflicts)``; the
policies are ``majority`` (ties need ``tie=``), ``max``, ``min`` and ``prefer``. Used by
:func:`~searcheval_frames.merge_labels` and :meth:`~searcheval_frames.LabelStore.qrels`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, NamedTuple

import polars as pl

from ..errors import AmbiguousColumnError, InvalidOptionError, LabelConflictError, format_rows
from ..frames import to_native

__all__ = ["MergeResult", "check_policy", "settle"]


class MergeResult(NamedTuple):
    """What :func:`merge_labels` returns: ``qrels, conflicts = merge_labels(...)``.

    Both frames are in the caller's frame kind; ``.frame`` is ``qrels`` (the result
    convention of the package: every result's main frame is ``.frame``).
    """

    qrels: Any
    conflicts: Any

    @property
    def frame(self) -> Any:
        """The merged qrels (``query_id, doc_id, relevance``), in the caller's frame kind."""
        return self.qrels


_POLICIES = ("majority", "max", "min", "prefer")


def check_policy(policy: Any, tie: Any) -> None:
    """Refuse an unknown ``policy`` or ``tie`` (before any labels are read)."""
    if policy is not None and policy not in _POLICIES:
        raise InvalidOptionError(
            f"policy={policy!r}: use 'majority', 'max', 'min' or 'prefer' (with prefer=...), "
            "or None to refuse conflicts"
        )
    if tie is not None and tie not in ("max", "min"):
        raise InvalidOptionError(f"tie={tie!r}: use 'max' or 'min'")


def settle(
    df: pl.DataFrame,
    kind: Any,
    policy: Literal["majority", "max", "min", "prefer"] | None,
    *,
    prefer: str | Sequence[str] | None = None,
    tie: Literal["max", "min"] | None = None,
) -> MergeResult:
    """Merge the long labels ``df`` by ``policy`` (see :func:`merge_labels`).

    ``df`` has one row per (assessor, query, document): ``query_id, doc_id, assessor,
    label``; the two frames returned are of ``kind``.
    """
    assessors = df["assessor"].unique(maintain_order=True).sort().to_list()
    prefer_list = _prefer_list(policy, prefer, assessors)
    reserved = {"query_id", "doc_id", "merged", "rule"}
    clash = [a for a in assessors if a in reserved]
    if clash:
        raise AmbiguousColumnError(
            f"labels: assessor name(s) {clash} clash with report columns; rename the assessors"
        )
    stats = df.group_by(KEY, maintain_order=True).agg(
        pl.col("label").n_unique().alias("_n"),
        pl.col("label").max().alias("_max"),
        pl.col("label").min().alias("_min"),
    )
    agreed = stats.filter(pl.col("_n") == 1).select(*KEY, pl.col("_max").alias("relevance"))
    conflict_keys = stats.filter(pl.col("_n") > 1).select(KEY)
    wide = df.join(conflict_keys, on=KEY, how="semi").pivot(
        on="assessor", index=KEY, values="label", aggregate_function=None
    )
    for a in assessors:
        if a not in wide.columns:
            wide = wide.with_columns(pl.lit(None, dtype=pl.Int64).alias(a))
    wide = wide.select(*KEY, *assessors).sort(KEY)
    if wide.height and policy is None:
        raise LabelConflictError(
            f"labels: {wide.height} document(s) got different labels from different "
            f"assessors:\n{format_rows(wide)}\nChoose how to settle them: "
            "policy='majority' (tie='max'), 'max', 'min', or policy='prefer', prefer='name'. "
            "The conflicts are listed in the second value merge_labels returns."
        )
    conf = df.join(conflict_keys, on=KEY, how="semi")
    if policy in ("max", "min"):
        agg = pl.col("label").max() if policy == "max" else pl.col("label").min()
        settled = conf.group_by(KEY).agg(agg.alias("merged"), pl.lit(policy).alias("rule"))
    elif policy == "majority":
        settled = _majority(conf, wide, tie)
    elif policy == "prefer":
        settled = _preferred(conf, wide, conflict_keys, prefer_list)
    else:
        settled = pl.DataFrame(schema={"query_id": pl.String, "doc_id": pl.String,
                                       "merged": pl.Int64, "rule": pl.String})
    conflicts = wide.join(settled.select(*KEY, "merged", "rule"), on=KEY, how="left").sort(KEY)
    first_seen = df.select(KEY).unique(maintain_order=True).with_row_index("_o")
    qrels = (
        pl.concat([agreed, settled.select(*KEY, pl.col("merged").alias("relevance"))])
        .join(first_seen, on=KEY, how="left")
        .sort("_o")
        .drop("_o")
    )
    return MergeResult(to_native(qrels, kind), to_native(conflicts, kind))


KEY = ["query_id", "doc_id"]


def _prefer_list(policy: Any, prefer: str | Sequence[str] | None, assessors: list[str]
                 ) -> list[str]:
    """``prefer`` as a checked list of assessors (empty unless ``policy='prefer'``)."""
    if policy != "prefer":
        return []
    if prefer is None:
        raise InvalidOptionError(
            "policy='prefer' needs prefer='name' (or a list, in order of authority); the "
            f"assessors are {assessors}"
        )
    prefer_list = [prefer] if isinstance(prefer, str) else [str(p) for p in prefer]
    unknown = [p for p in prefer_list if p not in assessors]
    if unknown:
        raise InvalidOptionError(
            f"prefer={prefer!r}: no labels by {unknown}; the assessors are {assessors}"
        )
    return prefer_list


def _majority(conf: pl.DataFrame, wide: pl.DataFrame, tie: str | None) -> pl.DataFrame:
    """``query_id, doc_id, merged, rule`` of the conflicting documents by majority."""
    counts = conf.group_by([*KEY, "label"]).agg(pl.len().alias("_c"))
    top = counts.filter(pl.col("_c") == pl.col("_c").max().over(KEY))
    ties = top.group_by(KEY).agg(pl.len().alias("_k")).filter(pl.col("_k") > 1)
    if ties.height and tie is None:
        shown = wide.join(ties.select(KEY), on=KEY, how="semi")
        raise LabelConflictError(
            f"policy='majority': {ties.height} document(s) have no majority (a tie):\n"
            f"{format_rows(shown)}\nPass tie='max' or tie='min', or use policy='prefer'."
        )
    pick = pl.col("label").max() if tie != "min" else pl.col("label").min()
    return top.group_by(KEY).agg(
        pick.alias("merged"),
        pl.when(pl.len() > 1)
        .then(pl.lit(f"majority (tie → {tie})"))
        .otherwise(pl.lit("majority"))
        .alias("rule"),
    )


def _preferred(conf: pl.DataFrame, wide: pl.DataFrame, conflict_keys: pl.DataFrame,
               prefer_list: list[str]) -> pl.DataFrame:
    """``query_id, doc_id, merged, rule``: the label of the first preferred assessor."""
    order = {a: i for i, a in enumerate(prefer_list)}
    ranked_ = conf.filter(pl.col("assessor").is_in(prefer_list)).with_columns(
        pl.col("assessor").replace_strict(order, return_dtype=pl.Int64).alias("_o")
    )
    settled = (
        ranked_.sort("_o")
        .group_by(KEY)
        .agg(
            pl.col("label").first().alias("merged"),
            (pl.lit("prefer ") + pl.col("assessor").first()).alias("rule"),
        )
    )
    unsettled = conflict_keys.join(settled.select(KEY), on=KEY, how="anti")
    if unsettled.height:
        shown = wide.join(unsettled, on=KEY, how="semi")
        raise LabelConflictError(
            f"policy='prefer': {unsettled.height} conflicting document(s) were not "
            f"labelled by any of {prefer_list}:\n{format_rows(shown)}\nAdd more names "
            "to prefer= or use another policy."
        )
    return settled
