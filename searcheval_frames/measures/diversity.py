"""alpha-nDCG: novelty- and diversity-aware nDCG over subtopic judgments.

Clarke, Kolla, Cormack, Vechtomova, Ashkan, Büttcher & MacKinnon, "Novelty and
diversity in information retrieval evaluation", SIGIR 2008; computed as
``ndeval`` (TREC Web track 2009-2014) and ir_measures' ``alpha_nDCG`` do.

Judgments are per subtopic: ``query_id, subtopic, doc_id, relevance`` (pass them to
:func:`~searcheval_frames.evaluate` as qrels with a ``subtopic`` column). A
document covers subtopic t when its label for t is >= the relevance level
(``rel=``, default the evaluation's ``relevance_level``, 1). A subtopic already
covered c times above rank i is worth only (1 - alpha)^c there::

    gain_i          = Σ_{t covered by d_i} (1 - alpha)^(c_t(i))
    alpha-DCG@k     = Σ_{i<=k} gain_i / log2(i + 1)
    alpha-nDCG@k    = alpha-DCG@k / alpha-DCG@k of the ideal ranking

The ideal ranking is, as in ndeval, built greedily (the exact one is NP-hard): at
each rank take the document with the largest gain given the subtopics covered so
far, ties going to the larger ``doc_id`` (byte order). Unjudged documents gain 0.
Documents are ranked as for every other measure (score descending, ties by
``doc_id`` descending); ndeval itself sorts by the run's rank column, ir_measures
(pyndeval) by score then ``doc_id`` ascending. The other measures of the same
call see one label per document: its largest label over the subtopics.

>>> from searcheval_frames.measures import parse_measure
>>> parse_measure("alpha_nDCG@20").name, parse_measure("alpha-ndcg(alpha=0.3)@10").param("alpha")
('alpha-nDCG@20', 0.3)
"""

from __future__ import annotations

from typing import Any

import polars as pl

from ..errors import MissingColumnError
from ._params import REL, Param, closed_unit, params_of
from .base import Context, Family, Measure, register

DEFAULT_ALPHA = 0.5
_Q = "query_id"


ALPHA = Param("alpha", closed_unit, "redundancy penalty: a subtopic covered c times gains "
              "(1-alpha)^c, in [0, 1]", default=str(DEFAULT_ALPHA), low=0, high=1)


def _discount(rank: pl.Expr) -> pl.Expr:
    return (rank.cast(pl.Float64) + 1.0).log(2)


def ideal_alpha_dcg(covers: pl.DataFrame, alpha: float, depth: int) -> pl.DataFrame:
    """Greedy ideal alpha-DCG@depth per query, from ``query_id, doc_id, subtopic`` covers.

    One step per rank (``depth`` steps, each over all queries at once).
    """
    picks = greedy_ideal_gains(covers, alpha, depth)
    if picks.height == 0:
        return pl.DataFrame(schema={_Q: pl.String, "ideal": pl.Float64})
    # times the inverse, written out: polars divides a column by a scalar exactly on
    # one row but multiplies by its inverse on longer ones (an ulp apart), and a query's
    # value must not depend on how many queries share the frame (parts, Spark, Dask)
    return picks.select(_Q, (pl.col("g") * (1.0 / _discount(pl.col("rank")))).alias("ideal")
                        ).group_by(_Q, maintain_order=True).agg(_in_order_sum(pl.col("ideal")))


def greedy_ideal_gains(covers: pl.DataFrame, alpha: float, depth: int | None) -> pl.DataFrame:
    """``query_id, rank, g``: the gain at each rank of ndeval's greedy ideal ranking, from
    ``query_id, doc_id, subtopic`` covers, to rank ``depth`` (None: every covering document).

    At each rank the document with the largest gain Σ_t (1-alpha)^(c_t) given the subtopics
    covered above it, ties to the larger ``doc_id``; one step per rank, over all queries at
    once (alpha-nDCG, nERR-IA and nNRBP normalise by it).
    """
    keep = 1.0 - alpha
    cand = covers.select(_Q, "doc_id", "subtopic")
    seen = covers.select(_Q, "subtopic").head(0).with_columns(pl.lit(0, pl.Int64).alias("c"))
    picks = []
    r = 0
    while depth is None or r < depth:
        r += 1
        if cand.height == 0:
            break
        gains = (
            cand.join(seen, on=[_Q, "subtopic"], how="left")
            .group_by(_Q, "doc_id")
            .agg(pl.lit(keep).pow(pl.col("c").fill_null(0)).sum().alias("g"))
        )
        best = (
            gains.sort([_Q, "g", "doc_id"], descending=[False, True, True])
            .group_by(_Q, maintain_order=True)
            .first()
        )
        picks.append(best.select(_Q, pl.lit(r, pl.Int64).alias("rank"), "g"))
        chosen = cand.join(best.select(_Q, "doc_id"), on=[_Q, "doc_id"], how="semi")
        seen = (
            pl.concat([seen, chosen.select(_Q, "subtopic", pl.lit(1, pl.Int64).alias("c"))])
            .group_by(_Q, "subtopic")
            .agg(pl.col("c").sum())
        )
        cand = cand.join(best.select(_Q, "doc_id"), on=[_Q, "doc_id"], how="anti")
    if not picks:
        return pl.DataFrame(schema={_Q: covers.schema[_Q], "rank": pl.Int64, "g": pl.Float64})
    return pl.concat(picks).sort(_Q, "rank", maintain_order=True)


