"""The intent-aware diversity family of ndeval: ERR-IA, nERR-IA, P-IA, AP-IA, NRBP, nNRBP,
StRecall.

Judgments are per subtopic (``query_id, subtopic, doc_id, relevance``; as for
:mod:`~searcheval_frames.measures.diversity`'s alpha-nDCG) and binary, as in ndeval: a
document covers subtopic t when its label for t is >= the relevance level (``rel=``,
default the evaluation's ``relevance_level``). S is the number of the query's subtopics
that some document covers (ndeval's "actual subtopics"); c_t(i) is how often t is covered
above rank i; with alpha = 0.5 and beta = 0.5 by default (ndeval's ``-alpha``/``-beta``)::

    g_i          = Σ_{t covered by d_i} (1 - alpha)^(c_t(i))          (alpha-nDCG's gain)
    ERR-IA@k     = Σ_{i<=k} g_i / i  ÷  S · Σ_{i<=k} (1 - alpha)^(i-1) / i
    nERR-IA@k    = Σ_{i<=k} g_i / i  ÷  the same for the greedy ideal ranking
    P-IA@k       = Σ_{i<=k} |subtopics covered by d_i|  ÷  (k · S)
    StRecall@k   = |subtopics covered by d_1..d_k|  ÷  S
    AP-IA        = (1/S) Σ_t  Σ_{d_i covers t} (c_t(i) + 1)/i  ÷  |documents covering t|
    NRBP         = (1 - (1 - alpha) · beta) / S · Σ_i g_i · beta^(i-1)
    nNRBP        = Σ_i g_i · beta^(i-1)  ÷  the same for the greedy ideal ranking

References: Agrawal, Gollapudi, Halverson & Ieong, "Diversifying search results", WSDM
2009 (the -IA measures); Chapelle, Ji, Liao, Velipasaoglu, Lai & Wu, "Intent-based
diversification of web search", IRJ 14(6), 2011 (ERR-IA); Clarke, Kolla & Vechtomova,
"An effectiveness measure for ambiguous and underspecified queries", ICTIR 2009 (NRBP);
Zhai, Cohen & Lafferty, "Beyond independent relevance", SIGIR 2003 (S-recall). Computed as
``ndeval`` (TREC Web track 2009-2014) and ir_measures' pyndeval provider do; the greedy
ideal ranking is alpha-nDCG's (ties to the larger ``doc_id``).

ERR-IA is ndeval's: an ERR over the alpha gains divided by an "ideal ideal" in which every
document covers every subtopic. ndeval leaves ERR-IA@1 undivided (its normalising loop
starts at rank 2), so there ndeval's value is S times ours; every other cutoff agrees.
NRBP, nNRBP and AP-IA read the whole ranking; the others the top k (ndeval caps k at 20,
here any k works). A query without any covered subtopic scores 0 on every measure (ndeval
prints NaN for its nNRBP). Unjudged documents cover nothing. Documents are ranked as for
every other measure (score descending, ties by ``doc_id`` descending); pyndeval breaks ties
by ``doc_id`` ascending.

>>> from searcheval_frames.measures import parse_measure
>>> [parse_measure(n).name for n in ["ERR_IA@20", "nerr_ia@20", "P_IA@10", "AP_IA", "NRBP",
...                                   "nNRBP(beta=0.8)", "StRecall@20"]]
['ERR-IA@20', 'nERR-IA@20', 'P-IA@10', 'AP-IA', 'NRBP', 'nNRBP(beta=0.8)', 'StRecall@20']
>>> import polars as pl, searcheval_frames as sef
>>> sub = pl.DataFrame({"query_id": "q", "subtopic": ["1", "2", "1"],
...                     "doc_id": ["a", "a", "b"], "relevance": 1})
>>> run = pl.DataFrame({"query_id": "q", "doc_id": ["b", "x", "a"], "score": [3.0, 2.0, 1.0]})
>>> out = sef.evaluate(run, sub, ["P-IA@3", "StRecall@1", "StRecall@3", "AP-IA"])
>>> out["value"].round(4).to_list()  # 3 covers in 3·2; 1 of 2; 2 of 2; (1/2)·((1+2/3)/2 + 1/3)
[0.5, 0.5, 1.0, 0.5833]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Literal

import polars as pl

from ._params import REL, Param, closed_unit, params_of
from .base import Context, Family, Measure, register
from .diversity import ALPHA, DEFAULT_ALPHA, AlphaNDCG, greedy_ideal_gains, in_order_sum

#: ndeval's default beta (NRBP's patience)
DEFAULT_BETA = 0.5
_Q = "query_id"
_K = ["run", _Q]


BETA = Param("beta", closed_unit, "patience of the rank-biased user, in [0, 1]", default="0.5",
             low=0, high=1)


def _frame(df: pl.DataFrame) -> pl.DataFrame:
    # as Series: a join with one query broadcasts it as a scalar, which polars divides by
    # through its inverse (an ulp off the division of two columns); see diversity.py
    return pl.DataFrame(df.get_columns())


class _IntentAware(Family):
    """Shared parts: subtopic qrels, the covering rows of the run, the subtopic counts."""

    cutoff: ClassVar[Literal["int", "float", None]] = "int"
    cutoff_required = True
    params: ClassVar[Mapping[str, Param | Callable[[str], Any]]] = params_of(REL)
    #: evaluate passes the qrels with their subtopic column to :meth:`per_query`
    subtopics = True

    def check_qrels(self, m: Measure, qrels: pl.DataFrame) -> None:
        AlphaNDCG.check_qrels(self, m, qrels)  # type: ignore[arg-type]

    @staticmethod
    def covers(m: Measure, ctx: Context, subtopics: pl.DataFrame) -> pl.DataFrame:
        return subtopics.filter(pl.col("relevance") >= ctx.level(m)).select(
            _Q, "doc_id", "subtopic").unique(maintain_order=True)

    @staticmethod
    def rows(m: Measure, ranked: Any, covers: pl.DataFrame) -> pl.DataFrame:
        """``run, query_id, doc_id, rank, subtopic, c`` for each covering (document,
        subtopic) pair of the ranking (top k with a cutoff); ``c`` = covers of the subtopic
        above this rank."""
        judged = ranked.judged
        if m.cutoff is not None:
            judged = judged.filter(pl.col("rank") <= m.cutoff)
        return (
            judged.select("run", _Q, "doc_id", "rank")
            .join(covers, on=[_Q, "doc_id"], how="inner")
            .sort(["run", _Q, "subtopic", "rank"])
            .with_columns(pl.int_range(pl.len()).over(["run", _Q, "subtopic"]).alias("c"))
        )

    @staticmethod
    def n_subtopics(covers: pl.DataFrame) -> pl.DataFrame:
        return covers.group_by(_Q).agg(pl.col("subtopic").n_unique().cast(pl.Float64).alias("S"))

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        return pl.col(col)


def _with_power(frame: pl.DataFrame, exponent: str, base: float, name: str) -> pl.DataFrame:
    """``frame`` with ``name`` = base ** exponent, joined from a table of powers.

    Not ``pl.lit(base).pow(...)``: polars computes a power differently (an ulp apart) on
    a one-row frame or group than on longer ones, and a query's value must not depend on
    the other queries of its frame (parts, Spark, Dask).
    """
    top = frame.select(pl.col(exponent).max().fill_null(0).cast(pl.Int64)).item()
    n = int(top) + 1
    table = pl.DataFrame({exponent: pl.Series(range(n)).cast(frame.schema[exponent]),
                          name: [base**i for i in range(n)]})
    return frame.join(table, on=exponent, how="left", maintain_order="left")


def _per_rank(rows: pl.DataFrame, alpha: float) -> pl.DataFrame:
    """``run, query_id, rank, g``: the alpha gain of each ranked document that covers any."""
    return (_with_power(rows.sort(["run", _Q, "rank", "subtopic"]), "c", 1.0 - alpha, "w")
            .group_by(["run", _Q, "rank"], maintain_order=True)
            .agg(in_order_sum(pl.col("w")).alias("g")))


def _ratio(num: pl.DataFrame, den: pl.DataFrame, col: str, times: float = 1.0) -> pl.DataFrame:
    joined = _frame(num.join(den, on=_Q, how="left"))
    value = pl.col("num") / pl.col("den")
    if times != 1.0:
        value = value * times
    return joined.select(*_K, pl.when(pl.col("den") > 0).then(value).otherwise(0.0).alias(col))


def _err_numerator(fam: Any, m: Measure, ctx: Context, ranked: Any,
                   subtopics: pl.DataFrame) -> tuple[float, pl.DataFrame, pl.DataFrame]:
    """ERR-IA's and nERR-IA's shared first steps: alpha, the coverage rows, and per (run,
    query) ``num = Σ_{i<=k} g_i / i`` over the run's ranked documents."""
    alpha = float(m.param("alpha", DEFAULT_ALPHA))
    covers = fam.covers(m, ctx, subtopics)
    num = _per_rank(fam.rows(m, ranked, covers), alpha).group_by(
        _K, maintain_order=True).agg(in_order_sum(pl.col("g") / pl.col("rank")).alias("num"))
    return alpha, covers, num


