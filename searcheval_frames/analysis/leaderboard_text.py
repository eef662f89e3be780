"""A leaderboard as words and tables: the per-run headline, Markdown and HTML."""

from __future__ import annotations

import html as _html
import math
from typing import Any

__all__ = ["headline", "html", "markdown", "rows"]

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
    return "; ".join(parts)[:1].upper() + "; ".join(parts)[1:] + "."


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
