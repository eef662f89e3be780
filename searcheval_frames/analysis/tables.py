"""Render a comparison's tidy frame as a table: HTML, Markdown or LaTeX.

A :class:`Table` is a view of the frame of :func:`~searcheval_frames.compare` (one row
per run, baseline and measure) with a layout, rounding and a choice of columns. It
depends only on that frame and a few plain values (the runs, baselines, measures, the
sentence naming the method), never on :class:`~searcheval_frames.Comparison` itself:
``Comparison.table()`` builds it. This module decides what each cell says;
:mod:`~searcheval_frames.analysis.markup` writes the cells out. A table renders

* in notebooks (``_repr_html_``): best mean per measure bold, superscript letters
  for significant wins, significant deltas coloured green/red (the others neutral);
* as Markdown (``to_markdown``) for READMEs and issues;
* as LaTeX (``to_latex``) with booktabs rules and superscript letters, ready for a
  paper (needs ``\\usepackage{booktabs}``);
* as a frame of formatted strings (``to_frame``), and gives back the tidy numbers
  (``frame``).

Deltas always read ``+0.130 (+20.0%)``: absolute difference first, relative change
(percent of the baseline mean) in parentheses, and the header says so
(``Δ abs (rel)``).

Layouts
-------
``"wide"``: one row per run, one column group per measure. ``columns`` picks the
statistics per measure among ``mean`` (with bold/superscripts), ``delta``,
``ci``, ``p_value``, ``p_adjusted``, ``wtl``, ``effect_size``, ``n_queries``
(default ``("mean", "delta")``). Deltas and tests are against the first baseline.

``"before_after"`` (alias ``"long"``): one row per measure (and per compared pair
when there are several), like the seed's "Before the changes / After adding
reranking" table. ``columns`` among ``before``, ``after``, ``change``
(``0.650 → 0.780``), ``delta``, ``ci``, ``p_value``, ``p_adjusted``, ``wtl``,
``effect_size``, ``n_queries`` (default ``("before", "after", "delta",
"p_adjusted", "wtl")``).
"""

from __future__ import annotations

import math
import string
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from .._deprecation import deprecated_aliases
from ..errors import InvalidOptionError
from ..frames import Kind, to_native
from . import markup
from .markup import Cell, Model, flat_headers, plain

__all__ = ["LAYOUTS", "Table"]

LAYOUTS = ("wide", "before_after", "long")
WIDE_COLUMNS = ("mean", "delta", "ci", "p_value", "p_adjusted", "wtl", "effect_size", "n_queries")
LONG_COLUMNS = (
    "before", "after", "change", "delta", "ci", "p_value", "p_adjusted", "wtl", "effect_size",
    "n_queries",
)
_COLUMN_ALIASES = {
    "baseline_mean": "before",
    "p": "p_adjusted",
    "wins": "wtl",
    "d": "effect_size",
    "n": "n_queries",
    "delta_pct": "delta",
}
DEFAULT_WIDE = ("mean", "delta")
DEFAULT_LONG = ("before", "after", "delta", "p_adjusted", "wtl")



def _letters(n: int) -> list[str]:
    out = []
    for i in range(n):
        s = ""
        i += 1
        while i:
            i, r = divmod(i - 1, 26)
            s = string.ascii_lowercase[r] + s
        out.append(s)
    return out