@register
class ERRIA(_IntentAware):
    name = "ERR-IA"
    aliases = ("err_ia", "erria", "err-ia")
    params = params_of(REL, ALPHA)
    param_defaults = {"alpha": DEFAULT_ALPHA}
    summary = ("Intent-aware ERR as ndeval computes it: Σ alpha-gain/rank over the top k "
               "divided by the same for an ideal where every document covers all S subtopics "
               "(alpha=0.5). Needs qrels with a subtopic column.")
    formula = "ERR-IA@k = Σ_{i<=k} g_i/i ÷ S·Σ_{i<=k} (1-α)^(i-1)/i,  g_i = Σ_{t∈d_i} (1-α)^{c_t(i)}"
    example = "ERR-IA@20"

    def per_query(self, m: Measure, ctx: Context, col: str, ranked: Any,
                  subtopics: pl.DataFrame) -> pl.DataFrame:
        alpha, covers, num = _err_numerator(self, m, ctx, ranked, subtopics)
        ideal_ideal = 0.0
        for i in range(1, int(m.cutoff or 0) + 1):  # one constant, the same for every query
            ideal_ideal += (1.0 - alpha) ** (i - 1) / i
        den = self.n_subtopics(covers).select(_Q, (pl.col("S") * ideal_ideal).alias("den"))
        return _ratio(num, den, col)


