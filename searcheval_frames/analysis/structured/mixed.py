"""Linear mixed models with crossed random intercepts, fitted by REML.

:func:`fit_mixed` fits ``value ~ C(fixed) + (1 | r_1) + ... + (1 | r_k)``: one fixed
factor (the system, treatment-coded against the baseline) and crossed random
intercepts, e.g. the replicate model of Ferro & Silvello (2016)::

    y_{s,r,q} = μ + β_s + u_q + v_{r:s} + ε,   u_q ~ N(0, σ²_q), v ~ N(0, σ²_rep), ε ~ N(0, σ²)

and the dataset model ``y = μ + β_s + a_d + u_{q:d} + ε``, by REML (Patterson &
Thompson 1971). The default engine is :mod:`.reml` (numpy: lme4's profiled criterion,
a Cholesky per step; seconds where statsmodels takes minutes on crossed designs);
``engine="statsmodels"`` fits the same model with ``MixedLM``, which fits crossed
effects as variance components of one group holding every row (``groups`` constant,
``re_formula="0"``, one ``vc_formula`` term per random factor), its documented way.

The interval of ``Δ_s = β_s`` (system minus baseline) is a t interval
``Δ̂ ± t_{1−α/2, df} · se(Δ̂)``; the caller chooses ``df`` (the replicate model uses
the containment degrees of freedom of the replicate level, ``Σ_s (R_s − 1)``, which
equal Satterthwaite's in balanced designs; a Wald z interval with three seeds would
be far too narrow).

>>> import numpy as np, polars as pl
>>> y = [1545, 1440, 1440, 1520, 1580, 1540, 1555, 1490, 1560, 1495, 1595, 1550, 1605,
...      1510, 1560, 1445, 1440, 1595, 1465, 1545, 1595, 1630, 1515, 1635, 1625, 1520,
...      1455, 1450, 1480, 1445]
>>> dye = pl.DataFrame({"value": y, "batch": np.repeat(list("ABCDEF"), 5)})
>>> fit = fit_mixed(dye, fixed=None, random=["batch"])
>>> round(fit.intercept, 1), round(fit.variances["batch"]), round(fit.variances["residual"])
(1527.5, 1764, 2451)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import polars as pl

from ...optional import require

__all__ = ["MixedFit", "fit_mixed", "satterthwaite_df", "t_interval"]


class MixedFit(NamedTuple):
    """A fitted model: ``intercept`` (the baseline's mean), ``effects`` (level →
    ``β`` vs the reference), ``se`` (level → standard error of ``β``), ``variances``
    (random factor → σ², plus ``"residual"``), ``converged`` and ``note`` (the
    optimiser's warnings, if any)."""

    intercept: float
    effects: dict[str, float]
    se: dict[str, float]
    variances: dict[str, float]
    converged: bool
    note: str | None


def _safe(name: str) -> str:
    return "r_" + "".join(ch if ch.isalnum() else "_" for ch in name)


def _levels(frame: pl.DataFrame, fixed: str | None, reference: str | None) -> tuple[str, list[str]]:
    """The reference level and the other levels of the fixed factor, in frame order."""
    if not fixed:
        return "", []
    levels = list(dict.fromkeys(frame.get_column(fixed).cast(pl.String).to_list()))
    ref = reference if reference is not None else levels[0]
    return ref, [lv for lv in levels if lv != ref]


def fit_mixed(frame: pl.DataFrame, *, fixed: str | None, random: Sequence[str],
              reference: str | None = None, engine: str = "numpy") -> MixedFit:
    """REML fit of ``value ~ C(fixed) + Σ (1 | random_k)`` on a polars frame.

    ``fixed``: the column of the fixed factor (None: intercept only); ``reference``:
    its baseline level (default the first level); ``random``: columns of crossed
    random intercepts (an interaction such as ``replicate:system`` is a column made
    by the caller). ``engine="numpy"`` (default, :mod:`.reml`) or ``"statsmodels"``
    (``MixedLM``; its optimiser's warnings are caught and kept in ``note``).
    """
    if engine == "statsmodels":
        return _fit_statsmodels(frame, fixed, random, reference)
    from .reml import reml

    _, levels = _levels(frame, fixed, reference)
    y = frame.get_column("value").cast(pl.Float64).to_numpy()
    cols = [np.ones(y.size)]
    if fixed:
        f = frame.get_column(fixed).cast(pl.String)
        cols += [(f == lv).cast(pl.Float64).to_numpy() for lv in levels]
    codes = [frame.get_column(c).cast(pl.String).rank("dense").cast(pl.Int64).to_numpy() - 1
             for c in random]
    fit = reml(y, np.column_stack(cols), codes)
    se = np.sqrt(np.diag(fit["cov_beta"]))
    variances = dict(zip([*random, "residual"], fit["variances"], strict=True))
    at_zero = [c for c, t in zip(random, fit["theta"], strict=True) if t < 1e-6]
    note = f"variance at 0 (boundary): {', '.join(at_zero)}" if at_zero else None
    return MixedFit(float(fit["beta"][0]),
                    {lv: float(fit["beta"][i + 1]) for i, lv in enumerate(levels)},
                    {lv: float(se[i + 1]) for i, lv in enumerate(levels)}, variances,
                    fit["converged"], note)


def _fit_statsmodels(frame: pl.DataFrame, fixed: str | None, random: Sequence[str],
                     reference: str | None) -> MixedFit:
    smf = require("statsmodels.formula.api", "the mixed model (engine='statsmodels')")
    pd_frame = frame.select("value", *([fixed] if fixed else []), *random).to_pandas()
    rename = {c: _safe(c) for c in random}
    rename.update({fixed: "fixed_"} if fixed else {})
    pd_frame = pd_frame.rename(columns=rename)
    pd_frame["group_"] = 1
    ref, levels = _levels(frame, fixed, reference)
    rhs = "1"
    if fixed:
        pd_frame["fixed_"] = pd_frame["fixed_"].astype(str)
        rhs = f"C(fixed_, Treatment(reference={ref!r}))"
    vc = {rename[c]: f"0 + C({rename[c]})" for c in random}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = smf.mixedlm(f"value ~ {rhs}", pd_frame, groups="group_", re_formula="0",
                            vc_formula=vc)
        res = model.fit(reml=True)
    notes = sorted({_short(str(w.message)) for w in caught} - {""})
    names = list(res.fe_params.index)
    eff, se = {}, {}
    for lv in levels:
        key = next(n for n in names if n.endswith(f"[T.{lv}]"))
        eff[lv], se[lv] = float(res.fe_params[key]), float(res.bse_fe[key])
    vcomp = np.asarray(res.vcomp, dtype=np.float64)
    order = list(model.exog_vc.names)
    variances = {c: float(vcomp[order.index(rename[c])]) for c in random}
    variances["residual"] = float(res.scale)
    return MixedFit(float(res.fe_params.iloc[0]), eff, se, variances, bool(res.converged),
                    "; ".join(notes) or None)


def _short(message: str) -> str:
    """statsmodels' optimiser warnings, in a few words ("" for retries that worked)."""
    if "boundary" in message or "singular" in message:
        return "a variance component is at 0 (boundary fit)"
    if "converge" in message and "Retrying" not in message:
        return "the first optimiser did not converge (statsmodels retried)"
    return ""


def satterthwaite_df(parts: Sequence[tuple[float, float]]) -> float:
    """Satterthwaite's degrees of freedom of ``Σ c_k MS_k`` from ``(c_k MS_k, df_k)``:
    ``(Σ c_k MS_k)² / Σ (c_k MS_k)² / df_k`` (Satterthwaite 1946).

    >>> round(satterthwaite_df([(2.0, 4), (1.0, 30)]), 2)
    8.71
    """
    num = sum(v for v, _ in parts) ** 2
    den = sum(v * v / d for v, d in parts if d > 0)
    return num / den if den > 0 else math.nan


def t_interval(delta: float, se: float, df: float, ci: float) -> tuple[float, float, float]:
    """``(p, low, high)`` of the two-sided t test of ``Δ = 0`` and its interval at
    confidence ``ci``; NaN when ``se`` or ``df`` is not positive.

    >>> [round(v, 4) for v in t_interval(1.0, 0.4, 4, 0.95)]
    [0.0668, -0.1106, 2.1106]
    """
    if not (se > 0 and df > 0 and math.isfinite(se)):
        return math.nan, math.nan, math.nan
    stats = require("scipy.stats", "the mixed model's interval")
    t = delta / se
    p = float(min(1.0, 2.0 * stats.t.sf(abs(t), df)))
    half = float(stats.t.ppf(0.5 + ci / 2.0, df)) * se
    return p, delta - half, delta + half
