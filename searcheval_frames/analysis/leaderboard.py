"""Many systems compared as one family: a leaderboard with tied groups and rank intervals.

:func:`leaderboard` takes per-query scores of several runs on one measure (or runs +
qrels) and answers "which of these systems are tied?" with one multiple-comparison
procedure over all pairs, as Sakai (*Laboratory Experiments in Information Retrieval*,
2018, ch. 4–5) recommends:

* ``test="randomized_tukey_hsd"`` (default): each query's scores are shuffled across the
  runs ``n_resamples`` times; the p-value of a pair is the share of shuffles whose range
  of run means reaches the pair's observed difference (``(hits + 1)/(B + 1)``);
* ``test="tukey_hsd"``: Tukey's honestly significant difference on the studentized
  range, with the two-way ANOVA's residual variance ``V_E`` and ``(k−1)(n−1)`` degrees
  of freedom;
* ``test="holm"``: paired t-tests on every pair, Holm-adjusted, with Holm-matched t
  intervals.

Every pair's interval inverts its test: for the Tukey tests ``Δ ± M`` with one margin
``M`` for all pairs, so "the interval excludes 0" is "p ≤ α" exactly when
``ci = 1 − alpha`` (the default).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from .._deprecation import old_spelling, outside_stacklevel
from ..errors import InvalidOptionError, SearchEvalWarning
from ..options import check_choice, check_float, check_int, check_optional_int
from .calling import leaderboard_is_old, leaderboard_translate, old_leaderboard
from .inference import MIN_QUERIES
from .leaderboard_build import build, score_matrix, untestable
from .leaderboard_result import TESTS, Leaderboard

__all__ = ["TESTS", "Leaderboard", "leaderboard", "untestable"]


@old_spelling("leaderboard", old_leaderboard, leaderboard_is_old, leaderboard_translate)
def leaderboard(
    runs: Any = None,
    qrels: Any = None,
    measure: str | None = None,
    *,
    per_query: Any = None,
    test: str = "randomized_tukey_hsd",
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: int | None = None,
    ci: float = 0.95,
    missing: str = "zero",
    columns: Mapping[str, str] | None = None,
    progress: bool = True,
    queries: Any = None,
    by: Any = None,
    min_queries: int = 20,
    family: str = "all",
    power: float = 0.8,
    replicate: str | None = None,
    dataset: str | None = None,
    **evaluate_options: Any,
) -> Leaderboard:
    """Rank runs on one measure with all pairs tested as one family.

    Parameters
    ----------
    runs, qrels
        The runs, evaluated against the qrels on ``measure`` first
        (``relevance_level=2`` etc. go to :func:`~searcheval_frames.evaluate`):
        ``sef.leaderboard(runs, qrels, "nDCG@10")``.
    measure
        The one measure to rank by, e.g. ``"nDCG@10"``.
    per_query
        Instead of runs and qrels: the long per-query frame ``run, query_id, measure,
        value`` (or ``{run: frame}``), e.g. ``evaluate(..., per_query=True)``.
    test
        ``"randomized_tukey_hsd"`` (default), ``"tukey_hsd"`` or ``"holm"``.
    alpha, ci
        Family-wise level of the tests; confidence of the simultaneous intervals and
        of the rank intervals (``ci = 1 − alpha`` makes intervals and tests agree).
    n_resamples, seed
        Shuffles of the randomised test and query bootstrap samples of the ranks.
    missing, columns
        As for :func:`~searcheval_frames.compare`.
    progress
        Show a tqdm bar when the randomisation takes over ~2 s.
    queries, by
        Slices: one leaderboard per slice of the queries (``by``: a column of the query
        metadata frame ``queries``, or a polars expression over it, as for
        :func:`~searcheval_frames.evaluate`); see
        :mod:`~searcheval_frames.analysis.leaderboard_slices`.
    min_queries, power
        With ``by``: slices with fewer queries are flagged ``small`` and named in a
        warning with their minimum detectable Δ at ``power``.
    family
        With ``by``: ``"all"`` (default) controls the family-wise error over every
        pair of every slice (each slice tested at ``alpha / S``, ``S`` testable
        slices: p-values ``min(1, S·p)``); ``"slice"``: each slice is its own family.
    replicate, dataset
        Leaderboards with structure (:mod:`~searcheval_frames.analysis.structured`):
        seeds per system (:func:`~searcheval_frames.leaderboard_replicates`; its
        ``method=`` passes through) or datasets (rank intervals and tied groups across
        them, :func:`~searcheval_frames.leaderboard_datasets`; ``aggregate=``).

    Returns
    -------
    Leaderboard
        ``.frame``, ``.pairs``, ``.anova``; renders as HTML in notebooks. With ``by``,
        a :class:`~searcheval_frames.analysis.leaderboard_slices.SlicedLeaderboard`.

    Notes
    -----
    Tukey HSD: pair (a, b) differs when ``|x̄_a − x̄_b| > q_{1−α}(k, (k−1)(n−1)) √(V_E/n)``
    with ``V_E`` the two-way ANOVA residual variance (Tukey 1949; Sakai 2018, ch. 4).
    Below :data:`~searcheval_frames.analysis.inference.MIN_QUERIES` queries, or with no
    residual spread, p-values and intervals are NaN with a ``reason``.

    Examples
    --------
    >>> import polars as pl, searcheval_frames as sef
    >>> pq = pl.DataFrame({"run": ["a"] * 6 + ["b"] * 6 + ["c"] * 6,
    ...     "query_id": [str(i) for i in range(6)] * 3, "measure": "P@5",
    ...     "value": [.2, .4, .2, .6, .4, .2, .6, .8, .6, .8, .8, .4, .6, .6, .8, .8, .8, .6]})
    >>> lb = sef.leaderboard(per_query=pq, measure="P@5", test="tukey_hsd", seed=0)
    >>> lb.to_polars().select("run", pl.col("mean").round(3), "rank", "group").rows()
    [('c', 0.7, 1, 'a'), ('b', 0.667, 2, 'a'), ('a', 0.333, 3, 'b')]
    """
    test = check_choice("leaderboard", "test", test, TESTS, example="test='tukey_hsd'")
    check_float("leaderboard", "alpha", alpha, minimum=0, maximum=1, open_min=True,
                open_max=True, what="the significance level", example="alpha=0.05")
    check_float("leaderboard", "ci", ci, minimum=0, maximum=1, open_min=True, open_max=True,
                what="the confidence level", example="ci=0.95")
    check_int("leaderboard", "n_resamples", n_resamples, minimum=1, example="n_resamples=10000")
    check_choice("leaderboard", "missing", missing, ("zero", "skip", "error"))
    if not isinstance(measure, str):
        raise InvalidOptionError(f"leaderboard(measure={measure!r}): must be one measure "
                                 f"name; got {measure!r}. Example: measure='nDCG@10'")
    check_optional_int("leaderboard", "seed", seed, minimum=0, example="seed=0")
    if replicate is not None or dataset is not None:  # seeds, datasets (issue #35)
        from .structured.calls import structured_leaderboard
        return structured_leaderboard(dict(locals()))
    if by is not None or queries is not None:  # one leaderboard per slice of the queries
        from .leaderboard_slices import by_slice

        return by_slice(dict(locals()))  # type: ignore[return-value]
    X, names, kind = score_matrix(per_query, runs, qrels, measure, missing, columns,
                                  dict(evaluate_options))
    rng = np.random.default_rng(seed)
    reason = untestable(X)
    if reason is not None:
        warnings.warn(f"leaderboard: the runs cannot be tested on {measure} ({reason}, "
                      f"{X.shape[0]} queries); p-values and intervals are NaN. A leaderboard "
                      f"needs at least {MIN_QUERIES} queries with some spread.", SearchEvalWarning,
                      stacklevel=outside_stacklevel())
    return build(X, names, measure=measure, test=test, alpha=float(alpha), ci=float(ci),
                 n_resamples=int(n_resamples), rng=rng, reason=reason, kind=kind,
                 progress=progress)
