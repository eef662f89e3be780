"""Rank-biased precision (RBP) and its residual, as trec_eval 10 computes them.

Moffat & Zobel, "Rank-biased precision for measurement of retrieval
effectiveness", ACM TOIS 27(1), 2008. A user reads the first document and then
each next one with probability ``p`` (persistence), so rank i is seen with
probability p^(i-1); RBP is the expected gain per document seen::

    RBP(p)@k   = (1 - p) · Σ_{i<=k} g_i · p^(i-1)
    residual   = p^n + (1 - p) · Σ_{i<=n, i unjudged} p^(i-1)     (n = documents retrieved)

The residual is how much RBP could still grow if every unjudged document, and
every document below the ranking, were fully relevant: the true value lies in
[RBP, RBP + residual].

Gains g_i (trec_eval 10's ``rbp``): a document's label scaled into [0, 1] by the
largest label among the query's judgments when that exceeds 1 (``label / max``;
binary labels are used as they are); negative labels and unjudged documents gain
0; the relevance level does not apply. ``rel=k`` makes the gains binary
(label >= k), as ir_measures' ``RBP(rel=k)`` (cwl_eval). ``gain=label`` uses the
raw label (label >= 1) as the gain, as ir_measures' graded ``RBP`` (trectools)
and ranx's ``rbp.95`` do; values can then exceed 1.

Residual (trec_eval 10's ``rbp_resid``): unjudged means "not in the qrels or
labelled below 0". Like trec_eval, the residual is 0 when the ranking has no
unjudged document (the p^n of the unread tail is then not added) and for
queries the run lacks; ``judged_only=True`` (``-J``) therefore makes it 0.

The persistence defaults to p = 0.9 (trec_eval's default), so ``rbp`` /
``RBP`` mean ``RBP(p=0.9)``; ir_measures' default is 0.8: write ``RBP(p=0.8)``.
Canonical names always show p.

>>> from searcheval_frames.measures import parse_measure
>>> parse_measure("rbp").name, parse_measure("rbp_p=0.8").trec_name
('RBP(p=0.9)', 'rbp_p=0.8')
>>> parse_measure("rbp_resid").name
'RBPResidual(p=0.9)'
"""

from __future__ import annotations

import polars as pl

from ._params import PERSISTENCE, REL, Param, format_number, params_of
from .base import Context, Family, Measure, parameter_error, register

#: trec_eval's default persistence
DEFAULT_P = 0.9
GAINS = ("scaled", "label")


def _gain_mode(text: str) -> str:
    t = text.strip().lower()
    if t not in GAINS:
        raise ValueError(text)
    return t


GAIN_MODE = Param("gain", _gain_mode, "scaled (label / the query's largest label, trec_eval) or "
                  "label (the raw label, ir_measures' graded RBP, ranx)", default="scaled")
P = Param("p", PERSISTENCE.parse, PERSISTENCE.description, default=f"{DEFAULT_P}, as trec_eval",
          low=0, high=1, open_low=True, open_high=True)


def _weights(p: float) -> pl.Expr:
    """p^(rank-1) of each row."""
    return pl.lit(p).pow(pl.col("rank").cast(pl.Float64) - 1.0)


def _trec(base: str, m: Measure) -> str | None:
    if m.cutoff is not None or any(k != "p" for k, _ in m.params):
        return None
    p = m.param("p", DEFAULT_P)
    return base if p == DEFAULT_P else f"{base}_p={format_number(p)}"


@register
class RBP(Family):
    name = "RBP"
    aliases = ("rank_biased_precision",)
    trec = "rbp"
    cutoff = "int"
    params = params_of(P, REL, GAIN_MODE)
    param_defaults = {"gain": "scaled"}
    # trec_eval's names mean its default persistence; the canonical names always show p
    param_fill = {"p": DEFAULT_P}
    summary = ("Rank-biased precision (Moffat & Zobel 2008): expected gain per document read by "
               "a user who goes on to the next document with probability p (default 0.9, as "
               "trec_eval). Gains: labels scaled to [0,1] by the query's largest label (trec_eval "
               "10); rel=k: binary; gain=label: the raw label (ir_measures' graded RBP, ranx).")
    formula = "RBP(p)@k = (1-p) Σ_{i<=k} g_i p^(i-1)"
    example = "RBP(p=0.8)"

    def trec_name(self, m: Measure) -> str | None:
        return _trec("rbp", m)

    def validate(self, m: Measure, text: str) -> None:
        super().validate(m, text)
        if m.param("rel") is not None and m.param("gain") is not None:
            raise parameter_error(
                text, "give rel= (binary gains) or gain= (graded), not both", f"{self.name}(rel=2)")

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        p = float(m.param("p", DEFAULT_P))
        if m.param("rel") is not None:
            g = ctx.is_rel(m).cast(pl.Float64)
        else:
            g = pl.col("relevance").clip(lower_bound=0).cast(pl.Float64)
        contrib = g * _weights(p)
        if m.cutoff is not None:
            contrib = contrib.filter(pl.col("rank") <= m.cutoff)
        return [contrib.sum().alias(col)]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        p = float(m.param("p", DEFAULT_P))
        total = pl.col(col) * (1.0 - p)
        if m.param("rel") is not None or m.param("gain") == "label":
            return total
        # the largest label >= 0 of the query: its linear ideal DCG at depth 1
        top = pl.col(ctx.ideal_dcg("linear", 1))
        return pl.when(top > 1.0).then(total / top).otherwise(total)


@register
class RBPResidual(Family):
    name = "RBPResidual"
    aliases = ("rbp_resid", "rbp_residual", "rbpresid")
    trec = "rbp_resid"
    params = params_of(P)
    param_fill = {"p": DEFAULT_P}
    summary = ("Residual of RBP(p): the most RBP could still gain from unjudged documents and "
               "the unread tail, p^n + (1-p) Σ_{unjudged i} p^(i-1); 0 when no retrieved "
               "document is unjudged (trec_eval 10's rbp_resid).")
    formula = "RBPResidual(p) = p^n + (1-p) Σ_{i<=n unjudged} p^(i-1) = 1 - (1-p) Σ_{i judged} p^(i-1)"
    example = "RBPResidual(p=0.8)"

    def trec_name(self, m: Measure) -> str | None:
        return _trec("rbp_resid", m)

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        p = float(m.param("p", DEFAULT_P))
        judged = pl.col("relevance") >= 0
        return [
            _weights(p).filter(judged).sum().alias(col),
            judged.sum().cast(pl.Int64).alias(f"{col}|judged"),
        ]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        p = float(m.param("p", DEFAULT_P))
        # Σ_{i<=n} p^(i-1) = (1-p^n)/(1-p), so p^n + (1-p) Σ_unjudged = 1 - (1-p) Σ_judged
        unjudged = pl.col("num_ret") - pl.col(f"{col}|judged")
        return pl.when(unjudged > 0).then(1.0 - (1.0 - p) * pl.col(col)).otherwise(0.0)
