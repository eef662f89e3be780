"""The results of structured comparisons: frames in the caller's kind, HTML, Markdown.

Every result holds polars tables by name (``frame`` first) and hands each back in the
caller's frame kind; ``to_markdown`` / ``_repr_html_`` render the main table with the
method sentence under it.

>>> import polars as pl
>>> r = StructuredResult({"frame": pl.DataFrame({"run": ["b"], "delta": [0.1234]})},
...                      method="a test")
>>> print(r.to_markdown(digits=2))
| run | delta |
|--|--|
| b | 0.12 |
<BLANKLINE>
a test
"""

from __future__ import annotations

import html
import math
from typing import Any

import polars as pl

from ...frames import Kind, to_native

__all__ = ["DatasetComparison", "DatasetLeaderboard", "StructuredComparison",
           "StructuredResult", "VarianceComponents", "cell"]


def cell(value: Any, digits: int = 3) -> str:
    """A table cell: floats to ``digits`` decimals, NaN/None as an empty cell."""
    if value is None:
        return ""
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.{digits}f}"
    return str(value)


class StructuredResult:
    """Named polars tables (``frame`` the main one) and a method sentence."""

    def __init__(self, tables: dict[str, pl.DataFrame], *, method: str,
                 kind: Kind | None = None, **info: Any) -> None:
        self._tables = tables
        self.method = method
        self.kind = kind or Kind("polars")
        self.info = info

    def _native(self, name: str) -> Any:
        return to_native(self._tables[name], self.kind)

    @property
    def frame(self) -> Any:
        """The main table in the caller's frame kind (pandas in, pandas out)."""
        return self._native("frame")

    def to_polars(self, name: str = "frame") -> pl.DataFrame:
        """A table as polars (default the main one)."""
        return self._tables[name].clone()

    def describe_method(self) -> str:
        """One sentence: the model, the interval, the correction."""
        return self.method

    def to_markdown(self, digits: int = 3, name: str = "frame") -> str:
        """The table ``name`` as Markdown, with the method sentence under it."""
        f = self._tables[name]
        rows = ["| " + " | ".join(f.columns) + " |", "|" + "--|" * len(f.columns)]
        rows += ["| " + " | ".join(cell(v, digits) for v in r) + " |" for r in f.iter_rows()]
        return "\n".join(rows) + "\n\n" + self.method

    def _repr_html_(self) -> str:
        f = self._tables["frame"]
        head = "".join(f"<th>{html.escape(c)}</th>" for c in f.columns)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(cell(v))}</td>" for v in r)
                       + "</tr>" for r in f.iter_rows())
        return (f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
                f"<p><small>{html.escape(self.method)}</small></p>")

    def __repr__(self) -> str:
        return f"{type(self).__name__}\n" + self.to_markdown()


class StructuredComparison(StructuredResult):
    """Result of :func:`~searcheval_frames.compare_replicates`.

    Attributes
    ----------
    frame
        One row per (run, baseline, measure): ``delta`` with the structured model's
        ``ci_low, ci_high, p_value, p_adjusted, verdict``; the flat paired t-test on the
        seed means (what averaging the seeds would have said) as ``flat_*``;
        ``query_sd`` (sd over queries of the seed-averaged differences), ``replicate_sd``
        (pooled sd of one seed's mean around its system's mean), ``seed_noise_share``
        (``replicate_sd / |Δ|``), ``seed_min_delta`` / ``seed_max_delta`` (Δ of the
        worst and best single-seed pairing) and ``note``.
    replicates
        ``run, replicate, measure, n_queries, mean``: each seed's mean.
    """

    @property
    def replicates(self) -> Any:
        """Each replicate's mean per run and measure, in the caller's frame kind."""
        return self._native("replicates")


class DatasetComparison(StructuredResult):
    """Result of :func:`~searcheval_frames.compare_datasets`.

    Attributes
    ----------
    frame
        Per dataset: ``dataset, run, baseline, measure, n_queries, mean,
        baseline_mean, delta, ci_low, ci_high, p_value, p_adjusted, verdict`` (paired
        t-tests, Holm over the family of datasets x runs x measures).
    aggregate
        Per run and measure: the chosen aggregate over datasets (``value``), its
        two-stage bootstrap interval, Δ against the baseline with its interval,
        p-value and verdict.
    mixed
        Δ from the mixed model ``value ~ system + (1 | dataset) + (1 | query:dataset)``
        with its interval and the variance components (None without statsmodels or
        with ``mixed=False``).
    """

    @property
    def aggregate(self) -> Any:
        """The aggregate over datasets, in the caller's frame kind."""
        return self._native("aggregate")

    @property
    def mixed(self) -> Any:
        """The mixed model's rows, or None."""
        return self._native("mixed") if "mixed" in self._tables else None


class DatasetLeaderboard(StructuredResult):
    """Result of :func:`~searcheval_frames.leaderboard_datasets` (the mteb#5208 table).

    Attributes
    ----------
    frame
        One row per run, best first: ``run, value`` (the aggregate), ``ci_low,
        ci_high`` (two-stage bootstrap), ``rank, rank_low, rank_high`` (bootstrap rank
        interval), ``group`` (runs sharing a letter are tied: no pair in the group
        has a Holm-corrected bootstrap difference), per-dataset means as extra columns.
    pairs
        Every pair: ``run_a, run_b, delta, ci_low, ci_high, p_value, p_adjusted,
        significant``.
    """

    @property
    def pairs(self) -> Any:
        """All pairs, in the caller's frame kind."""
        return self._native("pairs")


class VarianceComponents(StructuredResult):
    """Result of :func:`~searcheval_frames.variance_components`.

    Attributes
    ----------
    frame
        One row per term (factor, interaction, ``residual``): ``term, df, ss, ms, f,
        p_value, eta_sq`` (share of the total sum of squares) and ``variance`` /
        ``share`` (the random-effects variance component and its share of their sum:
        ANOVA's expected mean squares, or REML with ``method="reml"``).
    """

    def dominant(self) -> str:
        """The term with the largest variance share."""
        f = self._tables["frame"].filter(pl.col("share").is_not_nan())
        return str(f.sort("share", descending=True)["term"][0])

    def sentence(self) -> str:
        """One sentence: which variance dominates, with the shares (first measure).

        >>> f = pl.DataFrame({"measure": "P@5", "term": ["query", "system", "seed", "residual"],
        ...                   "share": [0.85, 0.1, 0.001, 0.049]})
        >>> VarianceComponents({"frame": f}, method="").sentence()
        'Most of the variance of P@5 is query variance (85%); then system 10%, residual 5%; seed under 1%.'
        """
        f = self._tables["frame"]
        measure = f["measure"][0]
        f = f.filter(pl.col("measure") == measure, pl.col("share").is_not_nan()).sort(
            "share", descending=True)
        terms, shares = f["term"].to_list(), f["share"].to_list()
        text = f"Most of the variance of {measure} is {terms[0]} variance ({shares[0]:.0%})"
        big = [f"{t} {s:.0%}" for t, s in zip(terms[1:], shares[1:], strict=True) if s >= 0.005]
        small = [t for t, s in zip(terms[1:], shares[1:], strict=True) if s < 0.005]
        if big:
            text += "; then " + ", ".join(big)
        if small:
            text += "; " + ", ".join(small) + " under 1%" + (" each" if len(small) > 1 else "")
        return text + "."
