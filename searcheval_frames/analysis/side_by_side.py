"""Two ranked lists of one query next to each other: what moved, what is new, what is judged.

:func:`side_by_side` is the close-up of error analysis: for one query it shows the
top-``k`` of the baseline and of the run, rank by rank, with each document's label
(or ``unjudged``), its title (from ``docs=``) and how it moved (``3 → 1``, ``new``,
``dropped``). The result renders as HTML in notebooks and as Markdown.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import polars as pl

from ..errors import InvalidOptionError
from ..frames import Kind, input_kind, to_native
from ..frames.display import shorten
from ..options import check_int
from ._inputs import docs_table, qrels_pl, queries_table, runs_pl

__all__ = ["SideBySide", "side_by_side"]

_POS = "#1a7f37"
_NEG = "#cf222e"
_GREY = "#777777"


def ranked_lists(run: pl.DataFrame) -> pl.DataFrame:
    """``rank`` (1-based) in trec_eval order: score descending, ties by doc_id descending."""
    return run.sort(
        ["run", "query_id", "score", "doc_id"], descending=[False, False, True, True]
    ).with_columns(
        (pl.int_range(pl.len(), dtype=pl.Int64).over(["run", "query_id"]) + 1).alias("rank")
    )


def _side(
    mine: pl.DataFrame, other: pl.DataFrame, k: int, *, after: bool
) -> pl.DataFrame:
    """One side's top-k with the move marker relative to the other side."""
    top = mine.filter(pl.col("rank") <= k).select("doc_id", "rank")
    o = other.select("doc_id", pl.col("rank").alias("_other"))
    top = top.join(o, on="doc_id", how="left", maintain_order="left")
    r, orank = pl.col("rank").cast(pl.String), pl.col("_other").cast(pl.String)
    if after:  # run side: where did the document come from?
        move = (
            pl.when(pl.col("_other").is_null()).then(pl.lit("new"))
            .when(pl.col("_other") > k).then(pl.lit("new (was ") + orank + pl.lit(")"))
            .when(pl.col("_other") == pl.col("rank")).then(pl.lit("="))
            .otherwise(orank + pl.lit(" → ") + r)
        )
    else:  # baseline side: is the document still there?
        move = (
            pl.when(pl.col("_other").is_null()).then(pl.lit("dropped"))
            .when(pl.col("_other") > k).then(pl.lit("dropped (now ") + orank + pl.lit(")"))
            .when(pl.col("_other") == pl.col("rank")).then(pl.lit("="))
            .otherwise(r + pl.lit(" → ") + orank)
        )
    return top.with_columns(move.alias("move")).drop("_other")


#: Longer document ids (URLs) are shortened in the middle in the HTML, whole on hover
DOC_CHARS = 34


