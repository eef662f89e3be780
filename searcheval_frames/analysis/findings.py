"""The result of :func:`searcheval_frames.check`: findings, one row per kind of problem.

A :class:`Findings` holds a polars frame with the columns of :data:`COLUMNS` (``code``,
``severity``, ``count``, ``message``, ``query_id`` and ``doc_id`` examples, ``fix``),
gives it back in the caller's frame kind (``.frame``), renders itself in notebooks
(``_repr_html_``: one summary line, then the table) and as text, and raises on errors
when asked (``raise_for_errors``).

>>> import polars as pl
>>> f = Findings(pl.DataFrame([{"code": "self_retrieval", "severity": "warning",
...     "count": 2, "message": "2 results retrieve the query itself",
...     "query_id": ["q1"], "doc_id": ["q1"], "fix": "drop them"}], schema=SCHEMA))
>>> f.summary()
'sef.check: 0 errors, 1 warning (self_retrieval), 0 notes'
>>> f.ok
True
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from ..errors import SearchEvalError
from ..frames import Kind, to_native

__all__ = ["COLUMNS", "SCHEMA", "SEVERITIES", "CheckFailedError", "Findings"]

SEVERITIES = ("error", "warning", "info")
SCHEMA: dict[str, Any] = {
    "code": pl.String,
    "severity": pl.String,
    "count": pl.Int64,
    "message": pl.String,
    "query_id": pl.List(pl.String),
    "doc_id": pl.List(pl.String),
    "fix": pl.String,
}
COLUMNS = tuple(SCHEMA)
_COLOURS = {"error": "#d55e00", "warning": "#e69f00", "info": "#0072b2"}


class CheckFailedError(SearchEvalError):
    """sef.check found errors: the numbers of an evaluation would be wrong or refused."""


@dataclass
class Findings:
    """What :func:`~searcheval_frames.check` found, most severe first.

    Attributes
    ----------
    frame
        The findings in the caller's frame kind (pandas in, pandas out).
    """

    _frame: pl.DataFrame
    kind: Kind = field(default_factory=lambda: Kind("polars"))

    def __post_init__(self) -> None:
        order = pl.col("severity").replace_strict(
            {s: i for i, s in enumerate(SEVERITIES)}, return_dtype=pl.Int8)
        self._frame = self._frame.select(COLUMNS).sort(order, "code", maintain_order=True)

    @property
    def frame(self) -> Any:
        return to_native(self._frame, self.kind)

    def to_polars(self) -> pl.DataFrame:
        """The findings as a polars frame."""
        return self._frame

    def codes(self, severity: str | None = None) -> list[str]:
        """The codes found (of one severity), each once."""
        df = self._frame if severity is None else self._frame.filter(
            pl.col("severity") == severity)
        return df.get_column("code").unique(maintain_order=True).to_list()

    @property
    def errors(self) -> int:
        return len(self.codes("error"))

    @property
    def warnings(self) -> int:
        return len(self.codes("warning"))

    @property
    def ok(self) -> bool:
        """No errors (warnings and notes allowed)."""
        return self.errors == 0

    def __len__(self) -> int:
        return self._frame.height

    def summary(self) -> str:
        """One line: how many errors, warnings and notes, with their codes."""
        parts = []
        for sev, word in zip(SEVERITIES, ("error", "warning", "note"), strict=True):
            codes = self.codes(sev)
            text = f"{len(codes)} {word}{'' if len(codes) == 1 else 's'}"
            if codes and sev != "info":
                text += f" ({', '.join(codes)})"
            parts.append(text)
        return "sef.check: " + ", ".join(parts)

    def raise_for_errors(self) -> Findings:
        """Raise :class:`CheckFailedError` listing the errors; returns self otherwise."""
        if not self.ok:
            lines = [f"  {r['code']}: {r['message']} Fix: {r['fix']}"
                     for r in self._frame.filter(pl.col("severity") == "error").iter_rows(
                         named=True)]
            raise CheckFailedError(self.summary() + "\n" + "\n".join(lines))
        return self

    def to_text(self) -> str:
        """The findings as plain text (the CLI prints this)."""
        lines = [self.summary()]
        for r in self._frame.iter_rows(named=True):
            lines.append(f"{r['severity'].upper():8} {r['code']}: {r['message']}")
            ex = _examples(r)
            if ex:
                lines.append(f"         e.g. {ex}")
            lines.append(f"         fix: {r['fix']}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.to_text()

    def _repr_html_(self) -> str:
        rows = []
        for r in self._frame.iter_rows(named=True):
            colour = _COLOURS[r["severity"]]
            rows.append(
                "<tr>"
                f"<td style='color:{colour};font-weight:bold'>{r['severity']}</td>"
                f"<td><code>{html.escape(r['code'])}</code></td>"
                f"<td style='text-align:right'>{r['count']}</td>"
                f"<td style='text-align:left'>{html.escape(r['message'])}"
                f"<br><small>{html.escape(_examples(r))}</small></td>"
                f"<td style='text-align:left'>{html.escape(r['fix'])}</td></tr>")
        head = ("<tr><th>severity</th><th>code</th><th>count</th><th>finding</th>"
                "<th>fix</th></tr>")
        table = f"<table>{head}{''.join(rows)}</table>" if rows else ""
        return (f"<div class='sef-check'><p><b>{html.escape(self.summary())}</b></p>"
                f"{table}</div>")


def _examples(row: dict[str, Any]) -> str:
    parts = []
    if row["query_id"]:
        parts.append("queries " + ", ".join(row["query_id"]))
    if row["doc_id"]:
        parts.append("documents " + ", ".join(row["doc_id"]))
    return "; ".join(parts)
