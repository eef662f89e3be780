"""Rank-sensitive measures: reciprocal rank, average precision, R-precision, interpolated precision."""

from __future__ import annotations

import polars as pl

from .._exact import true_divide
from ._params import REL, Param, params_of
from .base import Context, Family, Measure, register
from .precision import safe_div


def _within(m: Measure, cond: pl.Expr) -> pl.Expr:
    return cond if m.cutoff is None else cond & (pl.col("rank") <= m.cutoff)


@register
class RR(Family):
    name = "RR"
    aliases = ("recip_rank", "mrr", "reciprocal_rank", "rr")
    trec = "recip_rank"
    cutoff = "int"
    params = params_of(REL)
    summary = "Reciprocal rank of the first relevant document (0 if none, or none within k); its mean is MRR."
    formula = "RR@k = 1 / rank of the first relevant document if that rank <= k, else 0"
    example = "RR@10"

    def trec_name(self, m: Measure) -> str | None:
        return "recip_rank" if m.cutoff is None and not m.params else None

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        first = pl.col("rank").filter(_within(m, ctx.is_rel(m))).min()
        return [(1.0 / first).alias(col)]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        return pl.col(col)


@register
class AP(Family):
    name = "AP"
    aliases = ("map", "mean_average_precision", "average_precision", "ap", "map_cut")
    trec = "map"
    cutoff = "int"
    params = params_of(REL)
    summary = "Average precision: mean of the precision at each relevant document's rank, over all relevant documents (unretrieved ones count 0); its mean is MAP."
    formula = "AP@k = (1/|relevant|) Σ_{relevant d, rank(d)<=k} P@rank(d)"
    example = "AP"

    def trec_name(self, m: Measure) -> str | None:
        if m.params:
            return None
        return "map" if m.cutoff is None else f"map_cut_{m.cutoff}"

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        rel = ctx.is_rel(m)
        prec = rel.cast(pl.Int64).cum_sum() / pl.col("rank")
        return [prec.filter(_within(m, rel)).sum().alias(col)]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        return safe_div(pl.col(col), ctx.num_rel(m))


@register
class GMAP(Family):
    name = "GMAP"
    aliases = ("gm_map", "gmap")
    trec = "gm_map"
    params = params_of(REL)
    aggregate = "gmean"
    summary = "Per query the AP; aggregated by the geometric mean (values floored at 1e-5, as trec_eval)."
    formula = "GMAP = exp(mean(log(max(AP, 1e-5))))"
    example = "GMAP"

    def trec_name(self, m: Measure) -> str | None:
        return None if m.params else "gm_map"

    agg = AP.agg
    value = AP.value


@register
class Rprec(Family):
    name = "Rprec"
    aliases = ("r-prec", "r_prec", "rprecision", "r-precision")
    trec = "Rprec"
    params = params_of(REL)
    summary = "Precision at R, the number of relevant documents of the query."
    formula = "Rprec = |relevant ∩ top-R| / R"
    example = "Rprec"

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        rel = ctx.is_rel(m) & (pl.col("rank") <= ctx.num_rel(m))
        return [rel.sum().alias(col)]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        return safe_div(pl.col(col), ctx.num_rel(m))


def iprec_cut(ctx: Context, level: float, num_rel: pl.Expr) -> pl.Expr:
    """Number of relevant documents that recall ``level`` asks for."""
    x = level * num_rel.cast(pl.Float64)
    if ctx.compat == "trec_eval-9":
        return (x + 0.9).floor().cast(pl.Int64)  # (long)(p * R + 0.9)
    return (x + 0.5).floor().cast(pl.Int64)  # lround(p * R), R >= 0


def iprec_expr(m: Measure, ctx: Context, level: float) -> pl.Expr:
    rel = ctx.is_rel(m)
    nth = rel.cast(pl.Int64).cum_sum()
    prec = (nth / pl.col("rank")).filter(rel)
    interpolated = prec.cum_max(reverse=True)
    cut = pl.max_horizontal(iprec_cut(ctx, level, ctx.num_rel(m).first()), pl.lit(1))
    return interpolated.filter(nth.filter(rel) == cut).first()


@register
class IPrec(Family):
    name = "IPrec"
    aliases = ("iprec_at_recall", "iprec", "interpolated_precision")
    trec = "iprec_at_recall"
    cutoff = "float"
    cutoff_required = True
    params = params_of(REL)
    summary = ("Interpolated precision at a recall level: the best precision at any rank at or "
               "below the one where that recall is reached (trec_eval's rule for turning the level into a number of documents: lround(level*R); trec_eval 9: (long)(level*R + 0.9)).")
    formula = "IPrec@r = max_{j >= n(r)} j / rank(j-th relevant), n(r) = round(r*R)"
    example = "IPrec@0.5"

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        return [iprec_expr(m, ctx, float(m.cutoff or 0.0)).alias(col)]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        return pl.col(col)


ELEVEN_POINTS = tuple(i / 10 for i in range(11))


def _parse_levels(text: str) -> str:
    """``"{.25,.5,.75}"`` or ``".25;.5;.75"`` -> ``"{0.25,0.5,0.75}"`` (recall levels in [0, 1])."""
    parts = [p for p in text.strip().strip("{}").replace(";", ",").split(",") if p.strip()]
    levels = [float(p) for p in parts]
    if not levels or not all(0.0 <= x <= 1.0 for x in levels):
        raise ValueError(text)
    return "{" + ",".join(repr(x) for x in levels) + "}"


LEVELS = Param("levels", _parse_levels, "recall levels in [0, 1], e.g. {.25,.5,.75}",
               default="the eleven points 0, 0.1, ..., 1")


def _levels(m: Measure) -> tuple[float, ...]:
    text = m.param("levels")
    return ELEVEN_POINTS if text is None else tuple(float(x) for x in text.strip("{}").split(","))


@register
class IPrecAvg(Family):
    name = "IPrecAvg"
    aliases = ("11pt_avg", "11pt", "11-pt_avg", "iprec_avg")
    trec = "11pt_avg"
    params = params_of(REL, LEVELS)
    summary = ("Mean interpolated precision at the 11 recall levels 0.0, 0.1, ..., 1.0 "
               "(levels={.25,.5,.75}: at those levels, as trec_eval -m 11pt_avg..25,.5,.75).")
    formula = "IPrecAvg = (1/11) Σ_{r in 0,0.1..1} IPrec@r"
    example = "IPrecAvg"

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        return [iprec_expr(m, ctx, r).alias(f"{col}|{i}") for i, r in enumerate(_levels(m))]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        n = len(_levels(m))
        return true_divide(pl.sum_horizontal(pl.col(f"{col}|{i}") for i in range(n)), float(n))