def _nan(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


class Table:
    """A rendered view of a comparison (see the module docstring for layouts).

    Usually made by :meth:`Comparison.table() <searcheval_frames.Comparison.table>`.

    Parameters
    ----------
    frame
        The comparison's tidy polars frame: one row per (run, baseline, measure) with
        ``mean, baseline_mean, delta, delta_pct, ci_low, ci_high, p_value, p_adjusted,
        significant, wins, ties, losses, effect_size, n_queries``.
    means
        Polars frame ``run, measure, n_queries, mean`` of every compared run.
    all_runs, baselines, all_measures
        The runs in display order (baselines first), the baselines (deltas in the wide
        layout are against the first) and the measures of the comparison.
    correction, ci
        The multiple-testing correction (``"holm"``, ..., ``"none"``) and the confidence
        level, for the column headers.
    method, method_ci
        The sentence naming the test, correction and alpha for the legend, without and
        with the confidence interval (used when the ``ci`` column is shown).
    kind
        The frame kind of :meth:`to_frame` and :attr:`frame` (the caller's).
    layout
        ``"wide"`` (runs x measures) or ``"before_after"`` (alias ``"long"``).
    digits, pct_digits
        Decimals of means, deltas, intervals and p-values; of relative deltas.
    columns
        Statistics to show (see the module docstring); default per layout.
    measures, runs
        Subset and order of the measures / runs shown (default: all).

    Examples
    --------
    >>> import polars as pl, searcheval_frames as sef
    >>> pq = pl.DataFrame({"run": ["a"] * 3 + ["b"] * 3, "query_id": ["1", "2", "3"] * 2,
    ...                    "measure": "RR", "value": [0.5, 1.0, 0.25, 1.0, 1.0, 0.5]})
    >>> rep = sef.compare(per_query=pq, baseline="a").table(digits=2)
    >>> print(rep.to_markdown(legend=False))
    | # | Run | RR | RR Δ abs (rel) |
    |:--|:--|--:|--:|
    | a | a | 0.58 | — |
    | b | b | **0.83** | +0.25 (+42.9%) |
    """

    def __init__(
        self,
        frame: pl.DataFrame,
        *,
        means: pl.DataFrame,
        all_runs: Sequence[str],
        baselines: Sequence[str],
        all_measures: Sequence[str],
        correction: str,
        ci: float,
        method: str,
        method_ci: str,
        kind: Kind,
        layout: str = "wide",
        digits: int = 3,
        pct_digits: int = 1,
        columns: Sequence[str] | None = None,
        measures: Sequence[str] | None = None,
        runs: Sequence[str] | None = None,
    ) -> None:
        if layout not in LAYOUTS:
            raise InvalidOptionError(f"layout={layout!r}: use one of {list(LAYOUTS)}")
        if int(digits) < 0 or int(pct_digits) < 0:
            raise InvalidOptionError("digits and pct_digits must be non-negative integers")
        self._frame = frame
        self.means = means
        self.baselines = list(baselines)
        self.correction = correction
        self.ci = ci
        self.method = method
        self.method_ci = method_ci
        self.kind = kind
        self.layout = "before_after" if layout == "long" else layout
        self.digits = int(digits)
        self.pct_digits = int(pct_digits)
        allowed = WIDE_COLUMNS if self.layout == "wide" else LONG_COLUMNS
        if columns is None:
            cols = list(DEFAULT_WIDE if self.layout == "wide" else DEFAULT_LONG)
        else:
            if isinstance(columns, str):
                columns = [columns]
            cols = []
            for c in columns:
                key = _COLUMN_ALIASES.get(c, c)
                if self.layout == "before_after" and key == "mean":
                    key = "after"
                if key not in allowed:
                    raise InvalidOptionError(
                        f"columns=: {c!r} is not a column of the {self.layout!r} layout; use "
                        f"any of {list(allowed)}"
                    )
                cols.append(key)
            cols = list(dict.fromkeys(cols))
            if not cols:
                raise InvalidOptionError("columns= is empty; name at least one column")
        self.columns = cols
        self.measures = self._subset(measures, list(all_measures), "measures")
        self.runs = self._subset(runs, list(all_runs), "runs")

    def renamed(self, names: Mapping[str, str]) -> Table:
        """The same table with runs shown under other (unique) names, e.g. display names."""
        import copy

        out = copy.copy(self)
        out._frame = self._frame.with_columns(pl.col("run", "baseline").replace(dict(names)))
        out.means = self.means.with_columns(pl.col("run").replace(dict(names)))
        out.runs = [names.get(r, r) for r in self.runs]
        out.baselines = [names.get(r, r) for r in self.baselines]
        return out

    @staticmethod
    def _subset(chosen: Sequence[str] | None, available: list[str], arg: str) -> list[str]:
        if chosen is None:
            return list(available)
        chosen = [chosen] if isinstance(chosen, str) else list(chosen)
        bad = [c for c in chosen if c not in available]
        if bad:
            raise InvalidOptionError(f"{arg}=: {bad[0]!r} is not in the comparison; it has {available}")
        return chosen

    # ------------------------------------------------------------------ frames
    @property
    def frame(self) -> Any:
        """The tidy numbers behind the table (the comparison's frame, caller's kind)."""
        return to_native(self._frame, self.kind)

    def to_frame(self) -> Any:
        """The table as a frame of formatted strings (caller's kind), no markup."""
        groups, headers, rows, _ = self._model()
        names = flat_headers(groups, headers)
        data = {
            name: [plain(row[i]) for row in rows] for i, name in enumerate(names)
        }
        return to_native(pl.DataFrame(data, schema=dict.fromkeys(names, pl.String)),
                         self.kind)

    # ------------------------------------------------------------------ formatting
    def _num(self, v: float) -> str:
        return "—" if _nan(v) else f"{v:.{self.digits}f}"

    def _signed(self, v: float, digits: int | None = None) -> str:
        digits = self.digits if digits is None else digits
        if _nan(v):
            return "—"
        if round(v, digits) == 0:  # no "-0.000": what rounds to zero prints unsigned
            return f"{0:.{digits}f}"
        return f"{v:+.{digits}f}"

    def _delta(self, d: float, pct: float) -> str:
        if _nan(d):
            return "—"
        if round(d, self.digits) == 0:
            rel = f"{0:.{self.pct_digits}f}%"
        elif _nan(pct):
            rel = "n/a"
        else:
            rel = f"{self._signed(pct, self.pct_digits)}%"
        return f"{self._signed(d)} ({rel})"

    def _p(self, p: float) -> str:
        if _nan(p):
            return "—"
        floor = 10.0 ** (-max(self.digits, 1))
        if p < floor:
            return f"<{floor:.{max(self.digits, 1)}f}"
        return f"{p:.{max(self.digits, 1)}f}"

    # ------------------------------------------------------------------ data access
    def _rows_by_pair(self) -> dict[tuple[str, str, str], dict[str, Any]]:
        out: dict[tuple[str, str, str], dict[str, Any]] = {}
        for row in self._frame.iter_rows(named=True):
            out[(row["run"], row["baseline"], row["measure"])] = row
        return out

    def _oriented(
        self, table: dict[tuple[str, str, str], dict[str, Any]], run: str, ref: str, m: str
    ) -> dict[str, Any] | None:
        row = table.get((run, ref, m))
        if row is not None:
            return row
        rev = table.get((ref, run, m))
        if rev is None:
            return None
        d = -rev["delta"]
        return {
            **rev,
            "run": run,
            "baseline": ref,
            "mean": rev["baseline_mean"],
            "baseline_mean": rev["mean"],
            "delta": d,
            "delta_pct": d / rev["mean"] * 100.0 if rev["mean"] else float("nan"),
            "ci_low": -rev["ci_high"],
            "ci_high": -rev["ci_low"],
            "wins": rev["losses"],
            "losses": rev["wins"],
            "effect_size": -rev["effect_size"],
        }

    def _stat_cell(self, key: str, row: dict[str, Any] | None) -> Cell:
        if row is None:
            return Cell("—")
        sig = bool(row["significant"])
        if row.get("reason") and key in ("ci", "p_value", "p_adjusted"):
            return Cell(f"cannot be tested ({row['reason']})" if key == "ci" else "—")
        if key == "delta":
            d = row["delta"]
            sign = 0 if _nan(d) or round(d, self.digits) == 0 else (1 if d > 0 else -1)
            return Cell(self._delta(d, row["delta_pct"]), sign=sign, significant=sig,
                         sup="*" if sig else "")
        if key == "ci":
            return Cell(f"[{self._signed(row['ci_low'])}, {self._signed(row['ci_high'])}]")
        if key in ("p_value", "p_adjusted"):
            return Cell(self._p(row[key]), sup="*" if sig and key == "p_adjusted" else "")
        if key == "wtl":
            return Cell(f"{row['wins']}/{row['ties']}/{row['losses']}")
        if key == "effect_size":
            e = row["effect_size"]
            return Cell("—" if _nan(e) else f"{e:+.2f}")
        if key == "n_queries":
            return Cell(str(row["n_queries"]))
        if key == "before":
            return Cell(self._num(row["baseline_mean"]))
        if key == "after":
            return Cell(self._num(row["mean"]))
        if key == "change":
            return Cell(f"{self._num(row['baseline_mean'])} → {self._num(row['mean'])}")
        raise AssertionError(key)  # pragma: no cover

    def _label(self, key: str) -> str:
        corr = {"none": "", "bonferroni": "Bonf.", "holm": "Holm", "bh": "BH", "by": "BY",
                "tukey": "Tukey"}
        return {
            "mean": "mean",
            "delta": "Δ abs (rel)",
            "ci": f"{self.ci:.0%} CI of Δ",
            "p_value": "p",
            "p_adjusted": (
                f"p ({corr[self.correction]})" if self.correction != "none" else "p"
            ),
            "wtl": "W/T/L",
            "effect_size": "d_z",
            "n_queries": "n",
        }.get(key, key)

    def _method(self) -> str:
        return self.method_ci if "ci" in self.columns else self.method

    # ------------------------------------------------------------------ models
    def _model(self) -> Model:
        if self.layout == "wide":
            return self._wide_model()
        return self._long_model()

    def _wide_model(self) -> Model:
        table = self._rows_by_pair()
        ref = self.baselines[0]
        runs = self.runs
        letters = dict(zip(runs, _letters(len(runs)), strict=True))
        means = {
            (r, m): v
            for r, m, v in self.means.select("run", "measure", "mean").iter_rows()
        }
        # significant wins: the better run of each significant pair gets the other's letter
        beats: dict[tuple[str, str], set[str]] = {}
        for (run, base, m), tested in table.items():
            if not tested["significant"] or run not in letters or base not in letters:
                continue
            if tested["delta"] > 0:
                beats.setdefault((run, m), set()).add(letters[base])
            elif tested["delta"] < 0:
                beats.setdefault((base, m), set()).add(letters[run])
        groups: list[tuple[str, int]] = [("", 2)]
        headers = ["#", "Run"]
        for m in self.measures:
            groups.append((m, len(self.columns)))
            headers.extend(self._label(c) for c in self.columns)
        rows: list[list[Cell]] = []
        best = {
            m: max((means.get((r, m), float("-inf")) for r in runs), default=float("-inf"))
            for m in self.measures
        }
        for r in runs:
            cells = [Cell(letters[r], left=True), Cell(r, left=True)]
            for m in self.measures:
                v = means.get((r, m), float("nan"))
                row = None if r == ref else self._oriented(table, r, ref, m)
                for c in self.columns:
                    if c == "mean":
                        cells.append(
                            Cell(
                                self._num(v),
                                bold=not _nan(v) and abs(v - best[m]) <= 1e-12,
                                sup="".join(sorted(beats.get((r, m), ()), key=lambda s: (len(s), s))),
                            )
                        )
                    elif c == "n_queries":
                        n = self.means.filter((pl.col("run") == r) & (pl.col("measure") == m))
                        cells.append(Cell(str(n.item(0, "n_queries")) if n.height else "—"))
                    else:
                        cells.append(self._stat_cell(c, row))
            rows.append(cells)
        legend = [
            "Bold: best mean per measure.",
            "Superscript letters: significantly better than the run with that letter "
            f"({self._method()}).",
        ]
        if any(c != "mean" for c in self.columns):
            legend.append(
                f"Δ abs (rel): absolute difference to {ref}, and relative change in % of "
                f"{ref}'s mean; * significant."
            )
        if "wtl" in self.columns:
            legend.append(f"W/T/L: queries where the run is better / equal / worse than {ref}.")
        if "effect_size" in self.columns:
            legend.append("d_z: paired Cohen's d (mean difference / sd of differences).")
        return groups, headers, rows, " ".join(legend)

    def _long_model(self) -> Model:
        table = self._rows_by_pair()
        pair_list: list[tuple[str, str]] = []
        for run, base, _m in table:
            if run in self.runs and base in self.runs and (run, base) not in pair_list:
                pair_list.append((run, base))
        single = len(pair_list) == 1
        headers: list[str] = [] if single else ["Run", "Baseline"]
        headers.append("Measure")
        for c in self.columns:
            if c == "before":
                headers.append(f"Before ({pair_list[0][1]})" if single else "Before")
            elif c == "after":
                headers.append(f"After ({pair_list[0][0]})" if single else "After")
            elif c == "change":
                headers.append("Before → after")
            else:
                headers.append(self._label(c))
        rows: list[list[Cell]] = []
        for run, base in pair_list:
            for m in self.measures:
                row = table.get((run, base, m))
                if row is None:
                    continue
                cells = [] if single else [Cell(run, left=True), Cell(base, left=True)]
                cells.append(Cell(m, left=True))
                for c in self.columns:
                    cell = self._stat_cell(c, row)
                    if c == "after" and row["significant"] and row["delta"] > 0:
                        cell.bold = True
                    cells.append(cell)
                rows.append(cells)
        legend = [
            "Δ abs (rel): absolute difference after − before, and relative change in % of "
            f"before. * significant ({self._method()})."
        ]
        if "after" in self.columns:
            legend.append("Bold: significantly better after.")
        if "wtl" in self.columns:
            legend.append("W/T/L: queries where after is better / equal / worse than before.")
        if "effect_size" in self.columns:
            legend.append("d_z: paired Cohen's d (mean difference / sd of differences).")
        return [], headers, rows, " ".join(legend)

    # ------------------------------------------------------------------ renderers
    def to_markdown(self, *, legend: bool = True) -> str:
        """GitHub-flavoured Markdown table (bold with ``**``, superscripts with ``<sup>``)."""
        return markup.to_markdown(self._model(), legend=legend)

    def to_html(self, *, legend: bool = True) -> str:
        """HTML table with inline styles (used by ``_repr_html_``)."""
        return markup.to_html(self._model(), legend=legend)

    def _repr_html_(self) -> str:
        return self.to_html()

    def __repr__(self) -> str:
        return self.to_markdown()

    def to_latex(
        self,
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
        return markup.to_latex(
            self._model(),
            caption=caption,
            label=label,
            legend=legend,
            environment=environment,
            placement=placement,
        )


#: ``Report``: the old name of :class:`Table`; it warns until 0.3 removes it (issue 19).
__getattr__ = deprecated_aliases(__name__, globals(), {"Report": (
    "Table", "0.3", "sef.Report is the report document that sef.report() returns, not this table")})
