"""Compare systems query by query: deltas, confidence intervals, significance.

:func:`compare` takes the long per-query frame of :func:`searcheval_frames.evaluate`
(``run, query_id, measure, value``), or runs + qrels + measures, and returns a
:class:`Comparison`: a tidy frame with one row per (run, baseline, measure) and
renderers for notebooks (HTML), Markdown and LaTeX.

Queries are paired. For each measure the per-query scores are laid out as a
query x run matrix over the union of the queries of the compared runs; a query
that one run has and another lacks follows ``missing=``:

* ``"zero"`` (default): the absent score is 0, as ``trec_eval -c`` does;
* ``"skip"``: the query is dropped from *every* compared run for that measure
  (so all means in the table are over the same queries);
* ``"error"``: raise :class:`~searcheval_frames.errors.IdMismatchError`.

A query is never dropped from one side only. ``"zero"`` and ``"skip"`` warn and
name the queries.

Deltas are always ``run - baseline``. ``delta`` is absolute (in the measure's
units), ``delta_pct`` relative to the baseline mean, in percent; tables label
which is which: ``+0.130 (+20.0%)`` for 0.650 -> 0.780.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import polars as pl

from .._deprecation import old_spelling
from ..core.evaluate import check_evaluate_options
from ..errors import IdMismatchError
from ..frames import Kind, to_native
from ..options import check_choice, check_float, check_int
from . import inference as _inf
from . import pairs as _pairs
from . import stats as _st
from .calling import compare_is_old, compare_translate, old_compare
from .compare_rows import SCHEMA, comparison_rows
from .holes import with_unjudged as _holes
from .tables import Table

__all__ = ["FRAME_COLUMNS", "Comparison", "compare"]

#: Columns of :attr:`Comparison.frame`, in order.
FRAME_COLUMNS: tuple[str, ...] = tuple(SCHEMA)

# --------------------------------------------------------------------------- result
class Comparison:
    """Result of :func:`compare`: a tidy frame plus table renderers.

    Attributes
    ----------
    frame
        One row per (run, baseline, measure), in the caller's frame kind; columns
        :data:`FRAME_COLUMNS`: ``mean`` / ``baseline_mean`` over the paired
        queries, ``delta = mean - baseline_mean`` (absolute), ``delta_pct``
        (relative, percent of ``baseline_mean``), ``ci_low``/``ci_high`` (interval
        of the mean per-query difference), ``p_value``, ``p_adjusted`` (after the
        multiple-testing correction), ``significant`` (``p_adjusted <= alpha``),
        ``wins``/``ties``/``losses`` (queries where the run is better / equal /
        worse than the baseline) and ``effect_size`` (paired Cohen's d_z).
    means
        Polars frame ``run, measure, n_queries, mean`` for every compared run.
    per_query
        The paired per-query scores actually tested (polars ``run, query_id,
        measure, value``), after the missing-query policy.
    runs, baselines, measures
        Display order of runs (baselines first), the baselines, the measures.

    Examples
    --------
    >>> import polars as pl, searcheval_frames as sef
    >>> pq = pl.DataFrame({"run": ["a"] * 3 + ["b"] * 3, "query_id": ["1", "2", "3"] * 2,
    ...                    "measure": "P@5", "value": [0.4, 0.6, 0.6, 0.6, 0.8, 1.0]})
    >>> cmp = sef.compare(per_query=pq, baseline="a")
    >>> cmp.to_polars().select("run", "delta", "wins", "losses").row(0)
    ('b', 0.2666666666666666, 3, 0)
    """

    def __init__(
        self,
        frame: pl.DataFrame,
        *,
        means: pl.DataFrame,
        per_query: pl.DataFrame,
        runs: list[str],
        baselines: list[str],
        measures: list[str],
        pairs: str,
        test: str,
        alternative: str,
        correction: str,
        family: str,
        alpha: float,
        ci: float,
        ci_method: str,
        n_resamples: int,
        seed: int | None,
        missing: str,
        kind: Kind,
    ) -> None:
        self._frame = frame
        self.means = means
        self.per_query = per_query
        self.runs = runs
        self.baselines = baselines
        self.measures = measures
        self.pairs = pairs
        self.test = test
        self.alternative = alternative
        self.correction = correction
        self.family = family
        self.alpha = alpha
        self.ci = ci
        self.ci_method = ci_method
        self.n_resamples = n_resamples
        self.seed = seed
        self.missing = missing
        self.kind = kind

    # -- frames
    @property
    def frame(self) -> Any:
        """The tidy comparison frame in the caller's kind (pandas in, pandas out)."""
        return to_native(self._frame, self.kind)

    def to_polars(self) -> pl.DataFrame:
        """The tidy comparison frame as a polars DataFrame."""
        return self._frame.clone()

    def to_pandas(self) -> Any:
        """The tidy comparison frame as a pandas DataFrame."""
        return self._frame.to_pandas()

    # -- description
    def describe_method(self, *, interval: bool = True) -> str:
        """One sentence naming the test, correction, alpha and (optionally) interval."""
        test = _st.TEST_LABELS[self.test]
        if self.test == "permutation":
            test += f" ({self.n_resamples:,} resamples)"
        if self.alternative != "two-sided":
            test += f", one-sided ({self.alternative})"
        n = int(self._frame.get_column("p_value").is_not_nan().sum())
        corr = _st.CORRECTION_LABELS[self.correction]
        if self.correction != "none":
            scope = "per measure" if self.family == "measure" else f"over {n} comparisons"
            corr += f" {scope}"
        ci = _inf.describe_interval(self.test, self.ci_method, self.correction,
                                    self.n_resamples)
        text = f"{test}, {corr}, alpha = {self.alpha:g}"
        if interval:
            text += f"; {self.ci:.0%} CI: {ci}"
        return text + f"; missing queries: {self.missing}"

    # -- rendering
    def table(
        self,
        layout: Literal["wide", "before_after", "long"] = "wide",
        *,
        digits: int = 3,
        pct_digits: int = 1,
        columns: Sequence[str] | None = None,
        measures: Sequence[str] | None = None,
        runs: Sequence[str] | None = None,
    ) -> Table:
        """A :class:`~searcheval_frames.analysis.tables.Table` of this comparison.

        ``layout="wide"``: runs x measures, best mean per measure bold,
        superscript letters for significant wins, deltas vs the (first) baseline.
        ``layout="before_after"`` (alias ``"long"``): one row per measure (and
        pair), ``before -> after`` like the seed's benchmark. ``columns`` picks the
        statistics shown, see :class:`~searcheval_frames.analysis.tables.Table`.
        """
        return Table(
            self._frame,
            means=self.means,
            all_runs=self.runs,
            baselines=self.baselines,
            all_measures=self.measures,
            correction=self.correction,
            ci=self.ci,
            method=self.describe_method(interval=False),
            method_ci=self.describe_method(interval=True),
            kind=self.kind,
            layout=layout,
            digits=digits,
            pct_digits=pct_digits,
            columns=columns,
            measures=measures,
            runs=runs,
        )

    def _repr_html_(self) -> str:
        return self.table()._repr_html_()

    def to_html(self, *, legend: bool = True, **table_kwargs: Any) -> str:
        """HTML table; other keyword arguments go to :meth:`table`."""
        return self.table(**table_kwargs).to_html(legend=legend)

    def to_markdown(self, *, legend: bool = True, **table_kwargs: Any) -> str:
        """Markdown table; other keyword arguments go to :meth:`table`."""
        return self.table(**table_kwargs).to_markdown(legend=legend)

    def to_latex(
        self,
        *,
        caption: str | None = None,
        label: str | None = None,
        legend: bool = True,
        environment: bool = True,
        placement: str = "t",
        **table_kwargs: Any,
    ) -> str:
        """LaTeX (booktabs) table; see :meth:`Table.to_latex`, other keyword
        arguments go to :meth:`table`."""
        return self.table(**table_kwargs).to_latex(
            caption=caption, label=label, legend=legend, environment=environment,
            placement=placement,
        )

    # -- constructors, one per kind of input
    @classmethod
    def from_runs(cls, runs: Any, qrels: Any, measures: str | Sequence[str],
                  baseline: str | Sequence[str] | None = None, **options: Any) -> Comparison:
        """``compare(runs=runs, qrels=qrels, measures=measures, baseline=..., **options)``:
        evaluate the runs, then compare them."""
        return compare(runs=runs, qrels=qrels, measures=measures, baseline=baseline,
                       **options)

    @classmethod
    def from_per_query(cls, per_query: Any, baseline: str | Sequence[str] | None = None,
                       **options: Any) -> Comparison:
        """``compare(per_query=per_query, baseline=..., **options)``: compare precomputed
        per-query values (``run, query_id, measure, value``).

        >>> import polars as pl, searcheval_frames as sef
        >>> pq = pl.DataFrame({"run": ["a", "a", "b", "b"], "query_id": ["1", "2"] * 2,
        ...                    "measure": "P@5", "value": [0.2, 0.4, 0.6, 0.6]})
        >>> sef.Comparison.from_per_query(pq, "a").to_polars()["delta"].round(3).to_list()
        [0.3]
        """
        return compare(per_query=per_query, baseline=baseline, **options)

    def __repr__(self) -> str:
        return (
            f"Comparison({len(self.runs)} runs, baselines={self.baselines}, "
            f"measures={self.measures}, test={self.test!r}, correction={self.correction!r})\n"
            + self.table().to_markdown()
        )


# --------------------------------------------------------------------------- compare
@old_spelling("compare", old_compare, compare_is_old, compare_translate)
def compare(
    runs: Any = None,
    qrels: Any = None,
    measures: str | Sequence[str] | None = None,
    *,
    baseline: str | Sequence[str] | None = None,
    per_query: Any = None,
    pairs: Literal["baseline", "all"] = "baseline",
    test: str = "t",
    alternative: Literal["two-sided", "greater", "less"] = "two-sided",
    correction: str | None = "holm",
    family: Literal["all", "measure"] = "all",
    alpha: float = 0.05,
    ci: float = 0.95,
    ci_method: Literal["test", "bca", "percentile", "basic", "t"] = "test",
    n_resamples: int = 10_000,
    seed: int | None = 0,
    missing: Literal["zero", "skip", "error"] = "zero",
    tie_tolerance: float = 1e-9,
    columns: Mapping[str, str] | None = None,
    test_options: Mapping[str, Any] | None = None,
    queries: Any = None, by: Any = None, min_queries: int = 20, power: float = 0.8,
    unjudged: Literal["nonrelevant", "relevant", "judge"] | None = None,
    **evaluate_options: Any,
) -> Comparison:
    """Compare runs against baseline(s) query by query, with significance tests.

    Two ways in, one per kind of input (the package's one calling convention):

    * runs: ``compare(runs, qrels, ["nDCG@10"], baseline="bm25")`` evaluates the runs
      first (:meth:`Comparison.from_runs`);
    * precomputed per-query values: ``compare(per_query=pq, baseline="bm25")``
      (:meth:`Comparison.from_per_query`).

    Parameters
    ----------
    runs, qrels, measures
        Evaluate ``runs`` against ``qrels`` on ``measures`` with
        :func:`~searcheval_frames.core.evaluate.evaluate` (``per_query=True``). With
        ``per_query=``, ``measures`` selects measures (default: all of them).
    baseline
        Run name, or a list of names, to compare the other runs against. Default: the
        first run in the frame, with a warning naming it. With several baselines every
        run is compared to each of them (each unordered pair once).
    per_query
        Long per-query frame ``run, query_id, measure, value`` (pandas, polars,
        arrow; e.g. ``evaluate(..., per_query=True)``), or a dict
        ``{run_name: per_query_frame}``; not with runs and qrels.
    pairs
        ``"baseline"`` (each run vs each baseline) or ``"all"`` (all pairs of
        runs; ``baseline`` then only orders the table and is the delta reference).
    test
        ``"t"`` (paired t-test, default), ``"wilcoxon"`` (signed-rank),
        ``"permutation"`` (paired randomization test of the mean difference;
        alias ``"randomization"``) or ``"sign"``.
    alternative
        ``"two-sided"``, ``"greater"`` (run better than baseline) or ``"less"``.
    correction, family
        Multiple-testing correction: ``"holm"`` (default), ``"bonferroni"``,
        ``"bh"`` (Benjamini–Hochberg), ``"by"`` or ``"none"``, applied over all
        rows (``family="all"``: runs x measures x baselines) or within each
        measure (``family="measure"``).
    alpha
        Significance level: ``significant = p_adjusted <= alpha``.
    ci, ci_method
        Confidence level and method of the interval of the mean per-query
        difference: ``"bca"`` (default), ``"percentile"``, ``"basic"`` bootstrap,
        or ``"t"`` (Student t interval).
    n_resamples, seed
        Bootstrap / randomization resamples, and the seed. Each (run, baseline,
        measure) draws from its own stream derived from ``seed`` and the names, so
        results are reproducible and do not depend on which other runs are
        compared. ``seed=None``: not reproducible.
    missing
        Queries present for one compared run and absent for another: ``"zero"``
        scores them 0 (trec_eval -c), ``"skip"`` drops them from all runs,
        ``"error"`` raises. Also passed to ``evaluate`` when evaluating runs.
    tie_tolerance
        Per-query differences within this are ties in wins / ties / losses.
    columns
        Map ``run``, ``query_id``, ``measure``, ``value`` to your column names.
    test_options
        Extra keyword arguments for the scipy test (e.g. ``{"zero_method": "pratt"}``).
    queries, by, min_queries, power
        Slices: compare within each slice (:mod:`searcheval_frames.analysis.slices`);
        slices with fewer than ``min_queries`` are flagged, with the minimum detectable Δ
        at ``power``.
    unjudged
        How unjudged documents count, see :mod:`~searcheval_frames.analysis.holes`.
    **evaluate_options
        Passed to ``evaluate`` in runs + qrels mode (``relevance_level=2`` ...).

    Returns
    -------
    Comparison
        ``.frame`` (caller's kind), ``.to_polars()``, ``.table()``,
        ``.to_markdown()``, ``.to_latex()``; shows as an HTML table in notebooks.

    Examples
    --------
    >>> import polars as pl, searcheval_frames as sef
    >>> pq = pl.DataFrame({
    ...     "run": ["before"] * 4 + ["after"] * 4,
    ...     "query_id": ["q1", "q2", "q3", "q4"] * 2,
    ...     "measure": "P@5",
    ...     "value": [0.6, 0.4, 0.8, 0.8, 0.8, 0.6, 0.8, 1.0]})
    >>> cmp = sef.compare(per_query=pq, baseline="before")
    >>> print(cmp.to_markdown(layout="before_after", columns=["before", "after", "delta"]))
    ... # doctest: +NORMALIZE_WHITESPACE
    | Measure | Before (before) | After (after) | Δ abs (rel) |
    |:--|--:|--:|--:|
    | P@5 | 0.650 | 0.800 | +0.150 (+23.1%) |
    <BLANKLINE>
    Δ abs (rel): absolute difference after − before, and relative change in % of before. ...
    """
    if by is not None or queries is not None:  # compare within each slice of the queries
        from .slices import by_slice
        return by_slice(compare, dict(locals()))  # type: ignore[return-value]
    test, correction, ci_method = _check_options(  # type: ignore[assignment]
        test=test, correction=correction, ci_method=ci_method, alternative=alternative,
        missing=missing, pairs=pairs, family=family, alpha=alpha, ci=ci,
        n_resamples=n_resamples, tie_tolerance=tie_tolerance, seed=seed,
        test_options=test_options, evaluate_options=evaluate_options)
    inp = _pairs.resolve_input(runs, qrels, per_query)
    if unjudged is not None:  # per-query values with holes counted one way
        inp = _holes(inp, measures, unjudged, evaluate_options)
    pq, measure_list, kind = _pairs.load_input(inp, measures=measures, columns=columns,
                                               missing=missing,
                                               evaluate_options=evaluate_options)
    all_runs = pq.get_column("run").unique(maintain_order=True).to_list()
    baselines = _pairs.choose_baselines(all_runs, baseline, warn=pairs == "baseline")
    pair_list, order = _pairs.run_pairs(all_runs, baselines, pairs)

    paired = _pairs.pair_queries(pq, order, missing)
    if paired.height == 0:
        raise IdMismatchError(
            "compare: no query is shared by all compared runs (missing='skip'); nothing "
            "to compare. Use missing='zero' or check the query ids."
        )
    frame, items, tukey_rows, means = comparison_rows(paired, measure_list, order, pair_list, seed=seed,
                                            tukey=correction == "tukey", alpha=alpha, ci=ci,
                                            tie_tolerance=tie_tolerance)
    frame = _inf.fill_frame(frame, items, family=family, test=test, alternative=alternative,
                            correction=correction, alpha=alpha, ci=ci, ci_method=ci_method,
                            n_resamples=n_resamples, options=dict(test_options or {}),
                            tukey_rows=tukey_rows)
    return Comparison(
        frame, means=means, per_query=paired.select("run", "query_id", "measure", "value"),
        runs=order, baselines=baselines, measures=measure_list, pairs=pairs, test=test,
        alternative=alternative, correction=correction, family=family, alpha=float(alpha),
        ci=float(ci), ci_method=ci_method, n_resamples=int(n_resamples), seed=seed,
        missing=missing, kind=kind,
    )


def _check_options(*, test: str, correction: str | None, ci_method: str, alternative: str,
                   missing: str, pairs: str, family: str, alpha: float, ci: float,
                   n_resamples: int, tie_tolerance: float, seed: int | None,
                   test_options: Mapping[str, Any] | None,
                   evaluate_options: Mapping[str, Any]) -> tuple[str, str, str]:
    """``compare``'s option checks, before any data is read; the canonical test,
    correction and interval method."""
    test = _st.canonical_test(test)
    corr = _st.canonical_correction(correction)
    ci_method = _st.canonical_ci_method(ci_method)
    _st.check_alternative(alternative)
    check_choice("compare", "missing", missing, ("zero", "skip", "error"))
    check_choice("compare", "pairs", pairs, ("baseline", "all"), example="pairs='all'")
    check_choice("compare", "family", family, ("all", "measure"), example="family='measure'")
    check_float("compare", "alpha", alpha, minimum=0, maximum=1, open_min=True, open_max=True,
                what="the significance level", example="alpha=0.05")
    check_float("compare", "ci", ci, minimum=0, maximum=1, open_min=True, open_max=True,
                what="the confidence level", example="ci=0.95")
    check_int("compare", "n_resamples", n_resamples, minimum=1, example="n_resamples=10000")
    check_float("compare", "tie_tolerance", tie_tolerance, minimum=0, example="tie_tolerance=1e-9")
    check_evaluate_options("compare", evaluate_options, own=compare,  # (both input paths)
                           test=(test, test_options))
    if seed is not None:
        _st.pair_rng(seed)  # validates
    return test, corr, ci_method
