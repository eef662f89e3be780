"""Discounted cumulative gain, normalised (nDCG), with linear, exponential or custom gains."""

from __future__ import annotations

import polars as pl

from ._params import GAIN, params_of
from .base import Context, Family, Measure, register


def gain_expr(gains: tuple[tuple[int, float], ...] | str | None, rel: pl.Expr) -> pl.Expr:
    """Gain of a relevance label: negative and zero labels gain nothing unless mapped."""
    if gains is None or gains == "linear":
        return pl.when(rel > 0).then(rel.cast(pl.Float64)).otherwise(0.0)
    if gains == "exp":
        return pl.when(rel > 0).then(pl.lit(2.0).pow(rel.cast(pl.Float64)) - 1.0).otherwise(0.0)
    mapping = dict(gains)  # type: ignore[arg-type]
    # as trec_eval: labels not in the map gain their own value; negative labels gain 0
    expr = pl.when(rel > 0).then(rel.cast(pl.Float64)).otherwise(0.0)
    for level, g in mapping.items():
        expr = pl.when(rel == level).then(pl.lit(float(g))).otherwise(expr)
    return expr


@register
class NDCG(Family):
    name = "nDCG"
    aliases = ("ndcg", "ndcg_cut", "normalized_dcg")
    pinned = {"ndcg_burges": {"gain": "exp"}}  # ranx: 2^label - 1 gains
    trec = "ndcg"
    cutoff = "int"
    params = params_of(GAIN)
    param_defaults = {"gain": "linear"}
    summary = ("Normalised discounted cumulative gain (Järvelin & Kekäläinen 2002) with the "
               "trec_eval discount 1/log2(rank+1) and gain = the label (gain=exp: 2^label-1; "
               "gain={0:0,1:1,2:3}: a custom map). The ideal ranking uses every judged document; "
               "the relevance level does not apply.")
    formula = "nDCG@k = Σ_{i<=k} g(rel_i)/log2(i+1) / Σ_{i<=k} g(ideal_i)/log2(i+1)"
    example = "nDCG@10"

    def trec_name(self, m: Measure) -> str | None:
        if m.params:
            return None
        return "ndcg" if m.cutoff is None else f"ndcg_cut_{m.cutoff}"

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        g = gain_expr(m.param("gain"), pl.col("relevance"))
        disc = (pl.col("rank").cast(pl.Float64) + 1.0).log(2)
        contrib = g / disc
        if m.cutoff is not None:
            contrib = contrib.filter(pl.col("rank") <= m.cutoff)
        return [contrib.sum().alias(col)]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        ideal = pl.col(ctx.ideal_dcg(m.param("gain") or "linear", m.cutoff))  # type: ignore[arg-type]
        return pl.when(ideal > 0).then(pl.col(col) / ideal).otherwise(0.0)
