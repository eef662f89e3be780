"""Binary preference (bpref, Buckley & Voorhees 2004), computed as trec_eval does."""

from __future__ import annotations

import polars as pl

from ._params import REL, params_of
from .base import Context, Family, Measure, register
from .precision import safe_div


@register
class Bpref(Family):
    name = "Bpref"
    aliases = ("bpref",)
    trec = "bpref"
    params = params_of(REL)
    summary = ("Fraction of judged non-relevant documents ranked above each relevant one, "
               "averaged over relevant documents (trec_eval's variant: counts capped at R, "
               "denominator min(R, N)). Unjudged and negatively labelled documents are ignored.")
    formula = "bpref = (1/R) Σ_{relevant r retrieved} (1 - min(|n ranked above r|, R) / min(R, N))"
    example = "Bpref"

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        lvl = ctx.level(m)
        rel = pl.col("relevance") >= lvl
        nonrel = (pl.col("relevance") >= 0) & (pl.col("relevance") < lvl)
        above = nonrel.cast(pl.Int64).cum_sum()
        big_r = ctx.num_rel(m)
        big_n = ctx.num_nonrel(m)
        part = pl.when(above > 0).then(
            1.0 - pl.min_horizontal(above, big_r) / pl.min_horizontal(big_n, big_r)
        ).otherwise(1.0)
        return [part.filter(rel).sum().alias(col)]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        return safe_div(pl.col(col), ctx.num_rel(m))
