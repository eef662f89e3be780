"""A leaderboard as words and tables: the per-run headline, Markdown and HTML."""

from __future__ import annotations

import html as _html
import math
from typing import Any

__all__ = ["headline", "html", "markdown", "rows", "sliced_headline", "sliced_html",
           "sliced_markdown"]

_COLS = ("rank", "run", "mean", "interval", "rank interval", "P(best)", "group")


def _tied_sets(lb: Any) -> list[list[str]]:
    """Groups of two or more runs that share a letter and differ from nobody in the group,
    as listed by the letter display (largest first)."""
    fr = lb._frame
    runs, groups = fr.get_column("run").to_list(), fr.get_column("group").to_list()
    letters = sorted({c for g in groups for c in g})
    sets = [[r for r, g in zip(runs, groups, strict=True) if c in g] for c in letters]
    return [s for s in sets if len(s) > 1]


def headline(lb: Any, baseline: str | None = None) -> str:
    """``"2 of 4 runs reliably better than bm25 on nDCG@10 (randomised Tukey HSD); splade
    and tasb tied"``; with ``baseline=None`` the sentence names the tied groups only.

    The verdict per run is the pair (run, baseline) of :attr:`Leaderboard.pairs`: better
    when significant and above, worse when significant and below.
    """
    if lb.reason is not None:
        return (f"The {lb._frame.height} runs cannot be tested on {lb.measure} "
                f"({lb.reason}).")
    pairs = lb._pairs
    parts = []
    if baseline is not None:
        better = worse = 0
        for r in pairs.iter_rows(named=True):
            if baseline not in (r["run_a"], r["run_b"]) or not r["significant"]:
                continue
            if r["run_b"] == baseline:
                better += 1
            else:
                worse += 1
        k = lb._frame.height - 1
        text = f"{better} of {k} runs reliably better than {baseline} on {lb.measure}"
        if worse:
            text += f", {worse} reliably worse"
        parts.append(text)
    tied = [s for s in _tied_sets(lb) if baseline is None or baseline not in s or len(s) > 1]
    if tied:
        words = ["{} and {}".format(", ".join(s[:-1]), s[-1]) for s in tied[:3]]
        parts.append("; ".join(w + " tied" for w in words))
    elif baseline is None:
        parts.append(f"all {lb._frame.height} runs on {lb.measure} differ from each other")
    text = "; ".join(parts)  # a sentence may start with a run name: keep its case
    return (text[:1].upper() + text[1:] if text.startswith("all ") else text) + "."


def rows(lb: Any, digits: int = 3) -> list[list[str]]:
    """Table rows (strings) of the leaderboard, in :data:`_COLS` order."""
    out = []
    for r in lb._frame.iter_rows(named=True):
        iv = ("—" if r["ci_low"] is None or math.isnan(r["ci_low"])
              else f"[{r['ci_low']:.{digits}f}, {r['ci_high']:.{digits}f}]")
        ri = ("—" if r["rank_low"] is None else
              (str(r["rank_low"]) if r["rank_low"] == r["rank_high"]
               else f"{r['rank_low']}–{r['rank_high']}"))
        pb = "—" if math.isnan(r["p_best"]) else f"{r['p_best']:.2f}"
        out.append([str(r["rank"]), r["run"], f"{r['mean']:.{digits}f}", iv, ri, pb,
                    r["group"]])
    return out


def _legend(lb: Any) -> str:
    return (f"{lb.measure}, {lb.describe_method()}. Interval: comparison interval (two runs "
            "whose intervals do not overlap differ); runs sharing a group letter are not "
            "significantly different.")


def markdown(lb: Any, digits: int = 3) -> str:
    """Markdown table and legend."""
    lines = ["| " + " | ".join(_COLS) + " |", "|" + "|".join("--:" if c != "run" else ":--"
                                                         for c in _COLS) + "|"]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows(lb, digits)]
    return "\n".join(lines) + "\n\n" + _legend(lb) + "\n"


def html(lb: Any, digits: int = 3) -> str:
    """HTML table (with a caption) for notebooks and the report."""
    head = "".join(f"<th>{_html.escape(c)}</th>" for c in _COLS)
    body = "".join("<tr>" + "".join(f"<td>{_html.escape(c)}</td>" for c in r) + "</tr>"
                   for r in rows(lb, digits))
    return (f'<table class="sef-leaderboard"><caption>{_html.escape(headline(lb))}</caption>'
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
            f"<p><small>{_html.escape(_legend(lb))}</small></p>")


def _slice_heads(slb: Any) -> list[tuple[Any, str, str]]:
    """Per slice: its leaderboard, ``"length=1-3 (12 queries)"`` and the small-slice note."""
    out = []
    for key, lb in slb.per_slice.items():
        label = slb.labels()[key]
        note = ""
        if lb.n_queries < slb.min_queries:
            row = slb._frame.row(0, named=True)
            for r in slb._frame.iter_rows(named=True):
                if tuple(r[c] for c in slb.slices) == key:
                    row = r
                    break
            mdd = row["detectable_delta"]
            note = (f"Small slice: fewer than {slb.min_queries} queries"
                    + ("" if mdd != mdd else f"; two runs must differ by |Δ| ≥ {mdd:.3f} "
                       f"to be found with {slb.power:.0%} power (paired t-test)") + ".")
        out.append((lb, f"{label} ({lb.n_queries} queries)", note))
    return out


def sliced_headline(slb: Any, baseline: str | None = None) -> str:
    """One line per slice: ``"length=1-3 (12 queries): a and b tied."``."""
    return "\n".join(f"{head}: {headline(lb, baseline)}" for lb, head, _ in _slice_heads(slb))


def sliced_markdown(slb: Any, digits: int = 3) -> str:
    """A ``###`` heading, the small-slice note and the table per slice; the family last."""
    parts = []
    for lb, head, note in _slice_heads(slb):
        parts += [f"### {head}", "", f"**{headline(lb)}**", ""]
        parts += [f"> ⚠ {note}", ""] if note else []
        parts += [markdown(lb, digits)]
    parts.append(f"Family: {slb.describe_method()}.\n")
    return "\n".join(parts)


def sliced_html(slb: Any, digits: int = 3) -> str:
    """One captioned table per slice (the report's and the notebook's view)."""
    parts = []
    for lb, head, note in _slice_heads(slb):
        parts.append(f'<h4 class="sef-slice">{_html.escape(head)}</h4>')
        if note:
            parts.append(f'<p class="warn">{_html.escape(note)}</p>')
        parts.append(html(lb, digits))
    parts.append(f"<p><small>Family: {_html.escape(slb.describe_method())}.</small></p>")
    return '<div class="sef-leaderboard-slices">' + "".join(parts) + "</div>"
