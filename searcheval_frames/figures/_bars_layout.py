"""How benchmark_bars lays its bars out: orientation, label room, the text over a bar
(private module of :mod:`searcheval_frames.figures.bars`, public names)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import polars as pl

from ._shared import FIGSIZE, NOTE_SIZE, figure_of
from .style import delta_label, display_names

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = ["MAX_HEIGHT", "BarsLook", "label_chars", "vertical_fits"]

#: Tallest figure (inches) benchmark_bars makes for many horizontal bars
MAX_HEIGHT = 9.0


def label_chars(values: bool, deltas: bool, digits: int, pct_digits: int) -> int:
    """Characters of the widest label line over a bar (``0.65``, ``+0.13 (+20%) *``)."""
    return max(digits + 2 if values else 0,
               digits + 3 + 4 + pct_digits + (pct_digits > 0) + 4 if deltas else 0)


def vertical_fits(n_b: int, n_m: int, labelled: bool, chars: int, legend: Sequence[str],
                   ax: Any) -> bool:
    """Whether labels over vertical bars fit between their neighbours' (measured on the
    axes' width less the y labels and a legend at the right)."""
    if not labelled:
        return n_b * n_m <= 16
    fig_w = figure_of(ax).get_figwidth() if ax is not None else FIGSIZE[0]
    legend_w = (max((len(t) for t in legend), default=0) + 4) * 0.6 * (NOTE_SIZE + 1)
    axes_w = fig_w * 72 - 60 - (max(legend_w, 100) if legend else 0)
    pitch = axes_w / n_m * (0.8 / n_b if n_b > 1 else 1.0)
    return chars * 0.6 * (NOTE_SIZE + 1) <= pitch


@dataclass
class BarsLook:
    """The drawing choices of one ``plot`` call (orientation, which labels, sizes)."""

    horizontal: bool
    value_labels: bool
    deltas: bool
    has_ci: bool
    has_sig: bool
    base: str | None
    digits: int
    pct_digits: int
    width: float
    height: float
    dropped: bool = False
    lines_needed: int = 1

    @classmethod
    def make(cls, columns: list[str], runs: list[str], n_m: int, base: str | None,
             orientation: str, value_labels: bool, deltas: bool, significance: bool, ci: bool,
             digits: int, pct_digits: int, ax: Any, legend: bool) -> BarsLook:
        """The choices for bars of ``runs`` x ``n_m`` measures over a frame of ``columns``."""
        cols = set(columns)
        has_stats = "delta" in cols
        n_b = len(runs)
        labelled = value_labels or (deltas and has_stats)
        short = display_names(runs)
        horizontal = orientation == "horizontal" or (orientation == "auto" and not vertical_fits(
            n_b, n_m, labelled, label_chars(value_labels, deltas and has_stats, digits,
                                            pct_digits),
            [short[n] for n in runs] if legend else [], ax))
        return cls(horizontal, value_labels, deltas and has_stats,
                   ci and {"ci_low", "ci_high"} <= cols, significance and "significant" in cols,
                   base, digits, pct_digits, 0.8 / n_b,
                   min(max(FIGSIZE[1], 0.24 * n_b * n_m + 1.0), MAX_HEIGHT))

    def drop_crowded_labels(self, ax: Axes, n_bars: int) -> None:
        """Horizontal bars thinner than a line of text get no labels: the values and
        deltas are left to the table (compare(...).frame, the report's tables)."""
        if self.horizontal and (self.value_labels or self.deltas):
            pitch = (figure_of(ax).get_figheight() * 72 - 80) / max(n_bars, 1)
            if pitch < NOTE_SIZE * 1.2:
                self.value_labels, self.deltas, self.dropped = False, False, True

    def label(self, sub: pl.DataFrame, j: int, value: float, name: str) -> str:
        """The text over bar ``j`` of ``sub``: its value, then its Δ (``*``: significant)."""
        parts = [f"{value:.{self.digits}f}"] if self.value_labels else []
        if self.deltas and name != self.base:
            d = sub.get_column("delta")[j]
            if d is not None and math.isfinite(d):
                pct = sub.get_column("delta_pct")[j] if "delta_pct" in sub.columns else None
                text = delta_label(d, pct, digits=self.digits, pct_digits=self.pct_digits)
                if self.has_sig and sub.get_column("significant")[j]:
                    text += " *"
                parts.append(text)
        return ("  " if self.horizontal else "\n").join(parts)
