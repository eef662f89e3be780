"""Paired significance tests, bootstrap intervals, effect sizes and p-value corrections.

Building blocks of :func:`searcheval_frames.compare`, on numpy arrays of *paired*
per-query scores (``x[i]``, ``y[i]``: two systems on one query). Resampling is
vectorised and batched by :mod:`scipy.stats`, which does the work wherever it can:

* paired t-test: :func:`scipy.stats.ttest_rel`;
* Wilcoxon signed-rank test: :func:`scipy.stats.wilcoxon`;
* paired randomization (permutation) test on the mean difference:
  :func:`scipy.stats.permutation_test` with ``permutation_type="samples"``
  (random sign flips of the per-query differences; the exact test over all
  ``2**n`` sign patterns when that is no more than ``n_resamples``);
* sign test: :func:`scipy.stats.binomtest` on wins against losses;
* bootstrap confidence interval of the mean difference:
  :func:`scipy.stats.bootstrap` (``"percentile"``, ``"basic"``, ``"bca"``), or
  the parametric Student t interval (``"t"``);
* multiple testing: Bonferroni, Holm (step-down) and Benjamini–Hochberg /
  Benjamini–Yekutieli (:func:`scipy.stats.false_discovery_control`).

Degenerate inputs never look certain (issue #26): with fewer than 3 queries, every
difference zero or every difference equal, :func:`paired_test` returns NaN (see
:mod:`~searcheval_frames.analysis.degenerate`); the effect size is 0 when every
difference is zero and NaN when they are one non-zero constant.

>>> import numpy as np
>>> from searcheval_frames.stats import paired_test, effect_size
>>> x = np.array([0.5, 0.7, 0.9]); y = np.array([0.4, 0.5, 0.6])
>>> round(paired_test(x, y, "t"), 4), round(effect_size(x, y), 4)
(0.0742, 2.0)
"""

from __future__ import annotations

import contextlib
import warnings
import zlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import InvalidOptionError, InvalidScoreError
from ..optional import require
from .degenerate import degenerate_reason

__all__ = [
    "CI_METHODS",
    "CORRECTIONS",
    "TESTS",
    "adjust_pvalues",
    "bootstrap_ci",
    "effect_size",
    "pair_rng",
    "paired_test",
    "wins_ties_losses",
]

#: Accepted test names (aliases on the left, canonical name on the right).
TESTS: dict[str, str] = {
    "t": "t",
    "ttest": "t",
    "t-test": "t",
    "student": "t",
    "paired-t": "t",
    "wilcoxon": "wilcoxon",
    "signed-rank": "wilcoxon",
    "permutation": "permutation",
    "randomization": "permutation",
    "randomisation": "permutation",
    "fisher": "permutation",
    "sign": "sign",
}

#: Human-readable names of the canonical tests (used in report captions).
TEST_LABELS: dict[str, str] = {
    "t": "paired t-test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "permutation": "paired randomization test",
    "sign": "sign test",
}

#: Accepted multiple-testing corrections.
CORRECTIONS: dict[str, str] = {
    "none": "none",
    "bonferroni": "bonferroni",
    "holm": "holm",
    "holm-bonferroni": "holm",
    "bh": "bh",
    "fdr_bh": "bh",
    "benjamini-hochberg": "bh",
    "by": "by",
    "fdr_by": "by",
    "benjamini-yekutieli": "by",
    "tukey": "tukey", "tukey-hsd": "tukey",
}

CORRECTION_LABELS: dict[str, str] = {
    "none": "no correction",
    "bonferroni": "Bonferroni correction",
    "holm": "Holm correction",
    "bh": "Benjamini–Hochberg FDR",
    "by": "Benjamini–Yekutieli FDR",
    "tukey": "Tukey HSD over all pairs of runs",
}

#: Accepted confidence-interval methods.
CI_METHODS: dict[str, str] = {
    "bca": "BCa",
    "percentile": "percentile",
    "basic": "basic",
    "t": "t",
    "test": "the test's own interval",
}

_ALTERNATIVES = ("two-sided", "greater", "less")
# Largest resamples x queries block scipy builds at once (bounds memory to ~16 MB).
_BATCH_ELEMENTS = 2_000_000


def _unknown_option(func: str, arg: str, name: Any, allowed: Sequence[str]) -> InvalidOptionError:
    return InvalidOptionError(
        f"{func}({arg}={name!r}): must be one of {', '.join(repr(a) for a in allowed)}; "
        f"got {name!r}. Example: {arg}={allowed[0]!r}"
    )


