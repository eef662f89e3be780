"""``sef.dask.evaluate``: the package's evaluation on Dask DataFrames.

The run is shuffled on its query id (every row of a query in one partition) and
each partition is evaluated by the package's own polars code
(:func:`.partitions.evaluate_part`) with ``map_partitions``, against the labels of
its queries; labelled queries that no run retrieved are evaluated the same way
on the client. The per-query values (one row per query and run: small) are
gathered and aggregated by the in-memory code
(:func:`searcheval_frames.core.evaluate.finish`), so every value is the
in-memory one. An error in any partition (a duplicate, a NaN score) is raised by
this call, as the usual :class:`~searcheval_frames.errors.SearchEvalError`.

dask is imported only when :func:`evaluate` runs (install ``searcheval_frames[dask]``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

import polars as pl

from ..core.results import as_given, finish
from ..frames import DEFAULT_RUN_NAME, qrels_frame
from ..measures import Measure
from ..options import validate_params
from .partitions import SCALE_RULES, Options, evaluate_part, plan, resolve

__all__ = ["evaluate"]


@validate_params("dask.evaluate", SCALE_RULES)
def evaluate(
    run: Any,
    qrels: Any,
    measures: str | Measure | Iterable[str | Measure],
    *,
    per_query: bool = False,
    relevance_level: int = 1,
    missing: Literal["zero", "skip"] = "zero",
    depth: int | None = None,
    judged_only: bool = False,
    compat: Literal["trec_eval-10", "trec_eval-9"] = "trec_eval-10",
    columns: Mapping[str, str] | None = None,
    names: Literal["canonical", "as_given"] = "canonical",
    partitions: int | None = None,
) -> Any:
    """Evaluate a Dask run against qrels, as :func:`searcheval_frames.evaluate` does.

    Parameters
    ----------
    run
        A ``dask.dataframe.DataFrame`` with the columns :func:`searcheval_frames.evaluate`
        recognises (or ``columns=``).
    qrels
        A Dask or pandas DataFrame of labels (labels are small: they are gathered);
        with a ``subtopic`` column (judgments per subtopic) for alpha-nDCG, as in memory.
    measures, per_query, relevance_level, missing, depth, judged_only, compat, columns, names
        As in :func:`searcheval_frames.evaluate` (same names, same semantics).
    partitions
        Partitions of the run after the shuffle on query id (default: as many as
        the run has).

    Returns
    -------
    dask.dataframe.DataFrame
        ``run, query_id, measure, value`` per query, or ``run, measure, value``
        (one partition, already computed), ordered as :func:`searcheval_frames.evaluate`.

    Examples
    --------
    >>> import searcheval_frames as sef                          # doctest: +SKIP
    >>> sef.dask.evaluate(run_ddf, qrels_ddf, ["P@10", "AP"]).compute()  # doctest: +SKIP
    """
    # the options first: a wrong one fails before pyspark or dask is looked for
    opts = Options("dask.evaluate", measures, per_query=per_query,
                   relevance_level=relevance_level, missing=missing, depth=depth,
                   judged_only=judged_only, compat=compat, columns=columns, names=names,
                   partitions=partitions)
    from ..optional import require

    dask = require("dask", "sef.dask.evaluate")
    dd = require("dask.dataframe", "sef.dask.evaluate")
    import pandas as pd

    qrels_cols = list(qrels.columns)
    run_cols, _ = resolve((list(run.columns), qrels_cols), opts)
    if hasattr(qrels, "compute"):
        qrels = qrels.compute()
    labels = qrels_frame(qrels, columns=opts.columns, subtopics=opts.subtopics)

    q_col = run_cols["query_id"]
    keyed = run.assign(_q=run[q_col].map_partitions(_canonical_ids, meta=(q_col, "object")))
    run_col = run_cols.get("run")
    pair_cols = ([run_col] if run_col else []) + ["_q"]
    pairs_pd = keyed[pair_cols].drop_duplicates(split_out=1).compute()
    pairs = pl.from_pandas(pairs_pd.reset_index(drop=True)).select(
        (pl.col(run_col).cast(pl.String) if run_col else pl.lit(DEFAULT_RUN_NAME)).alias("run"),
        pl.col("_q").alias("query_id"),
    )
    runs = plan(pairs, labels.select("query_id").unique(), opts.missing)

    names_ = opts.measure_names
    meta = pd.DataFrame({"run": pd.Series(dtype=object), "query_id": pd.Series(dtype=object),
                         **{n: pd.Series(dtype="float64") for n in names_}})
    shuffled = keyed.shuffle(on="_q", npartitions=opts.partitions or run.npartitions)
    part_values = shuffled.map_partitions(
        _one_partition, dask.delayed(labels.to_arrow()), runs, opts, meta=meta)
    wide = pl.from_pandas(part_values.compute().reset_index(drop=True))
    wide = wide.with_columns(pl.col("run", "query_id").cast(pl.String))
    # labelled queries no run retrieved: evaluated the same way, with no rows
    absent = labels.join(pairs.select("query_id").unique(), on="query_id", how="anti")
    if opts.missing == "zero" and absent.height:
        wide = pl.concat([wide, evaluate_part(pl.DataFrame(), absent, runs, opts,
                                              canonical_qrels=True)])
    order = pl.DataFrame({"run": runs}, schema={"run": pl.String})
    result = finish(wide, order, opts.measures, opts.per_query)
    if opts.given:  # names="as_given": a row under each spelling
        result = as_given(result, [g for _, g in opts.given])
    return dd.from_pandas(result.to_pandas(), npartitions=1)


def _canonical_ids(ids: Any) -> Any:
    """Ids as the strings the polars code makes of them (pandas in, pandas out)."""
    s = pl.from_pandas(ids)
    assert isinstance(s, pl.Series)
    if s.dtype.is_float():
        s = s.cast(pl.Int64, strict=False)
    return s.cast(pl.String, strict=False).to_pandas().astype(object).set_axis(ids.index)


def _one_partition(part: Any, labels: Any, runs: list[str], opts: Options) -> Any:
    """One shuffled partition of the run, evaluated against its queries' labels."""
    import pandas as pd

    qids = pl.Series("query_id", part["_q"].to_numpy(), dtype=pl.String).unique()
    table = pl.from_arrow(labels)
    assert isinstance(table, pl.DataFrame)
    mine = table.filter(pl.col("query_id").is_in(qids.implode()))
    wide = evaluate_part(part.drop(columns="_q"), mine, runs, opts, canonical_qrels=True)
    out = wide.to_pandas()
    return out if out.shape[0] else pd.DataFrame({c: out[c] for c in out.columns})
