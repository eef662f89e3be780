"""How many queries do I need? Power of paired tests and discriminative power.

:func:`power` follows Sakai's topic-set-size design for the paired t-test
(T. Sakai, "Topic set size design", *Information Retrieval Journal* 19(3),
2016): for a pair of systems with per-query differences ``d_i = x_i - y_i``
(``i = 1..n``), mean ``Δ`` and standard deviation ``σ_d``, the two-sided paired
t-test at level ``α`` rejects when ``|t| >= t_{1-α/2}(n-1)``, and under the
alternative ``t`` follows a noncentral t distribution with ``φ = n - 1``
degrees of freedom and noncentrality ``λ = √n · Δ / σ_d``. Its power is::

    1 - β = P(t'(φ, λ) >= t_{1-α/2}(φ)) + P(t'(φ, λ) <= -t_{1-α/2}(φ))

(one tail only for a one-sided test). Sakai evaluates this with a normal
approximation of the noncentral t and starts the search for the topic-set size
from Nagata's closed form ``n ≈ ((z_{α/2} + z_β) / (Δ/σ_d))² + z_{α/2}² / 2``;
here the exact noncentral t of :mod:`scipy.stats` is used, and the smallest
integer ``n`` whose power reaches ``1 - β`` is found by bisection. The smallest
detectable difference at ``n`` queries is the ``Δ`` with power exactly ``1 - β``.
``σ_d`` is each pair's own sample standard deviation (``sd="pair"``), Sakai's
pooled estimate ``σ_d² = 2 V_E`` with ``V_E`` the residual variance of a two-way
ANOVA without replication over all runs (``sd="pooled"``), or a planned value.

``method="simulation"`` works for every test of
:func:`~searcheval_frames.analysis.stats.paired_test`: it draws ``n_sim`` query
sets of ``n`` paired differences by resampling the observed differences with
replacement after shifting them to mean ``Δ`` (and scaling them to ``σ_d``), runs
the test on each, and reports the fraction rejected.

:func:`discriminative_power` is Sakai's (2006, "Evaluating evaluation metrics
based on the bootstrap", SIGIR) discriminative power: the fraction of run pairs
a measure finds significantly different at ``α``, and the sorted achieved
significance levels (ASL curve). Besides the tests of ``paired_test`` it offers
Sakai's paired bootstrap test (``test="bootstrap"``): studentised mean of the
differences, bootstrap under the null from the centred differences ``w = d - d̄``,
``ASL = #{b : |t(w*_b)| >= |t(d)|} / B``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
import polars as pl

from .._deprecation import old_spelling, outside_stacklevel
from ..errors import InvalidOptionError, SearchEvalWarning
from ..frames import to_native
from ..options import check_choice, check_float, check_int, check_optional_int
from . import stats as _st
from .calling import per_query_first, per_query_of, renamed
from .noncentral import detectable, n_needed, t_power, upper_tail
from .paired import load_paired, pooled_sd, row_pvalues, run_pairs

__all__ = ["power", "power_sentence", "t_power"]

_ALTERNATIVES = ("two-sided", "greater", "less")
_TEST_NAMES = tuple(_st.TESTS)
_MAX_N = 10**9  # largest query-set size searched analytically
_MAX_N_SIM = 20_000  # ... and by simulation
_BLOCK = 1_000_000  # simulated query sets x queries tested at once


# --------------------------------------------------------------------------- analytic
# (the noncentral t lives in .noncentral, shared with the slices' detectable Δ)
_detectable, _n_needed, _upper_tail = detectable, n_needed, upper_tail


# --------------------------------------------------------------------------- simulation
class _Sim:
    """Simulated power for one pair: resampled, recentred observed differences.

    Queries where the two runs tie (difference 0: often the same top documents) stay
    ties; the other differences are centred so the population mean is 0, and a target
    ``Δ`` shifts them by ``Δ · n / n_nonzero`` (population mean ``Δ``). Shifting the
    ties too would turn them into tiny non-zero differences that rank tests count,
    making their power jump around the observed ``Δ``.
    """

    def __init__(self, d: np.ndarray, sd: float | None, test: str, alternative: str,
                 alpha: float, n_sim: int, n_resamples: int, seed: int | None,
                 keys: tuple[str, ...]):
        self.nz = np.abs(d) > 1e-12 * max(1.0, float(np.abs(d).max()))
        self.w = np.where(self.nz, d - d.sum() / self.nz.sum(), 0.0)
        if sd is not None:  # a pooled or planned sd: rescale the centred differences
            self.w *= sd / float(np.sqrt((self.w**2).sum() / (d.size - 1)))
        self.lift = d.size / self.nz.sum()
        self.down = bool(d.mean() < 0)
        self.test, self.alt, self.alpha = test, alternative, alpha
        self.n_sim, self.n_resamples, self.seed, self.keys = n_sim, n_resamples, seed, keys
        self._det: dict[int, float] = {}
        self._need: dict[float, int] = {}

    def power(self, delta: float, n: int) -> float:
        # the same seed for every Δ at a given n: common random numbers keep the power
        # monotone in Δ for the bisection; query sets are drawn in bounded blocks
        draw = _st.pair_rng(self.seed, *self.keys, f"n={n}")
        flip = _st.pair_rng(self.seed, *self.keys, f"flip n={n}")
        rows = max(1, _BLOCK // n)
        hits = 0
        for start in range(0, self.n_sim, rows):
            idx = draw.integers(0, self.w.size, size=(min(rows, self.n_sim - start), n))
            p = row_pvalues(self.w[idx] + (delta * self.lift) * self.nz[idx], self.test,
                            self.alt, n_resamples=self.n_resamples, rng=flip)
            hits += int(np.count_nonzero(p <= self.alpha))
        return hits / self.n_sim

    def n_needed(self, delta: float, target: float, guess: int) -> int:
        if delta not in self._need:
            self._need[delta] = self._search_n(delta, target, guess)
        return self._need[delta]

    def detectable(self, n: int, target: float, guess: float, tol: float) -> float:
        if n not in self._det:
            self._det[n] = self._search_delta(n, target, guess, tol)
        return self._det[n]

    def _search_n(self, delta: float, target: float, guess: int) -> int:
        lo, hi = 1, max(2, guess)
        while self.power(delta, hi) < target:
            if hi >= _MAX_N_SIM:
                return -1
            lo, hi = hi, min(hi * 2, _MAX_N_SIM)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.power(delta, mid) >= target:
                hi = mid
            else:
                lo = mid
        return hi

    def _search_delta(self, n: int, target: float, guess: float, tol: float) -> float:
        # one-sided: the tested direction; two-sided: the direction of the observed mean
        sign = -1.0 if self.alt == "less" or (self.alt == "two-sided" and self.down) else 1.0
        lo, hi = 0.0, max(guess, tol)
        for _ in range(60):
            if self.power(sign * hi, n) >= target:
                break
            lo, hi = hi, hi * 2.0
        else:
            return float("nan")
        while hi - lo > tol:
            mid = (lo + hi) / 2.0
            if self.power(sign * mid, n) >= target:
                hi = mid
            else:
                lo = mid
        return hi if self.alt == "two-sided" else sign * hi


# --------------------------------------------------------------------------- power
_POWER_SCHEMA: dict[str, Any] = {
    "run": pl.String, "baseline": pl.String, "measure": pl.String, "test": pl.String,
    "method": pl.String, "alpha": pl.Float64, "target_power": pl.Float64,
    "n_observed": pl.Int64, "observed_delta": pl.Float64, "sd": pl.Float64,
    "n_queries": pl.Int64, "detectable_delta": pl.Float64, "delta": pl.Float64,
    "achieved_power": pl.Float64, "n_needed": pl.Int64,
}


def _float_list(func: str, name: str, value: Any, **kw: Any) -> list[float] | None:
    if value is None:
        return None
    items = list(value) if isinstance(value, Sequence | np.ndarray) else [value]
    if not items:
        check_float(func, name, value, **kw)  # an empty list: raises
    return [check_float(func, name, v, **kw) for v in items]


def _int_list(func: str, name: str, value: Any, **kw: Any) -> list[int] | None:
    if value is None:
        return None
    items = list(value) if isinstance(value, Sequence | np.ndarray) else [value]
    if not items:
        check_int(func, name, value, **kw)  # an empty list: raises
    return [check_int(func, name, int(v) if isinstance(v, np.integer) else v, **kw)
            for v in items]


def _check_options(fn: str, *, alpha: Any, power: Any, test: Any, alternative: Any, method: Any,
                   sd: Any, delta: Any, n_queries: Any, n_sim: Any, n_resamples: Any,
                   seed: Any) -> tuple[Any, ...]:
    """``power``'s options checked, in its order: alpha, target power, test, alternative,
    method, sd mode, deltas, sizes, n_sim, n_resamples, seed."""
    alpha = check_float(fn, "alpha", alpha, minimum=0, maximum=1, open_min=True,
                        open_max=True, example="alpha=0.05")
    target = check_float(fn, "power", power, minimum=alpha, maximum=1, open_min=True,
                         open_max=True, what="target power, above alpha", example="power=0.8")
    test = _st.TESTS[check_choice(fn, "test", test, _TEST_NAMES, example="test='t'")]
    alternative = check_choice(fn, "alternative", alternative, _ALTERNATIVES)
    method = check_choice(fn, "method", method, ("analytic", "simulation"))
    if method == "analytic" and test != "t":
        raise InvalidOptionError(
            f"power(test={test!r}, method='analytic'): the analytic power is that of the "
            "paired t-test; pass method='simulation' to simulate this test, or test='t'."
        )
    sd_mode: str | float
    if isinstance(sd, str):
        sd_mode = check_choice(fn, "sd", sd, ("pair", "pooled"))
    else:
        sd_mode = check_float(fn, "sd", sd, minimum=0, open_min=True,
                              what="'pair', 'pooled' or a planned sd", example="sd=0.2")
    deltas = _float_list(fn, "delta", delta, example="delta=0.05")
    sizes = _int_list(fn, "n_queries", n_queries, minimum=2, example="n_queries=50")
    n_sim = check_int(fn, "n_sim", n_sim, minimum=100, example="n_sim=2000")
    n_resamples = check_int(fn, "n_resamples", n_resamples, minimum=10,
                            example="n_resamples=1000")
    seed = check_optional_int(fn, "seed", seed, minimum=0, example="seed=0")
    return (alpha, target, test, alternative, method, sd_mode, deltas, sizes, n_sim,
            n_resamples, seed)


def _pair_sd(d: np.ndarray, sd_mode: str | float, pooled: float | None, pair: str) -> float:
    """``σ_d`` of one pair (its own, pooled or planned); NaN, with a warning, when the
    differences have no spread."""
    s = float(np.std(d, ddof=1) if sd_mode == "pair"
              else pooled if pooled is not None else sd_mode)
    if not s > 1e-12 * max(1.0, float(np.abs(d).max())):
        warnings.warn(
            f"power: {pair}: the per-query differences have no "
            "spread (sd = 0), so power is undefined; the row holds NaN.",
            SearchEvalWarning, stacklevel=outside_stacklevel())
        s = float("nan")
    return s


def _old_power(per_query: Any, baseline: Any = None, measure: Any = None, delta: Any = None
               ) -> None:
    """``power``'s signature before issue #31 (per-query values first)."""


