"""How a table is written: Markdown, HTML (notebooks) and LaTeX (booktabs).

A table arrives here as a :data:`Model`: column groups ``[(label, span)]`` (empty for
a single header row), the column headers, the rows of :class:`Cell` and the legend.
:mod:`searcheval_frames.analysis.tables` decides what goes into the cells; this module
only writes them.
"""

from __future__ import annotations

import html
import re
import string
from dataclasses import dataclass

__all__ = ["Cell", "Model", "flat_headers", "plain", "to_html", "to_latex", "to_markdown"]

_POS = "#1a7f37"
_NEG = "#cf222e"
_SUP = dict(zip(string.ascii_lowercase, "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖ\x00ʳˢᵗᵘᵛʷˣʸᶻ", strict=True))


@dataclass
class Cell:
    text: str = ""
    bold: bool = False
    sup: str = ""
    sign: int = 0  # colour of a delta: +1 green, -1 red, 0 none
    significant: bool = False
    left: bool = False


#: (column groups [(label, span)], headers, rows of cells, legend)
Model = tuple[list[tuple[str, int]], list[str], list[list[Cell]], str]


def flat_headers(groups: list[tuple[str, int]], headers: list[str]) -> list[str]:
    if not groups:
        return list(headers)
    out: list[str] = []
    i = 0
    for label, span in groups:
        for h in headers[i : i + span]:
            if not label:
                out.append(h)
            elif h == "mean":
                out.append(label)
            else:
                out.append(f"{label} {h}")
        i += span
    return out


def plain(cell: Cell) -> str:
    if not cell.sup:
        return cell.text
    if cell.sup == "*":
        return cell.text + "*"
    sup = "".join(_SUP.get(ch, "") if _SUP.get(ch, "\x00") != "\x00" else "^" + ch
                  for ch in cell.sup)
    return cell.text + sup


def to_markdown(model: Model, *, legend: bool = True) -> str:
    """GitHub-flavoured Markdown table (bold with ``**``, superscripts with ``<sup>``)."""
    groups, headers, rows, note = model
    names = flat_headers(groups, headers)
    align = [":--" if c.left else "--:" for c in rows[0]] if rows else ["--:"] * len(names)

    def cell(c: Cell) -> str:
        t = c.text.replace("|", "\\|")
        if c.bold:
            t = f"**{t}**"
        if c.sup:
            t += "\\*" if c.sup == "*" else f"<sup>{c.sup}</sup>"
        return t

    lines = [
        "| " + " | ".join(n.replace("|", "\\|") for n in names) + " |",
        "|" + "|".join(align) + "|",
    ]
    lines += ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows]
    out = "\n".join(lines)
    if legend:
        out += "\n\n" + note
    return out


def to_html(model: Model, *, legend: bool = True) -> str:
    """HTML table with inline styles (used by ``_repr_html_``)."""
    groups, headers, rows, note = model
    th = "padding:2px 8px;border-bottom:1px solid #888;text-align:{a};"
    out = [
        '<table class="searcheval-compare" style="border-collapse:collapse;'
        'font-variant-numeric:tabular-nums;">'
    ]
    if legend:
        out.append(
            '<caption style="caption-side:bottom;text-align:left;font-size:0.85em;'
            f'color:#555;padding-top:4px;">{html.escape(note)}</caption>'
        )
    out.append("<thead>")
    if groups and any(span > 1 for label, span in groups if label):
        out.append("<tr>")
        for label, span in groups:
            style = "padding:2px 8px;text-align:center;"
            if label:
                style += "border-bottom:1px solid #ccc;"
            out.append(f'<th colspan="{span}" style="{style}">{html.escape(label)}</th>')
        out.append("</tr>")
        names = headers
    else:
        names = flat_headers(groups, headers)
    out.append("<tr>")
    first = rows[0] if rows else [Cell()] * len(names)
    for name, c in zip(names, first, strict=False):
        a = "left" if c.left else "right"
        out.append(f'<th style="{th.format(a=a)}">{html.escape(name)}</th>')
    out.append("</tr></thead><tbody>")
    for r in rows:
        out.append("<tr>")
        for c in r:
            style = "padding:2px 8px;text-align:" + ("left;" if c.left else "right;")
            if c.sign and c.significant:  # a change the test cannot tell from 0 stays neutral
                style += f"color:{_POS if c.sign > 0 else _NEG};font-weight:600;"
            t = html.escape(c.text)
            if c.bold:
                t = f"<b>{t}</b>"
            if c.sup:
                t += f"<sup>{html.escape(c.sup)}</sup>"
            out.append(f'<td style="{style}">{t}</td>')
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def to_latex(
    model: Model,
    *,
    caption: str | None = None,
    label: str | None = None,
    legend: bool = True,
    environment: bool = True,
    placement: str = "t",
) -> str:
    r"""LaTeX table with booktabs rules (``\usepackage{booktabs}``).

    Best means are ``\textbf``, significance letters ``$^{ab}$``. The legend
    goes into the caption (after ``caption`` when given). ``environment=False``
    returns only the ``tabular``.
    """
    groups, headers, rows, note = model
    ncols = len(headers)
    spec = "".join("l" if c.left else "r" for c in (rows[0] if rows else [Cell()] * ncols))
    lines = [rf"\begin{{tabular}}{{{spec}}}", r"\toprule"]
    if groups and any(span > 1 for lab, span in groups if lab):
        parts, rules, col = [], [], 1
        for lab, span in groups:
            if lab:
                parts.append(rf"\multicolumn{{{span}}}{{c}}{{{_tex(lab)}}}")
                rules.append(rf"\cmidrule(lr){{{col}-{col + span - 1}}}")
            else:
                parts.extend([""] * span)
            col += span
        lines.append(" & ".join(parts) + r" \\")
        lines.append(" ".join(rules))
        names = headers
    else:
        names = flat_headers(groups, headers)
    lines.append(" & ".join(_tex(n) for n in names) + r" \\")
    lines.append(r"\midrule")
    for r in rows:
        cells = []
        for c in r:
            t = _tex(c.text)
            if c.bold:
                t = rf"\textbf{{{t}}}"
            if c.sup:
                t += rf"$^{{{c.sup}}}$"
            cells.append(t)
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    body = "\n".join(lines)
    if not environment:
        return body
    cap = " ".join(p for p in (caption, note if legend else None) if p)
    out = [rf"\begin{{table}}[{placement}]", r"\centering"]
    if cap:
        out.append(rf"\caption{{{_tex(cap)}}}")
    if label:
        out.append(rf"\label{{{label}}}")
    out += [body, r"\end{table}"]
    return "\n".join(out)


_TEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "Δ": r"$\Delta$",
    "−": r"$-$",
    "→": r"$\rightarrow$",
    "—": "--",
    "<": r"$<$",
    ">": r"$>$",
    "α": r"$\alpha$",
    "–": "--",
}


def _tex(text: str) -> str:
    text = re.sub(r"(?<![\w.])-(?=\d)", "−", str(text))  # minus signs of numbers
    return "".join(_TEX_SPECIAL.get(ch, ch) for ch in text)

