"""A report as one self-contained HTML page: inline CSS, figures as base64 PNG, no network."""

from __future__ import annotations

import base64
import html
import json
from typing import Any

import polars as pl

from .baseline import names_note, relevance_note, run_names, table
from .build import ReportData
from .verdict import cell_text

__all__ = ["CSS", "fragment", "frame_html", "page"]

CSS = """
.sef-report{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;
 color:#1f2328;max-width:1100px;margin:0 auto;padding:8px 16px;line-height:1.45}
.sef-report h1{font-size:1.6em;margin:0.3em 0}
.sef-report h2{font-size:1.25em;border-bottom:1px solid #d0d7de;padding-bottom:4px;margin-top:1.6em}
.sef-report h3{font-size:1.02em;margin:1.1em 0 0.3em}
.sef-report .meta{color:#57606a;font-size:0.9em}
.sef-report .headline{font-size:1.08em;font-weight:600}
.sef-report ul.verdicts{padding-left:1.2em}
.sef-report ul.verdicts li{margin:2px 0}
.sef-report li.v-better{color:#1a7f37}
.sef-report li.v-worse{color:#cf222e}
.sef-report li.v-unreliable,.sef-report li.v-not_significant,.sef-report li.v-untestable,
.sef-report li.v-none{color:#57606a}
.sef-report .warn{background:#fff8c5;border:1px solid #d4a72c;border-radius:6px;padding:6px 10px;
 margin:6px 0}
.sef-report .method,.sef-report .why{font-size:0.9em;color:#57606a}
.sef-report .why{color:#1f2328}
.sef-report table{margin:6px 0}
.sef-report table.sef-frame{border-collapse:collapse;font-variant-numeric:tabular-nums;font-size:0.92em}
.sef-report table.sef-frame th{text-align:left;border-bottom:1px solid #888;padding:2px 8px}
.sef-report table.sef-frame td{padding:2px 8px;border-bottom:1px solid #eee}
.sef-report table.sef-frame td.num{text-align:right}
.sef-report figure{margin:10px 0 18px;display:inline-block;vertical-align:top;max-width:100%}
.sef-report figure img{max-width:100%;height:auto;border:1px solid #eee}
.sef-report figcaption{font-size:0.88em;color:#57606a;max-width:700px}
.sef-report details{margin:4px 0}
.sef-report pre{background:#f6f8fa;padding:8px;border-radius:6px;overflow:auto;font-size:0.85em}
.sef-report .example{border-left:3px solid #d0d7de;padding-left:10px;margin:10px 0 16px}
.sef-report .example.loss{border-left-color:#cf222e}
.sef-report .example.win{border-left-color:#1a7f37}
.sef-report .relevance{font-size:0.92em;color:#1f2328;background:#f6f8fa;border-radius:6px;
 padding:4px 8px;display:inline-block;margin:2px 0 6px}
.sef-report table{max-width:100%}
.sef-report table.sef-frame td{overflow-wrap:anywhere}
.sef-report .sef-side-by-side,.sef-report .sef-scroll{max-width:100%;overflow-x:auto}
.sef-report .sef-side-by-side td.sef-title{min-width:8em;max-width:18em}
.sef-report .sef-side-by-side td.sef-doc{white-space:normal!important;overflow-wrap:anywhere;
 min-width:7em}
.sef-report h1,.sef-report h3,.sef-report p{overflow-wrap:anywhere}
"""


def _e(text: Any) -> str:
    return html.escape(str(text))