def _canonical(name: Any, table: Mapping[str, str], arg: str, func: str) -> str:
    key = str(name).strip().lower().replace("_", "-") if name is not None else "none"
    if isinstance(name, str | type(None)):
        if key in table:
            return table[key]
        if key.replace("-", "_") in table:
            return table[key.replace("-", "_")]
    raise _unknown_option(func, arg, name, sorted(set(table)))


def canonical_test(name: str, func: str = "compare") -> str:
    """Canonical name of a test (``"t"``, ``"wilcoxon"``, ``"permutation"``, ``"sign"``)."""
    return _canonical(name, TESTS, "test", func)


def canonical_correction(name: str | None, func: str = "compare") -> str:
    """Canonical name of a correction (``"none"``, ``"bonferroni"``, ``"holm"``, ``"bh"``, ``"by"``)."""
    return _canonical("none" if name is None else name, CORRECTIONS, "correction", func)


def canonical_ci_method(name: str, func: str = "compare") -> str:
    """Canonical name of a confidence-interval method."""
    key = str(name).strip().lower()
    if not isinstance(name, str) or key not in CI_METHODS:
        raise _unknown_option(func, "ci_method", name, sorted(CI_METHODS))
    return key


def check_alternative(alternative: str, func: str = "compare") -> None:
    if alternative not in _ALTERNATIVES:
        raise _unknown_option(func, "alternative", alternative, _ALTERNATIVES)


