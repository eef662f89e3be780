"""The per-query values of a structured comparison: runs with extra columns, evaluated.

A *structured* input is the package's long format with one or two extra columns
declared by name: ``replicate="seed"`` (a column of the runs naming the seed or repeat
of each system's run) and ``dataset="collection"`` (a column of the runs **and** the
qrels naming the query set; query ids may repeat across datasets, so a query is the
pair ``(dataset, query_id)``). :func:`structured_values` turns either input kind into
one polars frame ``run, [dataset], [replicate], query_id, measure, value``:

* runs + qrels: each (dataset, replicate) part of the runs is evaluated by
  :func:`~searcheval_frames.evaluate` against the qrels of its dataset (a loop over the
  few parts, each one vectorised);
* ``per_query=``: the frame is checked (columns, finite values, one row per key).

>>> import polars as pl
>>> run = pl.DataFrame({"run": "a", "seed": [1, 1, 2, 2], "query_id": ["q1", "q1"] * 2,
...                     "doc_id": ["d1", "d2", "d2", "d1"], "score": [2.0, 1.0] * 2})
>>> qrels = pl.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "relevance": [1]})
>>> structured_values(run, qrels, ["RR"], replicate="seed").rows()
[('a', '1', 'q1', 'RR', 1.0), ('a', '2', 'q1', 'RR', 0.5)]
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import polars as pl

from ..._deprecation import outside_stacklevel
from ...core.evaluate import check_evaluate_options, evaluate
from ...errors import (
    DuplicateRowsError,
    EmptyInputError,
    IdMismatchError,
    InvalidOptionError,
    InvalidScoreError,
    MissingColumnError,
    SearchEvalWarning,
    format_rows,
)
from ...frames import is_path, to_polars

__all__ = ["complete_grid", "evaluate_datasets", "structured_values"]

_PQ = ("run", "query_id", "measure", "value")


def _frame(obj: Any, arg: str, func: str) -> pl.DataFrame:
    if is_path(obj) or obj is None:
        raise InvalidOptionError(
            f"{func}({arg}=...): a structured comparison needs {arg} as a dataframe that "
            f"holds the extra column; got {type(obj).__name__}. Example: "
            f"{arg}=pl.read_csv('data/structured/runs.csv')")
    return to_polars(obj, arg)


def _need(df: pl.DataFrame, col: str, arg: str, option: str, func: str) -> None:
    if col not in df.columns:
        raise MissingColumnError(
            f"{func}({option}={col!r}): {arg} has no column {col!r} (its columns: "
            f"{', '.join(df.columns)}); name the column that holds the {option}, e.g. "
            f"{option}={df.columns[-1]!r}")


def _extras(replicate: str | None, dataset: str | None) -> list[str]:
    return [c for c in (dataset, replicate) if c is not None]


def structured_values(runs: Any, qrels: Any, measures: Any, *, per_query: Any = None,
                      replicate: str | None = None, dataset: str | None = None,
                      func: str = "compare", own: Any = None,
                      **evaluate_options: Any) -> pl.DataFrame:
    """``run, [dataset], [replicate], query_id, measure, value`` (extra columns as
    strings) from runs + qrels or from ``per_query=`` (see the module doc)."""
    extras = _extras(replicate, dataset)
    check_evaluate_options(func, evaluate_options, own=own)
    if per_query is not None:
        if runs is not None or qrels is not None:
            raise InvalidOptionError(
                f"{func}: per-query values given with runs/qrels; pass one of them, e.g. "
                f"{func}(per_query=pq, baseline='bm25', ...)")
        declared = {c: f"{o}={c!r}" for o, c in (("replicate", replicate),
                                                  ("dataset", dataset)) if c is not None}
        return _checked_per_query(_frame(per_query, "per_query", func), extras, func,
                                  declared)
    if runs is None or qrels is None:
        raise InvalidOptionError(
            f"{func}(runs=..., qrels=...): needs runs and qrels (or per_query=); got "
            f"runs={type(runs).__name__}, qrels={type(qrels).__name__}. Example: "
            f"{func}(runs, qrels, ['nDCG@10'], baseline='bm25', replicate='seed')")
    run_df, qrels_df = _frame(runs, "runs", func), _frame(qrels, "qrels", func)
    for col in extras:
        _need(run_df, col, "runs", "replicate" if col == replicate else "dataset", func)
    if dataset is not None:
        _need(qrels_df, dataset, "qrels", "dataset", func)
    cast = [pl.col(c).cast(pl.String) for c in extras]
    run_df = run_df.with_columns(cast)
    if dataset is not None:
        qrels_df = qrels_df.with_columns(pl.col(dataset).cast(pl.String))
    parts = []
    for key, part in run_df.partition_by(extras, as_dict=True, maintain_order=True).items():
        q = qrels_df.filter(pl.col(dataset) == key[0]).drop(dataset) if dataset else qrels_df
        if q.height == 0:
            raise IdMismatchError(
                f"{func}(dataset={dataset!r}): the runs have dataset {key[0]!r} but the qrels "
                "have no labels for it; give the qrels the same dataset column")
        pq = to_polars(evaluate(part.drop(extras), q, measures, per_query=True,
                                **evaluate_options), "evaluate")
        parts.append(pq.with_columns(*(pl.lit(v, pl.String).alias(c)
                                       for c, v in zip(extras, key, strict=True))))
    return pl.concat(parts).select("run", *extras, "query_id", "measure", "value")


def _checked_per_query(df: pl.DataFrame, extras: list[str], func: str,
                       declared: dict[str, str]) -> pl.DataFrame:
    missing = [c for c in (*_PQ, *extras) if c not in df.columns]
    if missing:
        how = "; ".join(f"{declared[c]} names a column it lacks" for c in missing
                        if c in declared)
        raise MissingColumnError(
            f"{func}(per_query=...): no column {', '.join(map(repr, missing))} (columns: "
            f"{', '.join(df.columns)}){'; ' + how if how else ''}. The per-query frame needs "
            "run, query_id, measure, value and the declared extra columns")
    keys = ["run", *extras, "query_id", "measure"]
    df = df.select(*(pl.col(c).cast(pl.String) for c in keys),
                   pl.col("value").cast(pl.Float64, strict=False))
    if df.height == 0:
        raise EmptyInputError(f"{func}(per_query=...): the frame has no rows")
    bad = df.filter(pl.col("value").is_null() | ~pl.col("value").is_finite())
    if bad.height:
        raise InvalidScoreError(
            f"{func}(per_query=...): {bad.height} value(s) are null, NaN or infinite:\n"
            f"{format_rows(bad)}\nDrop or fill those rows first.")
    dup = df.filter(pl.struct(keys).is_duplicated())
    if dup.height:
        raise DuplicateRowsError(
            f"{func}(per_query=...): {dup.height} rows repeat the same ({', '.join(keys)}):\n"
            f"{format_rows(dup.sort(keys))}\nOne value per key; aggregate first.")
    return df.select("run", *extras, "query_id", "measure", "value")


def complete_grid(pq: pl.DataFrame, cells: Sequence[str], missing: str,
                  func: str) -> pl.DataFrame:
    """Every ``cells`` combination (e.g. run x replicate) on every query of its dataset
    and measure: absent values score 0 (``missing="zero"``, warned) or their query is
    dropped everywhere (``"skip"``), or an error names them (``"error"``)."""
    qcols = [c for c in pq.columns if c not in (*cells, "value")]
    grid = pq.select(qcols).unique(maintain_order=True).join(
        pq.select(cells).unique(maintain_order=True), how="cross")
    full = grid.join(pq, on=[*qcols, *cells], how="left", nulls_equal=True)
    gaps = full.filter(pl.col("value").is_null())
    if gaps.height == 0:
        return full.select(pq.columns)
    if missing == "error":
        raise IdMismatchError(
            f"{func}: {gaps.height} value(s) missing for a query other runs have:\n"
            f"{format_rows(gaps.drop('value'))}\nPass missing='zero' or missing='skip'.")
    warnings.warn(
        f"{func}: {gaps.height} value(s) missing for queries other runs have (e.g. "
        f"{gaps.row(0, named=True)}); missing={missing!r} "
        + ("scores them 0." if missing == "zero" else "drops those queries everywhere."),
        SearchEvalWarning, stacklevel=outside_stacklevel())
    if missing == "zero":
        return full.with_columns(pl.col("value").fill_null(0.0)).select(pq.columns)
    return full.join(gaps.select(qcols).unique(), on=qcols, how="anti").select(pq.columns)


def evaluate_datasets(runs: Any, qrels: Any, measures: Any, *, dataset: str,
                      per_query: bool = False, **evaluate_options: Any) -> Any:
    """Evaluate runs on several datasets at once: ``run, <dataset>, measure, n_queries,
    value`` (or per query with ``per_query=True``), in the caller's frame kind.

    Each dataset's runs are evaluated against that dataset's qrels only, so a query id
    that two datasets share stays two queries. The value of a dataset equals
    :func:`~searcheval_frames.evaluate` on the runs and qrels filtered to it.

    Parameters
    ----------
    runs, qrels
        Frames holding the ``dataset`` column (both).
    measures
        Measure names, as for :func:`~searcheval_frames.evaluate`.
    dataset
        The column naming the dataset (query set, collection).
    per_query
        One row per (run, dataset, query, measure) instead of the dataset means.
    **evaluate_options
        Passed to :func:`~searcheval_frames.evaluate` (``relevance_level=2`` ...).

    Examples
    --------
    >>> import polars as pl, searcheval_frames as sef
    >>> run = pl.DataFrame({"ds": ["a", "b"], "query_id": "q1", "doc_id": "d1",
    ...                     "score": 1.0})
    >>> qrels = pl.DataFrame({"ds": ["a", "b"], "query_id": "q1", "doc_id": "d1",
    ...                       "relevance": [1, 0]})
    >>> evaluate_datasets(run, qrels, "P@1", dataset="ds").rows()
    [('run', 'a', 'P@1', 1, 1.0), ('run', 'b', 'P@1', 1, 0.0)]
    """
    check_evaluate_options("evaluate_datasets", evaluate_options, own=evaluate_datasets)
    return evaluate(runs, qrels, measures, dataset=dataset, per_query=per_query,
                    **evaluate_options)
