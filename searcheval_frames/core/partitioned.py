"""Evaluate a run too big for memory, one part of its queries at a time.

Every measure of a query depends only on that query's rows and labels, so a run
split by query id is evaluated part by part with the in-memory code
(:func:`searcheval_frames.core.evaluate.per_query_values`) and the per-query
values are concatenated; the aggregates are then computed from them exactly as
in memory. Nothing here computes a measure.

:func:`scan_run` recognises a lazy run (``pl.scan_parquet``, ``pl.scan_csv``, any
``LazyFrame``) or a Parquet path or glob with more than :data:`ROWS_PER_PART`
rows and returns a :class:`RunScan`:

1. one streaming pass over the run's ``run`` and query id columns gives every
   (run, query) pair and its number of rows (the whole run is checked and warned
   about from these pairs, as in memory);
2. the sorted query ids are cut into ``P = ceil(rows / ROWS_PER_PART)`` ranges of
   about equal rows; each range is collected with its filter pushed into the
   scan (row groups of a Parquet file sorted by query id are skipped by their
   statistics), validated with the in-memory checks (a duplicate or a NaN score
   raises the usual error naming the rows), evaluated, and dropped before the
   next range is read. An error in any range stops the whole evaluation.

Peak memory is about one range's rows plus the per-query values.
"""

from __future__ import annotations

import glob
import itertools
import math
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from ..frames import DEFAULT_RUN_NAME, Blocks, resolve_columns, run_frame_blocks

__all__ = ["ROWS_PER_PART", "RunScan", "part_table", "query_bounds", "scan_run", "within"]

#: Rows of a lazy or Parquet run above which it is evaluated by query-id ranges,
#: and the rows of one range (override with the ``SEF_PARTITION_ROWS`` environment
#: variable, or by setting this attribute).
ROWS_PER_PART = int(os.environ.get("SEF_PARTITION_ROWS", 5_000_000))

KEYS = ["run", "query_id"]
_PARQUET = (".parquet", ".pq")


def part_table(
    run_q: pl.DataFrame, runs: pl.DataFrame, qrels: pl.DataFrame, missing: str
) -> pl.DataFrame:
    """The (run, query_id) pairs to evaluate in one part of the queries, silently.

    The same rule as the whole-run plan (``evaluate.query_table``): with
    ``missing="skip"`` the pairs of the run whose query has labels; with
    ``"zero"`` every run crossed with every labelled query of the part.
    """
    judged_q = qrels.select("query_id").unique()
    if missing == "skip":
        return run_q.join(judged_q, on="query_id", how="semi")
    return runs.join(judged_q, how="cross")


def query_bounds(per_query: pl.DataFrame, rows_per_part: int) -> list[str]:
    """The first query id of every part but the first: ``per_query`` (``query_id``, ``_n``
    rows) cut by cumulative rows into ``ceil(rows / rows_per_part)`` ranges of sorted ids.
    Every range holds at least one query.

    >>> query_bounds(pl.DataFrame({"query_id": ["b", "a", "c"], "_n": [2, 2, 2]}), 2)
    ['b', 'c']
    """
    per_q = per_query.sort("query_id")
    rows = int(per_q.get_column("_n").sum())
    parts = max(1, math.ceil(rows / max(rows_per_part, 1)))
    cum = np.cumsum(per_q.get_column("_n").to_numpy())
    cuts = np.searchsorted(cum, [k * rows / parts for k in range(1, parts)], side="left") + 1
    qids = per_q.get_column("query_id")
    return sorted({qids[int(i)] for i in cuts if 0 < i < qids.len()})


def within(expr: pl.Expr, lo: str | None, hi: str | None) -> pl.Expr:
    """``lo <= expr < hi`` (an unbounded side is None): the rows of one query-id range."""
    cond = pl.lit(True)
    if lo is not None:
        cond = cond & (expr >= lo)
    if hi is not None:
        cond = cond & (expr < hi)
    return cond


def _id_expr(col: str, dtype: pl.DataType) -> pl.Expr:
    """A column's ids as the canonical strings :func:`frames.run_frame` makes of them."""
    c = pl.col(col)
    if dtype == pl.String:
        return c
    if dtype.is_float():  # integral floats become "1" (others fail validation later)
        return c.cast(pl.Int64, strict=False).cast(pl.String)
    return c.cast(pl.String, strict=False)


def _parquet_source(obj: Any) -> tuple[str, bool] | None:
    """``(path, is_glob)`` for one Parquet path or glob, else None."""
    if not isinstance(obj, str | os.PathLike):
        return None
    text = os.fspath(obj)
    if not text.lower().endswith(_PARQUET):
        return None
    if glob.has_magic(text):
        return text, True
    return (text, False) if Path(text).is_file() else None


