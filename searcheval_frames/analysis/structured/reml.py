"""REML for crossed random intercepts in numpy: the profiled criterion of lme4.

The model ``y = Xβ + Σ_k Z_k u_k + ε``, ``u_k ~ N(0, σ² θ_k² I)``, ``ε ~ N(0, σ² I)``,
with ``Λ = diag(θ)`` over the columns of ``Z = [Z_1 … Z_K]``. For given ``θ`` the
penalised least squares problem is solved with two Cholesky factors
(Bates, Mächler, Bolker & Walker 2015, "Fitting linear mixed-effects models using
lme4", *J. Stat. Softw.* 67(1), sec. 3):

* ``L Lᵀ = Λ Zᵀ Z Λ + I``, ``c_u = L⁻¹ Λ Zᵀ y``, ``C_X = L⁻¹ Λ Zᵀ X``;
* ``R_X R_Xᵀ = XᵀX − C_Xᵀ C_X``, ``c_β = R_X⁻¹ (Xᵀy − C_Xᵀ c_u)``, ``β̂ = R_X⁻ᵀ c_β``;
* ``r² = yᵀy − |c_u|² − |c_β|²``, and the REML deviance (−2 × restricted log-likelihood)
  ``d(θ) = 2 log|L| + 2 log|R_X| + (n−p)(1 + log(2π r² / (n−p)))``,

minimised over ``θ ≥ 0`` (L-BFGS-B, restarted inside for a component stuck at 0); then ``σ̂² = r²/(n−p)``, the variance components
``σ̂² θ_k²`` and ``Var(β̂) = σ̂² (R_X R_Xᵀ)⁻¹``. Cost per evaluation: one Cholesky of a
``q x q`` matrix, ``q`` the number of random levels (for thousands of queries use the
bootstrap instead). The same numbers as statsmodels' ``MixedLM`` (tests compare both).

>>> import numpy as np
>>> y = np.array([1.0, 2.0, 2.5, 4.0, 3.0, 5.0])
>>> X = np.ones((6, 1)); Z = [np.repeat(np.arange(3), 2)]
>>> fit = reml(y, X, Z)
>>> round(float(fit["beta"][0]), 4), [round(float(v), 4) for v in fit["variances"]]
(2.9167, [1.0417, 1.2083])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...optional import require

__all__ = ["deviance", "reml"]


def _design(codes: Sequence[np.ndarray], n: int) -> tuple[np.ndarray, np.ndarray]:
    """The indicator matrix ``Z`` (n x q) of integer codes per factor, and each column's
    factor number."""
    blocks, owner = [], []
    for k, c in enumerate(codes):
        levels = int(c.max()) + 1
        z = np.zeros((n, levels))
        z[np.arange(n), c] = 1.0
        blocks.append(z)
        owner.append(np.full(levels, k))
    return np.hstack(blocks), np.concatenate(owner)


def deviance(theta: np.ndarray, parts: dict[str, Any], full: bool = False) -> Any:
    """The REML deviance at ``theta`` (see the module doc); ``full=True``: also β̂,
    ``σ̂²`` and ``Var(β̂)``."""
    linalg = parts["linalg"]
    lam = np.asarray(theta, dtype=np.float64)[parts["owner"]]
    A = lam[:, None] * parts["ZtZ"] * lam[None, :]
    A[np.diag_indices_from(A)] += 1.0
    L = linalg.cholesky(A, lower=True, check_finite=False)
    rhs = np.column_stack([lam * parts["Zty"], lam[:, None] * parts["ZtX"]])
    sol = linalg.solve_triangular(L, rhs, lower=True, check_finite=False)
    cu, CX = sol[:, 0], sol[:, 1:]
    S = parts["XtX"] - CX.T @ CX
    RX = linalg.cholesky(S, lower=True, check_finite=False)
    cb = linalg.solve_triangular(RX, parts["Xty"] - CX.T @ cu, lower=True, check_finite=False)
    r2 = max(parts["yty"] - cu @ cu - cb @ cb, 1e-300)
    n, p = parts["n"], parts["p"]
    dev = (2.0 * np.log(np.diag(L)).sum() + 2.0 * np.log(np.diag(RX)).sum()
           + (n - p) * (1.0 + math.log(2.0 * math.pi * r2 / (n - p))))
    if not full:
        return float(dev)
    beta = linalg.solve_triangular(RX.T, cb, lower=False)
    sigma2 = r2 / (n - p)
    return float(dev), beta, sigma2, sigma2 * linalg.cho_solve((RX, True), np.eye(p))


def _one_thread() -> Any:
    """BLAS on one thread while fitting, when threadpoolctl is there: the matrices are
    small, and a threaded BLAS on a busy machine made each step 100x slower."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - optional
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def reml(y: np.ndarray, X: np.ndarray, codes: Sequence[np.ndarray]) -> dict[str, Any]:
    """Fit by REML: ``beta``, ``cov_beta``, ``variances`` (one per factor of ``codes``,
    then the residual), ``deviance``, ``converged``."""
    require("scipy.linalg", "the mixed model")  # loaded before the limit applies to it
    with _one_thread():
        return _reml(y, X, codes)


def _reml(y: np.ndarray, X: np.ndarray, codes: Sequence[np.ndarray]) -> dict[str, Any]:
    optimize = require("scipy.optimize", "the mixed model")
    n = y.size
    Z, owner = _design([np.asarray(c) for c in codes], n)
    parts = {"linalg": require("scipy.linalg", "the mixed model"), "ZtZ": Z.T @ Z, "Zty": Z.T @ y, "ZtX": Z.T @ X, "XtX": X.T @ X, "Xty": X.T @ y,
             "yty": float(y @ y), "n": n, "p": X.shape[1], "owner": owner}
    k = len(codes)

    def run(start: np.ndarray) -> Any:
        return optimize.minimize(deviance, start, args=(parts,), method="L-BFGS-B",
                                 bounds=[(0.0, None)] * k,
                                 options={"ftol": 1e-12, "gtol": 1e-8})

    best = run(np.ones(k))
    # the criterion depends on θ² only, so θ_k = 0 is a stationary point that a bounded
    # gradient method can stop at; restart each such component inside (lme4 uses a
    # derivative-free optimiser for the same reason)
    for _ in range(k):
        zero = np.flatnonzero(best.x < 1e-4)
        if zero.size == 0:
            break
        start = best.x.copy()
        start[zero] = 0.1 * max(float(best.x.max()), 0.1)
        again = run(start)
        if again.fun < best.fun - 1e-10:
            best = again
        else:
            break
    dev, beta, sigma2, cov = deviance(best.x, parts, full=True)
    variances = [float(sigma2 * t ** 2) for t in best.x] + [float(sigma2)]
    return {"beta": beta, "cov_beta": cov, "variances": variances, "deviance": dev,
            "theta": best.x, "converged": bool(best.success)}
