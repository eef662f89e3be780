"""The leaderboard across datasets (mteb#5208): aggregate, interval, rank interval, ties.

:func:`leaderboard_datasets` ranks every run on one measure by the chosen aggregate over
datasets (:mod:`.aggregate`). From the two-stage bootstrap (:func:`~.bootstrap.dataset_means`)
it gives each run the percentile interval of its aggregate, its rank interval (the
``(1 ± ci)/2`` quantiles of its rank over the samples) and ``p_best``; every pair gets
Δ, a bootstrap p-value, Holm over all pairs, and the percentile interval at the
Holm-matched level; runs sharing a letter of the compact letter display
(:func:`~searcheval_frames.analysis.leaderboard_stats.letters`) are tied.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from ...frames import input_kind
from .. import stats as _st
from ..inference import interval_alphas
from ..leaderboard_stats import letters
from .aggregate import aggregate as _aggregate
from .aggregate import higher_is_better, ranks
from .bootstrap import bootstrap_p, dataset_means, percentile_interval, replicate_means
from .datasets import check_dataset_options, dataset_matrices, load_datasets
from .result import DatasetLeaderboard

__all__ = ["leaderboard_datasets", "leaderboard_replicates"]


def _pairs(boot: np.ndarray, obs: np.ndarray, names: list[str], order: list[int], *,
           alpha: float, ci: float) -> tuple[pl.DataFrame, np.ndarray]:
    """Every pair (a better than b in ``order``): Δ, p, Holm, matched interval."""
    iu = [(order[a], order[b]) for a in range(len(order)) for b in range(a + 1, len(order))]
    samples = [boot[:, i] - boot[:, j] for i, j in iu]
    p = np.array([float(bootstrap_p(s)) for s in samples])
    adj = _st.adjust_pvalues(p, "holm")
    levels = interval_alphas(p, 1.0 - ci, "holm")
    sig = np.zeros((len(names), len(names)), dtype=bool)
    rows = []
    for (i, j), s, raw, pa, lv in zip(iu, samples, p, adj, levels, strict=True):
        lo, hi = (float(v) for v in percentile_interval(s, 1.0 - float(lv)))
        d = float(obs[i] - obs[j])
        significant = bool((lo > 0 or hi < 0) and pa <= alpha)
        sig[i, j] = sig[j, i] = significant
        rows.append({"run_a": names[i], "run_b": names[j], "delta": d, "ci_low": lo,
                     "ci_high": hi, "p_value": float(raw), "p_adjusted": float(pa),
                     "significant": significant})
    return pl.DataFrame(rows, orient="row"), sig


def leaderboard_datasets(
    runs: Any = None,
    qrels: Any = None,
    measure: str | None = None,
    *,
    dataset: str,
    per_query: Any = None,
    aggregate: str = "macro",
    alpha: float = 0.05,
    ci: float = 0.95,
    n_resamples: int = 2_000,
    seed: int | None = 0,
    missing: str = "zero",
    **evaluate_options: Any,
) -> DatasetLeaderboard:
    """Rank runs across datasets with intervals, rank intervals and tied groups.

    Parameters
    ----------
    runs, qrels, measure
        Runs and qrels with the ``dataset`` column, and the one measure to rank by; or
        ``per_query=`` values (``run, <dataset>, query_id, measure, value``).
    dataset
        The column naming the dataset.
    aggregate
        ``"macro"``, ``"mean_rank"`` or ``"borda"`` (:mod:`.aggregate`).
    alpha, ci, n_resamples, seed, missing
        As for :func:`~searcheval_frames.compare_datasets` (Holm over all pairs).

    Returns
    -------
    DatasetLeaderboard
        ``.frame`` (one row per run, best first; per-dataset means as columns),
        ``.pairs``.

    Examples
    --------
    >>> import numpy as np, polars as pl, searcheval_frames as sef
    >>> rng = np.random.default_rng(2)
    >>> rows = [{"run": s, "ds": f"d{d}", "query_id": f"q{q}", "measure": "P@5",
    ...          "value": float(rng.uniform()) * 0.5 + 0.1 * i}
    ...         for d in range(6) for i, s in enumerate(("a", "b", "c")) for q in range(20)]
    >>> lb = sef.leaderboard_datasets(per_query=pl.DataFrame(rows), measure="P@5",
    ...                               dataset="ds", n_resamples=400)
    >>> lb.to_polars().select("run", "rank").rows()
    [('c', 1), ('b', 2), ('a', 3)]
    """
    check_dataset_options("leaderboard_datasets", how=aggregate, alpha=alpha, ci=ci,
                          n_resamples=n_resamples, missing=missing, correction="holm")
    kind = input_kind(per_query if per_query is not None else runs)
    pq, names = load_datasets("leaderboard_datasets", runs, qrels, measure, per_query,
                              dataset, missing, None, evaluate_options,
                              own=leaderboard_datasets)
    if pq["measure"].n_unique() != 1:
        from ...errors import InvalidOptionError

        raise InvalidOptionError(
            f"leaderboard_datasets(measure={measure!r}): rank by one measure; the values "
            f"have {pq['measure'].unique().to_list()}. Example: measure='nDCG@10'")
    sets, mats = dataset_matrices(pq, dataset, names)
    sign = 1.0 if higher_is_better(aggregate) else -1.0
    M = np.array([X.mean(axis=0) for X in mats])
    obs = _aggregate(M, aggregate)
    boot = _aggregate(dataset_means(mats, n_resamples, _st.pair_rng(seed, aggregate)),
                      aggregate)
    order = sorted(range(len(names)), key=lambda j: (-sign * obs[j], names[j]))
    pairs, sig = _pairs(boot, obs, names, order, alpha=alpha, ci=ci)
    r = ranks(sign * boot)
    tail = (1.0 - ci) / 2.0
    lo, hi = percentile_interval(boot, ci)
    groups = letters(order, sig)
    frame = pl.DataFrame({
        "run": [names[j] for j in order], "value": [float(obs[j]) for j in order],
        "ci_low": [float(lo[j]) for j in order], "ci_high": [float(hi[j]) for j in order],
        "rank": list(range(1, len(order) + 1)),
        "rank_low": [float(np.quantile(r[:, j], tail, method="lower")) for j in order],
        "rank_high": [float(np.quantile(r[:, j], 1 - tail, method="higher")) for j in order],
        "p_best": [float((r[:, j] == 1).mean()) for j in order],
        "group": [groups[j] for j in order],
        **{ds: [float(M[d, j]) for j in order] for d, ds in enumerate(sets)}})
    text = (f"'{aggregate}' over {len(sets)} datasets on {pq['measure'][0]}; two-stage "
            f"bootstrap (datasets, then queries; {n_resamples:,} samples): {ci:.0%} "
            f"intervals and rank intervals; groups: Holm over {pairs.height} pairs, "
            f"alpha = {alpha:g}")
    return DatasetLeaderboard({"frame": frame, "pairs": pairs}, method=text, kind=kind,
                              dataset=dataset, aggregate=aggregate)


def leaderboard_replicates(
    runs: Any = None,
    qrels: Any = None,
    measure: str | None = None,
    *,
    replicate: str,
    per_query: Any = None,
    method: str = "mixed",
    alpha: float = 0.05,
    ci: float = 0.95,
    n_resamples: int = 10_000,
    seed: int | None = 0,
    **options: Any,
) -> DatasetLeaderboard:
    """Rank runs that have replicates: every pair compared as
    :func:`~searcheval_frames.compare_replicates` compares them (Holm over all pairs, the
    seed-reversal guard), tied groups as compact letters.

    Returns a result with ``.frame`` (``run, mean, ci_low, ci_high, rank, rank_low,
    rank_high, group`` and each replicate's mean as a column, best first; the intervals
    and rank intervals from the hierarchical bootstrap: queries, then replicates within
    each system) and ``.pairs`` (the pairwise rows).

    Examples
    --------
    >>> import numpy as np, polars as pl, searcheval_frames as sef
    >>> rng = np.random.default_rng(4)
    >>> base = rng.uniform(0.2, 0.6, 30)
    >>> rows = [{"run": s, "seed": str(r), "query_id": f"q{q}", "measure": "P@5",
    ...          "value": float(base[q] + lift + rng.normal(0, 0.03))}
    ...         for s, lift in (("a", 0.0), ("b", 0.2), ("c", 0.2)) for r in range(3)
    ...         for q in range(30)]
    >>> lb = sef.leaderboard_replicates(per_query=pl.DataFrame(rows), measure="P@5",
    ...                                 replicate="seed", method="bootstrap", n_resamples=500)
    >>> lb.to_polars().select("run", "group").rows()
    [('c', 'a'), ('b', 'a'), ('a', 'b')]
    """
    from .replicates import compare_replicates

    res = compare_replicates(runs, qrels, measure, baseline=None, replicate=replicate,
                             per_query=per_query, pairs="all", method=method, alpha=alpha,
                             ci=ci, n_resamples=n_resamples, seed=seed, **options)
    pairs = res.to_polars()
    reps = res.to_polars("replicates")
    if reps["measure"].n_unique() != 1:
        from ...errors import InvalidOptionError

        raise InvalidOptionError(f"leaderboard_replicates(measure={measure!r}): rank by one "
                                 "measure. Example: measure='nDCG@10'")
    means = reps.group_by("run", maintain_order=True).agg(pl.col("mean").mean())
    names = means["run"].to_list()
    value = means["mean"].to_numpy()
    order = sorted(range(len(names)), key=lambda j: (-value[j], names[j]))
    idx = {n: i for i, n in enumerate(names)}
    sig = np.zeros((len(names), len(names)), dtype=bool)
    for a, b, v in pairs.select("run", "baseline", "verdict").iter_rows():
        sig[idx[a], idx[b]] = sig[idx[b], idx[a]] = v.startswith("reliably")
    groups = letters(order, sig)
    lo, hi, r_lo, r_hi = _replicate_ranks(per_query, runs, qrels, measure, replicate, names,
                                          n_resamples, seed, ci, options)
    wide = reps.pivot(on="replicate", index="run", values="mean")
    frame = pl.DataFrame({"run": [names[j] for j in order],
                          "mean": [float(value[j]) for j in order],
                          "ci_low": [float(lo[j]) for j in order],
                          "ci_high": [float(hi[j]) for j in order],
                          "rank": list(range(1, len(order) + 1)),
                          "rank_low": [float(r_lo[j]) for j in order],
                          "rank_high": [float(r_hi[j]) for j in order],
                          "group": [groups[j] for j in order]}).join(
        wide, on="run", how="left", maintain_order="left")
    return DatasetLeaderboard({"frame": frame, "pairs": pairs},
                              method=res.describe_method() + f" Over all {pairs.height} pairs.",
                              kind=res.kind, replicate=replicate)


def _replicate_ranks(per_query: Any, runs: Any, qrels: Any, measure: Any, replicate: str,
                     names: list[str], n_resamples: int, seed: int | None, ci: float,
                     options: dict[str, Any]) -> tuple[np.ndarray, ...]:
    """Percentile intervals of each run's mean and of its rank over hierarchical
    bootstrap samples (:func:`~.bootstrap.replicate_means`)."""
    from .inputs import complete_grid, structured_values

    opts = {k: v for k, v in options.items() if k not in ("method", "engine", "missing")}
    pq = structured_values(runs, qrels, measure, per_query=per_query, replicate=replicate,
                           func="leaderboard_replicates", **opts)
    pq = complete_grid(pq, ["run", replicate], options.get("missing", "zero"),
                       "leaderboard_replicates")
    mats = []
    for run in names:
        wide = pq.filter(pl.col("run") == run).pivot(on="query_id", index=replicate,
                                                     values="value")
        mats.append(wide.select(sorted(c for c in wide.columns if c != replicate))
                    .to_numpy().astype(np.float64))
    boot = replicate_means(mats, n_resamples, _st.pair_rng(seed, "leaderboard_replicates"))
    lo, hi = percentile_interval(boot, ci)
    r = ranks(boot)
    tail = (1.0 - ci) / 2.0
    return (lo, hi, np.quantile(r, tail, axis=0, method="lower"),
            np.quantile(r, 1.0 - tail, axis=0, method="higher"))
