"""trec_eval's judgment groups (``-R qrels_jg``): measures averaged over judgment groups.

A ``qrels_jg`` file is a qrels file whose second column names a *judgment group* (e.g. one
assessor): ``qid jg docno label``. ``map_avgjg``, ``P_avgjg_k`` and ``Rprec_mult_avgjg_x``
evaluate the run once against each group's labels (as ``map``, ``P_k``, ``Rprec_mult_x``) and
average over the groups of the query; the summary averages over queries (trec_eval
``m_map_avgjg.c``, ``m_P_avgjg.c``, ``m_Rprec_mult_avgjg.c``).

Each (query, group) is evaluated as one query of the ordinary evaluator (the run's list is
repeated per group), so the per-group values are exactly those of ``map`` and the others.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from ..errors import FileFormatError, UnknownMeasureError
from .trec_eval import JG_BASE, MeasureRequest

__all__ = ["evaluate_jg", "read_qrels_jg"]

_SEP = "\x1f"  # joins query id and group into one query id of the evaluator


def read_qrels_jg(path: str | Path) -> pl.DataFrame:
    """Read a ``qid jg docno label`` file (lines starting with ``#`` are comments).

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", delete=False) as fh:
    ...     _ = fh.write("# a comment\\n301 1 d#1 2\\n301 2 d#1 0\\n")
    >>> read_qrels_jg(fh.name).rows()
    [('301', '1', 'd#1', 2), ('301', '2', 'd#1', 0)]
    >>> os.unlink(fh.name)
    """
    text = Path(path).read_text(encoding="utf-8")
    lines = pl.DataFrame({"line": text.splitlines()}).with_row_index("no", offset=1)
    lines = lines.filter(~pl.col("line").str.starts_with("#")
                         & (pl.col("line").str.strip_chars() != ""))
    fields = lines.select(
        "no", "line", pl.col("line").str.strip_chars().str.extract_all(r"\S+").alias("f"))
    bad = fields.filter((pl.col("f").list.len() != 4)
                        | pl.col("f").list.get(3, null_on_oob=True).str.contains(r"^[+-]?\d+$").not_())
    if bad.height:
        no, line = bad.row(0)[:2]
        raise FileFormatError(
            f"{path}:{no}: a qrels_jg line is 'qid jg docno label' with an integer label, got "
            f"{line!r} ({bad.height} such line(s)). Fix the file, or drop -R qrels_jg for "
            "ordinary qrels.")
    return fields.select(
        pl.col("f").list.get(0).alias("query_id"), pl.col("f").list.get(1).alias("jg"),
        pl.col("f").list.get(2).alias("doc_id"),
        pl.col("f").list.get(3).cast(pl.Int64).alias("relevance"))


def evaluate_jg(
    run: pl.DataFrame,
    qrels_jg: pl.DataFrame,
    requests: Sequence[MeasureRequest],
    **options: Any,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Aggregate and per-query values of the judgment-group requests.

    Parameters
    ----------
    run
        Canonical run frame.
    qrels_jg
        From :func:`read_qrels_jg`.
    requests
        From :func:`~searcheval_frames.cli.trec_eval.expand_measures` (``-m qrels_jg``).
    **options
        ``evaluate_frames`` options (relevance_level, missing, depth, judged_only, compat).

    Returns
    -------
    (aggregate, per_query)
        ``run, measure, value`` and ``run, query_id, measure, value``.
    """
    from ..core.evaluate import evaluate_frames

    other = [r.label for r in requests
             if r.measure is not None and r.family not in (*JG_BASE, "num_q")]
    if other:
        raise UnknownMeasureError(
            f"with -R qrels_jg only {', '.join(JG_BASE)} and num_q are defined (as in "
            f"trec_eval), not {', '.join(other[:3])}; use -m qrels_jg, or ordinary qrels")
    ms = [r.measure for r in requests if r.measure is not None]
    groups = qrels_jg.select("query_id", "jg").unique()
    qrels = qrels_jg.select((pl.col("query_id") + _SEP + pl.col("jg")).alias("query_id"),
                            "doc_id", "relevance")
    runs = run.join(groups, on="query_id", how="inner").with_columns(
        (pl.col("query_id") + _SEP + pl.col("jg")).alias("query_id")).drop("jg")
    if runs.height == 0:  # nothing in common: let the evaluator say so
        runs = run
    per_group = evaluate_frames(runs, qrels, ms, per_query=True, **options)
    pq = (per_group.with_columns(pl.col("query_id").str.split(_SEP).list.first())
          .group_by("run", "query_id", "measure", maintain_order=True)
          .agg(pl.col("value").mean()))
    counted = {r.measure.name: r.measure.aggregate for r in requests if r.measure is not None}
    agg = pq.group_by("run", "measure", maintain_order=True).agg(
        pl.col("value").sum().alias("_s"), pl.col("value").mean().alias("_m"))
    agg = agg.select("run", "measure", pl.when(pl.col("measure").replace_strict(
        counted, default="mean") == "sum").then(pl.col("_s")).otherwise(pl.col("_m")).alias("value"))
    return agg, pq
