"""From wide per-query values to the long result: means, labels, pivot.

``finish`` aggregates per run (mean; sums for counts; geometric mean for GMAP) in one
fixed order of queries, so values computed in parts (out of core, Spark, Dask) sum to
the same last bit; ``as_given`` labels rows with the caller's spellings; ``pivot``
turns the long result into the table people read.
"""

from __future__ import annotations

from typing import Any, Literal

import polars as pl

from ..errors import MissingColumnError
from ..frames import input_kind, to_native, to_polars
from ..measures import Measure, parse_measures
from ..options import check_choice

KEYS = ["run", "query_id"]
MIN_GEO_MEAN = 1e-5


def spellings(measures: Any) -> list[tuple[str, str]]:
    """``(canonical name, the caller's spelling)`` per requested measure, in order."""
    items = [measures] if isinstance(measures, str | Measure) else list(measures)
    return [(parse_measures(i)[0].name, i if isinstance(i, str) else i.name) for i in items]


def as_given(result: pl.DataFrame, measures: Any) -> pl.DataFrame:
    """Rows labelled with the caller's spellings; a measure asked twice appears twice.

    ``result`` holds one row per distinct measure for each run (or run and query), in
    blocks; within a block rows follow the order in which the caller named them.
    """
    pairs = spellings(measures)
    n_distinct = len(dict.fromkeys(c for c, _ in pairs))
    given = pl.DataFrame(
        {"measure": [c for c, _ in pairs], "_given": [g for _, g in pairs]},
        schema={"measure": pl.String, "_given": pl.String},
    ).with_row_index("_k")
    return (
        result.with_row_index("_row")
        .with_columns((pl.col("_row") // n_distinct).alias("_block"))
        .join(given, on="measure", how="inner")
        .sort("_block", "_k")
        .drop("_block")
        .with_columns(pl.col("_given").alias("measure"))
        .drop("_row", "_k", "_given")
    )


def finish(
    wide: pl.DataFrame, run_order: pl.DataFrame, measures: list[Measure], per_query: bool
) -> pl.DataFrame:
    """The long result from wide per-query values: per query, or aggregated per run."""
    order = run_order.with_row_index("_r")
    # queries in one order, however the values were computed (in parts or not), so
    # that means are summed in the same order and agree to the last bit
    wide = wide.join(order, on="run").sort(["_r", "query_id"]).drop("_r")
    if per_query:
        return _long(wide, KEYS)
    # one row per run: mean over queries (sums for counts, geometric mean for GMAP)
    means = []
    for m in measures:
        v = pl.col(m.name)
        if m.aggregate == "sum":
            e = v.sum()
        elif m.aggregate == "gmean":
            e = v.clip(lower_bound=MIN_GEO_MEAN).log().mean().exp()
        else:
            e = v.mean()
        means.append(e.cast(pl.Float64).alias(m.name))
    per_run = (wide.group_by("run", maintain_order=True).agg(means)
               .join(order, on="run").sort("_r").drop("_r"))
    return _long(per_run, ["run"])


def summarize(per_query: pl.DataFrame) -> pl.DataFrame:
    """``run, measure, value`` from evaluate's long per-query result, aggregated by
    :func:`finish` exactly as :func:`~searcheval_frames.evaluate` aggregates.

    For callers that need both tables: evaluate once per query, summarize it.
    """
    names = per_query.get_column("measure").unique(maintain_order=True).to_list()
    wide = per_query.pivot(on="measure", index=["run", "query_id"], values="value",
                           maintain_order=True)
    order = per_query.select("run").unique(maintain_order=True)
    return finish(wide, order, [parse_measures(n)[0] for n in names], per_query=False)


def _long(rows: pl.DataFrame, index: list[str]) -> pl.DataFrame:
    """One row per (row of ``rows``, measure column), rows in order, measures in order."""
    return (
        rows.unpivot(index=index, variable_name="measure", value_name="value")
        .with_row_index("_i")
        # unpivot lists measure after measure; interleave them back per row
        .with_columns((pl.col("_i") % max(rows.height, 1)).alias("_q"))
        .sort("_q", maintain_order=True)
        .select(*index, "measure", "value")
    )


def pivot(result: Any, index: Literal["run", "measure"] = "run") -> Any:
    """Pivot a long result to the wide table people read.

    Parameters
    ----------
    result
        Output of :func:`evaluate` (aggregate or per query).
    index
        ``"run"``: one row per run (per run and query for per-query results),
        one column per measure; ``"measure"``: one row per measure, one column
        per run.

    Examples
    --------
    >>> import searcheval_frames as sef
    >>> res = sef.evaluate({"q": {"a": 2.0, "b": 1.0}}, {"q": {"b": 1}}, ["P@1", "RR"])
    >>> sef.pivot(res).columns
    ['run', 'P@1', 'RR']
    """
    check_choice("pivot", "index", index, ("run", "measure"), example="index='measure'")
    kind = input_kind(result)
    df = to_polars(result, "result")
    missing_cols = {"run", "measure", "value"} - set(df.columns)
    if missing_cols:
        raise MissingColumnError(
            f"pivot: expected the long output of evaluate() with columns run, measure, value; "
            f"missing {sorted(missing_cols)}"
        )
    rows = ["run"] + (["query_id"] if "query_id" in df.columns else [])
    if index == "run":
        wide = df.pivot(on="measure", index=rows, values="value", maintain_order=True)
    else:
        other = ["measure"] + (["query_id"] if "query_id" in df.columns else [])
        wide = df.pivot(on="run", index=other, values="value", maintain_order=True)
    return to_native(wide, kind)
