"""Set-based measures at a cutoff: precision, recall, success, set precision."""

from __future__ import annotations

import polars as pl

from .._exact import true_divide
from ._params import REL, params_of
from .base import Context, Family, Measure, register


def rel_in_top(m: Measure, ctx: Context) -> pl.Expr:
    cond = ctx.is_rel(m)
    if m.cutoff is not None:
        cond = cond & (pl.col("rank") <= m.cutoff)
    return cond.sum()


def safe_div(num: pl.Expr, den: pl.Expr) -> pl.Expr:
    return pl.when(den > 0).then(true_divide(num, den)).otherwise(0.0)


@register
class Precision(Family):
    name = "P"
    aliases = ("precision", "prec", "p")
    trec = "P"
    cutoff = "int"
    cutoff_required = True
    params = params_of(REL)
    summary = "Precision at k: fraction of the top k that is relevant (divides by k even when fewer are retrieved)."
    formula = "P@k = |relevant ∩ top-k| / k"
    example = "P@10"

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        return [rel_in_top(m, ctx).alias(col)]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        return true_divide(pl.col(col), float(m.cutoff or 1))


@register
class Recall(Family):
    name = "R"
    aliases = ("recall", "rec", "r", "set_recall")
    trec = "recall"
    cutoff = "int"
    params = params_of(REL)
    summary = "Recall at k: fraction of the relevant documents found in the top k (whole list without @k); 0 when nothing is relevant."
    formula = "R@k = |relevant ∩ top-k| / |relevant|"
    example = "R@100"

    def trec_name(self, m: Measure) -> str | None:
        if m.params:
            return None
        return "set_recall" if m.cutoff is None else f"recall_{m.cutoff}"

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        return [rel_in_top(m, ctx).alias(col)]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        return safe_div(pl.col(col), ctx.num_rel(m))


@register
class Success(Family):
    name = "Success"
    aliases = ("success", "hit", "hitrate", "hit_rate")  # (ranx's "hits" is Hits)
    trec = "success"
    cutoff = "int"
    cutoff_required = True
    params = params_of(REL)
    summary = "Success at k (hit rate): 1 if any relevant document is in the top k, else 0."
    formula = "Success@k = 1[|relevant ∩ top-k| > 0]"
    example = "Success@5"

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        return [rel_in_top(m, ctx).alias(col)]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        return (pl.col(col) > 0).cast(pl.Float64)


@register
class SetP(Family):
    name = "SetP"
    aliases = ("set_p", "setprecision")
    trec = "set_P"
    params = params_of(REL)
    summary = "Precision of the whole retrieved list."
    formula = "SetP = |relevant ∩ retrieved| / |retrieved|"

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        return [rel_in_top(m, ctx).alias(col)]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        return safe_div(pl.col(col), pl.col("num_ret"))
