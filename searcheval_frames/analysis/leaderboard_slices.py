"""A leaderboard per slice of the queries: ``sef.leaderboard(..., queries=q, by="intent")``.

Each slice (see :mod:`searcheval_frames.core.slicing`: a value of a column of the query
metadata, or of a polars expression over it) gets the leaderboard of its queries: the
same means, ranks, rank intervals and test as :func:`~searcheval_frames.leaderboard` on
the per-query scores filtered to that slice, with the same ``seed`` (each slice draws
from a fresh generator seeded with ``seed``).

**Which family.** The Tukey procedures (randomised or studentized range) control the
family-wise error over all pairs *of one slice*: their max-statistic is the range of
that slice's run means. With ``S`` slices that can be tested, ``family="all"`` (the
default) adds a Bonferroni correction over the slices on top, so that the whole
family (every pair of every slice) is controlled at ``alpha``:

* each slice's leaderboard is built at level ``alpha / S`` with simultaneous intervals
  of confidence ``1 − (1 − ci) / S`` (so its group letters, intervals and
  ``significant`` are exactly those of ``sef.leaderboard(subset, alpha=alpha / S,
  ci=1 − (1 − ci) / S)``);
* :attr:`SlicedLeaderboard.pairs` ``p_value`` is ``min(1, S · p)`` with ``p`` the
  slice's own family-wise p-value (kept as ``p_within_slice``), so ``p_value ≤ alpha``
  exactly when the slice's test at ``alpha / S`` rejects.

Bonferroni over slices rather than one randomisation over all slices: the slices hold
different queries, so the shuffles of one slice say nothing about another, and a
joint max-statistic over slices of different sizes would let the largest slice
dominate; Bonferroni is exact in its guarantee, needs no assumption on how the slices
depend, and keeps "interval excludes 0" and "p ≤ alpha" the same statement.
``family="slice"`` treats each slice as its own family (the numbers of
``sef.leaderboard`` on each subset at ``alpha``, with no correction over slices).

Slices with fewer than ``min_queries`` queries are flagged ``small`` and named in a
warning with their **minimum detectable Δ**: the smallest ``|Δ|`` between two runs
that a paired t-test at ``alpha`` (before any correction over pairs or slices, so a
lower bound on what the leaderboard needs) finds with probability ``power``, from the
noncentral t (:mod:`.noncentral`), with the sd of a paired difference estimated as
``√(2 V_E)`` from the slice's two-way ANOVA residual variance ``V_E`` (Sakai, "Topic
set size design", *Inf. Retr. J.* 19(3), 2016).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import polars as pl

from .._deprecation import outside_stacklevel
from ..core.slicing import attach_slices, slice_keys
from ..errors import EmptyInputError, SearchEvalWarning
from ..frames import Kind, to_native
from ..options import check_choice, check_float, check_int
from . import pairs as _pairs
from .leaderboard_build import build, score_matrix, untestable
from .leaderboard_result import Leaderboard
from .noncentral import detectable

__all__ = ["FAMILIES", "SlicedLeaderboard", "by_slice", "slice_label"]

#: Accepted ``family=`` values of a sliced leaderboard.
FAMILIES = ("all", "slice")


def slice_label(names: list[str], values: tuple) -> str:
    """``"length=1-3"`` (``"intent=nav, length=long"`` with several slice columns)."""
    return ", ".join(f"{c}={v}" for c, v in zip(names, values, strict=True))


class SlicedLeaderboard:
    """Result of ``leaderboard(..., queries=, by=)``: one leaderboard per slice.

    Attributes
    ----------
    frame
        The slice columns, then the columns of :attr:`Leaderboard.frame` for each
        slice (best run first), then ``n_queries``, ``detectable_delta`` (minimum
        detectable Δ) and ``small``; in the caller's frame kind.
    pairs
        The slice columns, then :attr:`Leaderboard.pairs` per slice, with ``p_value``
        adjusted over the slices (``family="all"``: ``min(1, S·p)``) and
        ``p_within_slice`` (the slice's own family-wise p-value).
    per_slice
        ``{slice values: Leaderboard}``, each built at the within-slice level
        :attr:`slice_alpha`.
    slices
        Names of the slice columns.
    n_tested
        ``S``: the slices that could be tested (the Bonferroni factor with
        ``family="all"``).
    """

    def __init__(self, frame: pl.DataFrame, pairs: pl.DataFrame,
                 per_slice: dict[tuple, Leaderboard], *, slices: list[str], measure: str,
                 test: str, alpha: float, ci: float, family: str, n_tested: int,
                 min_queries: int, power: float, kind: Kind) -> None:
        self._frame, self._pairs, self.per_slice = frame, pairs, per_slice
        self.slices, self.measure, self.test = slices, measure, test
        self.alpha, self.ci, self.family, self.n_tested = alpha, ci, family, n_tested
        self.min_queries, self.power, self.kind = min_queries, power, kind

    @property
    def slice_alpha(self) -> float:
        """The level each slice is tested at: ``alpha / S`` with ``family="all"``."""
        return self.alpha / self.n_tested if self.family == "all" else self.alpha

    @property
    def frame(self) -> Any:
        """Runs per slice, best first, in the caller's frame kind."""
        return to_native(self._frame, self.kind)

    @property
    def pairs(self) -> Any:
        """All pairs of every slice in the caller's frame kind."""
        return to_native(self._pairs, self.kind)

    def to_polars(self) -> pl.DataFrame:
        """:attr:`frame` as polars."""
        return self._frame.clone()

    def labels(self) -> dict[tuple, str]:
        """``{slice values: "length=1-3"}`` in slice order."""
        return {key: slice_label(self.slices, key) for key in self.per_slice}

    def describe_method(self) -> str:
        """The family: how the slices' tests are combined."""
        k = self._pairs.height
        if self.family == "slice":
            return (f"one family per slice ({k} pairs in {len(self.per_slice)} slices, "
                    f"each at alpha = {self.alpha:g}; no correction over slices)")
        return (f"one family of all {k} pairs in {len(self.per_slice)} slices: within a "
                f"slice the test's own correction, over the {self.n_tested} testable "
                f"slices Bonferroni (each slice at alpha = {self.alpha:g}/{self.n_tested}"
                f" = {self.slice_alpha:.4g}; p-values × {self.n_tested})")

    def headline(self, baseline: str | None = None) -> str:
        """One line per slice: ``"length=1-3 (12 queries): A and B tied."``."""
        from .leaderboard_text import sliced_headline

        return sliced_headline(self, baseline)

    def to_markdown(self, digits: int = 3) -> str:
        """One Markdown table per slice, with the method underneath."""
        from .leaderboard_text import sliced_markdown

        return sliced_markdown(self, digits)

    def _repr_html_(self) -> str:
        from .leaderboard_text import sliced_html

        return sliced_html(self)

    def __repr__(self) -> str:
        return (f"SlicedLeaderboard({self.measure}, {self.test}, slices={self.slices})\n"
                + self.to_markdown())


def _mdd(lb: Leaderboard, n: int, alpha: float, power: float) -> float:
    """Minimum detectable Δ of a pair at ``n`` queries: ``δ*(n) · √(2 V_E)``."""
    v_e = float(lb._anova["V_E"][0]) if "V_E" in lb._anova.columns else math.nan
    if n < 2 or not v_e > 0:
        return math.nan
    return float(detectable(np.array([n]), alpha, power, "two-sided")[0]) * math.sqrt(2 * v_e)


def by_slice(args: dict[str, Any]) -> SlicedLeaderboard:
    """``leaderboard(..., queries=, by=)``; ``args`` are leaderboard's (``locals()``),
    validated there except the slice options."""
    alpha, ci, measure, seed = args["alpha"], args["ci"], args["measure"], args["seed"]
    family = check_choice("leaderboard", "family", args["family"], FAMILIES,
                          example="family='all'")
    min_queries = check_int("leaderboard", "min_queries", args["min_queries"], minimum=1,
                            example="min_queries=20")
    power = check_float("leaderboard", "power", args["power"], minimum=alpha, maximum=1,
                        open_min=True, open_max=True,
                        what="the power of the minimum detectable Δ", example="power=0.8")
    keys = slice_keys(args["queries"], args["by"])
    names = keys.columns[1:]
    pq, _, kind = _pairs.load(args["per_query"], runs=args["runs"], qrels=args["qrels"],
                              measures=[measure], columns=args["columns"],
                              missing=args["missing"],
                              evaluate_options=dict(args["evaluate_options"]),
                              func="leaderboard")
    sliced = attach_slices(pq, keys, "leaderboard")
    values = [tuple(r) for r in sliced.select(names).unique().sort(
        names, nulls_last=True).iter_rows()]
    if not values:
        raise EmptyInputError("leaderboard(by=...): no query to rank")
    mats = []
    for key in values:
        sub = sliced.filter(*(pl.col(c).eq_missing(pl.lit(v, dtype=sliced.schema[c]))
                              for c, v in zip(names, key, strict=True))).drop(names)
        X, runs, _ = score_matrix(sub, None, None, measure, args["missing"], None, {})
        mats.append((key, X, runs, untestable(X)))
    s = max(1, sum(r is None for *_, r in mats)) if family == "all" else 1
    per_slice, frames, pairs = {}, [], []
    for key, X, runs, reason in mats:
        lb = build(X, runs, measure=measure, test=args["test"], alpha=alpha / s,
                   ci=1.0 - (1.0 - ci) / s, n_resamples=args["n_resamples"],
                   rng=np.random.default_rng(seed), reason=reason, kind=kind,
                   progress=args["progress"])
        per_slice[key] = lb
        lits = [pl.lit(v, dtype=sliced.schema[c]).alias(c) for c, v in zip(names, key,
                                                                            strict=True)]
        n = X.shape[0]
        frames.append(lb._frame.select(*lits, pl.all()).with_columns(
            pl.lit(n, dtype=pl.Int64).alias("n_queries"),
            pl.lit(_mdd(lb, n, alpha, power), dtype=pl.Float64).alias("detectable_delta"),
            pl.lit(n < min_queries).alias("small")))
        pairs.append(lb._pairs.select(*lits, pl.all()).with_columns(
            (pl.col("p_value") * s).clip(upper_bound=1.0).alias("p_value"),
            pl.col("p_value").alias("p_within_slice")))
    out = SlicedLeaderboard(pl.concat(frames), pl.concat(pairs), per_slice, slices=names,
                            measure=measure, test=args["test"], alpha=alpha, ci=ci,
                            family=family, n_tested=s if family == "all" else
                            sum(r is None for *_, r in mats), min_queries=min_queries,
                            power=power, kind=kind)
    _warn(out, mats)
    return out


def _warn(lb: SlicedLeaderboard, mats: list[tuple]) -> None:
    """One warning naming the small slices (with their minimum detectable Δ) and the
    slices that cannot be tested."""
    fr = lb._frame.unique(subset=lb.slices, keep="first", maintain_order=True)
    small = []
    for r in fr.filter(pl.col("small")).iter_rows(named=True):
        where = slice_label(lb.slices, tuple(r[c] for c in lb.slices))
        mdd = r["detectable_delta"]
        small.append(f"{where} ({r['n_queries']} queries)" + (
            "" if mdd != mdd else f": two runs must differ by |Δ| >= {mdd:.3f} to be found "
            f"with {lb.power:.0%} power"))
    untested = [f"{slice_label(lb.slices, key)} ({reason}, {X.shape[0]} queries)"
                for key, X, _, reason in mats if reason is not None]
    parts = []
    if small:
        parts.append(f"slices with fewer than {lb.min_queries} queries have little power "
                     f"(paired t-test at alpha={lb.alpha:g}, before any correction, so the "
                     "leaderboard needs more): " + "; ".join(small[:6])
                     + ". Read their ranks as anecdotes, or label more queries of them")
    if untested:
        parts.append("cannot be tested (p-values and intervals NaN): " + "; ".join(untested[:6]))
    if parts:
        warnings.warn(f"leaderboard(by=...) on {lb.measure}: " + ". ".join(parts) + ".",
                      SearchEvalWarning, stacklevel=outside_stacklevel())
