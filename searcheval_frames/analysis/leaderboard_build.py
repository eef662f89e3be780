"""Assemble a :class:`~searcheval_frames.analysis.leaderboard.Leaderboard` from the score
matrix: run rows (means, comparison intervals, ranks, letters), pair rows, ANOVA row."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import polars as pl

from ..errors import InsufficientDataError, InvalidOptionError
from ..frames import Kind
from . import leaderboard_stats as _ls
from . import pairs as _pairs
from .inference import MIN_QUERIES
from .leaderboard_result import Leaderboard
from .leaderboard_stats import pairwise_family

__all__ = ["build", "score_matrix", "untestable"]

_NAN = float("nan")


def score_matrix(per_query: Any, runs: Any, qrels: Any, measure: str, missing: str,
                 columns: Mapping[str, str] | None,
                 ev: dict[str, Any]) -> tuple[np.ndarray, list[str], Kind]:
    """The queries x runs matrix of ``measure`` (queries paired as ``compare`` pairs
    them), the run names and the caller's frame kind."""
    pq, measures, kind = _pairs.load(per_query, runs=runs, qrels=qrels, measures=[measure],
                                     columns=columns, missing=missing, evaluate_options=ev,
                                     func="leaderboard")
    if len(measures) != 1:
        raise InvalidOptionError(f"leaderboard(measure={measure!r}): pick one measure; the "
                              f"frame has {measures}")
    names = pq.get_column("run").unique(maintain_order=True).to_list()
    if len(names) < 2:
        raise InsufficientDataError(f"leaderboard: needs per-query scores of at least two runs; "
                              f"the frame has {names}. Evaluate several runs together "
                              "(a 'run' column naming each system).")
    paired = _pairs.pair_queries(pq, names, missing)
    wide = paired.pivot(on="run", index="query_id", values="value").sort("query_id")
    return wide.select(names).to_numpy().astype(np.float64), names, kind


def untestable(X: np.ndarray) -> str | None:
    """Why the runs of ``X`` (queries x runs) cannot be tested, or None: too few
    queries, or no residual spread."""
    if X.shape[0] < MIN_QUERIES:
        return "too few queries"
    if _ls.anova_two_way(X)["SS_E"] <= 1e-12 * max(1.0, float(np.abs(X).max())):
        return "no spread"
    return None


def _empty_family(k: int) -> dict[str, Any]:
    iu, ju = np.triu_indices(k, 1)
    nan = np.full(iu.size, _NAN)
    return {"i": iu, "j": ju, "p": nan, "half": nan, "significant": np.zeros(iu.size, bool)}


def build(X: np.ndarray, names: list[str], *, measure: str, test: str, alpha: float,
          ci: float, n_resamples: int, rng: np.random.Generator, reason: str | None,
          kind: Kind, progress: bool) -> Leaderboard:
    n, k = X.shape
    means = X.mean(axis=0)
    anova = _ls.anova_two_way(X, alpha=alpha) if n >= 2 else {}
    if reason is None:
        fam = pairwise_family(X, test, alpha=alpha, ci=ci, n_resamples=n_resamples, rng=rng,
                              progress=progress)
        ranks = _ls.rank_bootstrap(X, n_resamples, rng, confidence=ci)
    else:
        fam = _empty_family(k)
        ranks = {"rank_low": np.full(k, -1), "rank_high": np.full(k, -1),
                 "p_best": np.full(k, _NAN)}
    order = sorted(range(k), key=lambda j: (-means[j], names[j]))
    sig = np.zeros((k, k), dtype=bool)
    sig[fam["i"], fam["j"]] = fam["significant"]
    sig |= sig.T
    groups = _ls.letters(order, sig) if reason is None else [""] * k
    half = float(np.nanmax(fam["half"])) if reason is None and test != "holm" else _NAN
    if reason is None and test == "holm":  # per-run half of a typical pair's interval
        half = float(np.nanmedian(fam["half"]))
    rank_of = {j: r + 1 for r, j in enumerate(order)}
    frame = pl.DataFrame({
        "run": [names[j] for j in order],
        "mean": [float(means[j]) for j in order],
        "ci_low": [float(means[j] - half / 2) for j in order],
        "ci_high": [float(means[j] + half / 2) for j in order],
        "rank": [rank_of[j] for j in order],
        "rank_low": [int(ranks["rank_low"][j]) if reason is None else None for j in order],
        "rank_high": [int(ranks["rank_high"][j]) if reason is None else None for j in order],
        "p_best": [float(ranks["p_best"][j]) for j in order],
        "group": [groups[j] if reason is None else "cannot be tested" for j in order],
    }, schema={"run": pl.String, "mean": pl.Float64, "ci_low": pl.Float64,
               "ci_high": pl.Float64, "rank": pl.Int64, "rank_low": pl.Int64,
               "rank_high": pl.Int64, "p_best": pl.Float64, "group": pl.String})
    pairs = _pair_frame(fam, means, names, rank_of, anova.get("V_E", _NAN), reason)
    an = pl.DataFrame({key: [float(v)] for key, v in anova.items()}) if anova else pl.DataFrame()
    return Leaderboard(frame, pairs, an, measure=measure, test=test, alpha=alpha, ci=ci,
                       n_resamples=n_resamples, n_queries=n, reason=reason, kind=kind)


def _pair_frame(fam: dict[str, Any], means: np.ndarray, names: list[str],
                rank_of: dict[int, int], v_e: float, reason: str | None) -> pl.DataFrame:
    rows = []
    sd = math.sqrt(v_e) if v_e and v_e > 0 else _NAN
    for t, (i, j) in enumerate(zip(fam["i"], fam["j"], strict=True)):
        a, b = (i, j) if rank_of[i] < rank_of[j] else (j, i)
        d = float(means[a] - means[b])
        h = float(fam["half"][t])
        rows.append({"run_a": names[a], "run_b": names[b], "delta": d,
                     "p_value": float(fam["p"][t]), "ci_low": d - h, "ci_high": d + h,
                     "effect_size": d / sd, "significant": bool(fam["significant"][t]),
                     "reason": reason})
    out = pl.DataFrame(rows, schema={"run_a": pl.String, "run_b": pl.String,
                                     "delta": pl.Float64, "p_value": pl.Float64,
                                     "ci_low": pl.Float64, "ci_high": pl.Float64,
                                     "effect_size": pl.Float64, "significant": pl.Boolean,
                                     "reason": pl.String}, orient="row")
    order = {names[j]: r for j, r in rank_of.items()}
    return out.sort(pl.col("run_a").replace_strict(order, return_dtype=pl.Int64),
                    pl.col("run_b").replace_strict(order, return_dtype=pl.Int64))
