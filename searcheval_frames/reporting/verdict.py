"""One-sentence verdicts computed from a comparison's numbers (never from wishes).

The wording rules, in order:

* no difference at all (every query ties): ``no change``;
* no p-value (a ``reason``: too few queries, all ties, no spread; see
  :mod:`searcheval_frames.analysis.inference`): ``cannot be tested (<reason>)``;
* the confidence interval of Δ contains 0 (or lies on the other side of 0 than Δ):
  ``not a reliable change`` — whatever the sign of Δ, the data are consistent with no
  effect;
* the interval excludes 0 but the adjusted p-value is above alpha: ``not significant
  after <correction>`` (only with a separately chosen interval: the default interval
  inverts the test at the level matched to the correction, so the two agree);
* both agree: ``reliably better`` (Δ > 0) or ``reliably worse`` (Δ < 0).

So a verdict says "better" only when the interval lies above 0 and the corrected test
is significant.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["cell_text", "overall", "p_text", "signed", "verdict", "verdict_kind"]

MINUS = "−"
_CORR = {"none": "", "bonferroni": "Bonferroni", "holm": "Holm", "bh": "Benjamini–Hochberg",
         "by": "Benjamini–Yekutieli", "tukey": "Tukey HSD"}


def _nan(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def cell_text(v: Any, digits: int) -> str:
    """A table cell's text in the report (HTML and Markdown): — for a missing value,
    yes/no, floats with ``digits`` decimals."""
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def signed(v: float, digits: int = 3) -> str:
    """``+0.041`` / ``−0.010`` (a real minus sign); ``0.000`` for zero."""
    if _nan(v):
        return "—"
    text = f"{abs(v):.{digits}f}"
    if float(text) == 0:
        return text
    return ("+" if v > 0 else MINUS) + text


def p_text(p: float) -> str:
    """``p=0.12``, ``p=0.031``, ``p<0.001``."""
    if _nan(p):
        return "p=n/a"
    if p < 0.001:
        return "p<0.001"
    if p >= 0.1:
        return f"p={p:.2f}"
    return f"p={p:.3f}"


def verdict_kind(row: dict[str, Any], alpha: float) -> str:
    """``"none"``, ``"untestable"``, ``"unreliable"``, ``"not_significant"``,
    ``"better"`` or ``"worse"`` (see the module docstring)."""
    d, lo, hi, p = row["delta"], row["ci_low"], row["ci_high"], row["p_adjusted"]
    if not _nan(d) and d == 0 and row.get("wins", 0) == 0 and row.get("losses", 0) == 0:
        return "none"
    if _nan(p) or _nan(lo) or _nan(hi):
        return "untestable"
    if lo <= 0 <= hi or (lo > 0) != (d > 0) or (hi < 0) != (d < 0):
        return "unreliable"  # the interval holds 0, or disagrees with the sign of Δ
    if p > alpha:
        return "not_significant"
    return "better" if lo > 0 else "worse"


def verdict(row: dict[str, Any], *, ci: float, correction: str, alpha: float,
            prefix: str | None = None) -> str:
    """The sentence for one (run, baseline, measure) row of a comparison frame.

    >>> row = {"measure": "nDCG@10", "delta": 0.041, "delta_pct": 9.8, "ci_low": -0.01,
    ...        "ci_high": 0.09, "p_adjusted": 0.12, "wins": 20, "losses": 12}
    >>> verdict(row, ci=0.95, correction="holm", alpha=0.05)
    'nDCG@10: +0.041 (+9.8%), 95% CI [−0.010, +0.090], p=0.12 after Holm — not a reliable change'
    """
    kind = verdict_kind(row, alpha)
    head = f"{prefix} — " if prefix else ""
    head += f"{row['measure']}: "
    if kind == "none":
        return head + "identical on every query — no change"
    pct = "" if _nan(row["delta_pct"]) else f" ({signed(row['delta_pct'], 1)}%)"
    corr = _CORR.get(correction, correction)
    after = f" after {corr}" if corr else ""
    nums = (f"{signed(row['delta'])}{pct}, {ci:.0%} CI [{signed(row['ci_low'])}, "
            f"{signed(row['ci_high'])}], {p_text(row['p_adjusted'])}{after}")
    if kind == "untestable":
        why = row.get("reason") or "too few queries"
        return head + f"{signed(row['delta'])}{pct} — cannot be tested ({why})"
    text = {
        "unreliable": "not a reliable change",
        "not_significant": f"not significant after correcting for multiple comparisons ({corr})",
        "better": "reliably better",
        "worse": "reliably worse",
    }[kind]
    return head + nums + " — " + text


def overall(kinds: list[str]) -> str:
    """One sentence over all verdicts: how many measures got reliably better / worse."""
    n = len(kinds)
    better, worse = kinds.count("better"), kinds.count("worse")
    if n == 0:
        return "Nothing was compared."
    if better == 0 and worse == 0:
        return (f"No reliable change on any of the {n} comparisons: the differences are within "
                "what chance alone produces on these queries.")
    parts = []
    if better:
        parts.append(f"{better} of {n} reliably better")
    if worse:
        parts.append(f"{worse} of {n} reliably worse")
    rest = n - better - worse
    if rest:
        parts.append(f"{rest} without a reliable change")
    return "; ".join(parts).capitalize() + "."
