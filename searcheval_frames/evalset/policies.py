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
    prefer_list: list[str] = []
    if policy == "prefer":
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
    reserved = {"query_id", "doc_id", "merged", "rule"}
    clash = [a for a in assessors if a in reserved]
    if clash:
        raise AmbiguousColumnError(
            f"labels: assessor name(s) {clash} clash with report columns; rename the assessors"
        )
    key = ["query_id", "doc_id"]
    stats = df.group_by(key, maintain_order=True).agg(
        pl.col("label").n_unique().alias("_n"),
        pl.col("label").max().alias("_max"),
        pl.col("label").min().alias("_min"),
    )
    agreed = stats.filter(pl.col("_n") == 1).select(*key, pl.col("_max").alias("relevance"))
    conflict_keys = stats.filter(pl.col("_n") > 1).select(key)
    wide = df.join(conflict_keys, on=key, how="semi").pivot(
        on="assessor", index=key, values="label", aggregate_function=None
    )
    for a in assessors:
        if a not in wide.columns:
            wide = wide.with_columns(pl.lit(None, dtype=pl.Int64).alias(a))
    wide = wide.select(*key, *assessors).sort(key)
    if wide.height and policy is None:
        raise LabelConflictError(
            f"labels: {wide.height} document(s) got different labels from different "
            f"assessors:\n{format_rows(wide)}\nChoose how to settle them: "
            "policy='majority' (tie='max'), 'max', 'min', or policy='prefer', prefer='name'. "
            "The conflicts are listed in the second value merge_labels returns."
        )
    conf = df.join(conflict_keys, on=key, how="semi")
    if policy in ("max", "min"):
        agg = pl.col("label").max() if policy == "max" else pl.col("label").min()
        settled = conf.group_by(key).agg(agg.alias("merged"), pl.lit(policy).alias("rule"))
    elif policy == "majority":
        counts = conf.group_by([*key, "label"]).agg(pl.len().alias("_c"))
        top = counts.filter(pl.col("_c") == pl.col("_c").max().over(key))
        ties = top.group_by(key).agg(pl.len().alias("_k")).filter(pl.col("_k") > 1)
        if ties.height and tie is None:
            shown = wide.join(ties.select(key), on=key, how="semi")
            raise LabelConflictError(
                f"policy='majority': {ties.height} document(s) have no majority (a tie):\n"
                f"{format_rows(shown)}\nPass tie='max' or tie='min', or use policy='prefer'."
            )
        pick = pl.col("label").max() if tie != "min" else pl.col("label").min()
        settled = top.group_by(key).agg(
            pick.alias("merged"),
            pl.when(pl.len() > 1)
            .then(pl.lit(f"majority (tie → {tie})"))
            .otherwise(pl.lit("majority"))
            .alias("rule"),
        )
    elif policy == "prefer":
        order = {a: i for i, a in enumerate(prefer_list)}
        ranked_ = conf.filter(pl.col("assessor").is_in(prefer_list)).with_columns(
            pl.col("assessor").replace_strict(order, return_dtype=pl.Int64).alias("_o")
        )
        settled = (
            ranked_.sort("_o")
            .group_by(key)
            .agg(
                pl.col("label").first().alias("merged"),
                (pl.lit("prefer ") + pl.col("assessor").first()).alias("rule"),
            )
        )
        unsettled = conflict_keys.join(settled.select(key), on=key, how="anti")
        if unsettled.height:
            shown = wide.join(unsettled, on=key, how="semi")
            raise LabelConflictError(
                f"policy='prefer': {unsettled.height} conflicting document(s) were not "
                f"labelled by any of {prefer_list}:\n{format_rows(shown)}\nAdd more names "
                "to prefer= or use another policy."
            )
    else:
        settled = pl.DataFrame(
            schema={
                "query_id": pl.String,
                "doc_id": pl.String,
                "merged": pl.Int64,
                "rule": pl.String,
            }
        )
    conflicts = wide.join(settled.select(*key, "merged", "rule"), on=key, how="left").sort(key)
    first_seen = df.select(key).unique(maintain_order=True).with_row_index("_o")
    qrels = (
        pl.concat([agreed, settled.select(*key, pl.col("merged").alias("relevance"))])
        .join(first_seen, on=key, how="left")
        .sort("_o")
        .drop("_o")
    )
    return MergeResult(to_native(qrels, kind), to_native(conflicts, kind))
