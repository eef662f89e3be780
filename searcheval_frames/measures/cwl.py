"""User-model measures of the C/W/L framework, as cwl_eval computes them: INST, INSQ, BPM,
SDCG.

Moffat, Bailey, Scholer & Thomas, "INST: an adaptive metric for information retrieval
evaluation", ADCS 2015; Moffat, Scholer & Thomas, "Models and metrics: IR evaluation as a
user process", ADCS 2012 (INSQ); Zhang, Liu, Li, Zhang, Xu & Ma, "Evaluating web search
with a bejeweled player model", SIGIR 2017 (BPM); Azzopardi, Thomas & Moffat, "cwl_eval:
an evaluation tool for information retrieval", SIGIR 2019 (the framework and SDCG).

A user reading rank i goes on to rank i+1 with probability C_i; the weight of rank i is
W_i = Π_{j<i} C_j / Σ_{n<=N} Π_{j<n} C_j, and the measure is the expected gain per
document read, Σ_i W_i · g_i (cwl_eval's "expected utility"). As in cwl_eval the ranking
is cut or padded to N = 1000 positions (its ``max_n``), and gains are the labels scaled
into [0, 1] as ir_measures' cwl_eval provider does: g = (clip(l, min_rel, max_rel) -
min_rel) / (max_rel - min_rel), negative labels first raised to 0; unjudged documents gain
0 (cwl_eval's "worse case")::

    INST(T):    C_i = ((i + 2T - G_i - 1) / (i + 2T - G_i))^2      G_i = Σ_{j<=i} g_j
    INSQ(T):    C_i = ((i + 2T - 1) / (i + 2T))^2
    BPM(T)@K:   C_i = 1 while G_i < T and i < K, else 0:  Σ_{i<=m} g_i / m,
                m = min(first i with G_i >= T, K, N)
    SDCG@k:     C_i = log(i+1)/log(i+2) for i < k, else 0:
                Σ_{i<=k} g_i / log2(i+1)  ÷  Σ_{i<=k} 1 / log2(i+1)

SDCG is DCG scaled by the DCG of k fully relevant documents (nDCG "assuming at least k
relevant documents exist"). T is the total gain the user wants (default 1), K the number
of documents they are willing to read. ``max_rel`` defaults to 1 here (labels >= 1 gain 1,
the binary gains cwl_eval reads from binary qrels); ir_measures requires it: for TREC DL's
0-3 labels write ``INST(T=1,max_rel=3)``. ``BPM(T=1,K=1000)`` is another spelling of
ir_measures' ``BPM(T=1)@1000``. The relevance level does not apply.

>>> from searcheval_frames.measures import parse_measure
>>> [parse_measure(n).name for n in ["INST(T=1)", "INSQ(T=2)", "BPM(T=1,K=1000)",
...                                   "BPM(T=1,max_rel=3)@20", "SDCG@10"]]
['INST', 'INSQ(t=2.0)', 'BPM@1000', 'BPM(max_rel=3)@20', 'SDCG@10']
>>> import polars as pl, searcheval_frames as sef
>>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
>>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["b", "c"], "relevance": [1, 1]})
>>> sef.evaluate(run, qrels, ["BPM@2", "BPM@3"])["value"].to_list()  # reads a, b; a, b
[0.5, 0.5]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import polars as pl

from ._params import Param, non_negative_int, params_of, positive_int
from .base import Context, Family, Measure, parameter_error, register

#: positions cwl_eval (and ir_measures' provider) cuts or pads every ranking to
DEPTH = 1000
_F = pl.Float64


def _positive(text: str) -> float:
    v = float(text)
    if not v > 0.0 or math.isinf(v):
        raise ValueError(text)
    return v


T = Param("t", _positive, "units of gain the user wants before stopping (> 0)", default="1",
          low=0, open_low=True)
MIN_REL = Param("min_rel", non_negative_int, "label scaled to gain 0", default="0", low=0)
MAX_REL = Param("max_rel", positive_int, "label scaled to gain 1: gain = (label - min_rel) / "
                "(max_rel - min_rel), clipped", default="1", low=1)
K = Param("k", positive_int, "the most documents read (the same as @K)", low=1)


class _CWL(Family):
    params: ClassVar[Mapping[str, Param | Callable[[str], Any]]] = params_of(T, MIN_REL, MAX_REL)
    param_defaults: ClassVar[Mapping[str, Any]] = {"t": 1.0, "min_rel": 0, "max_rel": 1}

    def validate(self, m: Measure, text: str) -> None:
        super().validate(m, text)
        if m.param("min_rel", 0) >= m.param("max_rel", 1):
            raise parameter_error(
                text, "min_rel must be below max_rel (the labels are scaled into [0, 1] by "
                "(label - min_rel) / (max_rel - min_rel))", f"{self.name}(max_rel=3)")

    @staticmethod
    def gain(m: Measure) -> pl.Expr:
        """The scaled gain of each judged row, exact Python values per label."""
        lo, hi = int(m.param("min_rel", 0)), int(m.param("max_rel", 1))
        label = pl.col("relevance").clip(lower_bound=0).clip(lo, hi)
        expr: Any = pl.when(label == lo).then(0.0)
        for level in range(lo + 1, hi + 1):
            expr = expr.when(label == level).then((level - lo) / (hi - lo))
        return expr.otherwise(0.0).cast(_F)

    @staticmethod
    def top() -> pl.Expr:
        return pl.col("rank") <= DEPTH

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        return pl.col(col)


@register
class INST(_CWL):
    name = "INST"
    aliases = ("inst",)
    summary = ("INST (Moffat et al. 2015), cwl_eval's adaptive user model: the user wants T "
               "units of gain and is more likely to go on while they lack them. Gains "
               "label/max_rel (max_rel=1 by default); rankings cut or padded to 1000.")
    formula = ("INST = Σ_i W_i g_i, W_i ∝ Π_{j<i} C_j, C_i = ((i+2T-G_i-1)/(i+2T-G_i))^2, "
               "G_i = Σ_{j<=i} g_j")
    example = "INST(T=1)"

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        two_t = 2.0 * float(m.param("t", 1.0))
        g = self.gain(m).filter(self.top())
        rank = pl.col("rank").filter(self.top())
        pos = pl.int_range(1, DEPTH + 1, dtype=pl.Int64)
        # cumulative gain at every position 1..N: the judged rows ranked at or above it
        reached = pl.concat([pl.lit(0.0, _F), g.cum_sum()]).gather(
            rank.search_sorted(pos, side="right"))
        x = pos.cast(_F) + two_t - reached
        ratio = (x - 1.0) / x
        seen = pl.concat([pl.lit(1.0, _F), (ratio * ratio).head(DEPTH - 1).cum_prod()])
        return [(g * seen.gather(rank - 1)).sum().alias(col), seen.sum().alias(f"{col}|z")]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        z = pl.col(f"{col}|z")
        return pl.when(z > 0).then(pl.col(col) / z).otherwise(0.0)


def _insq_seen(two_t: float, rank: pl.Expr) -> pl.Expr:
    """Π_{j<i} ((j+2T-1)/(j+2T))^2, telescoped: (2T / (i+2T-1))^2."""
    r = two_t / (rank.cast(_F) + (two_t - 1.0))
    return r * r


@register
class INSQ(_CWL):
    name = "INSQ"
    aliases = ("insq",)
    summary = ("INSQ (Moffat et al. 2012), INST's static forerunner: the chance of reading on "
               "depends on T and the rank only. Gains label/max_rel; rankings cut or padded "
               "to 1000 positions.")
    formula = "INSQ = Σ_i W_i g_i, W_i ∝ (2T/(i+2T-1))^2 over i = 1..1000"
    example = "INSQ(T=1)"

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        two_t = 2.0 * float(m.param("t", 1.0))
        g = self.gain(m).filter(self.top())
        return [(g * _insq_seen(two_t, pl.col("rank").filter(self.top()))).sum().alias(col)]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        two_t = 2.0 * float(m.param("t", 1.0))
        z = 0.0
        for i in range(1, DEPTH + 1):  # one constant per measure, the same for every query
            r = two_t / (i + (two_t - 1.0))
            z += r * r
        return pl.col(col) * (1.0 / z)


@register
class BPM(_CWL):
    name = "BPM"
    aliases = ("bpm",)
    cutoff = "int"
    cutoff_required = True
    params = params_of(T, MIN_REL, MAX_REL, K)
    summary = ("Bejeweled player model, static (Zhang et al. 2017; cwl_eval): the user reads "
               "until T units of gain or K documents, whichever comes first; the mean gain of "
               "what was read. BPM(T=1)@K = BPM(T=1,K=K).")
    formula = "BPM(T)@K = Σ_{i<=m} g_i / m,  m = min(first i with Σ_{j<=i} g_j >= T, K, 1000)"
    example = "BPM(T=1)@1000"

    def normalize(self, m: Measure) -> Measure:
        k = m.param("k")
        if k is None:
            return m
        if m.cutoff is not None and m.cutoff != k:
            raise parameter_error(
                m.name, f"K={k} and @{m.cutoff} both set how many documents BPM reads; give "
                "one", f"BPM(T=1)@{k}")
        return Measure(m.family, k, tuple(p for p in m.params if p[0] != "k"))

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        t = float(m.param("t", 1.0))
        g = self.gain(m).filter(self.top())
        rank = pl.col("rank").filter(self.top())
        enough = rank.filter(g.cum_sum() >= t).first().cast(pl.Int64)
        read = pl.min_horizontal(enough.fill_null(DEPTH), pl.lit(min(int(m.cutoff or 1), DEPTH)))
        return [g.filter(rank <= read).sum().alias(col), read.alias(f"{col}|m")]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        # a query without judged rows read min(K, 1000) documents and gained nothing
        return pl.col(col) / pl.col(f"{col}|m").cast(_F).replace(0.0, 1.0)


@register
class SDCG(_CWL):
    name = "SDCG"
    aliases = ("sdcg",)
    cutoff = "int"
    cutoff_required = True
    params = params_of(MIN_REL, MAX_REL)
    param_defaults = {"min_rel": 0, "max_rel": 1}
    summary = ("Scaled DCG (cwl_eval's NDCG-k): DCG@k of gains label/max_rel divided by the DCG "
               "of k fully relevant documents, i.e. nDCG assuming at least k relevant "
               "documents exist.")
    formula = "SDCG@k = Σ_{i<=k} g_i/log2(i+1) ÷ Σ_{i<=k} 1/log2(i+1)"
    example = "SDCG@10"

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        k = min(int(m.cutoff or 1), DEPTH)
        contrib = self.gain(m) / (pl.col("rank").cast(_F) + 1.0).log(2)
        return [contrib.filter(pl.col("rank") <= k).sum().alias(col)]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        k = min(int(m.cutoff or 1), DEPTH)
        z = 0.0
        for i in range(1, k + 1):  # one constant per measure
            z += 1.0 / math.log2(i + 1.0)
        return pl.col(col) * (1.0 / z)
