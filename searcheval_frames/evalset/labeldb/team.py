"""A team on one store: who judges what next, progress per assessor, conflicts.

* :func:`routing_order`: the items an assessor may judge next, best first: pairs with
  fewer than ``per_pair`` labels that this assessor has not seen, restricted to the
  queries ``assign`` gives them; the fewest judgements first, then the query on screen,
  then the widget's order (a query at a time, best rank first), as Quepid routes raters.
* :func:`assessor_progress`: per assessor: done, "can't judge", left, median seconds per
  label and an ETA.
* :func:`query_progress`: per query of a pool, for one assessor.
* :func:`conflict_table`: pairs whose current labels disagree, one column per assessor.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from ...errors import InvalidOptionError

__all__ = ["assessor_progress", "check_assign", "conflict_table", "format_eta",
           "query_progress", "routing_order"]

KEY = ["query_id", "doc_id"]


def check_assign(assign: Any, func: str = "label_widget") -> dict[str, list[str]] | None:
    """``assign={"ana": ["q1", ...], ...}`` as ``{assessor: [query ids as text]}``."""
    if assign is None:
        return None
    if not isinstance(assign, Mapping) or not all(
            isinstance(v, Sequence | set | frozenset) and not isinstance(v, str | bytes)
            for v in assign.values()):
        raise InvalidOptionError(
            f"{func}(assign={assign!r}): a dict of assessor -> list of query ids; got "
            f"{type(assign).__name__}. Example: assign={{'ana': ['q1', 'q2'], 'ben': ['q3']}}")
    return {str(k): [str(q) for q in v] for k, v in assign.items()}


def _counts(judgements: pl.DataFrame) -> pl.DataFrame:
    """``query_id, doc_id, _n``: how many assessors currently label each pair."""
    return (judgements.filter(pl.col("kind") == "label").group_by(KEY)
            .agg(pl.col("assessor").n_unique().cast(pl.Int64).alias("_n")))


def _eligible(items: pl.DataFrame, assessor: str, assign: dict[str, list[str]] | None
              ) -> pl.DataFrame:
    if assign is None:
        return items
    return items.filter(pl.col("query_id").is_in(assign.get(assessor, [])))


def routing_order(items: pl.DataFrame, judgements: pl.DataFrame, assessor: str, *,
                  per_pair: int, assign: dict[str, list[str]] | None,
                  current_query: str | None, leases: pl.DataFrame | None = None
                  ) -> pl.DataFrame:
    """Rows of ``items`` (``query_id, doc_id, _pos``) ``assessor`` may judge, best first.

    ``leases`` (``query_id, doc_id, assessor``): pairs on another assessor's screen now;
    each counts as a judgement on its way, so two people are not sent the same pair.
    """
    seen = judgements.filter(pl.col("assessor") == assessor).select(KEY)
    counts = _counts(judgements)
    if leases is not None and leases.height:
        held = (leases.filter(pl.col("assessor") != assessor).group_by(KEY)
                .agg(pl.len().cast(pl.Int64).alias("_l")))
        counts = (counts.join(held, on=KEY, how="full", coalesce=True)
                  .select(*KEY, (pl.col("_n").fill_null(0) + pl.col("_l").fill_null(0))
                          .alias("_n")))
    cand = (_eligible(items, assessor, assign).join(seen, on=KEY, how="anti")
            .join(counts, on=KEY, how="left")
            .with_columns(pl.col("_n").fill_null(0))
            .filter(pl.col("_n") < per_pair))
    other_query = (pl.col("query_id") != (current_query or "")).cast(pl.Int8)
    return cand.with_columns(other_query.alias("_other")).sort(["_n", "_other", "_pos"]).drop(
        "_other")


def format_eta(seconds: float | None) -> str | None:
    """Seconds as ``"1 h 05 min"``, ``"12 min"``, ``"40 s"`` (None stays None).

    >>> format_eta(3900.0), format_eta(720.0), format_eta(40.0)
    ('1 h 05 min', '12 min', '40 s')
    """
    if seconds is None or seconds != seconds:
        return None
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{round(s / 60)} min"
    return f"{s // 3600} h {round((s % 3600) / 60):02d} min"


def assessor_progress(judgements: pl.DataFrame, items: pl.DataFrame | None, *,
                      per_pair: int, assign: dict[str, list[str]] | None) -> pl.DataFrame:
    """Per assessor: ``assessor, done, cant_judge, left, median_seconds, eta_seconds, eta``.

    ``done``: pairs labelled (of the pool, when given); ``left``: pairs still open to
    them (assigned to them, unseen by them, with fewer than ``per_pair`` labels; null
    without a pool); ``eta_seconds``: ``left`` × their median seconds per label.
    """
    j = judgements if items is None else judgements.join(items.select(KEY), on=KEY, how="semi")
    who = sorted(set(j["assessor"].to_list()) | set(assign or {}))
    per = j.group_by("assessor").agg(
        (pl.col("kind") == "label").sum().cast(pl.Int64).alias("done"),
        (pl.col("kind") == "cant_judge").sum().cast(pl.Int64).alias("cant_judge"),
        pl.col("seconds").filter(pl.col("kind") == "label").median().alias("median_seconds"),
    )
    base = pl.DataFrame({"assessor": who}, schema={"assessor": pl.String})
    out = base.join(per, on="assessor", how="left").with_columns(
        pl.col("done").fill_null(0), pl.col("cant_judge").fill_null(0))
    if items is None:
        left = pl.lit(None, dtype=pl.Int64)
        out = out.with_columns(left.alias("left"))
    else:
        pos = items.select(KEY).with_row_index("_pos")
        lefts = [routing_order(pos, judgements, a, per_pair=per_pair, assign=assign,
                               current_query=None).height for a in who]
        out = out.with_columns(pl.Series("left", lefts, dtype=pl.Int64))
    out = out.with_columns((pl.col("left") * pl.col("median_seconds")).alias("eta_seconds"))
    etas = [format_eta(v) for v in out["eta_seconds"].to_list()]
    return out.with_columns(pl.Series("eta", etas, dtype=pl.String)).select(
        "assessor", "done", "cant_judge", "left", "median_seconds", "eta_seconds", "eta")


def query_progress(labels: pl.DataFrame, pool: pl.DataFrame, assessor: str) -> pl.DataFrame:
    """Per query of ``pool``: ``query_id, total, labelled, fraction`` for ``assessor``."""
    df = pool.select(KEY).unique(maintain_order=True)
    done = (labels.filter(pl.col("assessor") == assessor)
            .select(*KEY, pl.lit(True).alias("_done")))
    return (df.join(done, on=KEY, how="left")
            .group_by("query_id", maintain_order=True)
            .agg(pl.len().cast(pl.Int64).alias("total"),
                 pl.col("_done").fill_null(False).sum().cast(pl.Int64).alias("labelled"))
            .with_columns((pl.col("labelled") / pl.col("total")).alias("fraction")))


def conflict_table(labels: pl.DataFrame, adjudications: pl.DataFrame) -> pl.DataFrame:
    """Pairs whose current labels disagree: ``query_id, doc_id``, one column per assessor
    (null where they gave none), ``n_labels`` and ``adjudicated`` (the reviewed label,
    null while not reviewed)."""
    long = labels.select(*KEY, "assessor", "label")
    bad = (long.group_by(KEY).agg(pl.col("label").n_unique().alias("_u"),
                                  pl.len().cast(pl.Int64).alias("n_labels"))
           .filter(pl.col("_u") > 1).drop("_u"))
    assessors = sorted(long["assessor"].unique().to_list())
    schema = {"query_id": pl.String, "doc_id": pl.String, **{a: pl.Int64 for a in assessors},
              "n_labels": pl.Int64, "adjudicated": pl.Int64}
    if bad.height == 0:
        return pl.DataFrame(schema=schema)
    wide = long.join(bad.select(KEY), on=KEY, how="semi").pivot(
        on="assessor", index=KEY, values="label")
    for a in assessors:
        if a not in wide.columns:
            wide = wide.with_columns(pl.lit(None, dtype=pl.Int64).alias(a))
    adj = (adjudications.sort("id").group_by(KEY).agg(pl.col("label").last().alias("adjudicated")))
    return (wide.join(bad, on=KEY).join(adj, on=KEY, how="left").sort(KEY)
            .select(list(schema)).cast(schema))
