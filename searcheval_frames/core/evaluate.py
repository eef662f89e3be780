"""Evaluate runs against qrels: one grouped pass over all runs and queries.

Semantics (trec_eval 10 unless ``compat="trec_eval-9"``), all in one place:

* **Order.** Within a query: score descending, ties by ``doc_id`` descending
  (byte order). The run's rank column is ignored. Scores are float64
  (trec_eval 10); ``compat="trec_eval-9"`` orders by float32 scores as
  trec_eval 9 and pytrec_eval do, and uses trec_eval 9's interpolated-precision
  cut-off ``(long)(r*R + 0.9)`` instead of ``lround(r*R)``.
* **Relevant** means label >= ``relevance_level`` (default 1, trec_eval ``-l``),
  per measure with ``rel=`` (``P(rel=2)@5``). Labels below 0 are "judged but
  unusable": never relevant, not counted as judged non-relevant by ``Bpref``,
  and counted as unjudged by ``Judged``/``Unjudged`` — as trec_eval does.
  nDCG uses the labels as gains and ignores the relevance level (trec_eval).
* **Queries.** A query counts when it has at least one label in the qrels.
  ``missing="zero"`` (default, trec_eval ``-c``): queries in the qrels that a
  run lacks score 0 (their ``NumRel`` is still counted) and are named in a
  warning. ``missing="skip"``: only queries in both (trec_eval's default).
  Queries only in the run are dropped with a warning.
* **Depth and judged-only.** ``depth=k`` keeps the top k documents (``-M``);
  ``judged_only=True`` (``-J``) removes unjudged documents before measuring.
* **Aggregation.** Mean over queries; sums for ``NumQ``, ``NumRet``, ``NumRel``,
  ``NumRelRet``; geometric mean (floored at 1e-5) for ``GMAP``.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from typing import Any, Literal

import polars as pl

from .._deprecation import outside_stacklevel
from ..frames import Blocks, input_kind, to_native, to_polars
from ..frames.hazards import plan_failed
from ..measures import Context, Measure, parse_measures
from ..measures.ndcg import gain_expr
from ..optional import require
from ..options import EvalOptions, check_known, option_error
from ._inputs import by_subtopic, flat_qrels, qrels_from, run_from, whole_frame
from .partitioned import RunScan, part_table, scan_run
from .plan import query_plan, query_table
from .ranking import RankedJudged, Strategy, rank_judged
from .results import as_given, finish, pivot
from .ties import given_order, tie_broken, with_bounds

__all__ = ["check_evaluate_options", "evaluate", "evaluate_frames", "finish", "per_query_values",
           "pivot"]

KEYS = ["run", "query_id"]


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
    strategy: Strategy = "auto",
    queries: Any = None,
    by: Any = None,
    ties: Literal["trec_eval", "given_order", "bounds"] = "trec_eval",
) -> Any:
    """Evaluate one or many runs against relevance labels.

    Parameters
    ----------
    run
        Ranked results: a long frame with query id, doc id and score columns
        (or the path of a run file, or a list of paths, read with :func:`read_run`)
        (``run`` names the system when one frame holds several), a dict
        ``{run_name: frame}``, or a pytrec_eval-style ``{qid: {docid: score}}``.
        pandas, polars (eager or lazy) and pyarrow are accepted.
    qrels
        Relevance labels: query id, doc id and an integer label (or a qrels file path).
    measures
        Names such as ``"P@5"``, ``"nDCG@10"``, ``"AP"``, ``"RR@10"``, trec_eval
        names (``"ndcg_cut_10"``) or :class:`~searcheval_frames.measures.Measure`.
    per_query
        Return one value per query instead of the aggregate.
    relevance_level
        Minimum label that counts as relevant (trec_eval ``-l``).
    missing
        ``"zero"``: queries in the qrels absent from a run score 0 (``-c``);
        ``"skip"``: evaluate only queries present in both.
    depth
        Keep only the top ``depth`` documents of each query (``-M``).
    judged_only
        Remove unjudged documents before measuring (``-J``).
    compat
        ``"trec_eval-10"`` (default) or ``"trec_eval-9"`` (= pytrec_eval).
    columns
        Canonical name → your column name for both frames, e.g.
        ``{"query_id": "topic", "relevance": "grade"}``.
    names
        ``"canonical"`` labels results with canonical names (``nDCG@10``);
        ``"as_given"`` keeps the spelling you passed (``ndcg_cut_10``).
    strategy
        Ranking strategy (see :mod:`searcheval_frames.core.ranking`); results are
        identical, only speed differs.
    queries, by
        Slices (:mod:`searcheval_frames.core.slicing`): ``by`` is a column of the
        query-metadata frame ``queries`` (``query_id`` plus attributes), a polars
        expression over it, or a list of them. The result then has the slice
        columns and ``n_queries``: ``run, <by>, measure, n_queries, value``, each
        value equal to evaluating the queries of that slice alone; with
        ``per_query=True`` each query row carries its slice.
    ties
        How documents with equal scores are ordered (:mod:`searcheval_frames.core.ties`):
        ``"trec_eval"`` (by ``doc_id`` descending, trec_eval's numbers), ``"given_order"``
        (the run's ``rank`` column, else its row order, as ranx) or ``"bounds"`` (adds
        the pessimistic and optimistic values over all orders of the ties: ``low``,
        ``high`` and ``tie_spread = high - low``).

    Returns
    -------
    DataFrame
        ``per_query=True``: ``run, query_id, measure, value``; otherwise
        ``run, measure, value``; with ``ties="bounds"`` also ``low, high, tie_spread``.
        Same kind as ``run`` (pandas in → pandas out).

    Examples
    --------
    >>> import pandas as pd
    >>> import searcheval_frames as sef
    >>> run = pd.DataFrame({"query_id": "q1", "doc_id": ["12", "78", "34", "90", "56"],
    ...                     "score": [5.0, 4.0, 3.0, 2.0, 1.0]})
    >>> qrels = pd.DataFrame({"query_id": "q1", "doc_id": ["12", "34", "56", "78", "90"],
    ...                       "relevance": [1, 1, 1, 0, 0]})
    >>> sef.evaluate(run, qrels, ["P@5", "R@3"]).round(2).to_dict("records")
    [{'run': 'run', 'measure': 'P@5', 'value': 0.6}, {'run': 'run', 'measure': 'R@3', 'value': 0.67}]
    """
    opts = EvalOptions(relevance_level=relevance_level, missing=missing, depth=depth,
                       compat=compat, names=names, judged_only=judged_only,
                       per_query=per_query, strategy=strategy, ties=ties)
    if by is not None or queries is not None:  # slices: per query, then per slice
        args = dict(locals())
        del args["opts"]
        return _evaluate_by(args)  # every option (a new one too) passes through
    kind = input_kind(run)
    # canonical names: two spellings of one measure would share a name, so they raise;
    # as given: each spelling comes back under its own name
    ms = parse_measures(measures, duplicates="drop" if names == "as_given" else "error")
    qrels_df = qrels_from(qrels, columns, subtopics=any(by_subtopic(m) for m in ms))
    options = opts.measuring
    try:
        scan = scan_run(run, columns) if ties == "trec_eval" else None  # (too big to collect)
    except pl.exceptions.PolarsError as exc:
        if not isinstance(run, pl.LazyFrame):
            raise
        raise plan_failed(exc, "run") from exc
    if ties != "trec_eval":
        run_df, _ = run_from(run, flat_qrels(qrels_df), columns)
        result = _evaluate_ties(run_df, qrels_df, ms, ties, per_query=per_query,
                                missing=missing, **options)
    elif scan is not None:
        result = _evaluate_parts(scan, qrels_df, ms, per_query=per_query, missing=missing,
                                 **options)
    else:
        run_df, blocks = run_from(run, flat_qrels(qrels_df), columns)
        result = evaluate_frames(run_df, qrels_df, ms, per_query=per_query, missing=missing,
                                 blocks=blocks, **options)
    if names == "as_given":
        result = as_given(result, measures)
    return to_native(result, kind)


def _evaluate_by(args: dict[str, Any]) -> Any:
    """:func:`evaluate` with ``by=`` (``args``: its arguments): the per-query values, cut
    into slices."""
    from .slicing import attach_slices, evaluate_by, slice_keys

    options = dict(args)
    run, qrels, measures = options.pop("run"), options.pop("qrels"), options.pop("measures")
    queries, by, per_query = options.pop("queries"), options.pop("by"), options.pop("per_query")
    if by is None:
        raise option_error("evaluate", "by", by, "queries= is for slicing and needs by= (a "
                           "column of queries, or a polars expression over it)",
                           "by='<column of queries>'")
    keys = slice_keys(queries, by)  # bad by= fails before any work
    long = to_polars(evaluate(run, qrels, measures, per_query=True, **options), "run")
    long = long.collect() if isinstance(long, pl.LazyFrame) else long
    out = attach_slices(long, keys) if per_query else evaluate_by(long, keys)
    return to_native(out, input_kind(run))
def check_evaluate_options(func: str, options: Mapping[str, Any], own: Any = None,
                           test: tuple[str, Mapping[str, Any] | None] | None = None) -> None:
    """Unknown keyword arguments that ``func`` passes on to :func:`evaluate` raise one
    :class:`~searcheval_frames.errors.UnknownOptionError` naming ``func`` (not evaluate,
    which the caller did not call); ``own``: ``func`` itself, whose options are listed too.
    ``test``: the name of a paired test and its ``test_options``, checked against the
    scipy function that takes them (``t``: ``ttest_rel``, ``wilcoxon``: ``wilcoxon``).

    >>> check_evaluate_options("compare", {"relevance_level": 2})
    """
    import inspect

    if test is not None and test[1] and test[0] in ("t", "wilcoxon"):
        stats = require("scipy.stats", "test_options checks")

        fn = stats.ttest_rel if test[0] == "t" else stats.wilcoxon
        check_known(func, {f"test_options[{k!r}]": v for k, v in test[1].items()},
                    [f"test_options[{p!r}]" for p in inspect.signature(fn).parameters
                     if p not in ("x", "y", "a", "b", "alternative")],
                    where=f"of scipy.stats.{fn.__name__}")
    if not options:
        return
    allowed = set(inspect.signature(evaluate).parameters) - {
        "run", "qrels", "measures", "per_query", "missing"}
    if own is not None:
        allowed |= set(inspect.signature(own).parameters) - {"evaluate_options"}
    check_known(func, options, allowed, where=f"of {func} and, with qrels=, of evaluate")


def _evaluate_ties(
    run: pl.DataFrame, qrels: pl.DataFrame, measures: list[Measure], ties: str,
    **options: Any,
) -> pl.DataFrame:
    """:func:`evaluate_frames` with ties broken by the run's order, or with bounds."""
    if ties == "given_order":
        return evaluate_frames(given_order(run), qrels, measures, **options)
    value = evaluate_frames(run, qrels, measures, **options)
    with warnings.catch_warnings():  # (the same warnings as for the value)
        warnings.simplefilter("ignore")
        flat = flat_qrels(qrels)
        low, high = (evaluate_frames(tie_broken(run, flat, optimistic=o), qrels, measures,
                                     **options) for o in (False, True))
    return with_bounds(value, low, high)


def _qrels_stats(qrels: pl.DataFrame, ctx: Context) -> pl.DataFrame:
    rel = pl.col("relevance")
    exprs: list[pl.Expr] = []
    for lvl in sorted(ctx.rel_levels):
        exprs.append((rel >= lvl).sum().cast(pl.Int64).alias(f"_num_rel_{lvl}"))
    for lvl in sorted(ctx.nonrel_levels):
        exprs.append(((rel >= 0) & (rel < lvl)).sum().cast(pl.Int64).alias(f"_num_nonrel_{lvl}"))
    stats = qrels.group_by("query_id").agg(exprs) if exprs else qrels.select("query_id").unique()
    for key, (gains, cutoff) in ctx.ideal.items():
        g = qrels.select(
            "query_id", gain_expr(None if gains == "linear" else gains, rel).alias("_g")
        ).filter(pl.col("_g") > 0)
        g = g.sort(["query_id", "_g"], descending=[False, True]).with_columns(
            pl.int_range(1, pl.len() + 1).over("query_id").alias("_i")
        )
        if cutoff is not None:
            g = g.filter(pl.col("_i") <= cutoff)
        ideal = g.group_by("query_id").agg(
            (pl.col("_g") / (pl.col("_i").cast(pl.Float64) + 1.0).log(2)).sum().alias(key)
        )
        stats = stats.join(ideal, on="query_id", how="left").with_columns(pl.col(key).fill_null(0.0))
    return stats


def _checked_and_ranked(
    run: pl.DataFrame, qrels: pl.DataFrame, measures: list[Measure], **options: Any
) -> tuple[pl.DataFrame, pl.DataFrame, RankedJudged]:
    """The first steps of :func:`evaluate_frames` and :func:`per_query_values`: each
    measure checks the qrels it needs; returns the qrels as given (subtopics kept), the
    flat qrels (one label per document) and the ranked, judged run."""
    for m in measures:
        m.definition.check_qrels(m, qrels)
    flat = flat_qrels(qrels)
    return qrels, flat, rank_judged(run, flat, **options)


def evaluate_frames(
    run: pl.DataFrame,
    qrels: pl.DataFrame,
    measures: list[Measure],
    *,
    per_query: bool = False,
    relevance_level: int = 1,
    missing: str = "zero",
    depth: int | None = None,
    judged_only: bool = False,
    compat: str = "trec_eval-10",
    strategy: Strategy = "auto",
    blocks: Blocks | None = None,
) -> pl.DataFrame:
    """:func:`evaluate` on canonical polars frames (no conversion, no option checks).

    ``blocks``: the run's (run, query) blocks when the caller already knows them.
    """
    subtopics, qrels, ranked = _checked_and_ranked(
        run, qrels, measures, depth=depth, judged_only=judged_only, compat=compat,
        strategy=strategy, blocks=blocks)
    run_order, table = query_plan(run, ranked, qrels, missing)
    wide = _values(ranked, table, qrels, measures, relevance_level, compat, subtopics)
    return finish(wide, run_order, measures, per_query)


def per_query_values(
    run: pl.DataFrame,
    qrels: pl.DataFrame,
    measures: list[Measure],
    *,
    runs: list[str],
    relevance_level: int = 1,
    missing: str = "zero",
    depth: int | None = None,
    judged_only: bool = False,
    compat: str = "trec_eval-10",
    strategy: Strategy = "auto",
    blocks: Blocks | None = None,
) -> pl.DataFrame:
    """Wide per-query values ``run, query_id, <measure>...`` of one part of the queries.

    Every measure depends on one query's rows and labels only, so a run split by
    query id (:mod:`.partitioned`, :mod:`searcheval_frames.scale`) is evaluated
    part by part with the code of :func:`evaluate_frames`, and :func:`finish` turns
    the concatenated parts into the result. ``runs``: all run names, in order;
    the (run, query) pairs of the part are found silently (:func:`.part_table`):
    the caller checks and warns about the whole run.
    """
    subtopics, qrels, ranked = _checked_and_ranked(
        run, qrels, measures, depth=depth, judged_only=judged_only, compat=compat,
        strategy=strategy, blocks=blocks)
    run_order = pl.DataFrame({"run": runs}, schema={"run": pl.String})
    table = part_table(ranked.num_ret.select(KEYS), run_order, qrels, missing)
    return _values(ranked, table, qrels, measures, relevance_level, compat, subtopics)


def _values(
    ranked: RankedJudged, table: pl.DataFrame, qrels: pl.DataFrame, measures: list[Measure],
    relevance_level: int, compat: str, subtopics: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Wide per-query values of the (run, query) pairs in ``table``.

    ``subtopics``: the qrels with their subtopic column, for the families that compute
    from whole frames (``per_query``, e.g. alpha-nDCG); ``qrels`` is flat.
    """
    ctx = Context(relevance_level=relevance_level, compat=compat)
    cols = {m: f"_m{i}" for i, m in enumerate(measures)}
    aggs = [e for m in measures if not whole_frame(m) for e in m.definition.agg(m, ctx, cols[m])]
    values = [m.definition.value(m, ctx, cols[m]).cast(pl.Float64).alias(m.name) for m in measures]
    stats = _qrels_stats(qrels, ctx)
    per_q = table.join(ranked.num_ret, on=KEYS, how="left").with_columns(
        pl.col("num_ret").fill_null(0)
    ).join(stats, on="query_id", how="left")
    if aggs:
        stat_cols = [c for c in stats.columns if c.startswith("_num_")]
        judged = ranked.judged
        if stat_cols:
            judged = judged.join(stats.select("query_id", *stat_cols), on="query_id", how="left")
        # as Series (as per_q below): a column polars holds as one repeated value (a
        # broadcast literal, a one-row join side) is divided by through its inverse inside
        # a group, an ulp off (tests/test_evaluate.py)
        judged = pl.DataFrame(judged.get_columns())
        agg = judged.group_by(KEYS).agg(aggs)
        agg_cols = [c for c in agg.columns if c not in KEYS]
        per_q = per_q.join(agg, on=KEYS, how="left").with_columns(
            pl.col(agg_cols).fill_null(0).fill_nan(0)
        )
    for m in measures:
        if whole_frame(m):
            part = m.definition.per_query(
                m, ctx, cols[m], ranked, qrels if subtopics is None else subtopics)
            per_q = per_q.join(part, on=KEYS, how="left").with_columns(
                pl.col(cols[m]).fill_null(0.0))
    # as Series: joins broadcast a one-row side (one query's stats) as a scalar, which
    # polars divides by through its inverse, an ulp off the division of two columns
    per_q = pl.DataFrame(per_q.get_columns())
    if per_q.height == 1:
        # polars divides a one-row (scalar) column by a constant exactly but longer ones
        # by multiplying with its inverse (an ulp apart): compute on two real rows, so a
        # query's value does not depend on how many queries share its frame (parts, Spark)
        two = pl.from_arrow(pl.concat([per_q, per_q]).to_arrow())
        assert isinstance(two, pl.DataFrame)
        return two.select(*KEYS, *values).head(1)
    return per_q.select(*KEYS, *values)


def _evaluate_parts(
    scan: RunScan, qrels: pl.DataFrame, measures: list[Measure], *, per_query: bool,
    missing: str, **options: Any,
) -> pl.DataFrame:
    """:func:`evaluate_frames` on a run too big for memory, one part of its queries at a time."""
    run_order = pl.DataFrame({"run": scan.runs}, schema={"run": pl.String})
    with warnings.catch_warnings(record=True) as seen:  # the warnings and errors of the whole
        warnings.simplefilter("always")
        query_table(scan.pairs, run_order, qrels, missing)
    for w in seen:
        warnings.warn(w.message, w.category, stacklevel=outside_stacklevel())
    wides = scan.map(
        lambda part, blocks, labels: per_query_values(
            part, labels, measures, missing=missing, blocks=blocks, runs=scan.runs, **options
        ),
        qrels,
    )
    return finish(pl.concat(wides), run_order, measures, per_query)
