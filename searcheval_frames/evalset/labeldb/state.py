"""The label store's current state, computed from its events (polars, no row loops).

* :func:`events_frame`: the events as a frame.
* :func:`latest_labels`: each assessor's current label per pair (one SQL query).
* :func:`current_judgements`: the latest judgement per assessor and pair ("can't
  judge" included), for routing and progress.
* :func:`settle_adjudicated`: qrels with the reviewed label for each conflict.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import polars as pl

from ...errors import LabelConflictError, format_rows

__all__ = ["EVENTS_SCHEMA", "active_leases", "columns_frame", "current_judgements",
           "events_frame", "latest_labels",
           "parse_time", "settle_adjudicated"]

EVENTS_SCHEMA = {"id": pl.Int64, "kind": pl.String, "query_id": pl.String, "doc_id": pl.String,
                 "assessor": pl.String, "label": pl.Int64, "note": pl.String, "time": pl.String,
                 "seconds": pl.Float64}
KEY = ["query_id", "doc_id"]


def parse_time(col: str = "time") -> pl.Expr:
    """The stored ISO 8601 UTC text as a UTC datetime."""
    return pl.col(col).str.to_datetime("%Y-%m-%dT%H:%M:%S%.fZ", time_zone="UTC", strict=False)


def events_frame(backend: Any, kinds: Sequence[str] | None = None,
                 query_ids: Sequence[str] | None = None) -> pl.DataFrame:
    """The events (``kinds`` only, of ``query_ids`` only, when given), oldest first."""
    cols = ", ".join(EVENTS_SCHEMA)
    where: list[str] = []
    params: list[str] = []
    for col, values in (("kind", kinds), ("query_id", query_ids)):
        if values:
            where.append(f"{col} IN ({', '.join('?' for _ in values)})")
            params.extend(values)
    cond = f" WHERE {' AND '.join(where)}" if where else ""
    rows = backend.query(f"SELECT {cols} FROM events{cond} ORDER BY id", tuple(params))
    return columns_frame(rows, EVENTS_SCHEMA).with_columns(parse_time())


def columns_frame(rows: list[tuple[Any, ...]], schema: dict[str, Any]) -> pl.DataFrame:
    """Rows from a cursor as a frame, built column by column (faster than by rows)."""
    if not rows:
        return pl.DataFrame(schema=schema)
    cols = list(zip(*rows, strict=True))
    return pl.DataFrame([pl.Series(name, col, dtype=dtype)
                         for (name, dtype), col in zip(schema.items(), cols, strict=True)])


_LATEST = (
    "SELECT query_id, doc_id, assessor, label, time FROM events WHERE id IN "
    "(SELECT max(id) FROM events WHERE kind IN ('label', 'retract', 'cant_judge') "
    "GROUP BY query_id, doc_id, assessor) AND kind = 'label' ORDER BY id"
)
_LABELS = {"query_id": pl.String, "doc_id": pl.String, "assessor": pl.String,
           "label": pl.Int64, "time": pl.String}


def latest_labels(backend: Any, *, with_time: bool = True) -> pl.DataFrame:
    """``query_id, doc_id, assessor, label, time``: each assessor's current labels
    (``time`` left as text when not ``with_time``)."""
    df = columns_frame(backend.query(_LATEST), _LABELS)
    return df.with_columns(parse_time()) if with_time else df


def current_judgements(events: pl.DataFrame) -> pl.DataFrame:
    """The latest judgement event per (assessor, pair), retractions dropped:
    ``query_id, doc_id, assessor, kind, label, time, seconds``."""
    return (events.sort("id").group_by(["assessor", *KEY], maintain_order=True).last()
            .filter(pl.col("kind") != "retract")
            .select(*KEY, "assessor", "kind", "label", "time", "seconds"))


def active_leases(events: pl.DataFrame, seconds: float) -> pl.DataFrame:
    """The pair on each team member's screen: their latest lease, if it is less than
    ``seconds`` old and they have not judged that pair since (``query_id, doc_id,
    assessor``). ``events``: leases and judgements. Showing another pair (the next one, a
    skip) releases the previous one."""
    cutoff = pl.lit(datetime.now(UTC) - timedelta(seconds=seconds))
    ev = events.sort("id")
    newest = ev.filter(pl.col("kind") == "lease").group_by("assessor").agg(
        pl.col("id").max().alias("_lease"))
    return (ev.group_by(["assessor", *KEY], maintain_order=True).last()
            .join(newest, on="assessor", how="inner")
            .filter((pl.col("kind") == "lease") & (pl.col("id") == pl.col("_lease"))
                    & (pl.col("time") > cutoff))
            .select(*KEY, "assessor"))


def settle_adjudicated(long: pl.DataFrame, adjudications: pl.DataFrame) -> pl.DataFrame:
    """Qrels: the latest adjudicated label of a pair, else the label all its assessors
    agree on; a conflict without an adjudication is a :class:`LabelConflictError`."""
    adj = (adjudications.sort("id").group_by(KEY, maintain_order=True)
           .agg(pl.col("label").last().alias("_adj")))
    stats = long.group_by(KEY, maintain_order=True).agg(
        pl.col("label").n_unique().alias("_n"), pl.col("label").first().alias("_first"))
    joined = stats.join(adj, on=KEY, how="left")
    open_ = joined.filter((pl.col("_n") > 1) & pl.col("_adj").is_null())
    if open_.height:
        wide = (long.join(open_.select(KEY), on=KEY, how="semi")
                .pivot(on="assessor", index=KEY, values="label").sort(KEY))
        raise LabelConflictError(
            f"policy='adjudicated': {open_.height} conflicting pair(s) have no adjudicated "
            f"label yet:\n{format_rows(wide)}\nReview them (label_widget(pool, store=store, "
            "mode='review')) or store.adjudicate(query_id, doc_id, label), or use another "
            "policy ('majority', 'max', 'min', 'prefer')."
        )
    agreed = joined.select(*KEY, pl.coalesce("_adj", "_first").alias("relevance"))
    extra = adj.join(stats.select(KEY), on=KEY, how="anti").select(
        *KEY, pl.col("_adj").alias("relevance"))
    return pl.concat([agreed, extra]).with_columns(pl.col("relevance").cast(pl.Int64))
