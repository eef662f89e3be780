"""Compare systems slice by slice: per-slice deltas, intervals and one family of tests.

``sef.compare(..., queries=q, by="intent")`` (:func:`by_slice`) runs
:func:`~searcheval_frames.compare` on the queries of each slice (see
:mod:`searcheval_frames.core.slicing` for what a slice is), then

* corrects the p-values within the **whole family** of slice x measure x pair tests
  (Holm by default; ``family="measure"``: one family per measure, over its slices and
  pairs): ``p_adjusted`` of a slice is not the one ``compare`` gives for that slice
  alone, which corrects over its measures only;
* gives each row the **minimum detectable Δ** of the paired t-test at that slice's
  size: the smallest ``|Δ|`` found with ``power`` (0.8) at ``alpha``, from the
  noncentral t (:func:`~searcheval_frames.power`):
  ``MDΔ = δ*(n) · σ_d`` with ``δ*(n)`` the standardised effect of power ``1 - β``
  at ``n`` queries and ``σ_d`` the slice's sd of per-query differences
  (T. Sakai, "Topic set size design", *Inf. Retr. J.* 19(3), 2016), as
  :func:`~searcheval_frames.power` gives it (:mod:`.noncentral`). Slices with
  fewer than ``min_queries`` queries are flagged ``small`` and named in a warning;
* and a "where does B beat A" table (:attr:`SliceComparison.wins`): per slice and
  measure, ``better`` / ``worse`` when the corrected test is significant and the
  interval excludes 0, else ``no reliable difference`` (or ``too few queries``).

Means, deltas and intervals of a slice equal those of ``compare`` on the run and
qrels filtered to that slice's queries (bootstrap intervals too: each (run,
baseline, measure) draws from a stream seeded by the names, as in ``compare``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl

from .._deprecation import outside_stacklevel
from ..core.slicing import attach_slices, slice_keys
from ..errors import EmptyInputError, SearchEvalWarning
from ..frames import Kind, to_native
from ..options import check_float, check_int
from . import stats as _st
from .noncentral import detectable
from .pairs import choose_baselines, load_input, resolve_input

__all__ = ["SliceComparison", "by_slice"]


class SliceComparison:
    """Result of ``compare(..., queries=, by=)`` (:func:`by_slice`).

    Attributes
    ----------
    frame
        One row per (slice, run, baseline, measure) in the caller's frame kind: the
        slice columns, then :data:`~searcheval_frames.analysis.compare.FRAME_COLUMNS`
        with ``p_adjusted`` over the whole family of slice tests, then
        ``detectable_delta`` (the minimum detectable Δ) and ``small``.
    wins
        Polars frame, "where does B beat A": slice columns, ``run, baseline,
        measure, n_queries, delta, ci_low, ci_high, p_adjusted, verdict``.
    slices
        Names of the slice columns.
    per_slice
        ``{slice values: Comparison}`` of each slice (p-values corrected within it).
    """

    def __init__(self, frame: pl.DataFrame, slices: list[str], per_slice: dict[tuple, Any],
                 kind: Kind, alpha: float) -> None:
        self._frame, self.slices, self.per_slice = frame, slices, per_slice
        self._kind, self.alpha = kind, alpha

    @property
    def frame(self) -> Any:
        return to_native(self._frame, self._kind)

    def to_polars(self) -> pl.DataFrame:
        return self._frame

    @property
    def wins(self) -> pl.DataFrame:
        f = self._frame
        sig = pl.col("significant") & ((pl.col("ci_low") > 0) | (pl.col("ci_high") < 0))
        verdict = (pl.when(sig & (pl.col("delta") > 0)).then(pl.lit("better"))
                   .when(sig & (pl.col("delta") < 0)).then(pl.lit("worse"))
                   .when(pl.col("small")).then(pl.lit("too few queries"))
                   .otherwise(pl.lit("no reliable difference")))
        return f.select(*self.slices, "run", "baseline", "measure", "n_queries", "delta",
                        "ci_low", "ci_high", "p_adjusted", "detectable_delta",
                        verdict.alias("verdict")).sort(
            "measure", "delta", descending=[False, True], maintain_order=True)

    def to_markdown(self, digits: int = 3) -> str:
        """The frame as a Markdown table (slice, run vs baseline, n, Δ, CI, p adj, MDΔ)."""
        rows = ["| " + " | ".join([*self.slices, "run vs baseline", "measure", "n", "Δ",
                                   "95% CI", "p adj", "MDΔ", "verdict"]) + " |",
                "|" + "--|" * (len(self.slices) + 8)]
        for r in self.wins.iter_rows(named=True):
            f = f"{{:+.{digits}f}}"
            rows.append("| " + " | ".join([
                *(str(r[c]) for c in self.slices), f"{r['run']} vs {r['baseline']}",
                r["measure"], str(r["n_queries"]), f.format(r["delta"]),
                f"[{f.format(r['ci_low'])}, {f.format(r['ci_high'])}]",
                f"{r['p_adjusted']:.3g}", "n/a" if r["detectable_delta"] != r["detectable_delta"]
                else f"{r['detectable_delta']:.{digits}f}",
                r["verdict"]]) + " |")
        return "\n".join(rows) + "\n"

    def _repr_html_(self) -> str:
        return self.wins._repr_html_()

    def __repr__(self) -> str:
        return f"SliceComparison(slices={self.slices}, rows={self._frame.height})"


def _detectable(per_query: pl.DataFrame, frame: pl.DataFrame, alpha: float,
                target: float, alternative: str) -> pl.Series:
    """The minimum detectable Δ of each row of ``frame`` (one slice):
    ``detectable(n) · sd(d_i)`` with the sample sd (ddof=1) of the paired differences."""
    out = []
    for run, base, measure, n in frame.select("run", "baseline", "measure",
                                              "n_queries").iter_rows():
        wide = (per_query.filter(pl.col("measure") == measure)
                .pivot(on="run", index="query_id", values="value"))
        diff = (wide[run] - wide[base]).to_numpy().astype(np.float64)
        sd = float(np.std(diff, ddof=1)) if n >= 2 else float("nan")
        ok = n >= 2 and sd > 0
        out.append(float(detectable(np.array([n]), alpha, target, alternative)[0]) * sd
                   if ok else float("nan"))
    return pl.Series("detectable_delta", out, dtype=pl.Float64)


def by_slice(compare: Callable[..., Any], args: dict[str, Any]) -> SliceComparison:
    """``compare(..., queries=, by=)``: :func:`~searcheval_frames.compare` within each
    slice of the queries, with one family of tests.

    ``compare`` is the function itself (passed in, so that this module does not import
    it back) and ``args`` its arguments (``locals()``): ``queries``, ``by``; the others
    go to it per slice as given (``test``, ``ci``, ``ci_method``, ``n_resamples``,
    ``seed`` ...; ``relevance_level`` ... to evaluate in runs + qrels mode).
    ``power=`` (default 0.8): of the minimum detectable Δ; ``min_queries``: slices with
    fewer queries are flagged ``small`` and named in a warning.

    Examples
    --------
    >>> import polars as pl, searcheval_frames as sef
    >>> pq = pl.DataFrame({"run": ["a"] * 4 + ["b"] * 4, "query_id": ["1", "2", "3", "4"] * 2,
    ...                    "measure": "P@5", "value": [0.2, 0.4, 0.6, 0.6, 0.6, 0.8, 0.6, 0.4]})
    >>> q = pl.DataFrame({"query_id": ["1", "2", "3", "4"], "kind": ["x", "x", "y", "y"]})
    >>> s = sef.compare(per_query=pq, baseline="a", queries=q, by="kind", ci_method="t",
    ...                 min_queries=2)
    >>> s.to_polars().select("kind", "n_queries", "delta").rows()
    [('x', 2, 0.4000000000000001), ('y', 2, -0.09999999999999998)]
    """
    args = {k: v for k, v in args.items() if k != "by_slice"}  # compare's import of us
    queries, by, min_queries = args.pop("queries"), args.pop("by"), args.pop("min_queries")
    inp = resolve_input(args.pop("runs"), args.pop("qrels"), args.pop("per_query"))
    baseline, measures = args.pop("baseline"), args.pop("measures")
    columns, missing = args.pop("columns"), args.pop("missing")
    correction, alpha = args.pop("correction"), args.pop("alpha")
    evaluate_options = args.pop("evaluate_options")
    power = args.pop("power")
    compare_options = args  # test, ci, ci_method, n_resamples, seed, ... as given
    check_float("compare", "power", power, minimum=alpha, maximum=1, open_min=True,
                open_max=True, what="the power of the minimum detectable Δ", example="power=0.8")
    check_int("compare", "min_queries", min_queries, minimum=1, example="min_queries=20")
    keys = slice_keys(queries, by, "compare")
    names = keys.columns[1:]
    pq, _, kind = load_input(inp, measures=measures, columns=columns, missing=missing,
                             evaluate_options=evaluate_options)
    sliced = attach_slices(pq, keys, "compare")
    if baseline is None:  # chosen (and warned about) once, not once per slice
        baseline = choose_baselines(pq.get_column("run").unique(maintain_order=True).to_list(),
                                    None, warn=compare_options.get("pairs") != "all")
    frames, per_slice = [], {}
    for group, sub in sliced.group_by(names, maintain_order=True):
        sub_pq = sub.drop(names)
        cmp = compare(per_query=sub_pq, baseline=baseline, correction=correction, alpha=alpha,
                      missing=missing, **compare_options)
        per_slice[tuple(group)] = cmp
        f = cmp.to_polars()
        f = f.with_columns(_detectable(cmp.per_query, f, alpha, power,
                                       compare_options.get("alternative", "two-sided")))
        frames.append(f.select(*(pl.lit(v, dtype=sliced.schema[c]).alias(c)
                                 for c, v in zip(names, group, strict=True)), pl.all()))
    if not frames:
        raise EmptyInputError("compare(by=...): no query to compare")
    frame = pl.concat(frames).sort(names, nulls_last=True, maintain_order=True)
    pvals = frame["p_value"].to_numpy().astype(np.float64)
    method = _st.canonical_correction(correction)
    if compare_options.get("family", "all") == "measure":  # one family per measure
        adjusted = np.full_like(pvals, np.nan)
        meas = frame["measure"].to_numpy()
        for m in dict.fromkeys(meas):
            idx = np.flatnonzero(meas == m)
            adjusted[idx] = _st.adjust_pvalues(pvals[idx], method)
    else:
        adjusted = _st.adjust_pvalues(pvals, method)
    frame = frame.with_columns(
        pl.Series("p_adjusted", adjusted, dtype=pl.Float64),
        pl.Series("significant", np.nan_to_num(adjusted, nan=1.0) <= alpha, dtype=pl.Boolean),
        (pl.col("n_queries") < min_queries).alias("small"))
    _warn_small(frame, names, min_queries, alpha, power)
    return SliceComparison(frame, names, per_slice, kind, alpha)


def _warn_small(frame: pl.DataFrame, names: list[str], min_queries: int, alpha: float,
                power: float) -> None:
    small = frame.filter(pl.col("small"), pl.col("detectable_delta").is_not_nan())
    if small.height == 0:
        return
    parts = []
    for r in small.unique(subset=[*names, "measure"], keep="first",
                          maintain_order=True).head(4).iter_rows(named=True):
        where = ", ".join(f"{c}={r[c]}" for c in names)
        parts.append(f"{where} ({r['n_queries']} queries): {r['run']} vs {r['baseline']} on "
                     f"{r['measure']}"
                     f" needs |Δ| >= {r['detectable_delta']:.3f} to be found with "
                     f"{power:.0%} power")
    warnings.warn(
        f"compare(by=...): slices with fewer than {min_queries} queries have little power "
        f"(paired t-test, alpha={alpha}, power={power}): " + "; ".join(parts)
        + ". Read their deltas as anecdotes, or label more queries of those slices.",
        SearchEvalWarning, stacklevel=outside_stacklevel())
