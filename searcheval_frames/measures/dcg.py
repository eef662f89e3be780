"""Discounted cumulative gain without normalisation (DCG), as ranx and scikit-learn.

Järvelin & Kekäläinen, "Cumulated gain-based evaluation of IR techniques", ACM TOIS
20(4), 2002; the exponential gain is Burges et al., "Learning to rank using gradient
descent", ICML 2005. With the trec_eval discount::

    DCG@k            = Σ_{i<=k} g(rel_i) / log2(i + 1)
    g(l)             = l                 (gain=linear, the default: ranx ``dcg``)
    g(l)             = 2^l - 1           (gain=exp: ranx ``dcg_burges``)
    g(l)             = map[l]            (gain={0:0,1:1,2:3}: a custom map)

Negative labels and unjudged documents gain 0 (as for nDCG, and as ranx, which
counts only labels >= 1; scikit-learn's ``dcg_score`` would add a negative label). Without ``@k`` the whole ranking counts. The value is not
divided by anything, so it grows with k and with the label scale: compare runs on one
set of queries, not across collections.

Ties: documents are ranked as for every measure here (score descending, then
``doc_id`` descending, trec_eval's order). scikit-learn's ``dcg_score`` averages the
gains of tied documents unless ``ignore_ties=True``; ranx orders ties by its own sort.
On tie-free rankings the three agree to the last bit (tests/test_measures_dcg.py).

>>> from searcheval_frames.measures import parse_measure
>>> parse_measure("dcg@10").name, parse_measure("dcg_burges@10").name
('DCG@10', 'DCG(gain=exp)@10')
>>> parse_measure("DCG(gain=linear)@5").name
'DCG@5'
>>> import polars as pl, searcheval_frames as sef
>>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
>>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "c"], "relevance": [2, 1]})
>>> sef.evaluate(run, qrels, ["DCG@3", "DCG(gain=exp)@3"])["value"].to_list()  # 2/1 + 1/2
[2.5, 3.5]
"""

from __future__ import annotations

import polars as pl

from ._params import GAIN, params_of
from .base import Context, Family, Measure, register
from .ndcg import gain_expr


@register
class DCG(Family):
    name = "DCG"
    aliases = ("dcg",)
    pinned = {"dcg_burges": {"gain": "exp"}}  # ranx: 2^label - 1 gains
    cutoff = "int"
    params = params_of(GAIN)
    param_defaults = {"gain": "linear"}
    summary = ("Discounted cumulative gain, not normalised (Järvelin & Kekäläinen 2002): "
               "Σ gain/log2(rank+1) with gain = the label (ranx dcg, scikit-learn dcg_score); "
               "gain=exp: 2^label-1 (ranx dcg_burges); gain={0:0,1:1,2:3}: a custom map. "
               "Negative labels gain 0; the relevance level does not apply.")
    formula = "DCG@k = Σ_{i<=k} g(rel_i) / log2(i+1)"
    example = "DCG@10"

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        g = gain_expr(m.param("gain"), pl.col("relevance"))
        contrib = g / (pl.col("rank").cast(pl.Float64) + 1.0).log(2)
        if m.cutoff is not None:
            contrib = contrib.filter(pl.col("rank") <= m.cutoff)
        return [contrib.sum().alias(col)]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        return pl.col(col)


