"""The queries that changed most, and why: side-by-side lists plus a sentence each."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from ..analysis.side_by_side import SideBySide, side_by_side_pl
from ..frames import Kind
from ..frames.display import shorten

__all__ = ["Example", "examples", "explain"]


@dataclass
class Example:
    """One of the biggest wins or losses of the run against the baseline."""

    kind: str  # "loss" or "win"
    query_id: str
    query: str | None
    baseline_value: float
    value: float
    delta: float
    why: str
    side_by_side: SideBySide


def _ids(ids: list[str], n: int = 4) -> str:
    # URLs and other long ids are cut in the middle: the side-by-side table has them whole
    shown = ", ".join(shorten(i, 32, where="auto") for i in ids[:n])
    return shown + (f" and {len(ids) - n} more" if len(ids) > n else "")


def explain(frame: pl.DataFrame, k: int, relevance_level: int = 1) -> str:
    """Why a query's score changed, read off its side-by-side frame (top-``k`` of both runs).

    Names the first relevant rank before and after, relevant documents that left or
    entered the top-k, relevant documents that moved, and unjudged documents that
    entered (their labels could change the picture).
    """
    def side(name: str) -> pl.DataFrame:
        return frame.select(
            "rank", pl.col(f"{name}_doc").alias("doc"), pl.col(f"{name}_label").alias("label")
        ).filter(pl.col("doc").is_not_null())

    before, after = side("baseline"), side("run")
    rel_b = before.filter(pl.col("label") >= relevance_level)
    rel_a = after.filter(pl.col("label") >= relevance_level)
    parts: list[str] = []
    fb = int(rel_b.get_column("rank").min()) if rel_b.height else None  # type: ignore[arg-type]
    fa = int(rel_a.get_column("rank").min()) if rel_a.height else None  # type: ignore[arg-type]
    if fb != fa:
        if fa is None:
            parts.append(f"no relevant document in the top {k} any more (the first was at rank {fb})")
        elif fb is None:
            parts.append(f"a relevant document now at rank {fa} (none in the top {k} before)")
        else:
            parts.append(f"the first relevant document moved from rank {fb} to {fa}")
    docs_b = set(before.get_column("doc").to_list())
    docs_a = set(after.get_column("doc").to_list())
    lost = [d for d in rel_b.get_column("doc").to_list() if d not in docs_a]
    gained = [d for d in rel_a.get_column("doc").to_list() if d not in docs_b]
    if lost:
        parts.append(f"{len(lost)} relevant document(s) left the top {k} ({_ids(lost)})")
    if gained:
        parts.append(f"{len(gained)} relevant document(s) entered the top {k} ({_ids(gained)})")
    if not lost and not gained:
        rb = dict(zip(rel_b.get_column("doc").to_list(), rel_b.get_column("rank").to_list(),
                      strict=True))
        down = [f"{shorten(d, 32, where='auto')} {rb[d]} → {r}"
                for d, r in rel_a.select("doc", "rank").iter_rows() if d in rb and r > rb[d]]
        up = [f"{shorten(d, 32, where='auto')} {rb[d]} → {r}"
              for d, r in rel_a.select("doc", "rank").iter_rows() if d in rb and r < rb[d]]
        if down:
            parts.append(f"relevant document(s) moved down ({_ids(down, 3)})")
        if up:
            parts.append(f"relevant document(s) moved up ({_ids(up, 3)})")
    unjudged = [d for d, lab in after.select("doc", "label").iter_rows()
                if lab is None and d not in docs_b]
    if unjudged:
        parts.append(f"{len(unjudged)} unjudged document(s) entered the top {k} "
                     f"({_ids(unjudged)}); labelling them could change this")
    if not parts:
        return (f"The top {k} holds the same relevant documents at the same ranks; the "
                "difference comes from grades or from deeper ranks.")
    text = "; ".join(parts)
    return text[0].upper() + text[1:] + "."


def examples(
    diffs: pl.DataFrame,
    run_df: pl.DataFrame,
    qrels_df: pl.DataFrame,
    *,
    baseline: str,
    run: str,
    n: int,
    k: int,
    docs: pl.DataFrame | None,
    relevance_level: int,
    kind: Kind,
    names: dict[str, str] | None = None,
) -> tuple[list[Example], list[Example]]:
    """The ``n`` biggest losses and wins of ``diffs`` (one run's :func:`query_diff`)."""
    def make(rows: pl.DataFrame, what: str) -> list[Example]:
        out = []
        for r in rows.iter_rows(named=True):
            frame = side_by_side_pl(run_df, qrels_df, r["query_id"], baseline=baseline, run=run,
                                    k=k, docs=docs)
            shown = names or {}  # display names in the table's headings
            sbs = SideBySide(frame, query_id=r["query_id"], query=r.get("query"),
                             baseline=shown.get(baseline, baseline), run=shown.get(run, run),
                             k=k, kind=kind,
                             relevance_level=relevance_level)
            out.append(Example(what, r["query_id"], r.get("query"), r["baseline_value"],
                               r["value"], r["delta"], explain(frame, k, relevance_level), sbs))
        return out

    losses = diffs.filter(pl.col("outcome") == "loss").sort(["delta", "query_id"]).head(n)
    wins = diffs.filter(pl.col("outcome") == "win").sort(
        ["delta", "query_id"], descending=[True, False]).head(n)
    # the rows of the two runs on the shown queries, taken from the whole run once (each
    # side-by-side reads its query's rows only)
    shown_q = pl.concat([losses.get_column("query_id"), wins.get_column("query_id")])
    run_df = run_df.filter(pl.col("run").is_in([baseline, run]),
                           pl.col("query_id").is_in(shown_q.implode()))
    return make(losses, "loss"), make(wins, "win")


