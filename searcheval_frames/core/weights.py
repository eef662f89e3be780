"""Traffic-weighted means of per-query values: the Hájek estimator and a design bootstrap.

A test set sampled from a query log (:func:`~searcheval_frames.sample_queries`) gives
each query an inclusion probability :math:`\\pi_i` and a weight
:math:`w_i = c_i / \\pi_i` (its searches over its probability: the searches it stands
for). The mean per search of a per-query value :math:`y` over the log is then estimated
by the Hájek (ratio) form of the Horvitz–Thompson estimator

.. math:: \\hat{\\bar y}_{\\text{search}} = \\frac{\\sum_{i \\in s} w_i y_i}{\\sum_{i \\in s} w_i},

(Särndal, Swensson & Wretman, *Model Assisted Survey Sampling*, 1992, §5.7; Hájek
1971), beside the plain mean over the test queries ("the average query"). The ratio form
rather than :math:`\\sum w_i y_i / C`: it needs only relative weights (a user's own
weights work), is exact for a constant :math:`y`, renormalises when some sampled queries
have no labels, and equals the HT form whenever :math:`\\sum_s w_i = C` (pptss always).

The interval is a percentile bootstrap that resamples as the sample was drawn: queries
taken with certainty (:math:`\\pi_i = 1`) stay fixed, the others are drawn with
replacement, within each stratum of a stratified design (the stratified bootstrap), over
all of them otherwise (the with-replacement approximation of a without-replacement
design, which ignores the finite-population correction and so errs wide; Rao & Wu 1988).
The same resamples serve every run and measure (paired), drawn from ``seed``.

>>> import polars as pl
>>> pq = pl.DataFrame({"run": "a", "query_id": ["1", "2"], "measure": "P@5",
...                    "value": [1.0, 0.0]})
>>> w = pl.DataFrame({"query_id": ["1", "2"], "weight": [3.0, 1.0]})
>>> weighted_summary(pq, w, n_resamples=200).select("value", "weighted_value").row(0)
(0.5, 0.75)
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import polars as pl

from ..errors import IdMismatchError, InvalidOptionError, SearchEvalWarning, format_rows
from ..frames import find_column
from ..frames.kinds import to_polars
from ..measures import parse_measure
from ..options import check_float, check_int, check_optional_int

__all__ = ["Design", "design_of", "hajek", "per_series", "weighted_summary", "weights_table"]

WEIGHT_COLUMNS = ("weight", "weights", "w", "traffic_weight")


def weights_table(weights: Any, queries: Any = None, *, func: str = "evaluate",
                  strata: str | None = None) -> pl.DataFrame:
    """``query_id, weight`` (+ ``inclusion_probability``, ``stratum`` when known) from
    ``weights``: a column name of ``queries``, a frame ``query_id, weight[, ...]``, a
    dict ``{query_id: weight}`` or a result with ``.frame`` (a ``QuerySample``)."""
    if isinstance(weights, str):
        if queries is None:
            raise InvalidOptionError(
                f"{func}(weights={weights!r}): a column name needs queries= (the frame that "
                "has it, e.g. the sample's .frame); or pass the frame itself as weights=")
        df, col = _frame(queries, "queries"), weights
        if col not in df.columns:
            raise InvalidOptionError(f"{func}(weights={weights!r}): queries has no column "
                                     f"{weights!r}; its columns are {df.columns}")
    elif isinstance(weights, Mapping):
        df = pl.DataFrame({"query_id": [str(k) for k in weights],
                           "weight": [float(v) for v in weights.values()]})
        col = "weight"
    else:
        df = _frame(getattr(weights, "to_polars", lambda: weights)(), "weights")
        found = find_column(df, WEIGHT_COLUMNS)
        if found is None:
            raise InvalidOptionError(f"{func}(weights=...): no weight column; the columns are "
                                     f"{df.columns}. Name it 'weight'")
        col = found
    qid = find_column(df, ("query_id", "qid"))
    if qid is None:
        raise InvalidOptionError(f"{func}(weights=...): no query_id column in {df.columns}")
    keep = [pl.col(qid).cast(pl.String).alias("query_id"),
            pl.col(col).cast(pl.Float64).alias("weight")]
    keep += [pl.col(c) for c in ("inclusion_probability",) if c in df.columns]
    if strata is not None:
        keep.append(pl.col(strata).cast(pl.String).alias("_stratum"))
    out = df.select(keep)
    bad = out.filter(~pl.col("weight").is_finite().fill_null(False) | (pl.col("weight") <= 0))
    if bad.height:
        raise InvalidOptionError(f"{func}(weights=...): {bad.height} weight(s) are missing, "
                                 f"not finite or not positive:\n{format_rows(bad)}\nGive every "
                                 "test query a positive weight (the sample's weight column)")
    dup = out.filter(pl.col("query_id").is_duplicated())
    if dup.height:
        raise InvalidOptionError(f"{func}(weights=...): query ids with two weights:\n"
                                 f"{format_rows(dup)}")
    return out


def _frame(obj: Any, arg: str) -> pl.DataFrame:
    return to_polars(getattr(obj, "to_polars", lambda: obj)(), arg)


def hajek(values: np.ndarray, weights: np.ndarray) -> float:
    """:math:`\\sum w_i y_i / \\sum w_i`."""
    return float(np.dot(weights, values) / weights.sum())


class Design:
    """How the test queries were drawn, for the bootstrap: certainty units fixed, the
    others resampled with replacement within their group; one set of resamples."""

    def __init__(self, weights: np.ndarray, groups: np.ndarray, fixed: np.ndarray,
                 n_resamples: int, seed: int | None) -> None:
        rng = np.random.default_rng(seed)
        self.weights = weights
        self.fixed = fixed
        self.groups = groups
        self.seed = seed
        self.parts = []
        #: what the interval cannot show (a stratum of one query, no random query at all)
        self.note = "" if (~fixed).any() else "every query taken for certain: no sampling error"
        for g in np.unique(groups[~fixed]):
            members = np.flatnonzero((groups == g) & ~fixed)
            if members.size == 1:
                self.note = ("a stratum with one sampled query: its sampling error is not "
                             "measured, the interval is too narrow")
            self.parts.append(members[rng.integers(0, members.size,
                                                   size=(n_resamples, members.size))])
        self.n_resamples = n_resamples

    def subset(self, keep: np.ndarray) -> Design:
        """The same design over some of the queries (resamples drawn again)."""
        return Design(self.weights[keep], self.groups[keep], self.fixed[keep],
                      self.n_resamples, self.seed)

    def resampled(self, values: np.ndarray) -> np.ndarray:
        """The Hájek mean of ``values`` in every resample."""
        w, f = self.weights, self.fixed
        num = np.full(self.n_resamples, float(np.dot(w[f], values[f])))
        den = np.full(self.n_resamples, float(w[f].sum()))
        for idx in self.parts:
            num += (w[idx] * values[idx]).sum(axis=1)
            den += w[idx].sum(axis=1)
        return num / den

    def interval(self, values: np.ndarray, ci: float) -> tuple[float, float]:
        if not self.parts:  # every query taken for certain: no sampling error
            v = hajek(values, self.weights)
            return v, v
        got = self.resampled(values)
        lo, hi = np.quantile(got, [(1 - ci) / 2, (1 + ci) / 2])
        return float(lo), float(hi)


def design_of(table: pl.DataFrame, n_resamples: int, seed: int | None) -> Design:
    """The :class:`Design` of a ``weights_table`` (rows in the order values will come)."""
    fixed = (table["inclusion_probability"].to_numpy() >= 1.0
             if "inclusion_probability" in table.columns else np.zeros(table.height, bool))
    groups = (table["_stratum"].fill_null("").to_numpy() if "_stratum" in table.columns
              else np.zeros(table.height, dtype=object))
    return Design(table["weight"].to_numpy(), groups, fixed, n_resamples, seed)


def aligned(per_query: pl.DataFrame, table: pl.DataFrame, func: str) -> pl.DataFrame:
    """``table`` restricted to the queries of ``per_query`` (an error names queries that
    have values but no weight; a warning names weighted queries without values)."""
    ids = per_query.select(pl.col("query_id").cast(pl.String)).unique()
    lacking = ids.join(table, on="query_id", how="anti").sort("query_id")
    if lacking.height:
        raise IdMismatchError(
            f"{func}(weights=...): {lacking.height} evaluated quer(y/ies) have no weight:\n"
            f"{format_rows(lacking)}\nEvaluate only the sampled queries (their qrels), or "
            "give the others a weight; a query outside the sample has no inclusion probability")
    unused = table.join(ids, on="query_id", how="anti")
    if unused.height:
        warnings.warn(f"{func}(weights=...): {unused.height} weighted quer(y/ies) have no "
                      f"values (no labels?) and are left out; the weighted mean is over the "
                      f"others: {', '.join(unused['query_id'].head(5).to_list())}",
                      SearchEvalWarning, stacklevel=3)
    return table.join(ids, on="query_id", how="semi").sort("query_id")


def check_bootstrap(func: str, ci: Any, n_resamples: Any, seed: Any) -> None:
    check_float(func, "ci", ci, minimum=0, maximum=1, open_min=True, open_max=True,
                example="ci=0.95")
    check_int(func, "n_resamples", n_resamples, minimum=100, example="n_resamples=2000")
    check_optional_int(func, "seed", seed, minimum=0, example="seed=0")


def _is_mean(measure: str) -> bool:
    try:
        return parse_measure(measure).aggregate == "mean"
    except Exception:  # a measure name this registry does not know: a plain mean
        return True


def per_series(per_query: Any, weights: Any, *, queries: Any, strata: str | None,
               n_resamples: int, seed: int | None,
               func: str) -> tuple[pl.DataFrame, Design, dict[tuple[str, str], np.ndarray]]:
    """The per-query frame, the :class:`Design` of its weighted queries, and each (run,
    measure)'s values in the design's query order (NaN where a run lacks a query)."""
    strata = strata if strata is not None else getattr(weights, "strata_column", None)
    pq = to_polars(per_query, "per_query").with_columns(pl.col("query_id").cast(pl.String))
    table = aligned(pq, weights_table(weights, queries, func=func, strata=strata), func)
    design = design_of(table, n_resamples, seed)
    order = table.select("query_id").with_row_index("_i")
    series = {}
    for (run, measure), g in pq.group_by(["run", "measure"], maintain_order=True):
        y = np.full(table.height, np.nan)
        got = g.join(order, on="query_id")
        y[got["_i"].to_numpy()] = got["value"].cast(pl.Float64).to_numpy()
        series[(str(run), str(measure))] = y
    return pq, design, series


def weighted_summary(per_query: Any, weights: Any, *, queries: Any = None,
                     strata: str | None = None, summary: Any = None, seed: int | None = 0,
                     ci: float = 0.95, n_resamples: int = 2000,
                     func: str = "weighted_summary") -> pl.DataFrame:
    """``run, measure, n_queries, value, weighted_value, ci_low, ci_high, note``.

    ``value`` is the plain mean over the test queries (or ``summary``'s value: evaluate's
    aggregate); ``weighted_value`` the Hájek traffic-weighted mean with its design
    bootstrap interval (null for measures that are summed or geometric means); ``note``
    says what the interval cannot show (a stratum of one sampled query; a sample taken
    entirely for certain).
    ``strata``: the column the design stratified on (taken from a ``QuerySample``'s
    ``strata_column`` when ``weights`` is one).
    """
    check_bootstrap(func, ci, n_resamples, seed)
    _, design, series = per_series(per_query, weights, queries=queries, strata=strata,
                                   n_resamples=n_resamples, seed=seed, func=func)
    rows = []
    for (run, measure), y in series.items():
        mean = float(np.nanmean(y)) if np.isfinite(y).any() else float("nan")
        wv = lo = hi = None
        if _is_mean(str(measure)) and np.isfinite(y).all():
            wv = hajek(y, design.weights)
            lo, hi = design.interval(y, ci)
        rows.append((run, measure, int(np.isfinite(y).sum()), mean, wv, lo, hi, design.note))
    out = pl.DataFrame(rows, orient="row", schema={
        "run": pl.String, "measure": pl.String, "n_queries": pl.Int64, "value": pl.Float64,
        "weighted_value": pl.Float64, "ci_low": pl.Float64, "ci_high": pl.Float64,
        "note": pl.String})
    if summary is not None:
        s = to_polars(summary, "summary").select("run", "measure", "value")
        out = out.drop("value").join(s, on=["run", "measure"], how="left").select(
            "run", "measure", "n_queries", "value", "weighted_value", "ci_low", "ci_high",
            "note")
    return out