def scan_run(obj: Any, columns: Mapping[str, str] | None = None) -> RunScan | None:
    """A :class:`RunScan` of a lazy or Parquet run too big to collect at once, else None.

    A ``LazyFrame`` or a single Parquet file with at most :data:`ROWS_PER_PART`
    rows is left to the in-memory path (None); a Parquet glob is always scanned.
    Counting the rows of a ``LazyFrame`` runs its plan once (free for Parquet).

    Examples
    --------
    >>> import polars as pl
    >>> scan_run(pl.DataFrame({"query_id": ["1"], "doc_id": ["d"], "score": [1.0]})) is None
    True
    """
    name = DEFAULT_RUN_NAME
    if isinstance(obj, pl.LazyFrame):
        lf, always = obj, False
    else:
        src = _parquet_source(obj)
        if src is None:
            return None
        path, always = src
        lf = pl.scan_parquet(path)
        if not always:  # a run file without a run column is named after the file
            name = Path(path).name
            while name.lower().endswith(_PARQUET) and len(name) > 8:
                name = name.rsplit(".", 1)[0]
    rows = lf.select(pl.len()).collect().item()
    if rows <= ROWS_PER_PART and not always:
        # a small lazy run: collected as any frame; a small Parquet file: read by the file
        # reader as sef.read_run reads it (the same code, names and errors, equally fast)
        return None
    return RunScan(lf, rows, columns, name)


class RunScan:
    """A lazy run, its (run, query) pairs, and its parts by query-id range.

    Attributes
    ----------
    pairs
        ``run, query_id`` (canonical strings): every pair of the run, in order of
        first appearance.
    runs
        The run names in order of first appearance.
    bounds
        The first query id of every part but the first (sorted strings).
    """

    def __init__(self, lf: pl.LazyFrame, rows: int, columns: Mapping[str, str] | None,
                 name: str = DEFAULT_RUN_NAME) -> None:
        self.lf, self.rows, self.columns, self.name = lf, rows, columns, name
        schema = lf.collect_schema()
        found = resolve_columns(
            pl.DataFrame(schema=schema), ("query_id", "doc_id"), ("score", "rank", "run"),
            columns, "run",
            "Rename the column or pass columns={'query_id': ..., 'doc_id': ..., 'score': ...}.",
        )
        self.found = found
        qcol = found["query_id"]
        self.query = _id_expr(qcol, schema[qcol])
        run = _id_expr(found["run"], schema[found["run"]]) if "run" in found else pl.lit(name)
        pairs = (
            lf.select(run.alias("run"), self.query.alias("query_id"))
            .with_row_index("_i")
            .group_by(KEYS)
            .agg(pl.len().alias("_n"), pl.col("_i").min())
            .collect(engine="streaming")
            .sort("_i")
        )
        if pairs.select(pl.any_horizontal(pl.col(KEYS).is_null()).any()).item():
            # missing ids: let the in-memory checks name the rows
            cond = pl.col(qcol).is_null()
            if "run" in found:
                cond = cond | pl.col(found["run"]).is_null()
            self._canonical(lf.filter(cond).collect())
        self.pairs = pairs.select(KEYS)
        self.runs: list[str] = pairs.get_column("run").unique(maintain_order=True).to_list()
        per_q = pairs.group_by("query_id").agg(pl.col("_n").sum())
        self.bounds: list[str] = query_bounds(per_q, ROWS_PER_PART)

    def _canonical(self, df: pl.DataFrame) -> tuple[pl.DataFrame, Blocks | None]:
        """A part as the canonical run, checked as any in-memory run is."""
        return run_frame_blocks(df, columns=self.columns, name=self.name)

    def _ranges(self) -> list[tuple[str | None, str | None]]:
        edges: list[str | None] = [None, *self.bounds, None]
        return list(itertools.pairwise(edges))


    def map(
        self,
        fn: Callable[[pl.DataFrame, Blocks | None, pl.DataFrame], pl.DataFrame],
        qrels: pl.DataFrame,
    ) -> list[pl.DataFrame]:
        """``fn(run_part, blocks, qrels_part)`` for each part, one part in memory at a time.

        ``run_part`` is canonical and validated; ``qrels_part`` holds the labels of
        the part's query-id range (labelled queries that the run lacks included).
        """
        out = []
        for lo, hi in self._ranges():
            df = self.lf.filter(within(self.query, lo, hi)).collect()
            if df.height:
                part, blocks = self._canonical(df)
            else:
                part, blocks = _empty_run(), None
            del df
            labels = qrels.filter(within(pl.col("query_id"), lo, hi))
            out.append(fn(part, blocks, labels))
            del part, blocks
        return out


def _empty_run() -> pl.DataFrame:
    return pl.DataFrame(schema={"run": pl.String, "query_id": pl.String, "doc_id": pl.String,
                                "score": pl.Float64})