def _paired_arrays(x: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape:
        raise InvalidOptionError(
            f"paired scores must be two 1-d arrays of the same length; got shapes "
            f"{x.shape} and {y.shape}"
        )
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise InvalidScoreError("paired scores contain NaN or infinite values; remove them first")
    return x, y


def pair_rng(seed: int | None, *keys: str) -> np.random.Generator:
    """A random generator for one comparison, derived from ``seed`` and string keys.

    The same ``(seed, keys)`` always gives the same stream, whatever other
    comparisons are run alongside: results for a pair of runs on a measure do not
    change when a third run is added. ``seed=None`` gives fresh entropy.

    >>> a = pair_rng(1, "bm25", "rerank", "P@5").random()
    >>> a == pair_rng(1, "bm25", "rerank", "P@5").random()
    True
    """
    if seed is None:
        return np.random.default_rng()
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InvalidOptionError(f"seed={seed!r}: use a non-negative integer, or None for no seed")
    entropy = [int(seed), *(zlib.crc32(str(k).encode("utf-8")) for k in keys)]
    return np.random.default_rng(np.random.SeedSequence(entropy))


#: Progress bars opened by :func:`progress`; each resampling call ticks the innermost.
_BARS: list[Any] = []


@contextlib.contextmanager
def progress(total: int, desc: str = "resampling", *, enabled: bool = True,
             delay: float = 2.0) -> Iterator[None]:
    """Show a tqdm progress bar over ``total`` resampling calls, if that takes over ``delay`` s.

    Every :func:`bootstrap_ci` and :func:`paired_test` call inside the block (and every
    :func:`tick`) advances the bar. tqdm is optional: without it (or with
    ``enabled=False``) nothing is shown. The bar appears only once ``delay``
    seconds have passed, so quick work stays silent.
    """
    bar = None
    if enabled and total > 0:
        try:
            from tqdm.auto import tqdm
        except ImportError:  # pragma: no cover - tqdm is optional
            tqdm = None
        if tqdm is not None:
            bar = tqdm(total=int(total), desc=desc, delay=delay, leave=False)
    if bar is not None:
        _BARS.append(bar)
    try:
        yield
    finally:
        if bar is not None:
            _BARS.remove(bar)
            bar.close()


def tick(n: int = 1) -> None:
    """Advance the innermost :func:`progress` bar by ``n`` resampling calls."""
    if _BARS:
        _BARS[-1].update(n)



def _rng_kwargs(func: Any, rng: np.random.Generator) -> dict[str, Any]:
    # scipy >= 1.15 takes `rng`; older versions `random_state` (which accepts a Generator).
    import inspect

    params = inspect.signature(func).parameters
    return {"rng": rng} if "rng" in params else {"random_state": rng}


def _batch(n: int) -> int:
    return max(1, _BATCH_ELEMENTS // max(n, 1))


def _mean_stat(d: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(d, axis=axis)


def _constant(d: np.ndarray) -> bool:
    # equal up to floating-point noise ((x + 0.5) - x is not exactly 0.5 everywhere)
    return bool(np.ptp(d) <= 1e-12 * max(1.0, float(np.max(np.abs(d)))))


def wins_ties_losses(x: Any, y: Any, tol: float = 1e-9) -> tuple[int, int, int]:
    """Count queries where ``x`` beats ``y`` by more than ``tol``, ties, and losses.

    >>> wins_ties_losses([0.5, 0.2, 0.3], [0.4, 0.2, 0.6])
    (1, 1, 1)
    """
    x, y = _paired_arrays(x, y)
    d = x - y
    wins = int(np.count_nonzero(d > tol))
    losses = int(np.count_nonzero(d < -tol))
    return wins, int(d.size - wins - losses), losses


def effect_size(x: Any, y: Any) -> float:
    """Paired Cohen's d (d_z): mean of the differences over their standard deviation.

    ``d_z = mean(x - y) / sd(x - y)`` with the sample standard deviation
    (``ddof=1``). It is the standardised effect the paired t-test sees:
    ``t = d_z * sqrt(n)``. Returns 0 when all differences are zero and NaN when
    it is undefined (fewer than two queries, or a constant non-zero difference).

    >>> round(effect_size([0.5, 0.7, 0.9], [0.4, 0.5, 0.6]), 6)
    2.0
    """
    x, y = _paired_arrays(x, y)
    d = x - y
    if d.size and not d.any():
        return 0.0
    if d.size < 2:
        return float("nan")
    if _constant(d):
        return float("nan")
    sd = float(np.std(d, ddof=1))
    return float(np.mean(d) / sd)


def paired_test(
    x: Any,
    y: Any,
    test: str = "t",
    *,
    alternative: str = "two-sided",
    n_resamples: int = 10_000,
    rng: np.random.Generator | int | None = None,
    **options: Any,
) -> float:
    """p-value of a paired test of ``x`` against ``y`` (``x`` is the new system).

    Parameters
    ----------
    x, y
        Per-query scores of the two systems, aligned by query.
    test
        ``"t"`` (paired t-test), ``"wilcoxon"`` (signed-rank), ``"permutation"``
        (paired randomization test on the mean difference; alias
        ``"randomization"``, ``"fisher"``) or ``"sign"`` (sign test; ties dropped).
    alternative
        ``"two-sided"``, ``"greater"`` (``x`` better) or ``"less"``.
    n_resamples
        Random sign-flip patterns for the permutation test; the exact test over
        all ``2**n`` patterns is used when that is no larger.
    rng
        Generator or integer seed for the permutation test.
    **options
        Passed to the scipy function (e.g. ``zero_method="pratt"`` for Wilcoxon).

    Returns
    -------
    float
        The p-value; NaN when the data cannot be tested
        (:func:`~searcheval_frames.analysis.degenerate.degenerate_reason`: fewer than 3
        queries, all differences zero, or all equal).

    Examples
    --------
    >>> paired_test([0.5, 0.7, 0.9], [0.4, 0.5, 0.6], "wilcoxon")
    0.25
    """
    try:
        return _paired_test(x, y, test, alternative=alternative, n_resamples=n_resamples,
                            rng=rng, **options)
    finally:
        tick()


def _paired_test(x: Any, y: Any, test: str, *, alternative: str, n_resamples: int,
                 rng: np.random.Generator | int | None, **options: Any) -> float:
    stats = require("scipy.stats", "paired tests and intervals")

    x, y = _paired_arrays(x, y)
    check_alternative(alternative)
    name = canonical_test(test)
    d = x - y
    if degenerate_reason(d) is not None:  # too few queries, all ties, no spread (#26)
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if name == "t":
            return float(stats.ttest_rel(x, y, alternative=alternative, **options).pvalue)
        if name == "wilcoxon":
            return float(stats.wilcoxon(x, y, alternative=alternative, **options).pvalue)
        if name == "sign":
            wins = int(np.count_nonzero(d > 0))
            losses = int(np.count_nonzero(d < 0))
            return float(
                stats.binomtest(wins, wins + losses, 0.5, alternative=alternative).pvalue
            )
        # paired randomization test: flip the sign of each query's difference
        if not isinstance(rng, np.random.Generator):
            rng = np.random.default_rng(rng)
        res = stats.permutation_test(
            (d,),
            _mean_stat,
            permutation_type="samples",
            vectorized=True,
            n_resamples=int(n_resamples),
            batch=_batch(d.size),
            alternative=alternative,
            **_rng_kwargs(stats.permutation_test, rng),
            **options,
        )
        return float(res.pvalue)


def bootstrap_ci(
    x: Any,
    y: Any,
    *,
    confidence: float = 0.95,
    method: str = "bca",
    n_resamples: int = 10_000,
    rng: np.random.Generator | int | None = None,
) -> tuple[float, float]:
    """Two-sided confidence interval of the mean difference ``mean(x - y)``.

    ``method`` is ``"bca"`` (bias-corrected and accelerated bootstrap),
    ``"percentile"``, ``"basic"`` (all :func:`scipy.stats.bootstrap`, resampling
    queries with replacement) or ``"t"`` (Student t interval, no resampling).
    When BCa is undefined for the data (scipy returns NaN) the percentile
    interval is used instead.

    >>> lo, hi = bootstrap_ci([0.5, 0.7, 0.9], [0.4, 0.5, 0.6], method="t")
    >>> round(lo, 4), round(hi, 4)
    (-0.0484, 0.4484)
    """
    try:
        return _bootstrap_ci(x, y, confidence=confidence, method=method,
                             n_resamples=n_resamples, rng=rng)
    finally:
        tick()


def _bootstrap_ci(x: Any, y: Any, *, confidence: float, method: str, n_resamples: int,
                  rng: np.random.Generator | int | None) -> tuple[float, float]:
    stats = require("scipy.stats", "paired tests and intervals")

    x, y = _paired_arrays(x, y)
    method = canonical_ci_method(method)
    if method == "test":
        raise InvalidOptionError("bootstrap_ci(method='test'): that interval comes with its test "
                              "(analysis.inference.paired_inference); or use method='bca'")
    if not 0 < confidence < 1:
        raise InvalidOptionError(f"ci={confidence!r}: the confidence level must be in (0, 1), e.g. 0.95")
    d = x - y
    if degenerate_reason(d) is not None:  # never a zero-width "interval" (#26)
        return float("nan"), float("nan")
    if method == "t":
        mean = float(np.mean(d))
        half = float(stats.t.ppf(0.5 + confidence / 2, d.size - 1)) * float(
            np.std(d, ddof=1) / np.sqrt(d.size)
        )
        return mean - half, mean + half
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(rng)
    kwargs = _rng_kwargs(stats.bootstrap, rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = stats.bootstrap(
            (d,),
            _mean_stat,
            n_resamples=int(n_resamples),
            batch=_batch(d.size),
            vectorized=True,
            confidence_level=confidence,
            method=CI_METHODS[method],
            **kwargs,
        )
        lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
        if method == "bca" and not (np.isfinite(lo) and np.isfinite(hi)):
            res = stats.bootstrap(
                (d,),
                _mean_stat,
                n_resamples=0,  # reuse the distribution drawn above
                batch=_batch(d.size),
                vectorized=True,
                confidence_level=confidence,
                method="percentile",
                bootstrap_result=res,
                **kwargs,
            )
            lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
    return lo, hi


def adjust_pvalues(pvalues: Sequence[float] | np.ndarray, method: str | None = "holm") -> np.ndarray:
    """Adjust a family of p-values for multiple testing.

    ``method`` is ``"none"``, ``"bonferroni"`` (``min(1, m p)``), ``"holm"``
    (step-down Bonferroni; controls the family-wise error rate like Bonferroni
    but rejects at least as much), ``"bh"`` (Benjamini–Hochberg false discovery
    rate) or ``"by"`` (Benjamini–Yekutieli, valid under any dependence). NaN
    p-values stay NaN and do not count in the family size ``m``. A hypothesis is
    rejected at level ``alpha`` when its adjusted p-value is ``<= alpha``.

    >>> adjust_pvalues([0.01, 0.04, 0.03], "holm").round(4).tolist()
    [0.03, 0.06, 0.06]
    >>> adjust_pvalues([0.01, 0.04, 0.03], "bh").round(4).tolist()
    [0.03, 0.04, 0.04]
    """
    stats = require("scipy.stats", "paired tests and intervals")

    method = canonical_correction(method)
    if method == "tukey":
        raise InvalidOptionError("adjust_pvalues(method='tukey'): Tukey HSD needs the scores; "
                              "use sef.compare(correction='tukey') or sef.leaderboard")
    p = np.asarray(pvalues, dtype=np.float64).copy()
    if p.ndim != 1:
        raise InvalidOptionError("pvalues must be one-dimensional")
    ok = ~np.isnan(p)
    if ((p[ok] < 0) | (p[ok] > 1)).any():
        raise InvalidOptionError("pvalues must lie in [0, 1]")
    q = p[ok]
    m = q.size
    if m == 0 or method == "none":
        return p
    if method == "bonferroni":
        adj = np.minimum(1.0, q * m)
    elif method == "holm":
        order = np.argsort(q, kind="stable")
        stepped = np.minimum(1.0, q[order] * (m - np.arange(m)))
        adj = np.empty(m)
        adj[order] = np.maximum.accumulate(stepped)
    else:
        adj = stats.false_discovery_control(q, method=method)
    p[ok] = adj
    return p
