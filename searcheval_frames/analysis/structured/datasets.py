"""Compare and rank systems over several datasets (query sets, collections).

A query is the pair ``(dataset, query_id)``: ids may repeat across datasets.

* Per dataset: the paired t-test of each run against the baseline with its interval,
  **Holm-corrected over the whole family** of datasets x runs x measures (as
  ``compare(by=)`` corrects over slices, :mod:`~searcheval_frames.analysis.slices`).
* The aggregate the user chooses (:mod:`.aggregate`: macro mean, mean rank, Borda),
  with a **two-stage bootstrap** (datasets drawn with replacement, then queries within
  each drawn dataset; :func:`~.bootstrap.dataset_means`): percentile intervals of the
  aggregate and of Δ against the baseline, a bootstrap p-value, Holm over runs x
  measures. With few datasets the first stage has few distinct draws and the interval
  says so by its width (a warning names fewer than 5 datasets).
* The mixed model ``value ~ system + (1 | dataset) + (1 | query:dataset)``
  (:mod:`.mixed`), Δ with a t interval on the residual degrees of freedom.
* :func:`leaderboard_datasets`: the mteb#5208 table: aggregate, interval, bootstrap
  rank interval and tied groups (compact letters over the Holm-corrected pairs).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from ...errors import InvalidOptionError, SearchEvalWarning
from ...frames import input_kind
from ...options import check_choice, check_float, check_int
from .. import stats as _st
from ..inference import interval_alphas, paired_inference
from .aggregate import AGGREGATES, aggregate, higher_is_better
from .bootstrap import bootstrap_p, dataset_means, percentile_interval
from .inputs import complete_grid, structured_values
from .mixed import fit_mixed, t_interval
from .replicates import verdict
from .result import DatasetComparison

__all__ = ["compare_datasets", "dataset_matrices", "per_dataset_rows"]

_NAN = math.nan


def dataset_matrices(sub: pl.DataFrame, dataset: str,
                     names: list[str]) -> tuple[list[str], list[np.ndarray]]:
    """The dataset names and, per dataset, its queries x runs matrix (runs in ``names``
    order) of one measure."""
    sets, mats = [], []
    for (name,), part in sub.group_by(dataset, maintain_order=True):
        wide = part.pivot(on="run", index="query_id", values="value").sort("query_id")
        sets.append(str(name))
        mats.append(wide.select(names).to_numpy().astype(np.float64))
    return sets, mats


def per_dataset_rows(pq: pl.DataFrame, dataset: str, names: list[str], baseline: str,
                     *, alpha: float, ci: float, correction: str) -> pl.DataFrame:
    """Per (dataset, run, measure): paired t-test vs the baseline, corrected over the
    whole family, intervals at the matched levels, the verdict."""
    rows = []
    for (measure,), sub in pq.group_by("measure", maintain_order=True):
        sets, mats = dataset_matrices(sub, dataset, names)
        b = names.index(baseline)
        for ds, X in zip(sets, mats, strict=True):
            for j, run in enumerate(names):
                if j != b:
                    d = X[:, j] - X[:, b]
                    rows.append({"dataset": ds, "run": run, "baseline": baseline,
                                 "measure": str(measure), "n_queries": X.shape[0],
                                 "mean": float(X[:, j].mean()),
                                 "baseline_mean": float(X[:, b].mean()),
                                 "delta": float(d.mean()), "d": d})
    p = np.array([paired_inference(r["d"], "t").p for r in rows])
    adj = _st.adjust_pvalues(p, correction)
    levels = interval_alphas(p, 1.0 - ci, correction)
    for r, raw, pa, lv in zip(rows, p, adj, levels, strict=True):
        inf = paired_inference(r.pop("d"), "t", alpha=float(lv))
        r.update(ci_low=inf.ci_low, ci_high=inf.ci_high, p_value=float(raw),
                 p_adjusted=float(pa),
                 verdict=verdict(r["delta"], inf.ci_low, inf.ci_high, pa, alpha, inf.reason))
    return pl.DataFrame(rows, orient="row").rename({"dataset": dataset})


def _aggregate_rows(pq: pl.DataFrame, dataset: str, names: list[str], baseline: str, *,
                    how: str, alpha: float, ci: float, correction: str, n_resamples: int,
                    seed: int | None) -> pl.DataFrame:
    """Per (run, measure): the aggregate, its two-stage bootstrap interval, Δ vs the
    baseline with its interval, p-value (Holm over the family) and verdict."""
    rows: list[dict[str, Any]] = []
    samples: list[np.ndarray | None] = []
    b = names.index(baseline)
    sign = 1.0 if higher_is_better(how) else -1.0
    for (measure,), sub in pq.group_by("measure", maintain_order=True):
        sets, mats = dataset_matrices(sub, dataset, names)
        M = np.array([X.mean(axis=0) for X in mats])
        obs = aggregate(M, how)
        boot = aggregate(dataset_means(mats, n_resamples,
                                       _st.pair_rng(seed, str(measure), how)), how)
        lo, hi = percentile_interval(boot, ci)
        for j, run in enumerate(names):
            row = {"run": run, "baseline": baseline, "measure": str(measure),
                   "n_datasets": len(sets), "aggregate": how, "value": float(obs[j]),
                   "value_low": float(lo[j]), "value_high": float(hi[j]),
                   "delta": float(obs[j] - obs[b])}
            rows.append(row)
            samples.append(boot[:, j] - boot[:, b] if j != b else None)
    tested = {i: s for i, s in enumerate(samples) if s is not None}
    p = np.array([float(bootstrap_p(sign * s)) for s in tested.values()])
    adj = _st.adjust_pvalues(p, correction)
    levels = interval_alphas(p, 1.0 - ci, correction)
    for (i, smp), raw, pa, lv in zip(tested.items(), p, adj, levels, strict=True):
        lo_d, hi_d = percentile_interval(smp, 1.0 - float(lv))
        r = rows[i]
        d = sign * r["delta"]
        s_lo, s_hi = sorted((sign * float(lo_d), sign * float(hi_d)))
        r.update(ci_low=float(lo_d), ci_high=float(hi_d), p_value=float(raw),
                 p_adjusted=float(pa), verdict=verdict(d, s_lo, s_hi, pa, alpha, None))
    for r in rows:
        r.setdefault("verdict", "baseline")
    return pl.DataFrame(rows, orient="row", infer_schema_length=None)


def _mixed_rows(pq: pl.DataFrame, dataset: str, names: list[str], baseline: str, *,
                alpha: float, ci: float, correction: str) -> pl.DataFrame:
    """Δ per run from ``value ~ system + (1 | dataset) + (1 | query:dataset)``."""
    rows: list[dict[str, Any]] = []
    for (measure,), sub in pq.group_by("measure", maintain_order=True):
        frame = sub.with_columns(pl.concat_str([dataset, "query_id"], separator=":")
                                 .alias("query_dataset"))
        fit = fit_mixed(frame, fixed="run", random=[dataset, "query_dataset"],
                        reference=baseline)
        df = frame.height - len(names) - frame["query_dataset"].n_unique() + 1
        for run in (r for r in names if r != baseline):
            rows.append({"run": run, "baseline": baseline, "measure": str(measure),
                         "delta": fit.effects[run], "se": fit.se[run], "df": float(df),
                         "var_dataset": fit.variances[dataset],
                         "var_query": fit.variances["query_dataset"],
                         "var_residual": fit.variances["residual"], "note": fit.note})
    p = np.array([t_interval(r["delta"], r["se"], r["df"], ci)[0] for r in rows])
    adj = _st.adjust_pvalues(p, correction)
    levels = interval_alphas(p, 1.0 - ci, correction)
    for r, raw, pa, lv in zip(rows, p, adj, levels, strict=True):
        _, lo, hi = t_interval(r["delta"], r["se"], r["df"], 1.0 - float(lv))
        r.update(ci_low=lo, ci_high=hi, p_value=float(raw), p_adjusted=float(pa),
                 verdict=verdict(r["delta"], lo, hi, pa, alpha, None))
    return pl.DataFrame(rows, orient="row", schema_overrides={"note": pl.String})


def check_dataset_options(func: str, *, how: str, alpha: float, ci: float,
                          n_resamples: int, missing: str, correction: str) -> str:
    """The shared option checks; the canonical correction."""
    check_choice(func, "aggregate", how, AGGREGATES, example="aggregate='mean_rank'")
    check_float(func, "alpha", alpha, minimum=0, maximum=1, open_min=True, open_max=True,
                example="alpha=0.05")
    check_float(func, "ci", ci, minimum=0, maximum=1, open_min=True, open_max=True,
                example="ci=0.95")
    check_int(func, "n_resamples", n_resamples, minimum=1, example="n_resamples=2000")
    check_choice(func, "missing", missing, ("zero", "skip", "error"))
    return _st.canonical_correction(correction, func)


def load_datasets(func: str, runs: Any, qrels: Any, measures: Any, per_query: Any,
                  dataset: str, missing: str, baseline: str | None,
                  options: dict[str, Any], own: Any = None) -> tuple[pl.DataFrame, list[str]]:
    """The complete per-query frame and the run names (baseline first when given)."""
    pq = structured_values(runs, qrels, measures, per_query=per_query, dataset=dataset,
                           func=func, own=own, **options)
    pq = complete_grid(pq, ["run"], missing, func)
    names = pq["run"].unique(maintain_order=True).to_list()
    if baseline is not None and baseline not in names:
        raise InvalidOptionError(f"{func}(baseline={baseline!r}): no such run; the runs are "
                                 f"{names}. Example: baseline={names[0]!r}")
    n_sets = pq[dataset].n_unique()
    if n_sets < 5:
        warnings.warn(f"{func}: only {n_sets} datasets; the first stage of the bootstrap "
                      "draws from so few that the aggregate's interval is rough. Read the "
                      "per-dataset rows first.", SearchEvalWarning, stacklevel=3)
    return pq, ([baseline] + [n for n in names if n != baseline]) if baseline else names


def compare_datasets(
    runs: Any = None,
    qrels: Any = None,
    measures: str | Sequence[str] | None = None,
    *,
    baseline: str,
    dataset: str,
    per_query: Any = None,
    aggregate: str = "macro",
    alpha: float = 0.05,
    ci: float = 0.95,
    correction: str = "holm",
    n_resamples: int = 2_000,
    seed: int | None = 0,
    missing: str = "zero",
    mixed: bool = True,
    **evaluate_options: Any,
) -> DatasetComparison:
    """Compare runs with a baseline on several datasets: per dataset and aggregated.

    Parameters
    ----------
    runs, qrels, measures
        Runs and qrels that both have the ``dataset`` column; or ``per_query=`` values
        ``run, <dataset>, query_id, measure, value``.
    baseline, dataset
        The baseline run; the column naming the dataset.
    aggregate
        ``"macro"`` (mean over datasets of the dataset means), ``"mean_rank"`` or
        ``"borda"`` (:mod:`~searcheval_frames.analysis.structured.aggregate`).
    alpha, ci, correction
        Level, confidence, correction (Holm over datasets x runs x measures for the
        per-dataset rows; over runs x measures for the aggregate and the mixed model).
    n_resamples, seed
        Two-stage bootstrap samples and the seed.
    mixed
        Also fit ``value ~ system + (1 | dataset) + (1 | query:dataset)`` (statsmodels).

    Returns
    -------
    DatasetComparison
        ``.frame`` (per dataset), ``.aggregate``, ``.mixed``.

    Examples
    --------
    >>> import numpy as np, polars as pl, searcheval_frames as sef
    >>> rng = np.random.default_rng(1)
    >>> rows = [{"run": s, "ds": ds, "query_id": f"q{q}", "measure": "P@5",
    ...          "value": float(rng.uniform()) + (0.4 if s == "new" and ds == "a" else 0)}
    ...         for ds in "abcde" for s in ("old", "new") for q in range(25)]
    >>> res = sef.compare_datasets(per_query=pl.DataFrame(rows), baseline="old",
    ...     dataset="ds", mixed=False, n_resamples=500)
    >>> res.to_polars().select("ds", "verdict").rows()[:2]
    [('a', 'reliably better'), ('b', 'not distinguishable')]
    """
    correction = check_dataset_options("compare_datasets", how=aggregate, alpha=alpha, ci=ci,
                                       n_resamples=n_resamples, missing=missing,
                                       correction=correction)
    kind = input_kind(per_query if per_query is not None else runs)
    pq, names = load_datasets("compare_datasets", runs, qrels, measures, per_query, dataset,
                              missing, baseline, evaluate_options, own=compare_datasets)
    opts: dict[str, Any] = {"alpha": alpha, "ci": ci, "correction": correction}
    tables = {"frame": per_dataset_rows(pq, dataset, names, baseline, **opts),
              "aggregate": _aggregate_rows(pq, dataset, names, baseline, how=aggregate,
                                           n_resamples=n_resamples, seed=seed, **opts)}
    if mixed:
        tables["mixed"] = _mixed_rows(pq, dataset, names, baseline, **opts)
    text = (f"Per dataset: paired t-tests, {_st.CORRECTION_LABELS[correction]} over "
            f"{tables['frame'].height} tests; aggregate '{aggregate}' with a two-stage "
            f"bootstrap (datasets, then queries; {n_resamples:,} samples), alpha = "
            f"{alpha:g}, {ci:.0%} intervals" + ("; mixed model value ~ system + "
                                                 "(1 | dataset) + (1 | query:dataset)"
                                                 if mixed else ""))
    return DatasetComparison(tables, method=text, kind=kind, dataset=dataset,
                             aggregate=aggregate)