@register
class NERRIA(_IntentAware):
    name = "nERR-IA"
    aliases = ("nerr_ia", "nerria", "nerr-ia")
    params = params_of(REL, ALPHA)
    param_defaults = {"alpha": DEFAULT_ALPHA}
    summary = ("ERR-IA normalised by the greedy ideal ranking (ndeval's, as alpha-nDCG's): "
               "Σ alpha-gain/rank over the top k of the run ÷ of the ideal (alpha=0.5).")
    formula = "nERR-IA@k = Σ_{i<=k} g_i/i ÷ Σ_{i<=k} g*_i/i  (g* = greedy ideal gains)"
    example = "nERR-IA@20"

    def per_query(self, m: Measure, ctx: Context, col: str, ranked: Any,
                  subtopics: pl.DataFrame) -> pl.DataFrame:
        alpha, covers, num = _err_numerator(self, m, ctx, ranked, subtopics)
        den = greedy_ideal_gains(covers, alpha, int(m.cutoff or 0)).group_by(
            _Q, maintain_order=True).agg(in_order_sum(pl.col("g") / pl.col("rank")).alias("den"))
        return _ratio(num, den, col)


@register
class PIA(_IntentAware):
    name = "P-IA"
    aliases = ("p_ia", "pia", "precision-ia", "precision_ia")
    summary = ("Intent-aware precision (ndeval): covered (document, subtopic) pairs in the "
               "top k ÷ (k · S), S = subtopics with a relevant document.")
    formula = "P-IA@k = Σ_{i<=k} |subtopics of d_i| ÷ (k·S)"
    example = "P-IA@20"

    def per_query(self, m: Measure, ctx: Context, col: str, ranked: Any,
                  subtopics: pl.DataFrame) -> pl.DataFrame:
        covers = self.covers(m, ctx, subtopics)
        num = self.rows(m, ranked, covers).group_by(_K).agg(
            pl.len().cast(pl.Float64).alias("num"))
        den = self.n_subtopics(covers).select(_Q, (pl.col("S") * float(m.cutoff or 1)).alias("den"))
        return _ratio(num, den, col)


@register
class StRecall(_IntentAware):
    name = "StRecall"
    aliases = ("strec", "st_recall", "st-recall", "s-recall", "subtopic_recall")
    summary = ("Subtopic recall (Zhai et al. 2003; ndeval's strec): share of the query's "
               "subtopics covered by the top k.")
    formula = "StRecall@k = |∪_{i<=k} subtopics of d_i| ÷ S"
    example = "StRecall@20"

    def per_query(self, m: Measure, ctx: Context, col: str, ranked: Any,
                  subtopics: pl.DataFrame) -> pl.DataFrame:
        covers = self.covers(m, ctx, subtopics)
        num = self.rows(m, ranked, covers).group_by(_K).agg(
            pl.col("subtopic").n_unique().cast(pl.Float64).alias("num"))
        return _ratio(num, self.n_subtopics(covers).rename({"S": "den"}), col)


