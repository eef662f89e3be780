"""A report as Markdown, with its figures as PNG/SVG files in a folder next to it."""

from __future__ import annotations

import json
from typing import Any

import polars as pl

from .baseline import names_note, relevance_note, run_names, table
from .build import ReportData
from .verdict import cell_text, signed

__all__ = ["frame_markdown", "markdown"]


def _fmt(v: Any, digits: int) -> str:
    return cell_text(v, digits).replace("|", "\\|")


def frame_markdown(df: pl.DataFrame, *, digits: int = 3, headers: dict[str, str] | None = None) -> str:
    """A small polars frame as a GitHub Markdown table."""
    headers = headers or {}
    numeric = {c for c, t in df.schema.items() if t.is_numeric()}
    lines = ["| " + " | ".join(headers.get(c, c) for c in df.columns) + " |",
             "|" + "|".join("--:" if c in numeric else ":--" for c in df.columns) + "|"]
    for row in df.iter_rows():
        lines.append("| " + " | ".join(_fmt(v, digits) for v in row) + " |")
    return "\n".join(lines)


def _examples(data: ReportData, kind: str) -> list[str]:
    items = data.losses if kind == "loss" else data.wins
    if not items:
        return [f"No query {'got worse' if kind == 'loss' else 'got better'} on {data.focus}.", ""]
    out = []
    for ex in items:
        q = f" “{ex.query}”" if ex.query else ""
        out += [f"### {ex.query_id}{q}: {data.focus} {ex.baseline_value:.3f} → {ex.value:.3f} "
                f"({signed(ex.delta)})", "", ex.why, "", ex.side_by_side.to_markdown(), ""]
    return out


def markdown(data: ReportData, figures_dir: str = "figures") -> str:
    """The report as Markdown; figures are linked as ``{figures_dir}/<name>.png``."""
    cmp = data.comparison
    lines = [f"# {data.title}", "",
             f"Baseline (before): **{run_names(data)[data.baseline]}** · after: "
             f"**{run_names(data)[data.run]}** · "
             f"{data.n_queries} queries · measures {', '.join(data.measures)}", "",
             *[f"> ⚠ {line}" for line in data.check], *([""] if data.check else []),
             "## Verdict", "", f"**{data.headline}**", "", f"*{relevance_note(data)}*", ""]
    lines += [f"- {s}" for _, s in data.verdicts]
    if data.power:
        lines += ["", data.power]
    lines += ["", f"Method: {cmp.describe_method()}.", ""]
    lines += [f"> ⚠ {n}" for n in data.notes]
    from .leaderboard_section import markdown_section

    lines += ["", *markdown_section(data.leaderboard)]
    lines += ["", "## All runs", "", table(data, "wide", ["mean"]).to_markdown(), ""]
    if names_note(data):
        lines += [names_note(data), ""]
    lines += ["## Before → after", "",
              table(data, "before_after",
                    ["before", "after", "delta", "ci", "p_adjusted", "wtl"]).to_markdown(), "",
              "## Figures", ""]
    if data.slices is not None:  # the "By slice" section, before the figures
        lines[-2:-2] = data.slices.markdown(figures_dir)
    for f in data.figures:
        lines += [f"![{f.title}]({figures_dir}/{f.name}.png)", "",
                  f"*{f.title}.* {f.caption} ([SVG]({figures_dir}/{f.name}.svg))", ""]
    if not data.figures:
        lines += ["Figures were not drawn (figures=False).", ""]
    cov = data.coverage.select("run", "queries", "queries_with_holes", "retrieved", "judged",
                               "holes", "judged_at_k", "judged_share")
    lines += ["## Judged coverage", "",
              frame_markdown(cov, headers={"judged_at_k": f"Judged@{data.depth}",
                                           "judged_share": "judged share",
                                           "queries_with_holes": "queries with holes"}), ""]
    if data.bounds is not None:
        lines += [f"> ⚠ Low judged coverage (judged share below {data.min_judged:.0%}) for "
                  f"{', '.join(data.low_coverage)}: each measure if every hole were "
                  "non-relevant / relevant:", "", frame_markdown(data.bounds), ""]
    lines += ["## Queries that got worse", "", *_examples(data, "loss")]
    lines += ["## Queries that got better", "", *_examples(data, "win")]
    for section in data.sections:
        lines += [section.markdown, ""]
    p = data.provenance
    inputs = pl.DataFrame(
        [{"role": r["role"], "name": r["name"], "bytes": r.get("bytes"),
          "sha256": r.get("sha256") or r.get("content_sha256")} for r in p["inputs"]],
        schema={"role": pl.String, "name": pl.String, "bytes": pl.Int64, "sha256": pl.String},
    )
    versions = ", ".join(f"{k} {v}" for k, v in p["versions"].items() if v)
    lines += ["## Provenance", "", f"Created {p['created']} with {versions}.", ""]
    if p.get("command"):
        lines += [f"Command: `{p['command']}`", ""]
    lines += [frame_markdown(inputs), "", "Options:", "", "```json",
              json.dumps(p["options"], indent=1, default=str), "```", ""]
    return "\n".join(lines)
