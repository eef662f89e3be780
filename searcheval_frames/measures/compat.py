"""Compatibility: rank-biased overlap between the run and an ideal ranking.

Clarke, Vtyurina & Smucker, "Assessing top-k preferences", ACM TOIS 39(3), 2021
(the measure ir_measures calls ``Compat``). The ideal ranking lists the relevant
documents (label > 0) by label, best first; among equal labels in the run's order,
then those the run did not retrieve, in the order of the qrels. With R the ranking,
I the ideal and D = max(|R|, |I|)::

    RBO(R, I)  = Σ_{i<=D} p^(i-1) · |R[:i] ∩ I[:i]| / i   /   Σ_{i<=D} p^(i-1)
    Compat     = RBO(R, I) / RBO(I, I)            (normalize=True, the default)

A relevant document at rank r in the run and s in the ideal adds p^(i-1)/i at every
depth i >= max(r, s); the sums use one table of Σ p^(i-1)/i. Persistence p = 0.95 by
default. The relevance level does not apply (any label > 0 is in the ideal).

Difference from ir_measures: it places documents the run did not retrieve at score 0 in
the ideal's tie order, so a retrieved document with a *negative* score comes after them
there; here retrieved documents always come first. On runs with tied scores the ranking
itself differs (ties by ``doc_id`` descending here, ascending in ir_measures).

>>> from searcheval_frames.measures import parse_measure
>>> parse_measure("compat").name, parse_measure("Compat(p=0.8,normalize=false)").name
('Compat', 'Compat(normalize=False,p=0.8)')
"""

from __future__ import annotations

from typing import Any

import polars as pl

from ._params import PERSISTENCE, Param, params_of
from .base import Context, Family, Measure, register

DEFAULT_P = 0.95
_Q = "query_id"
_K = ["run", _Q]


def _flag(text: str) -> bool:
    t = text.strip().lower()
    if t in ("true", "1", "yes"):
        return True
    if t in ("false", "0", "no"):
        return False
    raise ValueError(text)


@register
class Compat(Family):
    name = "Compat"
    aliases = ("compat", "compatibility")
    params = params_of(
        Param("p", PERSISTENCE.parse, "persistence of the rank-biased overlap, in (0, 1)",
              default=str(DEFAULT_P), low=0, high=1, open_low=True, open_high=True),
        Param("normalize", _flag, "divide by the ideal ranking's own overlap (true/false)",
              default="true"))
    param_defaults = {"p": DEFAULT_P, "normalize": True}
    summary = ("Compatibility (Clarke et al. 2021): rank-biased overlap (p=0.95) between the run "
               "and the ideal ranking (relevant documents by label, ties in run order), divided "
               "by the ideal's own overlap (normalize=false: not divided).")
    formula = ("Compat = Σ_{i<=D} p^(i-1)|R[:i]∩I[:i]|/i  /  Σ_{i<=D} p^(i-1)·min(i,|I|)/i,  "
               "D = max(|R|, |I|)")
    example = "Compat"

    def per_query(
        self, m: Measure, ctx: Context, col: str, ranked: Any, qrels: pl.DataFrame
    ) -> pl.DataFrame:
        """``run, query_id, col`` from the ranked frames and the qrels (in their order)."""
        p = float(m.param("p", DEFAULT_P))
        if "subtopic" in qrels.columns:
            qrels = qrels.group_by(_Q, "doc_id", maintain_order=True).agg(pl.col("relevance").max())
        good = qrels.with_row_index("_o").filter(pl.col("relevance") > 0).select(
            _Q, "doc_id", "relevance", "_o")
        ideal = (
            ranked.num_ret.select(*_K, "num_ret")
            .join(good, on=_Q, how="inner")
            .join(ranked.judged.select(*_K, "doc_id", "rank"), on=[*_K, "doc_id"], how="left")
            .sort([*_K, "relevance", "rank", "_o"], descending=[False, False, True, False, False],
                  nulls_last=True)
            .with_columns(
                pl.int_range(1, pl.len() + 1).over(_K).alias("_s"),
                pl.len().over(_K).alias("_L"),
            )
            .with_columns(pl.max_horizontal("num_ret", "_L").alias("_D"))
        )
        if ideal.height == 0:
            return ranked.num_ret.select(*_K, pl.lit(0.0).alias(col))
        depth = int(ideal.select(pl.col("_D").max()).item())
        # S(n) = Σ_{i<=n} p^(i-1)/i for n = 0..depth
        table = pl.DataFrame({"_n": pl.int_range(0, depth + 1, eager=True)}).with_columns(
            pl.when(pl.col("_n") > 0)
            .then(pl.lit(p).pow(pl.col("_n") - 1) / pl.col("_n"))
            .otherwise(0.0)
            .cum_sum()
            .alias("_S")
        )

        def s_of(expr_col: str, alias: str) -> pl.DataFrame:
            return table.rename({"_n": expr_col, "_S": alias})

        per = (
            ideal.with_columns(
                pl.max_horizontal("rank", "_s").alias("_m1"),
            )
            .with_columns((pl.col("_m1") - 1).alias("_m0"))
            .join(s_of("_m0", "_Sm"), on="_m0", how="left")
            .join(s_of("_D", "_SD"), on="_D", how="left")
            .join(s_of("_L", "_SL"), on="_L", how="left")
            .group_by(_K)
            .agg(
                # overlap: retrieved relevant documents only (rank not null)
                (pl.col("_SD") - pl.col("_Sm")).filter(pl.col("rank").is_not_null()).sum()
                .alias("_num"),
                pl.col("_SD").first(), pl.col("_SL").first(),
                pl.col("_L").first(), pl.col("_D").first(),
            )
        )
        L = pl.col("_L").cast(pl.Float64)
        if m.param("normalize", True):
            # Σ_{i<=D} p^(i-1) min(i, L)/i = Σ_{i<=L} p^(i-1) + L (S(D) - S(L))
            den = (1.0 - pl.lit(p).pow(L)) / (1.0 - p) + L * (pl.col("_SD") - pl.col("_SL"))
        else:
            den = (1.0 - pl.lit(p).pow(pl.col("_D").cast(pl.Float64))) / (1.0 - p)
        return per.select(
            *_K, pl.when(den > 0).then(pl.col("_num") / den).otherwise(0.0).alias(col))

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        return pl.col(col)
