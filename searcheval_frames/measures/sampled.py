"""Measures for incomplete judgments: infAP, gm_bpref, binG (trec_eval definitions).

A qrels label below 0 marks a document that is *in the pool but not judged* (trec_eval's
``RELVALUE_UNJUDGED``; e.g. infAP's sampled pools, where ``-1`` means "pooled, not in the
sample"); a document absent from the qrels is *not in the pool*. Only infAP tells the two
apart.
"""

from __future__ import annotations

import polars as pl

from ._params import REL, params_of
from .base import Context, Family, Measure, register
from .bpref import Bpref
from .precision import safe_div

#: trec_eval's INFAP_EPSILON
INFAP_EPSILON = 0.00001


@register
class InfAP(Family):
    name = "infAP"
    aliases = ("infap", "inf_ap", "inferred_ap")
    trec = "infAP"
    params = params_of(REL)
    summary = ("Inferred AP (Yilmaz & Aslam, CIKM 2006) as trec_eval computes it: for each "
               "relevant document at rank k, 1/k plus ((k-1)/k) × (fraction of the k-1 documents "
               "above that are in the pool) × (smoothed fraction of the judged ones above that "
               "are relevant); summed and divided by R. Label < 0 = pooled but not judged "
               "(sampled out), absent from the qrels = not pooled. With complete judgments "
               "(no negative labels) it is AP up to the 1e-5 smoothing.")
    formula = ("infAP = (1/R) Σ_{rel d, rank k>1} [1/k + (k-1)/k · (r+n+u)/(k-1) · (r+ε)/(r+n+2ε)] "
               "(+1 if k=1); r, n, u = relevant, judged non-relevant, pooled-unjudged above d; "
               "ε = 1e-5")
    example = "infAP"

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        lbl = pl.col("relevance")
        lvl = ctx.level(m)
        rel = (lbl >= lvl).cast(pl.Int64)
        nonrel = ((lbl >= 0) & (lbl < lvl)).cast(pl.Int64)
        unj = (lbl < 0).cast(pl.Int64)
        r_above = (rel.cum_sum() - rel).cast(pl.Float64)
        n_above = (nonrel.cum_sum() - nonrel).cast(pl.Float64)
        u_above = (unj.cum_sum() - unj).cast(pl.Float64)
        fj = (pl.col("rank") - 1).cast(pl.Float64)
        term = (
            1.0 / (fj + 1.0)
            + (fj / (fj + 1.0)) * ((r_above + n_above + u_above) / fj)
            * ((r_above + INFAP_EPSILON) / (r_above + n_above + 2 * INFAP_EPSILON))
        )
        term = pl.when(pl.col("rank") == 1).then(1.0).otherwise(term)
        return [term.filter(lbl >= lvl).sum().alias(col)]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        return safe_div(pl.col(col), ctx.num_rel(m).cast(pl.Float64))


@register
class GMBpref(Family):
    name = "GMBpref"
    aliases = ("gm_bpref", "gmbpref")
    trec = "gm_bpref"
    params = params_of(REL)
    aggregate = "gmean"
    summary = ("Per query the Bpref; aggregated by the geometric mean (values floored at 1e-5, "
               "as trec_eval, which prints it only in the summary).")
    formula = "GMBpref = exp(mean(log(max(bpref, 1e-5))))"
    example = "GMBpref"

    def trec_name(self, m: Measure) -> str | None:
        return None if m.params else "gm_bpref"

    agg = Bpref.agg
    value = Bpref.value


@register
class BinG(Family):
    name = "BinG"
    aliases = ("bing", "bin_g", "binary_g")
    trec = "binG"
    params = params_of(REL)
    summary = ("trec_eval's binG (experimental, 2008): each relevant document gains "
               "1/log2(2 + documents not relevant ranked above it, judged or not); the sum is "
               "divided by R.")
    formula = "binG = (1/R) Σ_{relevant d retrieved} 1 / log2(2 + rank(d) - |relevant at or above d|)"
    example = "BinG"

    def trec_name(self, m: Measure) -> str | None:
        return None if m.params else "binG"

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        rel = ctx.is_rel(m)
        so_far = rel.cast(pl.Int64).cum_sum()
        part = 1.0 / (2 + pl.col("rank") - so_far).cast(pl.Float64).log(2)
        return [part.filter(rel).sum().alias(col)]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        return safe_div(pl.col(col), ctx.num_rel(m).cast(pl.Float64))
