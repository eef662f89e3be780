"""Pools, coverage and metric bounds: what to judge next and how much it matters.

The evaluation-set recipe is: run the systems, *pool* their top-k documents per
query, label the pool, evaluate. After a system change the new run retrieves
documents nobody has labelled ("holes"); :func:`coverage` and :func:`holes`
show them and :func:`metric_bounds` shows how far the numbers could move once
they are labelled.

All rankings use the trec_eval order: within a query, score descending, ties
broken by doc_id descending (byte order); an input ``rank`` column is ignored.

>>> import searcheval_frames as sef
>>> runs = {"a": {"q1": {"d1": 2.0, "d2": 1.0}}, "b": {"q1": {"d3": 5.0, "d1": 4.0}}}
>>> sef.pool(runs, depth=1)["doc_id"].to_list()
['d1', 'd3']
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import polars as pl

from .._deprecation import old_spelling, outside_stacklevel
from ..core.ranking import ranked_rows
from ..errors import InvalidOptionError, SearchEvalWarning, format_rows
from ..frames import input_kind, qrels_frame, run_frame, to_native
from ..options import (
    check_bool,
    check_choice,
    check_float,
    check_int,
    check_optional_int,
)
from ._topk import blocks_of, evaluate_ranked, evaluation_groups, judged_in_top, reads_top
from .old_calls import OLD_POOL

__all__ = ["coverage", "holes", "metric_bounds", "pool"]

PoolMethod = Literal["depth", "rrf", "rbp"]

# measures whose aggregate over queries is a sum (or a count), not a mean
_SUM_MEASURES = {"NumQ", "NumRet", "NumRel", "NumRelRet"}


# --------------------------------------------------------------------------- helpers
def _check_depth(depth: Any, arg: str = "depth", func: str = "pool") -> int:
    return check_int(func, arg, depth, minimum=1,
                     what="how many top documents per query to look at", example=f"{arg}=20")


def ranked(run: pl.DataFrame, depth: int | None = None) -> pl.DataFrame:
    """Canonical run frame with ``rank`` (1-based) recomputed in trec_eval order: any
    input ``rank`` is replaced; within (run, query) by score descending, ties by doc_id
    descending; ranks up to ``depth`` when given (:func:`~..core.ranking.ranked_rows`)."""
    return ranked_rows(run, depth)


def _judged_keys(qrels: Any, qrels_columns: Mapping[str, str] | None,
                 columns: Mapping[str, str] | None = None) -> pl.DataFrame:
    if qrels_columns is None and columns:  # the entries of the runs' columns= the qrels have
        have = set(getattr(qrels, "columns", ()))
        qrels_columns = {k: v for k, v in columns.items() if v in have} or None
    q = qrels_frame(qrels, columns=qrels_columns, arg="qrels")
    return q.select("query_id", "doc_id", "relevance")


def _with_judged(top: pl.DataFrame, q: pl.DataFrame) -> pl.DataFrame:
    keys = q.select(pl.struct("query_id", "doc_id")).to_series().implode()  # (no join)
    return top.with_columns(pl.struct("query_id", "doc_id").is_in(keys).alias("judged"))


# --------------------------------------------------------------------------- pool
@old_spelling("pool", *OLD_POOL)
def pool(
    runs: Any,
    qrels: Any = None,
    depth: int = 20,
    *,
    method: PoolMethod = "depth",
    max_per_query: int | None = None,
    rrf_k: float = 60.0,
    rbp_p: float = 0.8,
    columns: Mapping[str, str] | None = None,
    qrels_columns: Mapping[str, str] | None = None,
) -> Any:
    """The documents to judge: the union of every run's top-``depth`` per query.

    Parameters
    ----------
    runs
        One or several runs (a frame with a ``run`` column, a dict ``{name: run}``, ...),
        anything :func:`searcheval_frames.run_frame` accepts.
    qrels
        Labels you already have: documents judged for a query (any grade, including
        negative ones) are left out, so nothing is judged twice.
    depth
        How many top documents of each run and query enter the pool (default 20).
    method
        ``"depth"`` (default): classic depth-k pooling, every document is ordered by its
        best rank over the runs, then by how many runs retrieved it.
        ``"rrf"``: the same documents ordered by reciprocal-rank fusion,
        ``sum 1 / (rrf_k + rank)`` over runs. ``"rbp"``: ordered by rank-biased
        weight ``sum (1 - p) p^(rank-1)`` (Moffat et al., 2007). Weighted orders put
        documents several systems rank high first; combine them with
        ``max_per_query`` to judge the most influential documents on a budget.
    max_per_query
        Keep at most this many documents per query (the first in ``priority`` order).
    rrf_k, rbp_p
        Parameters of the ``"rrf"`` and ``"rbp"`` weights.
    columns, qrels_columns
        Column mappings for ``runs`` and ``qrels`` (canonical name → yours); without
        ``qrels_columns`` the entries of ``columns`` the qrels have apply to them too.

    Returns
    -------
    DataFrame (the kind of ``runs``)
        One row per (query, document) to judge, sorted by ``query_id`` then ``priority``:
        ``query_id``, ``doc_id``, ``priority`` (1 = judge first), ``best_rank`` (best
        rank over the runs), ``n_runs`` (how many runs retrieved it in their top-k),
        ``runs`` (list of those run names, sorted) and, for ``"rrf"``/``"rbp"``,
        ``weight``.

    Examples
    --------
    >>> import searcheval_frames as sef
    >>> runs = {"a": {"q1": {"d1": 2.0, "d2": 1.0}}, "b": {"q1": {"d2": 5.0, "d3": 4.0}}}
    >>> p = sef.pool(runs, depth=2, qrels={"q1": {"d3": 0}})
    >>> p.select("doc_id", "best_rank", "n_runs").rows()
    [('d2', 1, 2), ('d1', 1, 1)]
    """
    depth = _check_depth(depth)
    check_optional_int("pool", "max_per_query", max_per_query, minimum=1,
                       what="documents to judge per query", example="max_per_query=50")
    check_choice("pool", "method", method, ("depth", "rrf", "rbp"), example="method='rrf'")
    check_float("pool", "rrf_k", rrf_k, minimum=0.0, what="RRF's rank offset",
                example="rrf_k=60")
    check_float("pool", "rbp_p", rbp_p, minimum=0.0, maximum=1.0, open_min=True,
                open_max=True, what="RBP persistence", example="rbp_p=0.8")
    kind = input_kind(runs)
    top = ranked(run_frame(runs, columns=columns, arg="runs"), depth)
    if qrels is not None:
        q = _judged_keys(qrels, qrels_columns, columns)
        top = top.join(q.select("query_id", "doc_id"), on=["query_id", "doc_id"], how="anti")

    if method == "rrf":
        weight = (1.0 / (rrf_k + pl.col("rank").cast(pl.Float64))).sum()
    elif method == "rbp":
        weight = ((1.0 - rbp_p) * pl.lit(rbp_p).pow(pl.col("rank") - 1)).sum()
    else:
        weight = None

    aggs = [
        pl.col("rank").min().alias("best_rank"),
        pl.col("run").n_unique().cast(pl.Int64).alias("n_runs"),
        pl.col("run").unique().sort().alias("runs"),
    ]
    if weight is not None:
        aggs.append(weight.alias("weight"))
    out = top.group_by(["query_id", "doc_id"]).agg(aggs)
    if weight is not None:
        order, desc = ["query_id", "weight", "best_rank", "doc_id"], [False, True, False, False]
    else:
        order, desc = ["query_id", "best_rank", "n_runs", "doc_id"], [False, False, True, False]
    out = out.sort(order, descending=desc).with_columns(
        (pl.int_range(pl.len(), dtype=pl.Int64).over("query_id") + 1).alias("priority")
    )
    if max_per_query is not None:
        out = out.filter(pl.col("priority") <= max_per_query)
    cols = ["query_id", "doc_id", "priority", "best_rank", "n_runs", "runs"]
    if weight is not None:
        cols.append("weight")
    return to_native(out.select(cols), kind)


# --------------------------------------------------------------------------- coverage
def _top_with_judged(
    runs: Any,
    qrels: Any,
    depth: int | None,
    columns: Mapping[str, str] | None,
    qrels_columns: Mapping[str, str] | None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    top = ranked(run_frame(runs, columns=columns, arg="runs"), depth)
    q = _judged_keys(qrels, qrels_columns, columns)
    return _with_judged(top, q), q


def holes(
    runs: Any,
    qrels: Any,
    depth: int = 20,
    *,
    columns: Mapping[str, str] | None = None,
    qrels_columns: Mapping[str, str] | None = None,
) -> Any:
    """Unjudged documents in each run's top-``depth``: what to label before trusting it.

    Parameters
    ----------
    runs
        One or several runs.
    qrels
        The labels you have. A document counts as judged for a query when the qrels
        hold any label for it (also 0 or negative).
    depth
        Top-k per query to inspect (default 20).

    Returns
    -------
    DataFrame (the kind of ``runs``)
        ``run, query_id, rank, doc_id, score``, sorted by run, query and rank. Queries
        without any label in ``qrels`` appear with all their top-k documents.

    Examples
    --------
    >>> import searcheval_frames as sef
    >>> run = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
    >>> sef.holes(run, {"q1": {"d1": 1}}, depth=2)["doc_id"].to_list()
    ['d2']
    """
    depth = _check_depth(depth, func="holes")
    kind = input_kind(runs)
    top, _ = _top_with_judged(runs, qrels, depth, columns, qrels_columns)
    out = top.filter(~pl.col("judged")).select("run", "query_id", "rank", "doc_id", "score")
    return to_native(out.sort(["run", "query_id", "rank"]), kind)


def coverage(
    runs: Any,
    qrels: Any,
    depth: int = 20,
    *,
    per_query: bool = False,
    columns: Mapping[str, str] | None = None,
    qrels_columns: Mapping[str, str] | None = None,
) -> Any:
    """How much of each run's top-``depth`` is judged (Judged@k) and how many holes remain.

    Parameters
    ----------
    runs
        One or several runs.
    qrels
        The labels you have (any label, including 0 or negative, counts as judged).
    depth
        The k of Judged@k (default 20).
    per_query
        One row per (run, query) instead of one per run.

    Returns
    -------
    DataFrame (the kind of ``runs``)
        Per run (and query): ``depth``; ``queries`` and ``queries_with_holes`` (per run
        only); ``retrieved`` (documents in the top-k, at most k per query), ``judged``,
        ``holes`` (= retrieved - judged) and ``judged_at_k``: judged / k per query (as
        trec_eval's ``Judged@k`` / ir_measures ``Judged@k``: a query with fewer than k
        documents cannot reach 1), averaged over the run's queries. Queries of the run
        with no label at all count with judged_at_k = 0; queries labelled in ``qrels`` but
        absent from the run are not counted (they have nothing to judge).

    Examples
    --------
    >>> import searcheval_frames as sef
    >>> run = {"q1": {"d1": 3.0, "d2": 2.0}}
    >>> cov = sef.coverage(run, {"q1": {"d1": 1}}, depth=2)
    >>> cov.select("judged", "holes", "judged_at_k").row(0)
    (1, 1, 0.5)
    """
    depth = _check_depth(depth, func="coverage")
    check_bool("coverage", "per_query", per_query)
    kind = input_kind(runs)
    run = run_frame(runs, columns=columns, arg="runs")
    q = _judged_keys(qrels, qrels_columns, columns)
    blocks = blocks_of(run)
    per_q = (  # a query's rows together: each top-depth found without ranking the run
        judged_in_top(run, q, depth, blocks) if blocks is not None else
        _with_judged(ranked(run, depth), q).group_by(["run", "query_id"]).agg(
            pl.len().cast(pl.Int64).alias("retrieved"),
            pl.col("judged").sum().cast(pl.Int64).alias("judged"))
    ).with_columns(
        pl.lit(depth, dtype=pl.Int64).alias("depth"),
        (pl.col("retrieved") - pl.col("judged")).alias("holes"),
        (pl.col("judged") / depth).alias("judged_at_k"),
    ).select("run", "query_id", "depth", "retrieved", "judged", "holes", "judged_at_k"
             ).sort(["run", "query_id"])
    if per_query:
        return to_native(per_q, kind)
    out = (
        per_q.group_by("run")
        .agg(
            pl.col("depth").first(),
            pl.len().cast(pl.Int64).alias("queries"),
            (pl.col("holes") > 0).sum().cast(pl.Int64).alias("queries_with_holes"),
            pl.col("retrieved").sum(),
            pl.col("judged").sum(),
            pl.col("holes").sum(),
            pl.col("judged_at_k").mean(),
        )
        .sort("run")
    )
    return to_native(out, kind)


# --------------------------------------------------------------------------- bounds
def _fill_depth(measure: Any, depth: int | None) -> int | None:
    """How deep holes matter for a measure: its rank cutoff (IPrec's is a recall level)."""
    cut = measure.cutoff
    own = cut if isinstance(cut, int) and not isinstance(cut, bool) else None
    if own is None:
        return depth
    return own if depth is None else min(own, depth)


def _check_grade(q: pl.DataFrame, grade: int | None, relevance_level: int) -> int:
    """The grade of the optimistic scenario: ``grade``, default the qrels' highest."""
    max_grade = int(q["relevance"].max())  # type: ignore[arg-type]
    if grade is None:
        grade = max_grade
    if grade < relevance_level:
        raise InvalidOptionError(
            f"grade={grade!r}: the grade given to unjudged documents must be an integer >= "
            f"relevance_level ({relevance_level}); the qrels' highest grade is {max_grade}"
            + ("; the qrels have no relevant label at all, pass grade= explicitly"
               if max_grade < relevance_level and grade == max_grade else ""))
    return grade


def _scenarios(all_ranked: pl.DataFrame, q: pl.DataFrame, gaps: pl.DataFrame, parsed: Any,
               by_depth: dict[int | None, list[Any]], grade: int, relevance_level: int,
               lows: pl.DataFrame | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Per-query values with the holes non-relevant (``lows`` when given), and relevant
    (with ``holes``)."""
    kwargs: dict[str, Any] = {"per_query": True, "relevance_level": relevance_level}
    depth_of = {m.name: -1 if d is None else d for d, ms in by_depth.items() for m in ms}
    highs = []
    with warnings.catch_warnings():
        # "queries of the qrels absent from the run score 0": said once by the caller's
        # own evaluate; here it would repeat for every scenario.
        warnings.simplefilter("ignore", UserWarning)
        # (rows checked by run_frame above: evaluate need not check them again; a query's
        # value depends on its own rows only, so every run is evaluated in one call)
        lows = pl.DataFrame(evaluate_ranked(all_ranked, q, parsed,
                                     **kwargs)) if lows is None else lows
        for (name,), part in all_ranked.group_by(["run"], maintain_order=True):
            run_gaps = gaps.filter(pl.col("run") == name)
            holes = pl.concat([  # per query and fill depth: the holes a measure's value fills
                (run_gaps if d is None else run_gaps.filter(pl.col("rank") <= d))
                .group_by("query_id").agg(pl.len().cast(pl.Int64).alias("holes"))
                .with_columns(pl.lit(-1 if d is None else d, dtype=pl.Int64).alias("_d"))
                for d in by_depth])
            for d, ms in evaluation_groups(by_depth).items():
                sel = run_gaps if d is None else run_gaps.filter(pl.col("rank") <= d)
                fill = sel.select(
                    "query_id", "doc_id", pl.lit(grade, dtype=pl.Int64).alias("relevance")
                )
                # measures that read their top d only: the rows below it need no ranking
                rows = part.filter(pl.col("rank") <= d) if reads_top(ms, d) else part
                high = pl.DataFrame(evaluate_ranked(rows,
                                             pl.concat([q, fill]), ms, **kwargs))
                highs.append(high.with_columns(pl.col("measure").replace_strict(
                    depth_of, return_dtype=pl.Int64).alias("_d")).join(
                    holes, on=["query_id", "_d"], how="left", maintain_order="left").select(
                    pl.exclude("_d")).with_columns(pl.col("holes").fill_null(0)))
    return (lows.rename({"value": "if_nonrelevant"}),
            pl.concat(highs).rename({"value": "if_relevant"}))


def metric_bounds(
    runs: Any,
    qrels: Any,
    measures: str | Sequence[str],
    *,
    depth: int | None = None,
    grade: int | None = None,
    per_query: bool = False,
    relevance_level: int = 1,
    columns: Mapping[str, str] | None = None,
    qrels_columns: Mapping[str, str] | None = None,
    values: Any = None,
) -> Any:
    """Metric values if every unjudged document were non-relevant vs relevant.

    Two evaluations per run with :func:`searcheval_frames.evaluate`: with the qrels as
    they are (unjudged = non-relevant, what trec_eval reports) and with the run's
    unjudged documents added at ``grade`` (default: the highest grade in the qrels).
    The gap between them is how much the holes could still move the number.

    For a measure with a rank cutoff (``nDCG@10``, ``P@20``, ``R@100``) only the holes
    in the run's top-cutoff are filled; for measures over the whole ranking (``AP``,
    ``nDCG``, ``RR``) every unjudged document the run retrieved (down to ``depth``).

    Parameters
    ----------
    runs
        One or several runs.
    qrels
        The labels you have.
    measures
        Measure names, e.g. ``["nDCG@10", "P@10", "AP"]``.
    depth
        Fill only holes within the top-``depth`` (and within each measure's cutoff);
        ``None`` (default): each measure's cutoff, or the whole ranking.
    grade
        The grade given to unjudged documents for the optimistic scenario (default: the
        qrels' maximum grade; it must be ``>= relevance_level``).
    per_query
        One row per (run, query, measure) instead of the mean over queries.
    relevance_level
        Passed to :func:`~searcheval_frames.evaluate` (binary measures count grade >= it).
    values
        The caller's ``evaluate(runs, qrels, measures, per_query=True, relevance_level=...)``
        of (at least) these runs and measures, when it has one: the non-relevant scenario
        is read from it instead of evaluated again (``sef.report`` passes its own).

    Returns
    -------
    DataFrame (the kind of ``runs``)
        ``run``, [``query_id``], ``measure``, ``holes`` (unjudged documents filled),
        ``if_nonrelevant``, ``if_relevant``, ``lower``, ``upper``, ``width``.
        ``lower``/``upper`` are the smaller/larger of the two scenarios per query (the
        aggregate ones are their mean over queries, a sum for NumRet/NumRel/NumRelRet/NumQ).
        For measures that only reward relevant documents in a fixed top-k with a fixed
        denominator (P@k, Success@k, RR, Judged@k) they are true bounds. For measures
        normalised by the number of relevant documents (AP, R, nDCG, Rprec, Bpref)
        relevant documents further down (or never retrieved) also raise the denominator,
        so the truth can lie outside [lower, upper]; read the pair as the two scenarios.

        Only queries present in ``qrels`` are evaluated (as trec_eval does); queries of
        a run with no label at all are left out with a warning: label some first.

    Examples
    --------
    >>> import searcheval_frames as sef
    >>> run = {"q1": {"d1": 3.0, "d2": 2.0}}
    >>> b = sef.metric_bounds(run, {"q1": {"d1": 1}}, ["P@2"])
    >>> b.select("if_nonrelevant", "if_relevant").row(0)
    (0.5, 1.0)
    """
    from ..measures import parse_measures

    check_optional_int("metric_bounds", "depth", depth, minimum=1,
                       what="how many top documents per query to fill", example="depth=20")
    check_optional_int("metric_bounds", "grade", grade, minimum=0,
                       what="the label given to unjudged documents", example="grade=3")
    check_bool("metric_bounds", "per_query", per_query)
    check_int("metric_bounds", "relevance_level", relevance_level, minimum=0,
              example="relevance_level=2")
    parsed = parse_measures(measures)
    kind = input_kind(runs)
    all_ranked = ranked(run_frame(runs, columns=columns, arg="runs"))
    q = _judged_keys(qrels, qrels_columns, columns)
    grade = _check_grade(q, grade, relevance_level)
    labelled = q.select("query_id").unique()
    unlabelled = all_ranked.select("run", "query_id").unique().join(labelled, on="query_id",
                                                                       how="anti")
    if unlabelled.height:
        warnings.warn(
            f"metric_bounds: {unlabelled.select('query_id').n_unique()} quer(y/ies) of the "
            f"run(s) have no label at all and are not evaluated (as in trec_eval), e.g.\n"
            f"{format_rows(unlabelled.sort(['run', 'query_id']))}\nLabel some of their "
            "documents (sef.pool / sef.label_widget) to include them.",
            SearchEvalWarning,
            stacklevel=outside_stacklevel(),
        )
    gaps = _with_judged(all_ranked, q).filter(~pl.col("judged")).join(
        labelled, on="query_id", how="semi").select("run", "query_id", "doc_id", "rank")
    by_depth: dict[int | None, list[Any]] = {}
    for m in parsed:
        by_depth.setdefault(_fill_depth(m, depth), []).append(m)
    order = {m.name: i for i, m in enumerate(parsed)}

    if values is not None:  # (evaluate's own per-query values of these runs and measures)
        values = pl.DataFrame(values).filter(pl.col("run").is_in(all_ranked["run"].unique()),
                                             pl.col("measure").is_in(list(order)))
    lows, highs = _scenarios(all_ranked, q, gaps, parsed, by_depth, grade, relevance_level,
                             values)
    per_q = lows.join(highs, on=["run", "query_id", "measure"], how="full", coalesce=True
                      ).with_columns(
        pl.col("holes").fill_null(0),
        pl.min_horizontal("if_nonrelevant", "if_relevant").alias("lower"),
        pl.max_horizontal("if_nonrelevant", "if_relevant").alias("upper"),
    ).with_columns(
        (pl.col("upper") - pl.col("lower")).alias("width"),
        pl.col("measure").replace_strict(order, default=len(order), return_dtype=pl.Int64)
        .alias("_order"),
    )
    value_cols = ["if_nonrelevant", "if_relevant", "lower", "upper", "width"]
    if per_query:
        return to_native(per_q.sort(["run", "query_id", "_order"]).select(
            "run", "query_id", "measure", "holes", *value_cols), kind)
    is_sum = pl.col("measure").is_in(sorted(_SUM_MEASURES))
    out = per_q.group_by(["run", "measure"]).agg(
        pl.col("_order").first(), pl.col("holes").sum(),
        *[pl.when(is_sum.first()).then(pl.col(c).sum()).otherwise(pl.col(c).mean()).alias(c)
          for c in value_cols])
    return to_native(out.sort(["run", "_order"]).select("run", "measure", "holes", *value_cols),
                     kind)
