"""``sef.spark.evaluate``: the package's evaluation on Spark DataFrames.

The run and the qrels are split by a hash of the query id into ``partitions``
groups; each group's rows of both are handed to the package's own polars code
(:func:`.partitions.evaluate_part`) with ``groupBy(...).cogroup(...).applyInArrow``,
so every per-query value is the in-memory one. The per-query values are
materialised (``localCheckpoint``), so an error in any group (a duplicate, a NaN
score) is raised here as the usual :class:`~searcheval_frames.errors.SearchEvalError`
and never leaves a partial table; the means (sums for counts, geometric mean for
GMAP) are computed by Spark from them.

pyspark is imported only when :func:`evaluate` runs (install ``searcheval_frames[spark]``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal

import polars as pl

from .. import errors as _errors
from ..core.partitioned import ROWS_PER_PART
from ..core.results import MIN_GEO_MEAN
from ..errors import SearchEvalError
from ..frames import DEFAULT_RUN_NAME
from ..measures import Measure
from ..options import validate_params
from .partitions import SCALE_RULES, Options, evaluate_part, plan, resolve
from .spark_session import local_session

__all__ = ["evaluate", "local_session"]




@validate_params("spark.evaluate", SCALE_RULES)
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
    """Evaluate a Spark run against Spark qrels, as :func:`searcheval_frames.evaluate` does.

    Parameters
    ----------
    run, qrels
        ``pyspark.sql.DataFrame`` with the columns :func:`searcheval_frames.evaluate`
        recognises (``query_id``/``qid``, ``doc_id``/``docno``, ``score``, optional
        ``run``; ``relevance``/``label`` for the qrels, and ``subtopic`` for diversity
        measures such as alpha-nDCG), or ``columns=``.
    measures, per_query, relevance_level, missing, depth, judged_only, compat, columns, names
        As in :func:`searcheval_frames.evaluate` (same names, same semantics).
    partitions
        Number of query-id groups; default: twice Spark's default parallelism, or
        more so that a group holds about ``core.partitioned.ROWS_PER_PART`` rows.

    Returns
    -------
    pyspark.sql.DataFrame
        ``run, query_id, measure, value`` per query, or ``run, measure, value``;
        ordered as :func:`searcheval_frames.evaluate` orders them.

    Examples
    --------
    >>> import searcheval_frames as sef                       # doctest: +SKIP
    >>> res = sef.spark.evaluate(run_sdf, qrels_sdf, ["P@10", "nDCG@10", "AP"])  # doctest: +SKIP
    >>> res.show()                                            # doctest: +SKIP
    """
    # the options first: a wrong one fails before pyspark or dask is looked for
    opts = Options("spark.evaluate", measures, per_query=per_query,
                   relevance_level=relevance_level, missing=missing, depth=depth,
                   judged_only=judged_only, compat=compat, columns=columns, names=names,
                   partitions=partitions)
    from ..optional import require

    F = require("pyspark.sql.functions", "sef.spark.evaluate")

    run_cols, qrels_cols = resolve((run.columns, qrels.columns), opts)
    run_types = dict(run.dtypes)
    q_id = _id(F, run_cols["query_id"], run_types[run_cols["query_id"]])
    run_name = (_id(F, run_cols["run"], run_types[run_cols["run"]]) if "run" in run_cols
                else F.lit(DEFAULT_RUN_NAME))
    qrels_types = dict(qrels.dtypes)
    qrels_q = _id(F, qrels_cols["query_id"], qrels_types[qrels_cols["query_id"]])

    # the whole run's (run, query) pairs, in order of first appearance: checks, warnings
    pairs_sdf = (run.select(run_name.alias("run"), q_id.alias("query_id"))
                 .withColumn("_i", F.monotonically_increasing_id())
                 .groupBy("run", "query_id").agg(F.min("_i").alias("_i"),
                                                 F.count(F.lit(1)).alias("_n")))
    pairs = _to_polars(pairs_sdf).sort("_i")
    qrels_ids = _to_polars(qrels.select(qrels_q.alias("query_id")).distinct())
    runs = plan(pairs.select("run", "query_id"), qrels_ids.drop_nulls(), opts.missing)

    spark = run.sparkSession
    n_parts = opts.partitions or max(2 * spark.sparkContext.defaultParallelism,
                                     math.ceil(int(pairs["_n"].sum()) / ROWS_PER_PART))
    names_ = opts.measure_names
    cols = [f"_m{i}" for i in range(len(names_))]
    schema = ", ".join(["run string", "query_id string", *(f"{c} double" for c in cols)])

    def one_group(run_tbl: Any, qrels_tbl: Any) -> Any:
        import pyarrow as pa

        wide = evaluate_part(run_tbl.drop_columns(["_p"]), qrels_tbl.drop_columns(["_p"]),
                             runs, opts)
        out = pa.schema([("run", pa.string()), ("query_id", pa.string()),
                         *((c, pa.float64()) for c in cols)])
        return wide.rename(dict(zip(names_, cols, strict=True))).to_arrow().cast(out)

    key = F.pmod(F.hash(q_id), F.lit(n_parts)).alias("_p")
    key_q = F.pmod(F.hash(qrels_q), F.lit(n_parts)).alias("_p")
    per_q = (run.select("*", key).groupBy("_p")
             .cogroup(qrels.select("*", key_q).groupBy("_p"))
             .applyInArrow(one_group, schema=schema))
    try:
        per_q = per_q.localCheckpoint(eager=True)
    except Exception as exc:  # an error in a worker: raise it as the package's error
        raise _worker_error(exc) from None
    return _long_result(F, per_q, runs, cols, opts)


def _long_result(F: Any, per_q: Any, runs: list[str], cols: list[str], opts: Options) -> Any:
    """The long result from the per-query values ``per_q`` (one column per measure,
    ``cols``): per query, or aggregated per run by Spark; ordered as in memory."""
    names = opts.measure_names
    if opts.given:  # names="as_given": a row under each spelling
        label_rows = [(cols[names.index(c)], g, k) for k, (c, g) in enumerate(opts.given)]
    else:
        label_rows = [(c, m, k) for k, (c, m) in enumerate(zip(cols, names, strict=True))]
    spark = per_q.sparkSession
    order = spark.createDataFrame([(r, i) for i, r in enumerate(runs)], "run string, _r long")
    labels = spark.createDataFrame(label_rows, "_c string, measure string, _k long")
    if opts.per_query:
        long = per_q.unpivot(["run", "query_id"], cols, "_c", "value")
        return (long.join(order, "run").join(labels, "_c")
                .orderBy("_r", "query_id", "_k").select("run", "query_id", "measure", "value"))
    ms = opts.measures
    aggs = []
    for m, c in zip(ms, cols, strict=True):
        v = F.col(c)
        if m.aggregate == "sum":
            e = F.sum(v)
        elif m.aggregate == "gmean":
            e = F.exp(F.avg(F.log(F.greatest(v, F.lit(MIN_GEO_MEAN)))))
        else:
            e = F.avg(v)
        aggs.append(e.cast("double").alias(c))
    per_run = per_q.groupBy("run").agg(*aggs)
    long = per_run.unpivot(["run"], cols, "_c", "value")
    return (long.join(order, "run").join(labels, "_c").orderBy("_r", "_k")
            .select("run", "measure", "value"))


def _id(F: Any, col: str, dtype: str) -> Any:
    """A column's ids as the canonical strings the polars code makes of them."""
    c = F.col(f"`{col}`")
    if dtype == "string":
        return c
    if dtype in ("float", "double") or dtype.startswith("decimal"):
        return c.cast("long").cast("string")
    return c.cast("string")


def _to_polars(sdf: Any) -> pl.DataFrame:
    table = sdf.toArrow()
    out = pl.from_arrow(table)
    assert isinstance(out, pl.DataFrame)
    return out


_ERROR_NAMES = sorted(
    (n for n in dir(_errors) if isinstance(getattr(_errors, n), type)
     and issubclass(getattr(_errors, n), SearchEvalError)), key=len, reverse=True)


def _worker_error(exc: Exception) -> Exception:
    """The package's error raised in a Spark worker, as that error (else ``exc``)."""
    text = str(exc)
    pattern = r"(?:searcheval_frames\.errors\.)?(" + "|".join(_ERROR_NAMES) + r"): "
    found = re.search(pattern, text)
    if not found:
        return exc
    msg = text[found.end():]
    # the worker's message ends where Spark's own report (JVM frames) begins
    msg = re.split(r"\n\s*(?:at |JVM stacktrace|\tat )", msg, maxsplit=1)[0].rstrip()
    cls = getattr(_errors, found.group(1))
    return cls(msg)
