"""The report's "By slice" section: ``sef.report(..., queries=q, by="intent")``.

Runs :func:`~searcheval_frames.compare` with ``by=`` on the report's per-query
values (so every number equals ``sef.compare(..., queries=, by=)``), and shows the
"where does the run beat the baseline" table (slice, n, Δ, CI, p-value corrected
over every slice x measure x pair test, minimum detectable Δ, verdict) and the
forest plot of :func:`~searcheval_frames.slice_forest` for the focus measure.
"""

from __future__ import annotations

import html
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import polars as pl

from ..analysis.compare import compare

__all__ = ["SliceSection", "slice_section"]


@dataclass
class SliceSection:
    """What the report shows by slice: the comparison, the focus figure (also in the
    report's figures), the warnings."""

    comparison: Any  # analysis.slices.SliceComparison
    figure: Any  # report.build.Figure or None
    notes: list[str]
    focus: str
    run: str
    baseline: str
    digits: int = 3

    def rows(self) -> pl.DataFrame:
        """The table: the run of the report against its baseline, every measure."""
        return self.comparison.wins.filter(pl.col("run") == self.run,
                                           pl.col("baseline") == self.baseline)

    def markdown(self, figures_dir: str = "figures") -> list[str]:
        c = self.comparison
        text = c.to_markdown(self.digits).splitlines()
        keep = [text[0], text[1]] + [t for t in text[2:] if f"| {self.run} vs {self.baseline} |" in t]
        lines = ["## By slice", "", self._intro(), "", *keep, ""]
        lines += [f"> ⚠ {n}" for n in self.notes]
        return [*lines, ""]

    def html(self) -> str:
        rows = self.rows()
        head = "".join(f"<th>{html.escape(h)}</th>" for h in
                       [*self.comparison.slices, "measure", "n", "Δ", "CI", "p adj", "MDΔ",
                        "verdict"])
        body = []
        d = self.digits
        for r in rows.iter_rows(named=True):
            cells = [*(str(r[s]) for s in self.comparison.slices), r["measure"],
                     str(r["n_queries"]), f"{r['delta']:+.{d}f}",
                     f"[{r['ci_low']:+.{d}f}, {r['ci_high']:+.{d}f}]",
                     f"{r['p_adjusted']:.3g}", _mdd(r["detectable_delta"], d), r["verdict"]]
            cls = {"better": "v-better", "worse": "v-worse"}.get(r["verdict"], "")
            n_text = len(self.comparison.slices) + 1  # slice columns and measure: text
            body.append(f'<tr class="{cls}">' + "".join(
                f'<td{" class=num" if i >= n_text and i < len(cells) - 1 else ""}>'
                f"{html.escape(c)}</td>" for i, c in enumerate(cells)) + "</tr>")
        notes = "".join(f'<p class="warn">{html.escape(n)}</p>' for n in self.notes)
        return ('<section id="slices"><h2>By slice</h2>'
                f"<p>{html.escape(self._intro())}</p>"
                f'<table class="sef-frame sef-slices" id="slices-table"><thead><tr>{head}</tr></thead><tbody>'
                + "".join(body) + f"</tbody></table>{notes}</section>")

    def _intro(self) -> str:
        c = self.comparison
        n_tests = c.to_polars().height
        return (f"{self.run} vs {self.baseline} within each slice of the queries "
                f"({', '.join(c.slices)}). p adj: corrected over all {n_tests} slice x "
                "measure x pair tests; MDΔ: the smallest |Δ| the slice's paired t-test finds "
                "with 80% power; 'better' needs the corrected test and the interval to agree."
                + (f" Figure '{self.figure.title}' below." if self.figure is not None else ""))


def slice_section(per_query: pl.DataFrame, *, queries: Any, by: Any, baseline: str, run: str,
                  focus: str, options: dict[str, Any], figures: bool,
                  render: Callable[..., Any] | None = None, digits: int = 3) -> SliceSection:
    """Compare by slice on the report's per-query values; draw the focus measure."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cmp: Any = compare(per_query=per_query, baseline=baseline, queries=queries, by=by,
                           **options)
    notes = list(dict.fromkeys(" ".join(str(w.message).split()) for w in caught))
    figure = None
    if figures and render is not None:
        import tempfile
        from pathlib import Path

        from ..figures.slices import slice_forest

        with tempfile.TemporaryDirectory(prefix="sef-slices-") as d, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            frame = cmp.to_polars().filter(pl.col("run") == run)
            sub = _Only(frame, cmp.slices)
            ax = slice_forest(sub, focus)
            figure = render(ax, "slices", f"{focus} by slice",
                            f"Δ {focus} ({run} − {baseline}) per slice: dot = Δ, line = "
                            "CI, filled = significant after the correction over all slice "
                            "tests, grey band = ± minimum detectable Δ.", Path(d))
    return SliceSection(cmp, figure, notes, focus, run, baseline, digits)


def _mdd(value: float, digits: int) -> str:
    """The minimum detectable Δ, or "n/a" when the differences do not vary (sd 0)."""
    return "n/a" if value != value else f"{value:.{digits}f}"


class _Only:
    """A slice comparison restricted to some rows (what :func:`slice_forest` reads)."""

    def __init__(self, frame: pl.DataFrame, slices: list[str]) -> None:
        self._frame, self.slices = frame, slices

    def to_polars(self) -> pl.DataFrame:
        return self._frame