class SideBySide:
    """The ranked lists of a baseline and a run for one query (see :func:`side_by_side`).

    Attributes
    ----------
    frame
        One row per rank 1..k (caller's frame kind): ``rank``, then for the
        baseline ``baseline_doc``, ``baseline_label`` (null = unjudged),
        [``baseline_title``], ``baseline_move`` and the same for the run
        (``run_doc``, ``run_label``, [``run_title``], ``run_move``).
    query_id, query, baseline, run, k
        What is shown.
    relevance_level
        Labels at or above it count as relevant for the colours: a relevant document
        moving up (or new) is good news (blue), a non-relevant one moving up is bad news
        (red), and the other way round for moving down or dropping out.
    """

    def __init__(self, frame: pl.DataFrame, *, query_id: str, query: str | None,
                 baseline: str, run: str, k: int, kind: Kind,
                 relevance_level: int = 1) -> None:
        self.relevance_level = relevance_level
        self._frame = frame
        self.query_id = query_id
        self.query = query
        self.baseline = baseline
        self.run = run
        self.k = k
        self.kind = kind

    @property
    def frame(self) -> Any:
        """The table in the caller's frame kind."""
        return to_native(self._frame, self.kind)

    def to_polars(self) -> pl.DataFrame:
        """The table as a polars DataFrame."""
        return self._frame.clone()

    @property
    def has_titles(self) -> bool:
        return "run_title" in self._frame.columns

    def title(self) -> str:
        q = f" “{self.query}”" if self.query else ""
        return f"Query {self.query_id}{q}: {self.baseline} (before) vs {self.run} (after), top {self.k}"

    @staticmethod
    def _label(v: int | None) -> str:
        return "unjudged" if v is None else str(v)

    def _cells(self, row: dict[str, Any], side: str) -> list[str]:
        doc = row[f"{side}_doc"]
        if doc is None:
            return ["", "", "", ""] if self.has_titles else ["", "", ""]
        out = [doc, self._label(row[f"{side}_label"])]
        if self.has_titles:
            out.append(row[f"{side}_title"] or "")
        out.append(row[f"{side}_move"] or "")
        return out

    def _headers(self) -> list[str]:
        h = ["doc", "label"] + (["title"] if self.has_titles else []) + ["move"]
        return ["rank"] + [f"{self.baseline} {x}" for x in h] + [f"{self.run} {x}" for x in h]

    def to_markdown(self) -> str:
        """A Markdown table (title line, then rank | before ... | after ...)."""
        def esc(t: str) -> str:
            return t.replace("|", "\\|")

        heads = self._headers()
        lines = [f"**{esc(self.title())}**", "",
                 "| " + " | ".join(esc(h) for h in heads) + " |",
                 "|" + "|".join(["--:"] + [":--"] * (len(heads) - 1)) + "|"]
        docs = {1, 1 + len(self._headers()) // 2}  # the doc columns: long ids cut
        for row in self._frame.iter_rows(named=True):
            cells = [str(row["rank"]), *self._cells(row, "baseline"), *self._cells(row, "run")]
            cells = [shorten(c, DOC_CHARS, where="auto") if i in docs else c
                     for i, c in enumerate(cells)]
            lines.append("| " + " | ".join(esc(c) for c in cells) + " |")
        lines += ["", "label: relevance grade, `unjudged` = no label; move: `3 → 1` rank "
                      "before → after, `new` / `dropped` = not in the other top-"
                      f"{self.k}, `=` same rank."]
        return "\n".join(lines)

    def _td(self, text: str, kind: str, label: str = "") -> str:
        style = "padding:2px 6px;text-align:left;"
        tip = ""
        if kind == "doc" and len(text) > DOC_CHARS:  # URLs, long ids: the whole id on hover
            tip, text = f' title="{html.escape(text)}"', shorten(text, DOC_CHARS, where="auto")
        if kind != "title":
            style += "white-space:nowrap;"
        if kind == "label":
            if text == "unjudged":
                style += f"color:{_GREY};font-style:italic;"
            elif text.lstrip("-").isdigit() and int(text) >= self.relevance_level:
                style += f"color:{_POS};font-weight:600;"
        elif kind == "move":
            style += f"color:{self._move_colour(text, label)};"
        return f'<td class="sef-{kind}" style="{style}"{tip}>{html.escape(text)}</td>'

    def _move_colour(self, move: str, label: str) -> str:
        """Good news blue, bad news red, for the reader: a relevant document moving up or
        arriving is good, a non-relevant one doing so is bad; unjudged ones are grey."""
        if not label.lstrip("-").isdigit():
            return _GREY
        relevant = int(label) >= self.relevance_level
        if move.startswith(("new", "dropped")):
            up = move.startswith("new")
        elif "→" in move:
            a, b = (int(x) for x in move.split(" → "))
            up = b < a
        else:
            return _GREY
        return _POS if up == relevant else _NEG

    def to_html(self) -> str:
        """An HTML table with inline styles (used by ``_repr_html_``)."""
        kinds = ["doc", "label"] + (["title"] if self.has_titles else []) + ["move"]
        th = "padding:2px 6px;border-bottom:1px solid #888;text-align:left;"
        out = [f'<div class="sef-side-by-side" data-query-id="{html.escape(self.query_id)}">',
               f'<p style="margin:4px 0;font-weight:600;">{html.escape(self.title())}</p>',
               '<table style="border-collapse:collapse;font-variant-numeric:tabular-nums;'
               'font-size:0.9em;"><thead><tr>',
               f'<th style="{th}"></th>',
               f'<th colspan="{len(kinds)}" style="{th}text-align:center;">'
               f'{html.escape(self.baseline)} (before)</th>',
               f'<th colspan="{len(kinds)}" style="{th}text-align:center;">'
               f'{html.escape(self.run)} (after)</th></tr><tr>',
               f'<th style="{th}">rank</th>']
        out += [f'<th style="{th}">{k}</th>' for k in kinds] * 2
        out.append("</tr></thead><tbody>")
        for row in self._frame.iter_rows(named=True):
            out.append(f'<tr><td style="padding:2px 6px;text-align:right;">{row["rank"]}</td>')
            for side in ("baseline", "run"):
                cells = self._cells(row, side)
                out += [self._td(c, kd, cells[1]) for c, kd in zip(cells, kinds, strict=True)]
            out.append("</tr>")
        out.append("</tbody></table></div>")
        return "".join(out)

    def _repr_html_(self) -> str:
        return self.to_html()

    def __repr__(self) -> str:
        return self.to_markdown()


def side_by_side_pl(
    run_df: pl.DataFrame,
    qrels_df: pl.DataFrame,
    query_id: str,
    *,
    baseline: str,
    run: str,
    k: int,
    docs: pl.DataFrame | None,
) -> pl.DataFrame:
    """The polars core of :func:`side_by_side` on canonical frames (no option checks)."""
    sub = ranked_lists(
        run_df.filter(pl.col("query_id") == query_id, pl.col("run").is_in([baseline, run]))
    )
    before = sub.filter(pl.col("run") == baseline)
    after = sub.filter(pl.col("run") == run)
    labels = qrels_df.filter(pl.col("query_id") == query_id).select(
        "doc_id", pl.col("relevance").cast(pl.Int64).alias("label")
    )
    parts = []
    for side, mine, other, is_after in (("baseline", before, after, False),
                                        ("run", after, before, True)):
        s = _side(mine, other, k, after=is_after).join(labels, on="doc_id", how="left",
                                                       maintain_order="left")
        cols = [pl.col("rank"), pl.col("doc_id").alias(f"{side}_doc"),
                pl.col("label").alias(f"{side}_label")]
        if docs is not None:
            s = s.join(docs, on="doc_id", how="left", maintain_order="left")
            cols.append(pl.col("title").alias(f"{side}_title"))
        cols.append(pl.col("move").alias(f"{side}_move"))
        parts.append(s.select(cols))
    depth = max(parts[0].height, parts[1].height)
    ranks = pl.DataFrame({"rank": pl.int_range(1, depth + 1, dtype=pl.Int64, eager=True)})
    return ranks.join(parts[0], on="rank", how="left").join(parts[1], on="rank", how="left")


def side_by_side(
    runs: Any,
    qrels: Any,
    query_id: Any,
    *,
    baseline: str | None = None,
    run: str | None = None,
    k: int = 10,
    docs: Any = None,
    queries: Any = None,
    columns: Mapping[str, str] | None = None,
) -> SideBySide:
    """The top-``k`` of a baseline and of a run for one query, rank by rank.

    Parameters
    ----------
    runs
        The runs (one long frame with a ``run`` column, a dict of frames, or file
        paths read with :func:`~searcheval_frames.read_run`).
    qrels
        Relevance labels (frame or path); a document without a label shows as
        ``unjudged``.
    query_id
        The query to show (compared as a string).
    baseline, run
        The "before" and "after" runs (default: the first run, and the only
        other one).
    k
        How many ranks to show (default 10). Ranks follow trec_eval: score
        descending, ties by doc_id descending.
    docs
        Document titles: a frame or file (``.jsonl``, ``.csv``, ``.tsv``,
        ``.parquet``) with ``doc_id`` and ``title`` (else the start of ``text``),
        or a dict ``{doc_id: title}``.
    queries
        Query texts (frame, dict or query file) for the heading.
    columns
        Canonical name → your column, for the runs and the qrels, e.g.
        ``{"query_id": "question", "doc_id": "url"}``.

    Returns
    -------
    SideBySide
        ``.frame``: ``rank, baseline_doc, baseline_label, [baseline_title],
        baseline_move, run_doc, run_label, [run_title], run_move`` (labels null
        when unjudged); ``move`` reads ``3 → 1`` (rank before → after), ``=``,
        ``new`` / ``new (was 14)`` on the run side and ``dropped`` /
        ``dropped (now 14)`` on the baseline side for documents outside the other
        top-k. Shows as HTML in notebooks; ``.to_markdown()``.

    Examples
    --------
    >>> import polars as pl, searcheval_frames as sef
    >>> runs = pl.DataFrame({"run": ["a"] * 3 + ["b"] * 3, "query_id": "q",
    ...                      "doc_id": ["x", "y", "z", "z", "x", "w"],
    ...                      "score": [3.0, 2.0, 1.0, 3.0, 2.0, 1.0]})
    >>> sbs = sef.side_by_side(runs, {"q": {"x": 1, "z": 2}}, "q", baseline="a", k=3)
    >>> sbs.frame.select("run_doc", "run_label", "run_move").rows()
    [('z', 2, '3 → 1'), ('x', 1, '1 → 2'), ('w', None, 'new')]
    """
    k = check_int("side_by_side", "k", k, minimum=1, what="ranks to show", example="k=10")
    kind = input_kind(runs)
    run_df = runs_pl(runs, columns=columns)
    qrels_df = qrels_pl(qrels, columns=columns)
    qid = str(query_id)
    names = run_df.get_column("run").unique(maintain_order=True).to_list()
    base = baseline if baseline is not None else names[0]
    if base not in names:
        raise InvalidOptionError(f"side_by_side: baseline={base!r} is not a run; the runs are {names}")
    others = [r for r in names if r != base]
    if run is None:
        if len(others) != 1:
            raise InvalidOptionError(
                f"side_by_side: pick the run to show next to {base!r} with run=; the other "
                f"runs are {others}"
            )
        run = others[0]
    elif run not in others:
        raise InvalidOptionError(
            f"side_by_side: run={run!r} is not a run other than the baseline; choose one of "
            f"{others}"
        )
    present = run_df.filter(pl.col("query_id") == qid).get_column("run").unique().to_list()
    if not present:
        known = run_df.get_column("query_id").unique(maintain_order=True).head(5).to_list()
        raise InvalidOptionError(
            f"side_by_side: query_id={qid!r} is in neither run; query ids look like {known}"
        )
    frame = side_by_side_pl(run_df, qrels_df, qid, baseline=base, run=run, k=k,
                            docs=docs_table(docs))
    qt = queries_table(queries)
    text = None
    if qt is not None:
        hit = qt.filter(pl.col("query_id") == qid)
        text = hit.item(0, "query") if hit.height else None
    return SideBySide(frame, query_id=qid, query=text, baseline=base, run=run, k=k, kind=kind)
