"""The report's leaderboard section (more than two runs): all runs on the focus measure
as one family, the per-run headline, the table in HTML and Markdown; with ``by=`` also
one leaderboard per slice of the queries (``sef.leaderboard(..., queries=, by=)``: the
whole family of slice x pair tests controlled, small slices flagged)."""

from __future__ import annotations

import html as _html
import warnings
from typing import Any

import polars as pl

from ..analysis.leaderboard import Leaderboard, leaderboard
from ..errors import SearchEvalError

__all__ = ["compute", "headline", "html_section", "markdown_section"]


def compute(per_query: pl.DataFrame, runs: list[str], focus: str, options: dict[str, Any],
            *, progress: bool) -> Leaderboard | None:
    """The leaderboard of ``runs`` on ``focus`` (randomised Tukey HSD with the report's
    alpha, ci, resamples and seed), or None with two runs or fewer."""
    if len(runs) <= 2:
        return None
    pq = per_query.filter(pl.col("measure") == focus, pl.col("run").is_in(runs))
    common = dict(measure=focus, alpha=options["alpha"], ci=options["ci"],
                  n_resamples=options["n_resamples"], seed=options["seed"], progress=progress)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lb = leaderboard(per_query=pq, **common)
    except SearchEvalError:
        return None
    if options.get("by") is not None:  # the same runs, one leaderboard per slice
        with warnings.catch_warnings():  # small slices: noted under their own heading
            warnings.simplefilter("ignore")
            lb.by_slice = leaderboard(per_query=pq, queries=options["queries"], by=options["by"],
                                      **common)
    return lb


def headline(lb: Leaderboard | None, baseline: str, fallback: str) -> str:
    """The report's headline: per run when there is a leaderboard, else ``fallback``."""
    if lb is None:
        return fallback
    from ..analysis.leaderboard_result import LABELS

    return (f"{lb.headline(baseline)[:-1]} ({LABELS[lb.test]} over all "
            f"{lb._frame.height} runs).")


def html_section(lb: Leaderboard | None) -> str:
    """``<section id="leaderboard">`` or "" without a leaderboard."""
    if lb is None:
        return ""
    return ('<section id="leaderboard"><h2>Leaderboard on '
            f"{_html.escape(lb.measure)} (all runs as one family)</h2>"
            + lb._repr_html_() + _html_by_slice(lb) + "</section>")


def _html_by_slice(lb: Leaderboard) -> str:
    sliced = lb.by_slice
    if sliced is None:
        return ""
    return ('<div id="leaderboard-slices"><h3>Leaderboard by slice ('
            f"{_html.escape(', '.join(sliced.slices))})</h3>"
            + sliced._repr_html_() + "</div>")


def markdown_section(lb: Leaderboard | None) -> list[str]:
    """Markdown lines of the section, or [] without a leaderboard."""
    if lb is None:
        return []
    lines = [f"## Leaderboard on {lb.measure} (all runs as one family)", "",
             f"**{lb.headline()}**", "", lb.to_markdown(), ""]
    if lb.by_slice is not None:
        lines += [f"## Leaderboard on {lb.measure} by slice ({', '.join(lb.by_slice.slices)})",
                  "", lb.by_slice.to_markdown()]
    return lines