def frame_html(df: pl.DataFrame, *, digits: int = 3, css_id: str | None = None,
               headers: dict[str, str] | None = None) -> str:
    """A small polars frame as an HTML table (numbers right-aligned, ``digits`` decimals)."""
    headers = headers or {}
    ident = f' id="{_e(css_id)}"' if css_id else ""
    out = [f'<table class="sef-frame"{ident}><thead><tr>']
    out += [f"<th>{_e(headers.get(c, c))}</th>" for c in df.columns]
    out.append("</tr></thead><tbody>")
    numeric = {c for c, t in df.schema.items() if t.is_numeric()}
    for row in df.iter_rows():
        out.append("<tr>")
        for c, v in zip(df.columns, row, strict=True):
            cls = ' class="num"' if c in numeric else ""
            out.append(f"<td{cls}>{_e(cell_text(v, digits))}</td>")
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _coverage(data: ReportData) -> str:
    cov = data.coverage.select(
        "run", "queries", "queries_with_holes", "retrieved", "judged", "holes",
        "judged_at_k", "judged_share",
    )
    out = [
        f"<p>How much of each run's top {data.depth} has a label. "
        f"<b>Judged@{data.depth}</b> is judged documents / {data.depth} per query (a query with "
        f"fewer than {data.depth} results cannot reach 1); <b>judged share</b> is judged / "
        "retrieved; <b>holes</b> are unjudged documents, which count as non-relevant.</p>",
        frame_html(cov, digits=3, css_id="coverage-table",
                   headers={"judged_at_k": f"Judged@{data.depth}", "judged_share": "judged share",
                            "queries_with_holes": "queries with holes"}),
    ]
    if data.low_coverage and data.bounds is None:
        out.append(
            f'<p class="warn" id="coverage-warning">⚠ Low judged coverage (judged share below '
            f"{data.min_judged:.0%}) for {_e(', '.join(data.low_coverage))}; the baseline and "
            f"{_e(data.run)} are above it.</p>"
        )
    if data.bounds is not None:
        out.append(
            f'<p class="warn" id="coverage-warning">⚠ Low judged coverage (judged share below '
            f"{data.min_judged:.0%}) for {_e(', '.join(data.low_coverage))}. The bounds below "
            f"give each measure of {_e(' and '.join(data.bounds.get_column('run').unique(maintain_order=True).to_list()))} "
            "if every hole were non-relevant (what the tables report) and if every hole were "
            "relevant.</p>"
        )
        out.append(frame_html(data.bounds, digits=3, css_id="bounds-table"))
    elif not data.low_coverage:
        out.append(f"<p>Every run has at least {data.min_judged:.0%} of its top {data.depth} "
                   "judged: the numbers above are not held back by missing labels.</p>")
    return "".join(out)


def _examples(data: ReportData, kind: str) -> str:
    items = data.losses if kind == "loss" else data.wins
    what = "got worse" if kind == "loss" else "got better"
    if not items:
        return f"<p>No query {what} on {_e(data.focus)}.</p>"
    out = []
    for i, ex in enumerate(items):
        q = f" “{_e(ex.query)}”" if ex.query else ""
        out.append(
            f'<div class="example {kind}" data-query-id="{_e(ex.query_id)}">'
            f"<h3>{_e(ex.query_id)}{q}: {_e(data.focus)} {ex.baseline_value:.3f} → "
            f"{ex.value:.3f} ({_e(_signed(ex.delta))})</h3>"
            f'<p class="why">{_e(ex.why)}</p>'
            # the first loss open, the rest one click away
            f"<details{' open' if kind == 'loss' and i == 0 else ''}><summary>top {data.k} "
            "side by side"
            f"</summary>{ex.side_by_side.to_html()}</details></div>"
        )
    return "".join(out)


def _signed(v: float) -> str:
    from .verdict import signed

    return signed(v)


def _provenance(data: ReportData) -> str:
    p = data.provenance
    inputs = pl.DataFrame(
        [{"role": r["role"], "name": r["name"], "bytes": r.get("bytes"),
          "sha256": r.get("sha256") or r.get("content_sha256")} for r in p["inputs"]],
        schema={"role": pl.String, "name": pl.String, "bytes": pl.Int64, "sha256": pl.String},
    )
    versions = ", ".join(f"{k} {v}" for k, v in p["versions"].items() if v)
    out = [f"<p>Created {_e(p['created'])} with {_e(versions)}.</p>"]
    if p.get("command"):
        out.append(f"<p>Command: <code>{_e(p['command'])}</code></p>")
    out.append(frame_html(inputs, css_id="provenance-table"))
    out.append("<details><summary>options</summary><pre>"
               + _e(json.dumps(p["options"], indent=1, default=str)) + "</pre></details>")
    return "".join(out)


