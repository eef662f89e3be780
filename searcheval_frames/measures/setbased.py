"""Set measures of trec_eval: set_F, F1@k, set_relative_P, relative_P@k, set_map, utility,
num_nonrel_judged_ret, and Rprec_mult (precision at a multiple of R).

All of them depend only on counts: relevant retrieved (in the top k), retrieved, relevant in
the qrels, judged non-relevant retrieved. Definitions follow trec_eval 10 (``m_set_F.c``,
``m_set_rel_P.c``, ``m_rel_P.c``, ``m_set_map.c``, ``m_utility.c``,
``m_num_nonrel_judged_ret.c``, ``m_Rprec_mult.c``), operation for operation, so the printed
digits agree.
"""

from __future__ import annotations

import polars as pl

from .._exact import true_divide
from ._params import REL, Param, format_number, params_of
from .base import Context, Family, Measure, parameter_error, register
from .precision import rel_in_top, safe_div

BETA = Param("beta", float, "weight of precision against recall (trec_eval's set_F.x; "
             "it multiplies P, not squared), >= 0 (0: precision)", default="1", low=0)


def _weight(name: str, default: str, what: str) -> Param:
    return Param(name, float, f"utility weight of {what}", default=default,
                 hint=f"a finite number, e.g. {name}={default}")


@register
class SetF(Family):
    name = "SetF"
    aliases = ("set_f", "setf", "set_fmeasure")
    trec = "set_F"
    params = params_of(REL, BETA)
    summary = ("trec_eval's set_F: weighted harmonic mean of the precision and recall of the "
               "whole retrieved list; 0 when nothing relevant is retrieved. As in trec_eval the "
               "weight multiplies P (it is not squared): SetF(beta=x) = trec_eval -m set_F.x.")
    formula = "SetF(beta=x) = (x+1)·P·R / (x·P + R), P = SetP, R = |rel ∩ ret| / |rel|"
    example = "SetF(beta=0.5)"

    def trec_name(self, m: Measure) -> str | None:
        if m.param("rel") is not None:
            return None
        beta = m.param("beta")
        return "set_F" if beta is None else f"set_F_{format_number(beta)}"

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        return [rel_in_top(m, ctx).alias(col)]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        x = float(m.param("beta", 1.0))
        hits = pl.col(col).cast(pl.Float64)
        p = hits / pl.col("num_ret").cast(pl.Float64)
        r = hits / ctx.num_rel(m).cast(pl.Float64)
        return pl.when(pl.col(col) > 0).then((x + 1.0) * p * r / (x * p + r)).otherwise(0.0)


@register
class F1(Family):
    name = "F1"
    aliases = ("f1", "f1_score", "f_1")
    cutoff = "int"
    params = params_of(REL)
    summary = ("F1 at k (as ranx's f1@k): harmonic mean of P@k (divides by k) and R@k; "
               "0 when nothing relevant is in the top k. Without @k: the whole list "
               "(= SetF with beta=1).")
    formula = "F1@k = 2·P@k·R@k / (P@k + R@k)"
    example = "F1@10"

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        return [rel_in_top(m, ctx).alias(col)]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        hits = pl.col(col).cast(pl.Float64)
        k = pl.col("num_ret").cast(pl.Float64) if m.cutoff is None else pl.lit(float(m.cutoff))
        p = true_divide(hits, k)
        r = hits / ctx.num_rel(m).cast(pl.Float64)
        return pl.when(pl.col(col) > 0).then(2.0 * p * r / (p + r)).otherwise(0.0)


@register
class RelP(Family):
    name = "RelP"
    aliases = ("relative_p", "relp", "rel_p", "relative_precision")
    trec = "relative_P"
    cutoff = "int"
    cutoff_required = True
    params = params_of(REL)
    summary = ("trec_eval's relative_P@k: relevant documents in the top k divided by the most "
               "there could be, min(k, R); 0 when the query has no relevant document.")
    formula = "RelP@k = |relevant ∩ top-k| / min(k, R)"
    example = "RelP@10"

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        return [rel_in_top(m, ctx).alias(col)]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        den = pl.min_horizontal(ctx.num_rel(m), pl.lit(int(m.cutoff or 1)))
        return safe_div(pl.col(col).cast(pl.Float64), den.cast(pl.Float64))


@register
class SetRelP(Family):
    name = "SetRelP"
    aliases = ("set_relative_p", "setrelp", "set_rel_p")
    trec = "set_relative_P"
    params = params_of(REL)
    summary = ("trec_eval's set_relative_P: relevant retrieved divided by the most there could "
               "be for a list of that size, min(|retrieved|, R).")
    formula = "SetRelP = |relevant ∩ retrieved| / min(|retrieved|, R)"
    example = "SetRelP"

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        return [rel_in_top(m, ctx).alias(col)]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        den = pl.min_horizontal(ctx.num_rel(m), pl.col("num_ret"))
        return safe_div(pl.col(col).cast(pl.Float64), den.cast(pl.Float64))


