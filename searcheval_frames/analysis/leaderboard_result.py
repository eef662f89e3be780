"""The :class:`Leaderboard` result object of :func:`~searcheval_frames.leaderboard`."""

from __future__ import annotations

from typing import Any

import polars as pl

from ..frames import Kind, to_native

__all__ = ["TESTS", "Leaderboard"]

#: Accepted ``test=`` values.
TESTS = ("randomized_tukey_hsd", "tukey_hsd", "holm")
LABELS = {"randomized_tukey_hsd": "randomised Tukey HSD", "tukey_hsd": "Tukey HSD",
          "holm": "paired t-tests, Holm correction"}


class Leaderboard:
    """Result of :func:`leaderboard` (renders as an HTML table in JupyterLab).

    Attributes
    ----------
    frame
        One row per run, best mean first: ``run, mean, ci_low, ci_high`` (comparison
        interval: two runs whose intervals do not overlap differ significantly; exact
        for the Tukey tests), ``rank``, ``rank_low``, ``rank_high`` (query-bootstrap
        rank interval), ``p_best`` (share of bootstrap samples ranking the run first),
        ``group`` (compact letter display: runs sharing a letter are tied).
    pairs
        Every pair: ``run_a, run_b, delta`` (mean a − mean b, a the better), ``p_value``
        (family-wise adjusted), ``ci_low, ci_high`` (simultaneous), ``effect_size``
        (``Δ / √V_E``, Sakai) and ``significant``.
    anova
        One-row frame of the two-way ANOVA without replication (sums of squares,
        degrees of freedom, variances, F, p, ``V_E``, ``tukey_moe``).
    by_slice
        None, or (in a report with ``by=``) the leaderboard of the same runs per slice
        of the queries (a
        :class:`~searcheval_frames.analysis.leaderboard_slices.SlicedLeaderboard`).
    """

    def __init__(self, frame: pl.DataFrame, pairs: pl.DataFrame, anova: pl.DataFrame, *,
                 measure: str, test: str, alpha: float, ci: float, n_resamples: int,
                 n_queries: int, reason: str | None, kind: Kind) -> None:
        self._frame, self._pairs, self._anova = frame, pairs, anova
        self.measure, self.test, self.alpha, self.ci = measure, test, alpha, ci
        self.n_resamples, self.n_queries, self.reason, self.kind = (
            n_resamples, n_queries, reason, kind)
        self.by_slice: Any = None

    @property
    def frame(self) -> Any:
        """Runs, best first, in the caller's frame kind."""
        return to_native(self._frame, self.kind)

    @property
    def pairs(self) -> Any:
        """All pairs in the caller's frame kind."""
        return to_native(self._pairs, self.kind)

    @property
    def anova(self) -> Any:
        """The two-way ANOVA table (one row) in the caller's frame kind."""
        return to_native(self._anova, self.kind)

    def to_polars(self) -> pl.DataFrame:
        """:attr:`frame` as polars."""
        return self._frame.clone()

    def describe_method(self) -> str:
        """One sentence: the procedure, level, resamples and what the intervals are."""
        test = LABELS[self.test]
        if self.test == "randomized_tukey_hsd":
            test += f" ({self.n_resamples:,} shuffles)"
        return (f"{test} over all {self._pairs.height} pairs, alpha = {self.alpha:.4g}; "
                f"{self.ci * 100:.4g}% simultaneous intervals of Δ; rank intervals from "
                f"{self.n_resamples:,} query bootstrap samples; {self.n_queries} queries")

    def headline(self, baseline: str | None = None) -> str:
        """Per-run sentence, e.g. ``"2 of 4 runs reliably better than bm25 on nDCG@10;
        splade and tasb tied"``."""
        from .leaderboard_text import headline

        return headline(self, baseline)

    def to_markdown(self, digits: int = 3) -> str:
        """Markdown table of :attr:`frame` with the method underneath."""
        from .leaderboard_text import markdown

        return markdown(self, digits)

    def _repr_html_(self) -> str:
        from .leaderboard_text import html

        return html(self)

    def __repr__(self) -> str:
        return f"Leaderboard({self.measure}, {self.test})\n" + self.to_markdown()