@old_spelling("power", _old_power, per_query_first(), renamed({}))
def power(
    runs: Any = None,
    qrels: Any = None,
    measure: str | Sequence[str] | None = None,
    *,
    per_query: Any = None,
    baseline: str | Sequence[str] | None = None,
    delta: float | Sequence[float] | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    test: str = "t",
    alternative: Literal["two-sided", "greater", "less"] = "two-sided",
    n_queries: int | Sequence[int] | None = None,
    sd: float | Literal["pair", "pooled"] = "pair",
    method: Literal["analytic", "simulation"] = "analytic",
    n_sim: int = 2000,
    n_resamples: int = 1000,
    seed: int | None = 0,
    missing: Literal["zero", "skip", "error"] = "zero",
    columns: Mapping[str, str] | None = None,
    **evaluate_options: Any,
) -> Any:
    """Power of paired tests, smallest detectable Δ and queries needed, per run pair.

    Parameters
    ----------
    runs, qrels, measure
        The runs, evaluated against the qrels on ``measure`` (name or names) first; with
        ``per_query=``, ``measure`` selects measures (default all in the frame).
    per_query
        Instead of runs and qrels: the long per-query frame ``run, query_id, measure,
        value`` (``evaluate(..., per_query=True)``; pandas, polars, arrow) or a
        :class:`~searcheval_frames.Comparison` (its pairs and paired queries are used).
    baseline
        Run name(s): each other run is paired with it. ``None``: all pairs of runs
        (the later run in the frame minus the earlier).
    delta
        Difference(s) ``Δ`` (absolute, in the measure's units) for ``achieved_power`` and
        ``n_needed``; default the observed mean difference of each pair. A list gives one
        row per value (the data of :func:`~searcheval_frames.power_curve`).
    alpha, power
        Significance level ``α`` in (0, 1) and target power ``1 - β`` in (α, 1).
    test
        ``"t"`` (paired t-test), or with ``method="simulation"`` also ``"wilcoxon"``,
        ``"permutation"`` (alias ``"randomization"``) or ``"sign"``.
    alternative
        ``"two-sided"``, ``"greater"`` (run better) or ``"less"``.
    n_queries
        Query-set size(s) at which ``detectable_delta`` and ``achieved_power`` are given;
        default each pair's current number of paired queries. A list gives one row each.
    sd
        ``σ_d``: ``"pair"`` (each pair's sample sd, ddof=1), ``"pooled"`` (Sakai's
        ``sqrt(2 V_E)`` over all runs of the measure) or a number (planned value).
    method
        ``"analytic"`` (noncentral t, t-test only) or ``"simulation"`` (resample the
        pair's centred differences, shifted to ``Δ``; every test).
    n_sim, n_resamples, seed
        Simulated query sets per power value; sign flips of the randomization test
        inside the simulation; seed (each pair draws its own reproducible stream).
    missing, columns
        Queries lacking in some runs (as :func:`~searcheval_frames.compare`); column names.
    **evaluate_options
        With runs and qrels: options of :func:`~searcheval_frames.evaluate`
        (``relevance_level=2`` ...).

    Returns
    -------
    DataFrame (caller's kind)
        One row per (pair, measure, n_queries, delta): ``run, baseline, measure, test,
        method, alpha, target_power, n_observed, observed_delta, sd, n_queries,
        detectable_delta, delta, achieved_power, n_needed``. ``n_needed`` is null when the
        target is out of reach (``Δ = 0``, wrong sign for a one-sided test, or beyond
        10⁹ queries; 20,000 by simulation); NaN values mark a pair whose differences have
        no spread (``σ_d = 0``).

    Examples
    --------
    >>> import polars as pl, searcheval_frames as sef
    >>> pq = pl.DataFrame({"run": ["a"] * 4 + ["b"] * 4, "query_id": ["1", "2", "3", "4"] * 2,
    ...                    "measure": "P@5", "value": [.2, .4, .4, .6, .4, .4, .8, .8]})
    >>> row = sef.power(per_query=pq, baseline="a", delta=0.1).row(0, named=True)
    >>> round(row["observed_delta"], 4), round(row["sd"], 4), row["n_needed"]
    (0.2, 0.1633, 23)
    """
    fn = "power"
    (alpha, target, test, alternative, method, sd_mode, deltas, sizes, n_sim, n_resamples,
     seed) = _check_options(fn, alpha=alpha, power=power, test=test, alternative=alternative,
                            method=method, sd=sd, delta=delta, n_queries=n_queries,
                            n_sim=n_sim, n_resamples=n_resamples, seed=seed)
    values, columns = per_query_of(fn, runs, qrels, measure, per_query, missing=missing,
                                   columns=columns, evaluate_options=evaluate_options)
    data = load_paired(fn, values, measure, missing, columns)

    rows: list[dict[str, Any]] = []
    flat: list[tuple[_Sim | None, dict[str, Any]]] = []
    for m in data.measures:
        x = data.matrices[m]
        col = {r: i for i, r in enumerate(data.runs)}
        pooled = pooled_sd(x) if sd_mode == "pooled" else None
        for run, base in run_pairs(fn, data, m, baseline):
            d = x[:, col[run]] - x[:, col[base]]
            obs = float(d.mean())
            s = _pair_sd(d, sd_mode, pooled, f"{run!r} - {base!r} on {m!r}")
            sim = None
            if method == "simulation" and math.isfinite(s):
                sim = _Sim(d, None if sd_mode == "pair" else s, test, alternative, alpha,
                           n_sim, n_resamples, seed, (run, base, m))
            for nq in sizes or [d.size]:
                for dl in deltas if deltas is not None else [obs]:
                    row = {"run": run, "baseline": base, "measure": m, "test": test,
                           "method": method, "alpha": alpha, "target_power": target,
                           "n_observed": d.size, "observed_delta": obs, "sd": s,
                           "n_queries": nq, "delta": dl}
                    rows.append(row)
                    flat.append((sim, row))
    if rows:
        sds = np.array([r["sd"] for r in rows])
        effect = np.array([r["delta"] for r in rows]) / sds
        nq_arr = np.array([r["n_queries"] for r in rows], dtype=np.float64)
        sign = -1.0 if alternative == "less" else 1.0
        uniq, inv = np.unique(nq_arr, return_inverse=True)  # depends on n only
        det = sign * _detectable(uniq, alpha, target, alternative)[inv] * sds
        with np.errstate(all="ignore"):
            ach = t_power(effect, nq_arr, alpha, alternative)
        need = _n_needed(np.where(np.isfinite(sds), effect, np.nan), alpha, target,
                         alternative)
        for i, (sim, row) in enumerate(flat):
            ok = math.isfinite(row["sd"])
            row["detectable_delta"] = float(det[i]) if ok else float("nan")
            row["achieved_power"] = float(ach[i]) if ok else float("nan")
            row["n_needed"] = int(need[i]) if need[i] > 0 else None
            if sim is not None:
                row["achieved_power"] = sim.power(row["delta"], row["n_queries"])
                row["detectable_delta"] = sim.detectable(
                    row["n_queries"], target, abs(float(det[i])), 1e-3 * row["sd"])
                guess = int(need[i]) if need[i] > 0 else _MAX_N_SIM
                reachable = row["delta"] != 0 and (
                    alternative == "two-sided" or row["delta"] * sign > 0)
                n_sim_need = sim.n_needed(row["delta"], target, guess) if reachable else -1
                row["n_needed"] = n_sim_need if n_sim_need > 0 else None
    frame = pl.DataFrame(rows, schema=_POWER_SCHEMA, orient="row") if rows else pl.DataFrame(
        schema=_POWER_SCHEMA)
    return to_native(frame.select(list(_POWER_SCHEMA)), data.kind)


