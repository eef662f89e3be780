"""Counts and judgment coverage: NumQ, NumRet, NumRel, NumRelRet, Hits@k, Judged@k,
Unjudged@k."""

from __future__ import annotations

import polars as pl

from .._exact import true_divide
from ._params import REL, params_of
from .base import Context, Family, Measure, register


@register
class NumQ(Family):
    name = "NumQ"
    aliases = ("num_q",)
    trec = "num_q"
    aggregate = "sum"
    summary = "Number of evaluated queries (1 per query; summed)."
    formula = "NumQ = 1"

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        return pl.lit(1.0)


@register
class NumRet(Family):
    name = "NumRet"
    aliases = ("num_ret",)
    trec = "num_ret"
    aggregate = "sum"
    summary = "Number of retrieved documents (after the depth cap)."
    formula = "NumRet = |retrieved|"

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        return pl.col("num_ret").cast(pl.Float64)


@register
class NumRel(Family):
    name = "NumRel"
    aliases = ("num_rel",)
    trec = "num_rel"
    params = params_of(REL)
    aggregate = "sum"
    summary = "Number of relevant documents in the qrels (label >= relevance level)."
    formula = "NumRel = |relevant|"

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        return ctx.num_rel(m).cast(pl.Float64)


@register
class NumRelRet(Family):
    name = "NumRelRet"
    aliases = ("num_rel_ret",)
    trec = "num_rel_ret"
    params = params_of(REL)
    aggregate = "sum"
    summary = "Number of relevant documents retrieved."
    formula = "NumRelRet = |relevant ∩ retrieved|"

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        return [ctx.is_rel(m).sum().alias(col)]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        return pl.col(col).cast(pl.Float64)


@register
class Hits(Family):
    name = "Hits"
    aliases = ("hits",)
    cutoff = "int"
    params = params_of(REL)
    summary = ("Number of relevant documents in the top k (ranx's hits@k), averaged over "
               "queries; the whole list without @k.")
    formula = "Hits@k = |relevant ∩ top-k|  (= P@k · k)"
    example = "Hits@10"

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        cond = ctx.is_rel(m)
        if m.cutoff is not None:
            cond = cond & (pl.col("rank") <= m.cutoff)
        return [cond.sum().alias(col)]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        return pl.col(col).cast(pl.Float64)


def _judged_top(m: Measure, col: str) -> pl.Expr:
    if m.cutoff is None:  # Judged without @k: the whole ranking
        return (pl.col("relevance") >= 0).sum().alias(col)
    return ((pl.col("relevance") >= 0) & (pl.col("rank") <= m.cutoff)).sum().alias(col)


@register
class Judged(Family):
    name = "Judged"
    aliases = ("judged",)
    cutoff = "int"
    summary = ("Fraction of the top k that carries a label (any label >= 0; negative labels "
               "count as unjudged, as in trec_eval). Divides by k, like P@k. Without @k "
               "(ir_measures' Judged): the fraction of all retrieved documents, 0 for an "
               "empty ranking.")
    formula = "Judged@k = |judged ∩ top-k| / k;  Judged = |judged ∩ retrieved| / |retrieved|"
    example = "Judged@10"

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        return [_judged_top(m, col)]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        if m.cutoff is None:
            n = pl.col("num_ret").cast(pl.Float64)
            return pl.when(n > 0).then(pl.col(col) / n).otherwise(0.0)
        return true_divide(pl.col(col), float(m.cutoff))


@register
class Unjudged(Family):
    name = "Unjudged"
    aliases = ("unj", "unjudged")
    trec = "unj"
    cutoff = "int"
    cutoff_required = True
    summary = ("trec_eval's unj@k: fraction of the top k that is retrieved but unjudged "
               "(missing positions count as judged).")
    formula = "Unjudged@k = (min(k, |retrieved|) - |judged ∩ top-k|) / k"
    example = "Unjudged@10"

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        return [_judged_top(m, col)]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        k = float(m.cutoff or 1)
        shown = pl.min_horizontal(pl.col("num_ret").cast(pl.Float64), pl.lit(k))
        return true_divide(shown - pl.col(col), k)
