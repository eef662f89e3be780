"""One part of the queries, evaluated by the in-memory code: what Spark and Dask run.

A part holds every row of some queries (of every run) and their labels, as raw
Arrow/pandas/polars tables with the user's column names. :func:`evaluate_part`
turns them into canonical frames with the in-memory checks (a duplicate or a NaN
score raises the usual error naming the rows) and returns the wide per-query
values of :func:`searcheval_frames.core.evaluate.per_query_values`. The drivers
check and warn about the whole run once (:func:`plan`), and aggregate the
concatenated values as in memory.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from .._deprecation import outside_stacklevel
from ..core._inputs import by_subtopic
from ..core.evaluate import per_query_values
from ..core.plan import query_table
from ..core.results import spellings
from ..frames import DEFAULT_RUN_NAME, QRELS_COLUMNS, qrels_frame, resolve_columns, run_frame_blocks
from ..measures import Measure, parse_measures
from ..measures.custom import install_definitions, ship_definitions
from ..options import EvalOptions, Instance, Int, Rule

__all__ = ["SCALE_RULES", "Options", "evaluate_part", "plan", "resolve"]

#: The options ``sef.spark.evaluate`` and ``sef.dask.evaluate`` have besides the
#: evaluation's own (:class:`~searcheval_frames.options.EvalOptions`).
SCALE_RULES: dict[str, Rule] = {
    "columns": Instance((Mapping,), "must be a dict of canonical name -> your column",
                        "columns={'query_id': 'topic'}"),
    "partitions": Int(minimum=1, optional=True, what="query-id groups of the run",
                      example="partitions=64"),
}

RUN_FIX = "Rename the column or pass columns={'query_id': ..., 'doc_id': ..., 'score': ...}."
QRELS_FIX = "Rename the column or pass columns={'query_id': ..., 'doc_id': ..., 'relevance': ...}."

_EMPTY_RUN = {"run": pl.String, "query_id": pl.String, "doc_id": pl.String, "score": pl.Float64}
_EMPTY_QRELS = {"query_id": pl.String, "doc_id": pl.String, "relevance": pl.Int64}


class Options:
    """The checked options of one evaluation, picklable for the workers.

    Measures travel as their canonical names and are parsed again in each worker.
    """

    def __init__(self, func: str, measures: Any, *, columns: Mapping[str, str] | None = None,
                 partitions: int | None = None, **options: Any) -> None:
        #: the evaluation's options, checked as they are built (the one options type)
        self.eval = EvalOptions(func=func, **options)
        names = self.eval.names
        ms = parse_measures(measures, duplicates="drop" if names == "as_given" else "error")
        self.per_query = self.eval.per_query
        self.partitions = partitions
        self.measure_names = [m.name for m in ms]
        # custom measures (@sef.measure) travel with the options and register in a worker
        self.custom = ship_definitions(ms)
        # a diversity measure (alpha-nDCG) reads the qrels' subtopic column, as in memory
        self.subtopics = any(by_subtopic(m) for m in ms)
        # (canonical name, spelling) per requested measure: names="as_given" labels the
        # results with the caller's spellings, a row under each (as in memory)
        self.given = spellings(measures) if names == "as_given" else None
        self.missing = self.eval.missing
        self.columns = dict(columns) if columns else None
        self.values: dict[str, Any] = self.eval.measuring

    @property
    def measures(self) -> list[Measure]:
        install_definitions(self.custom)
        return parse_measures(self.measure_names)

    @property
    def empty_qrels(self) -> pl.DataFrame:
        """The canonical qrels of a part without labels."""
        extra = {"subtopic": pl.String} if self.subtopics else {}
        return pl.DataFrame(schema={**_EMPTY_QRELS, **extra})


def resolve(
    names: tuple[Sequence[str], Sequence[str]], opts: Options
) -> tuple[dict[str, str], dict[str, str]]:
    """The run's and the qrels' column for each canonical name (errors as in memory).

    The qrels' ``subtopic`` column is looked for only when a diversity measure is
    asked for; without one, such a measure raises the in-memory error here, before
    any work on the cluster.
    """
    columns = opts.columns
    def found(cols: Sequence[str], wanted: tuple[str, ...], optional: tuple[str, ...],
              arg: str, fix: str) -> dict[str, str]:
        return resolve_columns(pl.DataFrame(schema=dict.fromkeys(cols, pl.String)),
                                wanted, optional, columns, arg, fix)

    run_cols, qrels_cols = names
    run = found(run_cols, ("query_id", "doc_id"), ("score", "rank", "run"), "run", RUN_FIX)
    if "score" not in run and "rank" not in run:
        run = found(run_cols, ("query_id", "doc_id", "score"), ("run",), "run", RUN_FIX)
    qrels = found(qrels_cols, ("query_id", "doc_id", "relevance"),
                  ("subtopic",) if opts.subtopics else (), "qrels", QRELS_FIX)
    if opts.subtopics:  # the canonical columns the in-memory check would see
        canonical = pl.DataFrame(schema={c: pl.String for c in (*QRELS_COLUMNS, "subtopic")
                                         if c in qrels})
        for m in opts.measures:
            if by_subtopic(m):
                m.definition.check_qrels(m, canonical)
    return run, qrels


def plan(pairs: pl.DataFrame, qrels_ids: pl.DataFrame, missing: str) -> list[str]:
    """Check the whole run and warn as in memory; return the run names in order.

    ``pairs``: every (run, query_id) of the run as canonical strings, in order of
    first appearance; ``qrels_ids``: the labelled query ids (``query_id``).
    """
    pairs = pairs.drop_nulls()  # rows with missing ids fail in their part, naming them
    runs = pairs.get_column("run").unique(maintain_order=True).to_list()
    run_order = pl.DataFrame({"run": runs}, schema={"run": pl.String})
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        query_table(pairs, run_order, qrels_ids, missing)
    for w in seen:
        warnings.warn(w.message, w.category, stacklevel=outside_stacklevel())
    return runs


def evaluate_part(run: Any, qrels: Any, runs: list[str], opts: Options, *,
                  canonical_qrels: bool = False) -> pl.DataFrame:
    """Wide per-query values of one part: ``run, query_id, <measure>...`` (Float64).

    ``run`` and ``qrels`` hold every row of the part's queries, with the user's
    columns (any frame :func:`searcheval_frames.run_frame` accepts); either may
    be empty (a part with labels only, or with unlabelled queries only).
    ``canonical_qrels``: ``qrels`` is already a canonical, checked polars frame.

    Examples
    --------
    >>> import polars as pl
    >>> opts = Options("demo", ["P@1"], per_query=True, relevance_level=1, missing="zero",
    ...                depth=None, judged_only=False, compat="trec_eval-10", columns=None,
    ...                names="canonical", partitions=None)
    >>> run = pl.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": ["1", "2"], "doc_id": ["a", "x"], "relevance": [1, 1]})
    >>> evaluate_part(run, qrels, ["run"], opts).rows()
    [('run', '1', 1.0), ('run', '2', 0.0)]
    """
    run_df: Any = pl.from_arrow(run) if _is_arrow(run) else run
    qrels_df: Any = pl.from_arrow(qrels) if _is_arrow(qrels) else qrels
    if _height(run_df):
        run_df, blocks = run_frame_blocks(run_df, columns=opts.columns, name=DEFAULT_RUN_NAME)
    else:
        run_df, blocks = pl.DataFrame(schema=_EMPTY_RUN), None
    if canonical_qrels:
        pass
    elif _height(qrels_df):
        qrels_df = qrels_frame(qrels_df, columns=opts.columns, subtopics=opts.subtopics)
    else:
        qrels_df = opts.empty_qrels
    return per_query_values(run_df, qrels_df, opts.measures, runs=runs, missing=opts.missing,
                            blocks=blocks, **opts.values)


def _is_arrow(obj: Any) -> bool:
    return type(obj).__module__.split(".")[0] == "pyarrow"


def _height(obj: Any) -> int:
    return obj.height if isinstance(obj, pl.DataFrame) else len(obj)