def in_order_sum(values: pl.Expr) -> pl.Expr:
    """The sum of a group's values added one by one, in row order (see ``_in_order_sum``)."""
    return _in_order_sum(values)


def _in_order_sum(values: pl.Expr) -> pl.Expr:
    """The sum of a group's values added one by one, in row order.

    A group ``sum`` is added up differently when polars knows the key is sorted (as
    for one query alone, in a part of the queries) than when it is not (an ulp
    apart); a query's value must not depend on the other queries of its frame.
    """
    return values.cum_sum().last()


@register
class AlphaNDCG(Family):
    name = "alpha-nDCG"
    aliases = ("alpha_ndcg", "alphandcg", "a-ndcg", "andcg")
    cutoff = "int"
    cutoff_required = True
    params = params_of(ALPHA, REL)
    param_defaults = {"alpha": DEFAULT_ALPHA}
    #: computed from the subtopic judgments: evaluate reads the qrels' subtopic column and
    #: calls :meth:`per_query` (instead of ``agg``) with the ranked frames and those qrels
    subtopics = True
    summary = ("alpha-nDCG (Clarke et al. 2008): nDCG over subtopic judgments where a subtopic "
               "already covered c times gains only (1-alpha)^c (alpha=0.5 by default); the "
               "ideal ranking is ndeval's greedy one. Needs qrels with a subtopic column.")
    formula = ("alpha-nDCG@k = Σ_{i<=k} Σ_{t∈d_i} (1-α)^{c_t(i)} / log2(i+1), divided by the "
               "same for the greedy ideal ranking")
    example = "alpha-nDCG@20"

    def check_qrels(self, m: Measure, qrels: pl.DataFrame) -> None:
        if "subtopic" not in qrels.columns:
            raise MissingColumnError(
                f"qrels: {m.name} needs judgments per subtopic, but the qrels have no "
                f"'subtopic' column (columns: {qrels.columns}). Pass a frame with columns "
                "query_id, subtopic, doc_id, relevance (TREC diversity qrels 'topic subtopic "
                "docno judgment'), e.g. pl.read_csv(path, separator=' ', has_header=False, "
                "new_columns=['query_id', 'subtopic', 'doc_id', 'relevance']), or "
                "columns={'subtopic': 'your_column'}."
            )

    def per_query(
        self, m: Measure, ctx: Context, col: str, ranked: Any, subtopics: pl.DataFrame
    ) -> pl.DataFrame:
        """``run, query_id, col`` from the ranked judged rows and the subtopic judgments."""
        judged = ranked.judged
        alpha = float(m.param("alpha", DEFAULT_ALPHA))
        k = int(m.cutoff or 0)
        covers = subtopics.filter(pl.col("relevance") >= ctx.level(m)).select(
            _Q, "doc_id", "subtopic"
        )
        rows = (
            judged.filter(pl.col("rank") <= k)
            .select("run", _Q, "doc_id", "rank")
            .join(covers, on=[_Q, "doc_id"], how="inner")
            .sort(["run", _Q, "subtopic", "rank"])
            .with_columns(pl.int_range(pl.len()).over(["run", _Q, "subtopic"]).alias("_c"))
        )
        dcg = rows.group_by("run", _Q).agg(
            _in_order_sum(pl.lit(1.0 - alpha).pow(pl.col("_c")) / _discount(pl.col("rank")))
            .alias("_dcg")
        )
        ideal = ideal_alpha_dcg(covers, alpha, k)
        joined = dcg.join(ideal, on=_Q, how="left")
        # as Series: a join with one query's ideal broadcasts it as a scalar, which polars
        # divides by through its inverse (an ulp off the division of two columns)
        return pl.DataFrame(joined.get_columns()).select(
            "run", _Q,
            pl.when(pl.col("ideal") > 0).then(pl.col("_dcg") / pl.col("ideal")).otherwise(0.0)
            .alias(col),
        )

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        return pl.col(col)
