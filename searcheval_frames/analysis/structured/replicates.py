"""Compare systems that each have several replicates (seeds, repeats of a pipeline).

``compare_replicates(runs, qrels, measures, baseline=..., replicate="seed")`` asks:
is system B better than the baseline *as a system*, not as one lucky seed? Per system
``s``, replicate ``r`` and query ``q`` it models (Ferro & Silvello 2016; Carterette 2015)

    y_{s,r,q} = μ + β_s + u_q + w_{q:s} + v_{r:s} + ε_{s,r,q}

plus a query x system term ``w_{q:s}`` (``method="mixed"``: REML fit by statsmodels,
:mod:`.mixed`; ``Δ = β_s − β_base`` with a t interval on Satterthwaite's degrees of
freedom), or resamples
queries, then replicates within each system (``method="bootstrap"``,
:func:`~.bootstrap.replicate_deltas`, percentile interval, no dependency).

Why ``w_{q:s}``: the issue's ``value ~ system + (1 | query) + (1 | replicate:system)``
leaves the system x query interaction in ``ε``, as if each seed's per-query gain were
independent; but a query that PRF helps, it helps in every seed. That model's interval
shrinks as ``1/√(R·Q)`` and came out *narrower* than the flat paired test on the bundled
example, an overclaim. With replicates the interaction is identified (several values
per query and system), so it is in the model (Ferro & Silvello 2016 include it too).

Beside it, the **flat** verdict: the paired t-test on the seed-averaged per-query values,
what a user who averaged the seeds would have concluded. A difference is
"reliably better" only when (1) the structured test, Holm-corrected over the family of
runs x measures, rejects and its interval lies on Δ's side of 0, **and** (2) no single
seed pairing reverses it: every ``mean(system, seed i) − mean(baseline, seed j)`` has
Δ's sign. Fewer than two replicates on both sides: "cannot be tested" (no seed noise
can be estimated).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from ...frames import input_kind
from ...options import check_choice, check_float, check_int
from .. import stats as _st
from ..inference import MIN_QUERIES, interval_alphas, paired_inference
from .bootstrap import bootstrap_p, percentile_interval, replicate_deltas, sd_or_nan
from .inputs import complete_grid, structured_values
from .mixed import fit_mixed, satterthwaite_df, t_interval
from .result import StructuredComparison

__all__ = ["compare_replicates", "seed_extremes", "verdict"]

_NAN = math.nan


def verdict(delta: float, low: float, high: float, p_adj: float, alpha: float,
            reason: str | None, reversed_by_seed: bool = False) -> str:
    """The house verdict from the numbers: "reliably better" / "reliably worse" only
    when the corrected p ≤ α, the interval is on Δ's side of 0 and no seed reverses it.

    >>> verdict(0.1, 0.02, 0.2, 0.01, 0.05, None), verdict(0.1, 0.02, 0.2, 0.01, 0.05, None, True)
    ('reliably better', 'not distinguishable')
    """
    if reason is not None:
        return "cannot be tested"
    side = (low > 0 and delta > 0) or (high < 0 and delta < 0)
    if side and p_adj <= alpha and not reversed_by_seed:
        return "reliably better" if delta > 0 else "reliably worse"
    return "not distinguishable"


def seed_extremes(system: np.ndarray, baseline: np.ndarray) -> tuple[float, float, str]:
    """The smallest and largest Δ over single-seed pairings (system seed i vs baseline
    seed j: means over queries), and the pairing with the smallest.

    >>> seed_extremes(np.array([[0.5, 0.7], [0.1, 0.1]]), np.array([[0.3, 0.3]]))
    (-0.19999999999999998, 0.3, '1,0')
    """
    d = system.mean(axis=1)[:, None] - baseline.mean(axis=1)[None, :]
    i, j = np.unravel_index(int(np.argmin(d)), d.shape)
    return float(d.min()), float(d.max()), f"{i},{j}"


def _matrix(sub: pl.DataFrame, run: str, replicate: str) -> tuple[np.ndarray, list[str]]:
    """Replicates x queries matrix of one run (queries sorted), and the replicate names."""
    wide = (sub.filter(pl.col("run") == run).pivot(on="query_id", index=replicate,
                                                   values="value").sort(replicate))
    qs = sorted(c for c in wide.columns if c != replicate)
    return wide.select(qs).to_numpy().astype(np.float64), wide[replicate].to_list()


def _mixed(sub: pl.DataFrame, run: str, base: str, replicate: str,
           reps: tuple[int, int], engine: str) -> tuple[float, float, float, dict]:
    """Δ, its standard error, Satterthwaite's degrees of freedom and the variance
    components of ``value ~ system + (1|query) + (1|query:system) + (1|replicate:system)``."""
    frame = sub.filter(pl.col("run").is_in([run, base])).with_columns(
        pl.concat_str(["run", replicate], separator=":").alias("replicate_system"),
        pl.concat_str(["run", "query_id"], separator=":").alias("query_system"))
    fit = fit_mixed(frame, fixed="run", random=["query_id", "query_system",
                                                "replicate_system"], reference=base,
                    engine=engine)
    v = fit.variances
    n_q = frame["query_id"].n_unique()
    r_mean = (reps[0] + reps[1]) / 2.0
    df_rep, df_qs = reps[0] + reps[1] - 2, n_q - 1
    df = satterthwaite_df([(v["residual"] + n_q * v["replicate_system"], df_rep),
                           (v["residual"] + r_mean * v["query_system"], df_qs),
                           (-v["residual"], df_rep * df_qs)])
    df = max(df, 1.0) if df == df else float(df_rep)  # (NaN: no mean square to go by)
    return fit.effects[run], fit.se[run], df, {**v, "note": fit.note}


def _row(sub: pl.DataFrame, run: str, base: str, replicate: str, method: str,
         rng: np.random.Generator, n_resamples: int, engine: str) -> dict[str, Any]:
    """Everything of one (run, baseline) on one measure before the correction."""
    V, reps = _matrix(sub, run, replicate)
    W, base_reps = _matrix(sub, base, replicate)
    d = V.mean(axis=0) - W.mean(axis=0)  # seed-averaged per-query differences
    df = (V.shape[0] - 1) + (W.shape[0] - 1)
    lo, hi, pair = seed_extremes(V, W)
    i, j = (int(x) for x in pair.split(","))
    row: dict[str, Any] = {
        "run": run, "baseline": base, "n_queries": V.shape[1], "n_replicates": V.shape[0],
        "baseline_replicates": W.shape[0], "mean": float(V.mean()),
        "baseline_mean": float(W.mean()), "delta": float(V.mean() - W.mean()),
        "query_sd": sd_or_nan(d), "replicate_sd": _pooled_sd([V, W]),
        "seed_min_delta": lo, "seed_max_delta": hi,
        "worst_pairing": f"{reps[i]} vs {base_reps[j]}", "d": d, "df": df,
        "se": _NAN, "samples": None, "reason": None, "note": None,
    }
    if df == 0:
        row["reason"] = "one replicate per system"
    elif V.shape[1] < MIN_QUERIES:
        row["reason"] = "too few queries"
    elif np.ptp(np.concatenate([V.ravel(), W.ravel()])) <= 1e-12:
        row["reason"] = "no spread"
    elif method == "mixed":
        row["delta"], row["se"], row["df"], var = _mixed(sub, run, base, replicate,
                                                         (V.shape[0], W.shape[0]), engine)
        row["note"] = var.pop("note")
        row.update({f"var_{k}": v for k, v in var.items()})
    else:
        row["samples"] = replicate_deltas(V, W, n_resamples, rng)
    return row


def _pooled_sd(mats: Sequence[np.ndarray]) -> float:
    """Pooled sd of one replicate's mean around its system's mean."""
    ss = sum(float(((m.mean(axis=1) - m.mean()) ** 2).sum()) for m in mats)
    df = sum(m.shape[0] - 1 for m in mats)
    return math.sqrt(ss / df) if df > 0 else _NAN


def _infer(rows: list[dict[str, Any]], method: str, alpha: float, ci: float,
           correction: str) -> None:
    """Raw p, corrected p, matched intervals and verdicts of every row (in place):
    structured and flat, each corrected over the whole family."""
    p_flat = np.array([paired_inference(r["d"], "t").p for r in rows])
    p_str = np.array([_structured_p(r) for r in rows])
    for prefix, p in (("flat_", p_flat), ("", p_str)):
        adj = _st.adjust_pvalues(p, correction)
        lv = interval_alphas(p, 1.0 - ci, correction)
        for r, pa, level, raw in zip(rows, adj, lv, p, strict=True):
            if prefix:
                inf = paired_inference(r["d"], "t", alpha=float(level))
                lo, hi, reason = inf.ci_low, inf.ci_high, inf.reason
                delta = float(np.mean(r["d"]))
            elif method == "mixed":
                _, lo, hi = t_interval(r["delta"], r["se"], r["df"], 1.0 - float(level))
                reason, delta = r["reason"], r["delta"]
            else:
                lo, hi = _boot_ci(r, 1.0 - float(level))
                reason, delta = r["reason"], r["delta"]
            rev = not prefix and _reversed(r)
            r.update({f"{prefix}p_value": float(raw), f"{prefix}p_adjusted": float(pa),
                      f"{prefix}ci_low": float(lo), f"{prefix}ci_high": float(hi),
                      f"{prefix}verdict": verdict(delta, lo, hi, pa, alpha, reason, rev)})
            if rev and r["verdict"] == "not distinguishable" and (
                    r["p_adjusted"] <= alpha):
                r["note"] = (f"one seed reverses it: {r['worst_pairing']} gives Δ "
                             f"{r['seed_min_delta'] if delta > 0 else r['seed_max_delta']:+.3f}")


def _structured_p(r: dict[str, Any]) -> float:
    if r["reason"] is not None:
        return _NAN
    if r["samples"] is not None:
        return float(bootstrap_p(r["samples"]))
    return t_interval(r["delta"], r["se"], r["df"], 0.95)[0]


def _boot_ci(r: dict[str, Any], level: float) -> tuple[float, float]:
    if r["samples"] is None:
        return _NAN, _NAN
    lo, hi = percentile_interval(r["samples"], level)
    return float(lo), float(hi)


def _reversed(r: dict[str, Any]) -> bool:
    """Whether a single-seed pairing has the opposite sign (or zero) of Δ."""
    if r["delta"] > 0:
        return r["seed_min_delta"] <= 0
    if r["delta"] < 0:
        return r["seed_max_delta"] >= 0
    return True


_COLUMNS = ["run", "baseline", "measure", "n_queries", "n_replicates", "baseline_replicates",
            "mean", "baseline_mean", "delta", "ci_low", "ci_high", "p_value", "p_adjusted",
            "verdict", "se", "df", "flat_ci_low", "flat_ci_high", "flat_p_adjusted", "flat_verdict",
            "query_sd", "replicate_sd", "seed_noise_share", "seed_min_delta",
            "seed_max_delta", "note"]


def compare_replicates(
    runs: Any = None,
    qrels: Any = None,
    measures: str | Sequence[str] | None = None,
    *,
    baseline: str | None,
    replicate: str,
    per_query: Any = None,
    dataset: str | None = None,
    pairs: str = "baseline",
    method: str = "mixed",
    alpha: float = 0.05,
    ci: float = 0.95,
    correction: str = "holm",
    n_resamples: int = 10_000,
    seed: int | None = 0,
    missing: str = "zero",
    engine: str = "numpy",
    **evaluate_options: Any,
) -> StructuredComparison:
    """Compare each system with the baseline when every system has several replicates.

    Parameters
    ----------
    runs, qrels, measures
        Runs with a ``replicate`` column (and ``run``), qrels, measure names; or
        precomputed values through ``per_query=`` (``run, <replicate>, query_id,
        measure, value``).
    baseline
        The baseline run's name (``None`` only with ``pairs="all"``).
    replicate
        The column naming each run's seed or repeat (labels may repeat across runs:
        the model nests them in their run).
    dataset
        Optional column of the runs and qrels naming the query set: queries are then
        the pairs ``(dataset, query_id)``, all in one model.
    pairs
        ``"baseline"`` (each run against the baseline) or ``"all"`` (every pair of runs,
        one family: what :func:`~searcheval_frames.leaderboard_replicates` ranks by).
    method
        ``"mixed"`` (default; REML linear mixed model) or
        ``"bootstrap"`` (hierarchical: queries, then replicates within system).
    alpha, ci, correction
        Level, interval confidence, correction over the family of runs x measures
        (``"holm"`` default; intervals at the matched levels).
    n_resamples, seed
        Bootstrap samples and the seed (each (run, measure) draws its own stream).
    missing
        ``"zero"`` / ``"skip"`` / ``"error"`` for a query one replicate lacks.
    engine
        The mixed model's fitter: ``"numpy"`` (default, :mod:`.reml`) or
        ``"statsmodels"`` (``MixedLM``; slower, same model).
    **evaluate_options
        Passed to :func:`~searcheval_frames.evaluate` (``relevance_level=2`` ...).

    Returns
    -------
    StructuredComparison
        ``.frame`` (see :class:`~.result.StructuredComparison`), ``.replicates``.

    Notes
    -----
    Model: ``y_{s,r,q} = μ + β_s + u_q + w_{q:s} + v_{r:s} + ε`` (Ferro & Silvello
    2016); ``Δ̂ ± t_{1−α/2, df} se(Δ̂)``, ``df`` Satterthwaite's from the
    mean squares the REML components imply (balanced formulas). A verdict is "reliably better" only when no single
    seed pairing reverses the sign of Δ.

    Examples
    --------
    >>> import numpy as np, polars as pl, searcheval_frames as sef
    >>> rng = np.random.default_rng(0)
    >>> base = rng.uniform(0.2, 0.8, 30)
    >>> rows = [{"run": s, "seed": r, "query_id": f"q{q}", "measure": "nDCG@10",
    ...          "value": base[q] + shift + 0.02 * r + rng.normal(0, 0.05)}
    ...         for s, shift in (("bm25", 0.0), ("dense", 0.1)) for r in range(3)
    ...         for q in range(30)]
    >>> res = sef.compare_replicates(per_query=pl.DataFrame(rows), baseline="bm25",
    ...                              replicate="seed", method="bootstrap", n_resamples=2000)
    >>> res.to_polars().select("run", "verdict", "flat_verdict").row(0)
    ('dense', 'reliably better', 'reliably better')
    """
    check_choice("compare_replicates", "method", method, ("mixed", "bootstrap"),
                 example="method='bootstrap'")
    check_float("compare_replicates", "alpha", alpha, minimum=0, maximum=1, open_min=True,
                open_max=True, example="alpha=0.05")
    check_float("compare_replicates", "ci", ci, minimum=0, maximum=1, open_min=True,
                open_max=True, example="ci=0.95")
    check_int("compare_replicates", "n_resamples", n_resamples, minimum=1,
              example="n_resamples=10000")
    check_choice("compare_replicates", "missing", missing, ("zero", "skip", "error"))
    check_choice("compare_replicates", "engine", engine, ("numpy", "statsmodels"),
                 example="engine='statsmodels'")
    correction = _st.canonical_correction(correction, "compare_replicates")
    kind = input_kind(per_query if per_query is not None else runs)
    pq = structured_values(runs, qrels, measures, per_query=per_query, replicate=replicate,
                           dataset=dataset, func="compare_replicates", own=compare_replicates,
                           **evaluate_options)
    if dataset is not None:  # a query is (dataset, query_id)
        pq = pq.with_columns(pl.concat_str([dataset, "query_id"], separator=":")
                             .alias("query_id")).drop(dataset)
    pq = complete_grid(pq, ["run", replicate], missing, "compare_replicates")
    names = pq["run"].unique(maintain_order=True).to_list()
    check_choice("compare_replicates", "pairs", pairs, ("baseline", "all"),
                 example="pairs='all'")
    if baseline not in names and not (pairs == "all" and baseline is None):
        from ...errors import InvalidOptionError

        raise InvalidOptionError(f"compare_replicates(baseline={baseline!r}): no such run; "
                                 f"the runs are {names}. Example: baseline={names[0]!r}")
    order = ([baseline] if baseline else []) + [n for n in names if n != baseline]
    todo = ([(r, baseline) for r in order[1:]] if pairs == "baseline" else
            [(order[j], order[i]) for i in range(len(order)) for j in range(i + 1, len(order))])
    rows = []
    for (measure,), sub in pq.group_by("measure", maintain_order=True):
        for run, base in todo:
            rng = _st.pair_rng(seed, run, str(base), str(measure))
            row = _row(sub, run, str(base), replicate, method, rng, n_resamples, engine)
            rows.append({**row, "measure": str(measure)})
    _infer(rows, method, alpha, ci, correction)
    for r in rows:
        r["seed_noise_share"] = (r["replicate_sd"] / abs(r["delta"]) if r["delta"]
                                 else _NAN)
    frame = pl.DataFrame([{c: r.get(c) for c in _COLUMNS} for r in rows],
                         schema_overrides={"note": pl.String}, orient="row")
    reps = (pq.group_by("run", replicate, "measure", maintain_order=True)
            .agg(pl.len().cast(pl.Int64).alias("n_queries"), pl.col("value").mean()
                 .alias("mean")).rename({replicate: "replicate"}))
    how = ("REML mixed model value ~ system + (1 | query) + (1 | query:system) + "
           "(1 | replicate:system), t interval on Satterthwaite's degrees of freedom"
           if method == "mixed"
           else f"hierarchical bootstrap (queries, then replicates), {n_resamples:,} samples")
    text = (f"{how}; {_st.CORRECTION_LABELS[correction]} over {len(rows)} comparisons, "
            f"alpha = {alpha:g}, {ci:.0%} intervals; never 'reliably better' when one seed "
            "pairing reverses Δ. flat_*: paired t-test on the seed-averaged values.")
    return StructuredComparison({"frame": frame, "replicates": reps}, method=text,
                                kind=kind, replicate=replicate, alpha=alpha)
