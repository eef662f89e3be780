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
``σ̂² θ_k²`` and ``Var(β̂) = σ̂² (R_X R_Xᵀ)⁻¹``. The factor with the most levels is
eliminated in closed form (its block of ``ZᵀZ`` is diagonal; levels grouped by their
count), so each evaluation costs one Cholesky of the *other* factors' levels: 13 for
datasets x queries-within-datasets, ``Q + seeds`` for the replicate model. The same
numbers as statsmodels' ``MixedLM`` (tests compare both).

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

__all__ = ["criterion", "deviance", "reml"]


def _design(codes: Sequence[np.ndarray], n: int) -> tuple[Any, np.ndarray]:
    """The sparse indicator matrix ``Z`` (n x q) of integer codes per factor, and each
    column's factor number."""
    sparse = require("scipy.sparse", "the mixed model")
    cols, owner, offset = [], [], 0
    for k, c in enumerate(codes):
        levels = int(c.max()) + 1
        cols.append(np.asarray(c, dtype=np.int64) + offset)
        owner.append(np.full(levels, k))
        offset += levels
    rows = np.tile(np.arange(n), len(codes))
    Z = sparse.csr_matrix((np.ones(rows.size), (rows, np.concatenate(cols))), shape=(n, offset))
    return Z, np.concatenate(owner)


def _parts(y: np.ndarray, X: np.ndarray, codes: Sequence[np.ndarray]) -> dict[str, Any]:
    """Everything the criterion needs, once. The factor with the most levels (``big``)
    has a diagonal block in ``ZᵀZ`` (each row is in one of its levels) and is eliminated
    in closed form; its levels are grouped by their count ``d`` so that only products of
    the other (``rest``) columns remain: ``G_g = B_gᵀB_g`` etc. with ``B = Z_bigᵀ Z_rest``."""
    Z, owner = _design(codes, y.size)
    k_big = int(np.argmax([int(c.max()) + 1 for c in codes]))
    big, rest = np.flatnonzero(owner == k_big), np.flatnonzero(owner != k_big)
    ztz = (Z.T @ Z).tocsr()
    zty, ztx = Z.T @ y, np.asarray(Z.T @ X)
    d = np.asarray(ztz[big][:, big].diagonal()).ravel()
    B = ztz[big][:, rest].toarray()
    groups = []
    for dv in np.unique(d):
        g = d == dv
        Bg, yg, Xg = B[g], zty[big][g], ztx[big][g]
        groups.append({"d": float(dv), "n": int(g.sum()), "G": Bg.T @ Bg, "By": Bg.T @ yg,
                       "BX": Bg.T @ Xg, "yy": float(yg @ yg), "Xy": Xg.T @ yg, "XX": Xg.T @ Xg})
    return {"linalg": require("scipy.linalg", "the mixed model"), "groups": groups,
            "C": ztz[rest][:, rest].toarray(), "Zty": zty[rest], "ZtX": ztx[rest],
            "XtX": X.T @ X, "Xty": X.T @ y, "yty": float(y @ y), "n": y.size, "p": X.shape[1],
            "owner": owner[rest], "k_big": k_big}


def deviance(theta: np.ndarray, parts: dict[str, Any], full: bool = False) -> Any:
    """The REML deviance at ``theta`` (see the module doc); ``full=True``: also β̂,
    ``σ̂²`` and ``Var(β̂)``."""
    linalg = parts["linalg"]
    theta = np.asarray(theta, dtype=np.float64)
    lb2 = float(theta[parts["k_big"]]) ** 2
    lam = theta[parts["owner"]]
    S = lam[:, None] * parts["C"] * lam[None, :]
    S[np.diag_indices_from(S)] += 1.0
    rhs = np.column_stack([parts["Zty"], parts["ZtX"]]).astype(np.float64)
    logdet = 0.0
    cc = np.zeros((1 + parts["p"], 1 + parts["p"]))  # [c_u, C_X]ᵀ[c_u, C_X], big part
    for g in parts["groups"]:
        w = lb2 / (lb2 * g["d"] + 1.0)
        logdet += g["n"] * math.log(lb2 * g["d"] + 1.0)
        S -= w * lam[:, None] * g["G"] * lam[None, :]
        rhs -= w * np.column_stack([g["By"], g["BX"]])
        cc += w * np.block([[np.array([[g["yy"]]]), g["Xy"][None, :]],
                            [g["Xy"][:, None], g["XX"]]])
    if S.size:
        L = linalg.cholesky(S, lower=True, check_finite=False)
        sol = linalg.solve_triangular(L, lam[:, None] * rhs, lower=True, check_finite=False)
        logdet += 2.0 * np.log(np.diag(L)).sum()
        cc += sol.T @ sol
    cu2, CXcu, CXCX = cc[0, 0], cc[1:, 0], cc[1:, 1:]
    RX = linalg.cholesky(parts["XtX"] - CXCX, lower=True, check_finite=False)
    cb = linalg.solve_triangular(RX, parts["Xty"] - CXcu, lower=True, check_finite=False)
    r2 = max(parts["yty"] - cu2 - cb @ cb, 1e-300)
    n, p = parts["n"], parts["p"]
    dev = (logdet + 2.0 * np.log(np.diag(RX)).sum()
           + (n - p) * (1.0 + math.log(2.0 * math.pi * r2 / (n - p))))
    if not full:
        return float(dev)
    beta = linalg.solve_triangular(RX.T, cb, lower=False)
    sigma2 = r2 / (n - p)
    return float(dev), beta, sigma2, sigma2 * linalg.cho_solve((RX, True), np.eye(p))


def criterion(y: np.ndarray, X: np.ndarray, codes: Sequence[np.ndarray],
              theta: Sequence[float]) -> float:
    """The REML deviance at given relative standard deviations ``theta`` (one per factor
    of ``codes``): to compare with another fitter's ``−2 × log-likelihood``."""
    return float(deviance(np.asarray(theta, dtype=np.float64),
                          _parts(y, X, [np.asarray(c) for c in codes])))


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
    parts = _parts(y, X, [np.asarray(c) for c in codes])
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
    # polish: the criterion is flat near its optimum and finite-difference gradients stop
    # early; a derivative-free simplex on |θ| from there (lme4's choice, too)
    polish = optimize.minimize(lambda t: deviance(np.abs(t), parts), best.x,
                               method="Nelder-Mead",
                               options={"xatol": 1e-10, "fatol": 1e-13, "maxiter": 400 * k})
    theta = np.abs(polish.x) if polish.fun < best.fun else best.x
    dev, beta, sigma2, cov = deviance(theta, parts, full=True)
    variances = [float(sigma2 * t ** 2) for t in theta] + [float(sigma2)]
    return {"beta": beta, "cov_beta": cov, "variances": variances, "deviance": dev,
            "theta": theta, "converged": bool(best.success)}
