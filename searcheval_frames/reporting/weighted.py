"""The report's "Average query vs average search" section (issue #34).

With ``report(..., weights=...)`` (the test queries' traffic weights: a
:class:`~searcheval_frames.QuerySample`, a frame ``query_id, weight`` or a column of
``queries=``) the page shows, per measure and run, the plain mean over the test queries
("the average query": each query counts once) beside the Hájek traffic-weighted mean
("the average search": each query counts by the searches it stands for), with the
interval of a bootstrap that resamples the queries as they were drawn
(:mod:`searcheval_frames.core.weights`), and Δ against the baseline both ways.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from ..analysis.weighted import weighted_compare
from ..core.weights import weighted_summary
from .build import ReportData
from .html import frame_html
from .judges import Section
from .markdown import frame_markdown

__all__ = ["add_weighted_sections", "weighted_section"]

LEAD = ("Two questions, two means. The average query: every test query counts once (the "
        "plain mean, the tables above). The average search: every query counts by the "
        "searches it stands for in the log (its weight, searches / inclusion probability; "
        "the Hájek weighted mean), so a query typed a thousand times a day outweighs one "
        "typed once. Intervals: {ci:.0%} bootstrap, the queries resampled as they were "
        "drawn (within strata; queries taken for certain kept).")


def weighted_section(data: ReportData, weights: Any, *, queries: Any = None, ci: float = 0.95,
                     seed: int | None = 0, n_resamples: int = 2000) -> Section:
    """The section from the report's paired per-query values and ``weights``."""
    pq = data.comparison.per_query
    summary = weighted_summary(pq, weights, queries=queries, ci=ci, seed=seed,
                               n_resamples=n_resamples, func="report")
    note = next((n for n in summary["note"].to_list() if n), "")
    means = summary.select(
        "measure", "run", "n_queries", pl.col("value").alias("average query"),
        pl.col("weighted_value").alias("average search"), "ci_low", "ci_high")
    deltas = weighted_compare(pq, weights, baseline=data.baseline, queries=queries, ci=ci,
                              seed=seed, n_resamples=n_resamples, func="report").select(
        "measure", "run", pl.col("delta").alias("Δ per query"),
        pl.col("weighted_delta").alias("Δ per search"), "ci_low", "ci_high")
    lead = LEAD.format(ci=ci) + (f" Note: {note}." if note else "")
    after = f"Δ against {data.baseline} (interval of the Δ per search):"
    d = data.digits
    html = (f'<section id="weighted"><h2>Average query vs average search</h2><p>{lead}</p>'
            f"{frame_html(means, digits=d)}<p>{after}</p>{frame_html(deltas, digits=d)}"
            "</section>")
    md = "\n".join(["## Average query vs average search", "", lead, "",
                    frame_markdown(means, digits=d), "", after, "",
                    frame_markdown(deltas, digits=d), ""])
    return Section("weighted", "Average query vs average search", html, md)


def add_weighted_sections(data: ReportData, weights: Any, *, queries: Any = None,
                          ci: float = 0.95, seed: int | None = 0) -> None:
    """Append the weighted section when ``weights`` is given."""
    if weights is not None:
        data.sections.append(weighted_section(data, weights, queries=queries, ci=ci, seed=seed))
