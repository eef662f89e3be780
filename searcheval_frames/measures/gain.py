"""trec_eval's experimental gain measures that walk the ideal ranking: G, ndcg_rel, Rndcg.

Gains are the labels (``gain=exp``: 2^label - 1; ``gain={1:3,2:9}``: a custom map, unmapped
labels keep their own value) exactly as for :class:`~searcheval_frames.measures.ndcg.NDCG`.
The *ideal ranking* lists every judged document with a positive gain, best first; position
``j`` of it has the ideal gain ``I_j``, and ``P`` is its length. The three measures need ``I_j``
position by position, so the ideal list of each query is rebuilt inside the query's group
from its number of documents per label (labels 0 to :data:`MAX_LABEL`; a larger label raises
:class:`~searcheval_frames.errors.InvalidRelevanceError`).

Definitions follow trec_eval 10 (``m_G.c``, ``m_ndcg_rel.c``, ``m_Rndcg.c``, ``gain_init.c``).
One trec_eval quirk is not copied: it orders the gain levels with a comparison that truncates
gain differences to integers, so custom gains that differ by less than 1 may be put in an
arbitrary order; here they are ordered exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl

from ..errors import InvalidRelevanceError
from ._params import GAIN, params_of
from .base import Context, Family, Measure, register
from .ndcg import gain_expr

#: Largest label the ideal-ranking measures accept (labels are counted per level).
MAX_LABEL = 10

Gains = tuple[tuple[int, float], ...] | str | None


def _gain_of(gains: Gains, level: int) -> float:
    if gains is None or gains == "linear":
        return float(level)
    if gains == "exp":
        return 2.0**level - 1.0
    return float(dict(gains).get(level, level))  # type: ignore[arg-type]


def _register_levels(ctx: Context) -> None:
    ctx.rel_levels.update(range(MAX_LABEL + 2))


def _count_col(level: int) -> str:
    return f"_num_rel_{level}"


def _levels(gains: Gains, col: Callable[[str], pl.Expr]) -> list[tuple[float, pl.Expr, pl.Expr]]:
    """(gain value, documents with exactly that gain, documents with at least that gain),
    for each distinct positive gain value, best first."""
    count = {lvl: col(_count_col(lvl)) - col(_count_col(lvl + 1)) for lvl in range(MAX_LABEL + 1)}
    by_gain: dict[float, list[int]] = {}
    for lvl in range(MAX_LABEL + 1):
        g = _gain_of(gains, lvl)
        if g > 0:
            by_gain.setdefault(g, []).append(lvl)
    out = []
    for g in sorted(by_gain, reverse=True):
        exact = pl.sum_horizontal([count[lvl] for lvl in by_gain[g]])
        at_least = pl.sum_horizontal(
            [count[lvl] for h, lvls in by_gain.items() if h >= g for lvl in lvls])
        out.append((g, exact, at_least))
    return out


def _ideal_len(levels: list[tuple[float, pl.Expr, pl.Expr]]) -> pl.Expr:
    return levels[-1][2] if levels else pl.lit(0, dtype=pl.Int64)


def _first(name: str) -> pl.Expr:
    return pl.col(name).first()


class _Ideal:
    """The ideal ranking of the current query, inside its group (positions 0..P, I_0 = 0)."""

    def __init__(self, gains: Gains) -> None:
        self.levels = _levels(gains, _first)
        self.P = _ideal_len(self.levels)
        self.pos = pl.int_range(0, self.P + 1, dtype=pl.Int64)
        gain: Any = pl.when(self.pos == 0).then(0.0)
        for g, _, at_least in self.levels:
            gain = gain.when(self.pos <= at_least).then(g)
        self.gain = gain.otherwise(0.0)
        disc = (self.pos.cast(pl.Float64) + 1.0).log(2)
        self.dcg = pl.when(self.pos == 0).then(0.0).otherwise(self.gain / disc).cum_sum()

    def at(self, seq: pl.Expr, k: pl.Expr) -> pl.Expr:
        """``seq`` at position min(k, P)."""
        return seq.gather(pl.min_horizontal(k, self.P))


def _guard(value: pl.Expr, name: str) -> pl.Expr:
    """``value``, after checking that no query has a label above :data:`MAX_LABEL`."""

    def check(s: pl.Series) -> pl.Series:
        if (s.fill_null(0) > 0).any():
            raise InvalidRelevanceError(
                f"{name} rebuilds the ideal ranking from the number of documents per label and "
                f"supports labels 0 to {MAX_LABEL}; the qrels have larger labels. Map them to "
                f"0..{MAX_LABEL} (e.g. qrels.with_columns(pl.col('relevance').clip(upper_bound="
                f"{MAX_LABEL}))) or use nDCG."
            )
        return s

    over = pl.col(_count_col(MAX_LABEL + 1)).map_batches(check, return_dtype=pl.Int64)
    return pl.when(over.fill_null(0) == 0).then(value).otherwise(None)


def _dcg_row(m: Measure) -> tuple[pl.Expr, pl.Expr]:
    g = gain_expr(m.param("gain"), pl.col("relevance"))
    return g, g / (pl.col("rank").cast(pl.Float64) + 1.0).log(2)


_GAIN = params_of(GAIN)


@register
class G(Family):
    name = "G"
    aliases = ("g", "normalized_gain")
    trec = "G"
    params = _GAIN
    summary = ("trec_eval's G (experimental, 2008): each retrieved document with gain g at rank "
               "i scores g / log2(2 + ideal cost up to i - gain retrieved up to i), the ideal "
               "cost adding max(ideal gain, 1) per position; the sum is divided by the total "
               "ideal gain.")
    formula = ("G = Σ_i g_i / log2(2 + Σ_{j<=i} max(I_j, 1) - Σ_{j<=i} g_j) / Σ_j I_j "
               "(I_j = 0 past the ideal list)")
    example = "G"

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        _register_levels(ctx)
        ideal = _Ideal(m.param("gain"))
        g, _ = _dcg_row(m)
        cost = pl.when(ideal.pos == 0).then(0.0).otherwise(
            pl.max_horizontal(ideal.gain, pl.lit(1.0))).cum_sum()
        beyond = (pl.col("rank") - ideal.P).clip(lower_bound=0).cast(pl.Float64)
        spent = ideal.at(cost, pl.col("rank")) + beyond
        part = pl.when(g != 0).then(g / (2.0 + spent - g.cum_sum()).log(2)).otherwise(0.0)
        return [part.sum().alias(col), ideal.gain.sum().alias(f"{col}|ideal")]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        ideal = pl.col(f"{col}|ideal")
        return _guard(pl.when(ideal > 0).then(pl.col(col) / ideal).otherwise(0.0), "G")


@register
class NDCGRel(Family):
    name = "nDCGRel"
    aliases = ("ndcg_rel", "ndcgrel")
    trec = "ndcg_rel"
    params = _GAIN
    summary = ("trec_eval's ndcg_rel (experimental): nDCG averaged over the relevant "
               "(positive-gain) documents: at the rank of each retrieved one, DCG there / ideal "
               "DCG there; each unretrieved one counts the final DCG / ideal DCG.")
    formula = ("nDCGRel = (1/P) [Σ_{g_i>0} DCG@i / IDCG@min(i,P) + (P - |retrieved with g>0|) "
               "DCG / IDCG@P]")
    example = "nDCGRel"

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        _register_levels(ctx)
        ideal = _Ideal(m.param("gain"))
        g, row = _dcg_row(m)
        ratio = (row.cum_sum() / ideal.at(ideal.dcg, pl.col("rank"))).filter(g > 0).sum()
        found = (g > 0).sum()
        best = ideal.dcg.last()
        rest = (ideal.P - found).cast(pl.Float64) * row.sum() / best
        total = ratio + pl.when(best > 0).then(rest).otherwise(0.0)
        return [total.alias(col), ideal.P.alias(f"{col}|P")]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        n = pl.col(f"{col}|P").cast(pl.Float64)
        return _guard(pl.when((pl.col(col) > 0) & (n > 0)).then(pl.col(col) / n).otherwise(0.0),
                      "nDCGRel")


@register
class RnDCG(Family):
    name = "RnDCG"
    aliases = ("rndcg", "r_ndcg")
    trec = "Rndcg"
    params = _GAIN
    summary = ("trec_eval's Rndcg (experimental): mean of nDCG at the 'R levels', the ranks "
               "where the ideal gain drops (after the documents of the best gain, of the two "
               "best gains, ...), plus nDCG at the end of the list when the list is longer than "
               "the ideal one + 1. 0 when the query has no relevant document.")
    formula = "RnDCG = mean_{c in {M_1..M_T} ∪ {|ret| if |ret| > P+1}} DCG@c / IDCG@min(c,P)"
    example = "RnDCG"

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        _register_levels(ctx)
        ideal = _Ideal(m.param("gain"))
        _, row = _dcg_row(m)
        if ideal.levels:
            ascending = list(reversed(ideal.levels))  # R levels by ascending cut-off
            cuts = pl.concat([at_least for _, _, at_least in ascending])
            counted = pl.concat([exact > 0 for _, exact, _ in ascending])
            # DCG of the run at each cut: cumulative DCG over the judged rows ranked <= cut
            upto = pl.col("rank").search_sorted(cuts, side="right")
            dcg = pl.concat([pl.lit(0.0), row.cum_sum()]).gather(upto)
            total = (dcg / ideal.dcg.gather(cuts)).filter(counted).sum()
            count = counted.cast(pl.Int64).sum()
        else:
            total, count = pl.lit(0.0), pl.lit(0, dtype=pl.Int64)
        best = ideal.dcg.last()
        final = pl.when(best > 0).then(row.sum() / best).otherwise(0.0)
        return [total.alias(col), count.alias(f"{col}|n"), final.alias(f"{col}|end"),
                ideal.P.alias(f"{col}|P")]

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        extra = pl.col("num_ret") > pl.col(f"{col}|P") + 1
        total = pl.col(col) + pl.when(extra).then(pl.col(f"{col}|end")).otherwise(0.0)
        n = (pl.col(f"{col}|n") + extra.cast(pl.Int64)).cast(pl.Float64)
        ok = (ctx.num_rel(m) > 0) & (n > 0)
        return _guard(pl.when(ok).then(total / n).otherwise(0.0), "RnDCG")