@register
class APIA(_IntentAware):
    name = "AP-IA"
    aliases = ("ap_ia", "apia", "map-ia", "map_ia")
    cutoff = None
    cutoff_required = False
    summary = ("Intent-aware average precision (ndeval's MAP-IA per query): AP per subtopic "
               "over the whole ranking, averaged over the S subtopics with a relevant document.")
    formula = "AP-IA = (1/S) Σ_t Σ_{d_i covers t} (c_t(i)+1)/i ÷ |documents covering t|"
    example = "AP-IA"

    def per_query(self, m: Measure, ctx: Context, col: str, ranked: Any,
                  subtopics: pl.DataFrame) -> pl.DataFrame:
        covers = self.covers(m, ctx, subtopics)
        n_rel = covers.group_by(_Q, "subtopic").agg(pl.len().cast(pl.Float64).alias("R"))
        per_t = _frame(
            self.rows(m, ranked, covers)
            .group_by(["run", _Q, "subtopic"], maintain_order=True)
            .agg(in_order_sum((pl.col("c") + 1).cast(pl.Float64) / pl.col("rank")).alias("ap"))
            .join(n_rel, on=[_Q, "subtopic"], how="left"))
        num = (per_t.select(*_K, "subtopic", (pl.col("ap") / pl.col("R")).alias("ap"))
               .sort(["run", _Q, "subtopic"])
               .group_by(_K, maintain_order=True).agg(in_order_sum(pl.col("ap")).alias("num")))
        return _ratio(num, self.n_subtopics(covers).rename({"S": "den"}), col)


class _NRBPBase(_IntentAware):
    cutoff = None
    cutoff_required = False
    params = params_of(REL, ALPHA, BETA)
    param_defaults = {"alpha": DEFAULT_ALPHA, "beta": DEFAULT_BETA}

    @staticmethod
    def decayed(frame: pl.DataFrame, keys: list[str], beta: float) -> pl.DataFrame:
        """Σ g_i · beta^(i-1) per group of ``keys`` (rows in rank order)."""
        frame = _with_power(frame.with_columns((pl.col("rank") - 1).alias("e")), "e", beta, "d")
        return frame.group_by(keys, maintain_order=True).agg(
            in_order_sum(pl.col("g") * pl.col("d")).alias("num"))

    def run_sum(self, m: Measure, ctx: Context, ranked: Any,
                subtopics: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, float, float]:
        alpha = float(m.param("alpha", DEFAULT_ALPHA))
        beta = float(m.param("beta", DEFAULT_BETA))
        covers = self.covers(m, ctx, subtopics)
        gains = _per_rank(self.rows(m, ranked, covers), alpha)
        return self.decayed(gains, _K, beta), covers, alpha, beta


@register
class NRBP(_NRBPBase):
    name = "NRBP"
    aliases = ("nrbp",)
    summary = ("Novelty- and rank-biased precision (Clarke et al. 2009; ndeval): RBP over "
               "alpha gains with patience beta, scaled by (1-(1-alpha)·beta)/S "
               "(alpha = beta = 0.5). Whole ranking.")
    formula = "NRBP = (1-(1-α)β)/S · Σ_i g_i β^(i-1)"
    example = "NRBP"

    def per_query(self, m: Measure, ctx: Context, col: str, ranked: Any,
                  subtopics: pl.DataFrame) -> pl.DataFrame:
        num, covers, alpha, beta = self.run_sum(m, ctx, ranked, subtopics)
        den = self.n_subtopics(covers).rename({"S": "den"})
        return _ratio(num, den, col, times=1.0 - (1.0 - alpha) * beta)


@register
class NNRBP(_NRBPBase):
    name = "nNRBP"
    aliases = ("nnrbp",)
    summary = ("NRBP normalised by the NRBP of the greedy ideal ranking (ndeval's nNRBP); "
               "0 for a query without relevant documents.")
    formula = "nNRBP = Σ_i g_i β^(i-1) ÷ Σ_i g*_i β^(i-1)  (g* = greedy ideal gains)"
    example = "nNRBP"

    def per_query(self, m: Measure, ctx: Context, col: str, ranked: Any,
                  subtopics: pl.DataFrame) -> pl.DataFrame:
        num, covers, alpha, beta = self.run_sum(m, ctx, ranked, subtopics)
        ideal = self.decayed(greedy_ideal_gains(covers, alpha, None), [_Q], beta)
        return _ratio(num, ideal.rename({"num": "den"}), col)
