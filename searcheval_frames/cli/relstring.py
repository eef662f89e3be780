"""trec_eval's ``relstring``: the labels of a query's top documents as a string (CLI only)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from .trec_eval import MeasureRequest, expand_measures  # noqa: F401  (expand_measures: example)

__all__ = ["relstrings"]


def relstrings(
    run: pl.DataFrame,
    qrels: pl.DataFrame,
    requests: Sequence[MeasureRequest],
    pairs: pl.DataFrame,
    *,
    depth: int | None = None,
    judged_only: bool = False,
    compat: str = "trec_eval-10",
    blocks: Any = None,
) -> pl.DataFrame:
    """trec_eval's ``relstring``: the labels of the top documents as a quoted string.

    One character per rank, up to the request's length (default 10) or the number of
    retrieved documents: the label ``0``-``9``, ``>`` above 9, ``.`` for a negative label
    (in the pool, not judged) and ``-`` for a document absent from the qrels.

    Parameters
    ----------
    run, qrels
        Canonical frames (as :func:`~searcheval_frames.core.evaluate.evaluate_frames` takes).
    requests
        From :func:`expand_measures`; the ``relstring`` ones are used.
    pairs
        The ``run, query_id`` pairs to describe (e.g. the per-query result; queries a run
        lacks get ``''``).
    depth, judged_only, compat, blocks
        As for ``evaluate_frames``.

    Returns
    -------
    polars.DataFrame
        ``run, query_id, measure, text`` (``measure`` is the request's label).

    Examples
    --------
    >>> import polars as pl
    >>> run = pl.DataFrame({"run": "r", "query_id": "q", "doc_id": ["a", "b", "c"],
    ...                     "score": [3.0, 2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "c"], "relevance": [2, -1]})
    >>> reqs = expand_measures(["relstring"]).requests
    >>> relstrings(run, qrels, reqs, run.select("run", "query_id").unique())["text"].to_list()
    ["'2-.'"]
    """
    from ..core.ranking import rank_judged

    wanted = [r for r in requests if r.family == "relstring"]
    keys = ["run", "query_id"]
    ranked = rank_judged(run, qrels, depth=depth, judged_only=judged_only, compat=compat,
                         blocks=blocks)
    base = pairs.select(keys).unique().join(ranked.num_ret, on=keys, how="left").with_columns(
        pl.col("num_ret").fill_null(0))
    lbl = pl.col("relevance")
    char = (pl.when(lbl > 9).then(pl.lit(">")).when(lbl >= 0).then(lbl.cast(pl.String))
            .when(lbl.is_null()).then(pl.lit("-")).otherwise(pl.lit(".")))
    judged = ranked.judged.select(*keys, "rank", "relevance")
    frames = []
    for r in wanted:
        pos = base.with_columns(
            pl.int_ranges(1, pl.min_horizontal("num_ret", pl.lit(r.length)) + 1).alias("rank")
        ).explode("rank").filter(pl.col("rank").is_not_null())
        text = (pos.join(judged, on=[*keys, "rank"], how="left")
                .group_by(keys).agg(char.sort_by(pl.col("rank")).str.join("").alias("text")))
        frames.append(
            base.select(keys).join(text, on=keys, how="left").select(
                *keys, pl.lit(r.name).alias("measure"),
                (pl.lit("'") + pl.col("text").fill_null("") + pl.lit("'")).alias("text")))
    if not frames:
        return pl.DataFrame(schema={"run": pl.String, "query_id": pl.String,
                                    "measure": pl.String, "text": pl.String})
    return pl.concat(frames)
