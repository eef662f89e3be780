"""Expected Reciprocal Rank (ERR), the cascade user model for graded labels.

Chapelle, Metzler, Zhang & Grinspan, "Expected reciprocal rank for graded
relevance", CIKM 2009. A user scans the ranking top down and stops at rank i
with probability R_i, the "satisfaction" of the document there::

    R(g)   = (2^g - 1) / 2^g_max            g = the label (negative labels count 0)
    ERR@k  = Σ_{i<=k} (1/i) · R_i · Π_{j<i} (1 - R_j)

``g_max`` is the top of the label scale. As gdeval (TREC Web track 2010-2014,
ir_measures' ERR provider) it is fixed at 4 and not taken from the data, so a
value does not change when a query happens to lack top-grade documents; pass
``ERR(max_rel=3)@20`` for a 0-3 scale such as TREC DL's. A label above
``max_rel`` would make R exceed 1 (gdeval refuses such qrels), so evaluation
stops with :class:`~searcheval_frames.errors.InvalidRelevanceError` naming
those rows. Unjudged documents have R = 0: they keep their rank but neither
satisfy nor stop the user. There is no normalisation by an ideal ranking.

>>> from searcheval_frames.measures import parse_measure
>>> parse_measure("err@20").name, parse_measure("ERR(max_rel=3)@10").param("max_rel")
('ERR@20', 3)
"""

from __future__ import annotations

import polars as pl

from ..errors import InvalidRelevanceError, format_rows
from ._params import Param, params_of, positive_int
from .base import Context, Family, Measure, register

#: gdeval's fixed maximum grade ($MAX_JUDGMENT)
DEFAULT_MAX_REL = 4


MAX_REL = Param("max_rel", positive_int, "the largest label: a label l stops the user with "
                "probability (2^l - 1) / 2^max_rel", default=str(DEFAULT_MAX_REL), low=1)


@register
class ERR(Family):
    name = "ERR"
    aliases = ("err", "expected_reciprocal_rank")
    cutoff = "int"
    params = params_of(MAX_REL)
    param_defaults = {"max_rel": DEFAULT_MAX_REL}
    summary = ("Expected reciprocal rank (Chapelle et al. 2009): the expected 1/rank at which a "
               "cascading user stops, stopping at a document with probability "
               "(2^label-1)/2^max_rel; max_rel = 4 by default, as gdeval (TREC Web track) and "
               "ir_measures. Graded; ignores the relevance level.")
    formula = "ERR@k = Σ_{i<=k} R_i/i · Π_{j<i}(1-R_j),  R = (2^g-1)/2^max_rel"
    example = "ERR@20"

    def check_qrels(self, m: Measure, qrels: pl.DataFrame) -> None:
        top = m.param("max_rel", DEFAULT_MAX_REL)
        bad = qrels.filter(pl.col("relevance") > top)
        if bad.height:
            raise InvalidRelevanceError(
                f"qrels: {bad.height} label(s) exceed {m.name}'s maximum grade {top} (ERR "
                f"stops at a document with probability (2^label-1)/2^{top}, which must stay "
                f"below 1):\n{format_rows(bad)}\nPass the top of your label scale, e.g. "
                f"'ERR(max_rel={bad['relevance'].max()!s})@{m.cutoff or 20}'."
            )

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        top = float(2 ** m.param("max_rel", DEFAULT_MAX_REL))
        g = pl.col("relevance").clip(lower_bound=0).cast(pl.Float64)
        stop = (pl.lit(2.0).pow(g) - 1.0) / top
        # probability of reaching each row: product of (1 - R) over the rows above it
        # (unjudged rows have R = 0 and are not in the frame; they change nothing)
        reach = (1.0 - stop).cum_prod().shift(1, fill_value=1.0)
        contrib = stop * reach / pl.col("rank").cast(pl.Float64)
        if m.cutoff is not None:
            contrib = contrib.filter(pl.col("rank") <= m.cutoff)
        return [contrib.sum().alias(col)]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        return pl.col(col)