@register
class SetMAP(Family):
    name = "SetMAP"
    aliases = ("set_map", "setmap", "set_ap", "setap")
    trec = "set_map"
    params = params_of(REL)
    summary = ("trec_eval's set_map (unranked AP): set precision times recall, i.e. each "
               "retrieved relevant document scores the set precision, unretrieved ones 0.")
    formula = "SetMAP = |relevant ∩ retrieved|² / (|retrieved| · R)"
    example = "SetMAP"

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        return [rel_in_top(m, ctx).alias(col)]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        hits = pl.col(col).cast(pl.Float64)
        den = pl.col("num_ret").cast(pl.Float64) * ctx.num_rel(m).cast(pl.Float64)
        return safe_div(hits * hits, den)


@register
class NumNonRelJudgedRet(Family):
    name = "NumNonRelJudgedRet"
    aliases = ("num_nonrel_judged_ret", "numnonreljudgedret")
    trec = "num_nonrel_judged_ret"
    params = params_of(REL)
    aggregate = "sum"
    summary = ("Number of retrieved documents judged non-relevant (0 <= label < level); "
               "unjudged and negatively labelled documents are not counted. Summed.")
    formula = "NumNonRelJudgedRet = |judged non-relevant ∩ retrieved|"
    example = "NumNonRelJudgedRet"

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        rel = pl.col("relevance")
        return [((rel >= 0) & (rel < ctx.level(m))).sum().alias(col)]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        return pl.col(col).cast(pl.Float64)


_UTILITY = (("tp", 1.0), ("fp", -1.0), ("fn", 0.0), ("tn", 0.0))


@register
class Utility(Family):
    name = "Utility"
    aliases = ("utility",)
    trec = "utility"
    params = params_of(REL, _weight("tp", "1", "a relevant retrieved document"),
                       _weight("fp", "-1", "a non-relevant or unjudged retrieved document"),
                       _weight("fn", "0", "a relevant document missed"),
                       _weight("tn", "0", "the rest of the collection"))
    summary = ("trec_eval's linear utility: a weighted count of relevant retrieved (tp), "
               "non-relevant or unjudged retrieved (fp), relevant missed (fn) and the rest of "
               "the collection (tn; trec_eval without -N takes the collection size as 0, so "
               "that term is -tn·(|retrieved| + R - tp_count), as here). Default weights "
               "tp=1, fp=-1, fn=0, tn=0. A query the run lacks scores 0 (trec_eval -c).")
    formula = ("utility = tp·|rel∩ret| + fp·(|ret|-|rel∩ret|) + fn·(R-|rel∩ret|) "
               "+ tn·(0 + |rel∩ret| - |ret| - R)")
    example = "Utility(tp=2,fp=-1)"

    def trec_name(self, m: Measure) -> str | None:
        if m.param("rel") is not None:
            return None
        w = [m.param(k, d) for k, d in _UTILITY]
        if all(m.param(k) is None for k, _ in _UTILITY):
            return "utility"
        return "utility_" + ",".join(format_number(x) for x in w)

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        return [rel_in_top(m, ctx).alias(col)]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        tp, fp, fn, tn = (float(m.param(k, d)) for k, d in _UTILITY)
        hits = pl.col(col).cast(pl.Float64)
        ret = pl.col("num_ret").cast(pl.Float64)
        rel = ctx.num_rel(m).cast(pl.Float64)
        value = tp * hits + fp * (ret - hits) + fn * (rel - hits) + tn * (0.0 + hits - ret - rel)
        return pl.when(pl.col("num_ret") > 0).then(value).otherwise(0.0)


def rprec_mult_cut(mult: float, num_rel: pl.Expr) -> pl.Expr:
    """Number of documents for R-precision at ``mult`` × R: trec_eval's ``(long)(m*R + 0.9)``."""
    return (pl.lit(float(mult)) * num_rel.cast(pl.Float64) + 0.9).floor().cast(pl.Int64)


@register
class RprecMult(Family):
    name = "RprecMult"
    aliases = ("rprec_mult", "rprecmult", "r_prec_mult")
    trec = "Rprec_mult"
    cutoff = "float"
    cutoff_required = True
    params = params_of(REL)
    summary = ("trec_eval's Rprec_mult@x: precision after x·R documents (R = relevant in the "
               "qrels), the number of documents being (long)(x·R + 0.9) as in trec_eval "
               "(9 and 10); positions past the end of the list count as non-relevant.")
    formula = "RprecMult@x = |relevant ∩ top-c| / c, c = floor(x·R + 0.9)"
    example = "RprecMult@2.0"

    def validate(self, m: Measure, text: str) -> None:
        if m.cutoff is None:
            raise parameter_error(text, "RprecMult needs a multiple of R",
                                  "RprecMult@0.2 or Rprec_mult_2.00")
        if not 0.0 < float(m.cutoff) <= 1000.0:
            raise parameter_error(text, "the multiple of R must be in (0, 1000]",
                                  "RprecMult@1.5")

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        cut = rprec_mult_cut(float(m.cutoff or 0.0), ctx.num_rel(m))
        return [(ctx.is_rel(m) & (pl.col("rank") <= cut)).sum().alias(col)]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        cut = rprec_mult_cut(float(m.cutoff or 0.0), ctx.num_rel(m))
        return safe_div(pl.col(col).cast(pl.Float64), cut.cast(pl.Float64))