def power_sentence(row: Mapping[str, Any]) -> str:
    """The one sentence README, report and notebooks use for a row of :func:`power`.

    It names its quantity: one run pair, the paired t-test's power at the pair's own
    ``σ_d`` (sample sd of its per-query differences, ``sd="pair"``), the detectable
    ``|Δ|`` at the queries there are, and the queries the *observed* Δ would need.

    >>> row = {"run": "b", "baseline": "a", "measure": "P@5", "n_queries": 38,
    ...        "alpha": 0.05, "target_power": 0.8, "sd": 0.024, "detectable_delta": 0.0113,
    ...        "observed_delta": 0.0063, "n_needed": 117}
    >>> print(power_sentence(row))
    b vs a on P@5, 38 queries: paired t-test (two-sided α = 0.05, 80% power, σ_d = 0.024 = sd of this pair's per-query differences) detects |Δ| ≥ 0.011; the observed Δ = +0.006 would need about 117 queries.
    """
    need = row.get("n_needed")
    tail = (f"the observed Δ = {row['observed_delta']:+.3f} would need about {need} queries"
            if need is not None else
            f"the observed Δ = {row['observed_delta']:+.3f} cannot reach that power")
    return (f"{row['run']} vs {row['baseline']} on {row['measure']}, {row['n_queries']} "
            f"queries: paired t-test (two-sided α = {row['alpha']:g}, "
            f"{row['target_power']:.0%} power, σ_d = {row['sd']:.3f} = sd of this pair's "
            f"per-query differences) detects |Δ| ≥ {row['detectable_delta']:.3f}; {tail}.")