def _figures(data: ReportData) -> str:
    if not data.figures:
        return "<p>Figures were not drawn (figures=False).</p>"
    out = []
    for f in data.figures:
        b64 = base64.b64encode(f.png).decode("ascii")
        out.append(
            f'<figure id="fig-{_e(f.name)}"><img alt="{_e(f.title)}" '
            f'src="data:image/png;base64,{b64}"><figcaption><b>{_e(f.title)}.</b> '
            f"{_e(f.caption)}</figcaption></figure>"
        )
    return "".join(out)


def fragment(data: ReportData) -> str:
    """The report as an HTML fragment (a ``div.sef-report`` with its own ``<style>``)."""
    from . import leaderboard_section as _lbs

    cmp = data.comparison
    others = [r for r in data.runs if r != data.baseline]
    shown = run_names(data)
    meta = (f"Baseline (before): <b>{_e(shown[data.baseline])}</b> · after: "
            f"<b>{_e(shown[data.run])}</b>"
            + (f" (of {len(others)} runs compared)" if len(others) > 1 else "")
            + f" · {data.n_queries} queries · measures {_e(', '.join(data.measures))}")
    verdicts = "".join(f'<li class="v-{k}">{_e(s)}</li>' for k, s in data.verdicts)
    notes = "".join(f'<p class="warn">{_e(n)}</p>' for n in data.notes)
    summary = table(data, "wide", ["mean"]).to_html()
    before_after = table(
        data, "before_after", ["before", "after", "delta", "ci", "p_adjusted", "wtl"]).to_html()
    if names_note(data):
        summary += f'<p class="method" id="run-names">{_e(names_note(data))}</p>'

    n_loss = sum(1 for v in data.diffs.get_column("outcome").to_list() if v == "loss")
    n_win = sum(1 for v in data.diffs.get_column("outcome").to_list() if v == "win")
    parts = [
        f"<style>{CSS}</style>",
        '<div class="sef-report">',
        f"<h1>{_e(data.title)}</h1>",
        f'<p class="meta">{meta}</p>',
        _check_banner(data),
        '<section id="verdicts"><h2>Verdict</h2>',
        f'<p class="headline">{_e(data.headline)}</p>',
        f'<p class="relevance" id="relevance">{_e(relevance_note(data))}</p>',
        f'<ul class="verdicts">{verdicts}</ul>',
        f'<p class="power">{_e(data.power)}</p>' if data.power else "",
        f'<p class="method">Method: {_e(cmp.describe_method())}.</p>',
        notes,
        "</section>",
        _lbs.html_section(data.leaderboard),
        '<section id="summary"><h2>All runs</h2>', summary, "</section>",
        '<section id="before-after"><h2>Before → after</h2>', before_after, "</section>",
        data.slices.html() if data.slices is not None else "",
        '<section id="figures"><h2>Figures</h2>', _figures(data), "</section>",
        '<section id="coverage"><h2>Judged coverage</h2>', _coverage(data), "</section>",
        f'<section id="losses"><h2>Queries that got worse ({n_loss} on {_e(data.focus)}; '
        f"the {len(data.losses)} biggest)</h2>", _examples(data, "loss"), "</section>",
        f'<section id="wins"><h2>Queries that got better ({n_win}; the {len(data.wins)} '
        "biggest)</h2>", _examples(data, "win"), "</section>",
        *[s.html for s in data.sections],
        '<section id="provenance"><h2>Provenance</h2>', _provenance(data), "</section>",
        "</div>",
    ]
    return "".join(parts)


def _check_banner(data: ReportData) -> str:
    """sef.check's findings on the inputs, above everything else (issue #22)."""
    if not data.check:
        return ""
    items = "".join(f"<li>{_e(line)}</li>" for line in data.check[1:])
    return (f'<div class="warn" id="check-banner"><b>⚠ {_e(data.check[0])}</b>'
            f"<ul>{items}</ul></div>")


def page(data: ReportData) -> str:
    """A complete, self-contained HTML document (``index.html``)."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(data.title)}</title></head><body>"
        + fragment(data)
        + "</body></html>\n"
    )
