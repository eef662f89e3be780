"""How much of the spread of a measure is queries, systems, seeds, and their interactions.

:func:`variance_components` decomposes the per-query values of a complete, balanced
crossed design (every combination of the factors' levels has the same number ``n`` of
values) in two ways:

* **ANOVA** (``method="anova"``): the full factorial decomposition. For a set ``S`` of
  factors, the effect is the inclusion–exclusion of cell means
  ``e_S = Σ_{T ⊆ S} (−1)^{|S|−|T|} ȳ_T`` and ``SS_S = Σ e_S²`` over all values, with
  ``df_S = Π_{i∈S} (L_i − 1)``; ``F_S = MS_S / MS_E``. Without replication (``n = 1``)
  the highest interaction is the residual. Variance components follow from the
  expected mean squares of the all-random model (Cornfield & Tukey 1956):
  ``E[MS_S] = σ²_E + Σ_{T ⊇ S} n Π_{i ∉ T} L_i σ²_T``, solved from the largest ``T``
  down; negative estimates are set to 0.
* **REML** (``method="reml"``): the same terms as crossed random intercepts of a mixed
  model (statsmodels; :mod:`.mixed`), unbiased by the truncation.

``share`` is each component's part of their sum; ``eta_sq`` is ``SS_S / SS_total``
(Ferro & Silvello 2016 report such shares for topic, system and component effects).

>>> import polars as pl
>>> pq = pl.DataFrame({"run": ["a", "a", "b", "b"] * 2, "query_id": ["1", "2"] * 4,
...                    "seed": ["0"] * 4 + ["1"] * 4, "measure": "P@5",
...                    "value": [0.2, 0.6, 0.4, 0.8, 0.3, 0.7, 0.4, 0.8]})
>>> vc = variance_components(per_query=pq, factors=["query", "system"])
>>> vc.to_polars().select("term", "df", pl.col("ss").round(4)).rows()
[('query', 1.0, 0.32), ('system', 1.0, 0.045), ('query:system', 1.0, 0.0), ('residual', 4.0, 0.01)]
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from ...errors import InsufficientDataError, InvalidOptionError
from ...frames import input_kind
from ...optional import require
from ...options import check_choice
from .inputs import structured_values
from .mixed import fit_mixed
from .result import VarianceComponents

__all__ = ["anova_table", "variance_components"]

_ALIAS = {"query": "query_id", "system": "run"}


def _cube(sub: pl.DataFrame, cols: list[str]) -> tuple[np.ndarray, list[int]]:
    """The values as an array ``L_1 x ... x L_k x n`` (balanced, complete)."""
    levels = [sorted(sub[c].unique().to_list()) for c in cols]
    sizes = [len(lv) for lv in levels]
    counts = sub.group_by(cols).len()["len"].to_numpy()
    n = int(counts.max())
    if counts.size != math.prod(sizes) or int(counts.min()) != n:
        raise InsufficientDataError(
            f"variance_components(factors={cols}): the design is not complete and balanced "
            f"({counts.size} of {math.prod(sizes)} cells present, {int(counts.min())}–{n} "
            "values per cell); use method='reml', or complete the runs (missing='zero')")
    idx = [sub[c].replace_strict({v: i for i, v in enumerate(lv)}, return_dtype=pl.Int64)
           .to_numpy() for c, lv in zip(cols, levels, strict=True)]
    rep = sub.select(pl.int_range(pl.len()).over(cols)).to_series().to_numpy()
    Y = np.empty([*sizes, n])
    Y[(*idx, rep)] = sub["value"].to_numpy()
    return Y, sizes


def anova_table(Y: np.ndarray, names: Sequence[str]) -> list[dict[str, Any]]:
    """The full factorial ANOVA of the array ``Y`` (factors x replicates, last axis the
    replicates): one row per term with ``df, ss, ms, f, p_value, eta_sq, variance``."""
    stats = require("scipy.stats", "variance_components")
    k, n, sizes = len(names), Y.shape[-1], Y.shape[:-1]
    axes_all = tuple(range(k + 1))
    terms = [S for r in range(1, k + 1) for S in itertools.combinations(range(k), r)]
    if n == 1:
        terms = terms[:-1]  # the highest interaction is the residual
    grand = Y.mean()
    total = float(((Y - grand) ** 2).sum())
    rows: list[dict[str, Any]] = []
    for S in terms:
        e = np.zeros(Y.shape)
        for m in range(len(S) + 1):
            for T in itertools.combinations(S, m):
                keep = tuple(a for a in axes_all if a not in T)
                e = e + (-1) ** (len(S) - m) * Y.mean(axis=keep, keepdims=True)
        ss = float((e ** 2).sum())
        rows.append({"term": ":".join(names[i] for i in S), "set": S,
                     "df": float(math.prod(sizes[i] - 1 for i in S)), "ss": ss})
    ss_e = max(total - sum(r["ss"] for r in rows), 0.0)
    df_e = float(Y.size - 1 - sum(r["df"] for r in rows))
    ms_e = ss_e / df_e if df_e > 0 else math.nan
    for r in rows:
        r["ms"] = r["ss"] / r["df"] if r["df"] > 0 else math.nan
        r["f"] = r["ms"] / ms_e if ms_e > 0 else math.nan
        r["p_value"] = float(stats.f.sf(r["f"], r["df"], df_e)) if ms_e > 0 else math.nan
        r["eta_sq"] = r["ss"] / total if total > 0 else math.nan
    _components(rows, ms_e, n, sizes)
    rows.append({"term": "residual", "set": None, "df": df_e, "ss": ss_e, "ms": ms_e,
                 "f": math.nan, "p_value": math.nan,
                 "eta_sq": ss_e / total if total > 0 else math.nan, "variance": ms_e})
    return rows


def _components(rows: list[dict[str, Any]], ms_e: float, n: int, sizes: Sequence[int]) -> None:
    """Variance components from the expected mean squares, largest terms first."""
    k = len(sizes)
    coef = {r["set"]: n * math.prod(sizes[i] for i in range(k) if i not in r["set"])
            for r in rows}
    var: dict[tuple[int, ...], float] = {}
    for r in sorted(rows, key=lambda r: -len(r["set"])):
        S = r["set"]
        above = sum(coef[T] * var[T] for T in var if set(S) < set(T))
        est = (r["ms"] - (ms_e if ms_e == ms_e else 0.0) - above) / coef[S]
        var[S] = max(est, 0.0) if est == est else math.nan
        r["variance"] = var[S]


def _reml(sub: pl.DataFrame, cols: list[str], names: list[str]) -> dict[str, float]:
    """REML variance components of the crossed terms (the highest interaction only
    when the cells have replicates)."""
    terms = [S for r in range(1, len(cols) + 1) for S in itertools.combinations(cols, r)]
    n = int(sub.group_by(cols).len()["len"].to_numpy().max())
    if n == 1:
        terms = terms[:-1]
    frame = sub.with_columns(*(pl.concat_str(list(S), separator="|").alias(f"t{i}")
                               for i, S in enumerate(terms)))
    fit = fit_mixed(frame, fixed=None, random=[f"t{i}" for i in range(len(terms))])
    label = {f"t{i}": ":".join(names[cols.index(c)] for c in S) for i, S in enumerate(terms)}
    return {label.get(key, key): v for key, v in fit.variances.items()}


def variance_components(
    runs: Any = None,
    qrels: Any = None,
    measures: str | Sequence[str] | None = None,
    *,
    per_query: Any = None,
    factors: Sequence[str] = ("query", "system", "seed"),
    method: str = "anova",
    **evaluate_options: Any,
) -> VarianceComponents:
    """The share of the variance of a measure due to each factor and interaction.

    Parameters
    ----------
    runs, qrels, measures
        Runs (with the extra factor columns, e.g. ``seed``) and qrels, or ``per_query=``
        values ``run, query_id, measure, value`` plus the factor columns.
    factors
        ``"query"`` (``query_id``), ``"system"`` (``run``) and any other columns
        (``"seed"``, ``"dataset"``), crossed.
    method
        ``"anova"`` (default; expected mean squares) or ``"reml"`` (statsmodels).

    Returns
    -------
    VarianceComponents
        ``.frame``: ``measure, term, df, ss, ms, f, p_value, eta_sq, variance, share``;
        ``.sentence()`` says which variance dominates.
    """
    check_choice("variance_components", "method", method, ("anova", "reml"),
                 example="method='reml'")
    from ...core.evaluate import check_evaluate_options

    check_evaluate_options("variance_components", evaluate_options, own=variance_components)
    names = list(factors)
    if len(names) < 2 or len(set(names)) != len(names):
        raise InvalidOptionError(
            f"variance_components(factors={names!r}): name at least two distinct factors; "
            "got those. Example: factors=['query', 'system', 'seed']")
    cols = [_ALIAS.get(f, f) for f in names]
    extra = [c for c in cols if c not in ("query_id", "run")]
    kind = input_kind(per_query if per_query is not None else runs)
    pq = structured_values(runs, qrels, measures, per_query=per_query,
                           replicate=extra[0] if len(extra) == 1 else None,
                           func="variance_components", own=variance_components,
                           **evaluate_options) \
        if per_query is None else _with_factors(per_query, extra)
    frames = []
    for (measure,), sub in pq.group_by("measure", maintain_order=True):
        Y, _ = _cube(sub, cols) if method == "anova" else (None, None)
        rows = anova_table(Y, names) if Y is not None else [
            {"term": t, "variance": v} for t, v in _reml(sub, cols, names).items()]
        f = pl.DataFrame([{k: v for k, v in r.items() if k != "set"} for r in rows],
                         orient="row", infer_schema_length=None)
        total = float(f["variance"].fill_nan(None).sum())
        frames.append(f.with_columns(pl.lit(str(measure)).alias("measure"),
                                     (pl.col("variance") / total).alias("share")))
    frame = pl.concat(frames, how="diagonal_relaxed")
    frame = frame.select("measure", *(c for c in frame.columns if c != "measure"))
    text = ("Full factorial ANOVA, variance components from the expected mean squares "
            "(all factors random, negative estimates set to 0)" if method == "anova" else
            "REML variance components of crossed random intercepts (numpy REML, as lme4)")
    return VarianceComponents({"frame": frame}, method=text, kind=kind, factors=names)


def _with_factors(per_query: Any, extra: list[str]) -> pl.DataFrame:
    """The per-query frame with the factor columns (values in a cell may repeat: they
    are the cell's replicates)."""
    from ...errors import MissingColumnError
    from ...frames import to_polars

    df = to_polars(per_query, "per_query")
    need = ["run", "query_id", "measure", "value", *extra]
    lacking = [c for c in need if c not in df.columns]
    if lacking:
        raise MissingColumnError(
            f"variance_components(per_query=...): no column {', '.join(map(repr, lacking))} "
            f"(columns: {', '.join(df.columns)}); each factor is a column of the values")
    out = df.select(*(pl.col(c).cast(pl.String) for c in need if c != "value"),
                    pl.col("value").cast(pl.Float64))
    if out["value"].is_null().any() or not out["value"].is_finite().all():
        from ...errors import InvalidScoreError

        raise InvalidScoreError("variance_components(per_query=...): values must be finite "
                                "numbers; drop or fill the null/NaN rows first")
    return out
