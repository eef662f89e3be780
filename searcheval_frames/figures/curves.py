"""Curves as data: precision and recall at every cutoff, interpolated PR curves.

Both functions return tidy frames (one row per run, [query,] and cutoff or
recall level) that the plotting helpers in :mod:`searcheval_frames.figures` draw;
plot them your own way if you prefer.

They compute from the same ranking as :func:`~searcheval_frames.core.evaluate.evaluate`
(:func:`~searcheval_frames.core.ranking.rank_judged`: score descending, ties by
``doc_id`` descending, the run's rank column ignored) and treat queries the same
way (``missing="zero"``: judged queries a run lacks score 0, with a warning), so
every number agrees with the core:

* ``precision_recall_at_k(...)`` at cutoff ``k`` equals ``P@k`` and ``R@k``;
* ``pr_curve_data(...)`` at recall level ``r`` equals ``IPrec@r``
  (``levels="11pt"`` gives trec_eval's ``iprec_at_recall_0.00 ... 1.00``).

Interpolated precision at recall level ``r`` is the best precision at any rank
where the recall reaches ``r``. trec_eval turns the level into a number of
relevant documents with ``n(r) = max(1, round(r * R))`` (``R`` = relevant
documents of the query; trec_eval 9: ``(long)(r * R + 0.9)``), and so do we:
at each query's own levels ``j / R`` this is exactly "recall >= r".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, cast

import numpy as np
import polars as pl

from ..core.plan import query_plan
from ..core.ranking import RankedJudged, Strategy, rank_judged
from ..errors import InvalidOptionError
from ..frames import input_kind, qrels_frame, run_frame, to_native
from ..measures.base import Context
from ..measures.rank import ELEVEN_POINTS, iprec_cut
from ..options import EvalOptions

__all__ = ["pr_curve_data", "precision_recall_at_k"]

KEYS = ["run", "query_id"]
Levels = Literal["11pt", "all"] | int | Sequence[float]

#: Above this many run rows, and with several runs, ranking runs one run at a
#: time with a progress bar (tqdm, when installed).
PROGRESS_ROWS = 2_000_000


# --------------------------------------------------------------------------- shared
def _progress(items: Sequence[Any], desc: str, enabled: bool) -> Iterable[Any]:
    """Wrap ``items`` in a tqdm progress bar when enabled and tqdm is installed."""
    if not enabled:
        return items
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is optional
        return items
    return tqdm(items, desc=desc, total=len(items))


def _rank(
    run: pl.DataFrame,
    qrels: pl.DataFrame,
    *,
    depth: int | None,
    judged_only: bool,
    compat: str,
    strategy: Strategy,
    progress: bool | None,
    desc: str,
) -> RankedJudged:
    names = run.get_column("run").unique(maintain_order=True).to_list()
    show = progress if progress is not None else (run.height > PROGRESS_ROWS and len(names) > 1)
    if not show:
        return rank_judged(
            run, qrels, depth=depth, judged_only=judged_only, compat=compat, strategy=strategy
        )
    judged, num_ret = [], []
    for name in _progress(names, desc, True):
        part = rank_judged(
            run.filter(pl.col("run") == name),
            qrels,
            depth=depth,
            judged_only=judged_only,
            compat=compat,
            strategy=strategy,
        )
        judged.append(part.judged)
        num_ret.append(part.num_ret)
    return RankedJudged(pl.concat(judged), pl.concat(num_ret))


def _prepare(
    run: Any,
    qrels: Any,
    *,
    relevance_level: int,
    missing: str,
    depth: int | None,
    judged_only: bool,
    compat: str,
    columns: Mapping[str, str] | None,
    strategy: Strategy,
    progress: bool | None,
    desc: str,
    func: str,
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Canonical inputs -> (query table with num_rel, relevant judged rows, num_ret, run).

    The query table is the core's (:func:`searcheval_frames.core.plan.query_plan`),
    so missing and unjudged queries are handled, and warned about, exactly as
    :func:`~searcheval_frames.core.evaluate.evaluate` does.
    """
    EvalOptions(func=func, relevance_level=relevance_level, missing=missing, depth=depth,
                compat=compat, judged_only=judged_only, strategy=strategy)
    run_df = run_frame(run, columns=columns)
    qrels_df = qrels_frame(qrels, columns=columns)
    level = max(int(relevance_level), 0)  # labels below 0 are never relevant
    num_rel = qrels_df.group_by("query_id").agg(
        (pl.col("relevance") >= level).sum().cast(pl.Int64).alias("num_rel")
    )
    ranked = _rank(
        run_df,
        qrels_df,
        depth=depth,
        judged_only=judged_only,
        compat=compat,
        strategy=strategy,
        progress=progress,
        desc=desc,
    )
    _, table = query_plan(run_df, ranked, qrels_df, missing)
    table = table.join(num_rel, on="query_id", how="left").join(
        ranked.num_ret, on=KEYS, how="left"
    ).with_columns(pl.col("num_rel").fill_null(0), pl.col("num_ret").fill_null(0))
    relevant = (
        ranked.judged.filter(pl.col("relevance") >= level)
        .join(table.select(KEYS), on=KEYS, how="semi")
        .select(*KEYS, "rank")
        .sort([*KEYS, "rank"])
    )
    return table, relevant, ranked.num_ret, run_df


def _order(df: pl.DataFrame, run_df: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """Sort by the run order of the input, then ``by``."""
    order = run_df.select("run").unique(maintain_order=True).with_row_index("_r")
    return df.join(order, on="run").sort(["_r", *by]).drop("_r")


# --------------------------------------------------------------------------- P@k, R@k
def _cutoffs(k: int | Sequence[int] | None, table: pl.DataFrame) -> tuple[int, list[int] | None]:
    """(largest cutoff, explicit list or None for every k = 1..largest)."""
    def bad(rule: str) -> InvalidOptionError:
        return InvalidOptionError(f"precision_recall_at_k(k={k!r}): {rule}; got {k!r}. "
                                  "Example: k=10 (every k = 1..10) or k=[1, 5, 10]")

    if k is None:
        top = int(cast(Any, table.get_column("num_ret").max()) or 0)
        return max(top, 1), None
    if isinstance(k, bool):
        raise bad("must be a positive integer or a list of them")
    if isinstance(k, int):
        if k < 1:
            raise bad("must be a positive integer (the largest cutoff)")
        return k, None
    try:
        ks = sorted({int(v) for v in k})
    except (TypeError, ValueError):
        raise bad("must be a positive integer or a list of them") from None
    if not ks or ks[0] < 1 or any(isinstance(v, bool) or int(v) != v for v in k):
        raise bad("cutoffs must be positive integers")
    return ks[-1], ks


def precision_recall_at_k(
    run: Any,
    qrels: Any,
    *,
    k: int | Sequence[int] | None = None,
    per_query: bool = False,
    relevance_level: int = 1,
    missing: Literal["zero", "skip"] = "zero",
    depth: int | None = None,
    judged_only: bool = False,
    compat: Literal["trec_eval-10", "trec_eval-9"] = "trec_eval-10",
    columns: Mapping[str, str] | None = None,
    strategy: Strategy = "auto",
    progress: bool | None = None,
) -> Any:
    """Precision and recall at every cutoff k (the data of a trade-off curve).

    Parameters
    ----------
    run, qrels
        As for :func:`~searcheval_frames.core.evaluate.evaluate` (pandas, polars,
        arrow, dict of frames, pytrec_eval dicts).
    k
        ``None`` (default): every cutoff 1 .. the deepest ranked list; an int
        ``K``: every cutoff 1 .. K; a list: just those cutoffs.
    per_query
        One row per (run, query, k) instead of the mean over queries.
    relevance_level, missing, depth, judged_only, compat, columns, strategy
        As for :func:`~searcheval_frames.core.evaluate.evaluate`.
    progress
        Show a progress bar (tqdm) while ranking run by run; default: only for
        inputs above a few million rows with several runs.

    Returns
    -------
    DataFrame
        ``run, k, precision, recall`` (means over queries), or with
        ``per_query=True`` ``run, query_id, k, relevant_retrieved, precision,
        recall``. ``precision`` at ``k`` is ``P@k`` (divides by ``k`` even when
        fewer documents were retrieved, as trec_eval), ``recall`` is ``R@k``
        (0 for queries without relevant documents). Same kind as ``run``.

    Examples
    --------
    >>> import searcheval_frames as sef
    >>> run = {"q1": {"A": 0.9, "B": 0.8, "X": 0.7}}
    >>> qrels = {"q1": {"A": 1, "B": 1, "C": 1, "X": 0}}
    >>> sef.precision_recall_at_k(run, qrels).rows()  # doctest: +NORMALIZE_WHITESPACE
    [('run', 1, 1.0, 0.3333333333333333), ('run', 2, 1.0, 0.6666666666666666),
     ('run', 3, 0.6666666666666666, 0.6666666666666666)]
    """
    kind = input_kind(run)
    table, relevant, _, run_df = _prepare(
        run,
        qrels,
        relevance_level=relevance_level,
        missing=missing,
        depth=depth,
        judged_only=judged_only,
        compat=compat,
        columns=columns,
        strategy=strategy,
        progress=progress,
        desc="P@k, R@k",
        func="precision_recall_at_k",
    )
    top, ks = _cutoffs(k, table)
    counts = _relevant_at_each_k(table.select(*KEYS, "num_rel"), relevant, top)
    if ks is not None:
        counts = counts.filter(pl.col("k").is_in(ks))
    result = counts.select(
        *KEYS,
        "k",
        "relevant_retrieved",
        (pl.col("relevant_retrieved") / pl.col("k").cast(pl.Float64)).alias("precision"),
        pl.when(pl.col("num_rel") > 0)
        .then(pl.col("relevant_retrieved") / pl.col("num_rel").cast(pl.Float64))
        .otherwise(0.0)
        .alias("recall"),
    )
    if not per_query:
        result = result.group_by(["run", "k"]).agg(
            pl.col("precision").mean(), pl.col("recall").mean()
        )
        result = _order(result, run_df, ["k"])
    else:
        result = _order(result, run_df, ["query_id", "k"])
    return to_native(result, kind)


def _relevant_at_each_k(table: pl.DataFrame, relevant: pl.DataFrame, top: int) -> pl.DataFrame:
    """Per (run, query) of ``table`` and k = 1..``top``: the relevant documents in the top
    k (``relevant``: their ranks), sorted by run, query and k.

    One count per (query, rank) cell and a cumulative sum along each query's row of a
    2-D array (queries x k), instead of a cross join of the queries with every k, a join
    on four keys, a sort by the id strings and a grouped cumulative sum.
    """
    tab = table.sort(KEYS)
    n = tab.height
    hits = relevant.filter(pl.col("rank") <= top).join(
        tab.select(KEYS).with_row_index("_b"), on=KEYS, how="inner")
    cell = (hits.get_column("_b").cast(pl.Int64).to_numpy() * top
            + hits.get_column("rank").to_numpy() - 1)
    cum = np.bincount(cell, minlength=n * top).reshape(n, top).cumsum(axis=1)
    return tab[np.repeat(np.arange(n), top)].with_columns(
        pl.Series("k", np.tile(np.arange(1, top + 1, dtype=np.int64), n)),
        pl.Series("relevant_retrieved", cum.ravel().astype(np.int64)),
    ).select(  # (sorted, as the former sort by the keys flagged it: polars' grouped
        # means take the same path and give the same bits)
        pl.col("run").set_sorted(), "query_id", "num_rel", "k", "relevant_retrieved")


# --------------------------------------------------------------------------- PR curve
def recall_levels(levels: Any, func: str = "pr_curve_data") -> list[float] | None:
    """Explicit recall levels, or None for 'all' (every query's own levels).

    The one check of ``levels`` (for :func:`pr_curve_data` and the figure that draws it):
    ``'11pt'``, ``'all'``, a number of steps >= 1, or recall levels in [0, 1].
    """
    def bad(rule: str) -> InvalidOptionError:
        return InvalidOptionError(
            f"{func}(levels={levels!r}): {rule}; got {levels!r}. Example: levels='11pt' "
            "(0.0, 0.1, ..., 1.0), levels='all' (every recall level a query reaches), "
            "levels=20 (21 evenly spaced levels) or levels=[0.0, 0.5, 1.0]")

    if isinstance(levels, str):
        if levels.lower() in ("11pt", "11", "11-pt", "eleven"):
            return list(ELEVEN_POINTS)
        if levels.lower() == "all":
            return None
        raise bad("must be '11pt', 'all', a number of steps or a list of recall levels")
    if isinstance(levels, bool):
        raise bad("must be '11pt', 'all', a number of steps or a list of recall levels")
    if isinstance(levels, int):
        if levels < 1:
            raise bad("the number of steps must be >= 1")
        return [i / levels for i in range(levels + 1)]
    try:
        out = sorted({float(v) for v in levels})
    except (TypeError, ValueError):
        raise bad("must be '11pt', 'all', a number of steps or a list of recall levels") from None
    if not out or not math.isfinite(out[-1]) or out[0] < 0.0 or out[-1] > 1.0:
        raise bad("recall levels must lie in [0, 1]")
    return out


def pr_curve_data(
    run: Any,
    qrels: Any,
    *,
    levels: Levels = "11pt",
    per_query: bool = False,
    relevance_level: int = 1,
    missing: Literal["zero", "skip"] = "zero",
    depth: int | None = None,
    judged_only: bool = False,
    compat: Literal["trec_eval-10", "trec_eval-9"] = "trec_eval-10",
    columns: Mapping[str, str] | None = None,
    strategy: Strategy = "auto",
    progress: bool | None = None,
) -> Any:
    """Interpolated precision-recall curve per run (and per query).

    Parameters
    ----------
    run, qrels
        As for :func:`~searcheval_frames.core.evaluate.evaluate`.
    levels
        ``"11pt"`` (default): recall 0.0, 0.1, ..., 1.0, the classic 11-point
        curve (equals ``IPrec@0.0 ... IPrec@1.0``); ``"all"``: every recall level
        a query can reach (``0`` and ``j / R`` for ``j = 1..R``), per query its
        own levels, averaged over the union of all queries' levels; an int ``n``:
        ``n + 1`` evenly spaced levels; or a list of levels in [0, 1].
    per_query
        One curve per (run, query) instead of the mean over queries.
    relevance_level, missing, depth, judged_only, compat, columns, strategy
        As for :func:`~searcheval_frames.core.evaluate.evaluate`.
    progress
        Progress bar while ranking run by run (see :func:`precision_recall_at_k`).

    Returns
    -------
    DataFrame
        ``run, recall, precision`` or, per query, ``run, query_id, recall,
        precision``; sorted by run (input order), query and recall. The
        precision at level ``r`` is the best precision at any rank where
        ``max(1, round(r * R))`` relevant documents have been seen (trec_eval's
        rule; 0 if the run never gets there). Same kind as ``run``.

    Examples
    --------
    >>> import searcheval_frames as sef
    >>> run = {"q1": {"A": 0.9, "X": 0.8, "B": 0.7}}
    >>> qrels = {"q1": {"A": 1, "B": 1, "X": 0}}
    >>> sef.pr_curve_data(run, qrels, levels="all").rows()
    [('run', 0.0, 1.0), ('run', 0.5, 1.0), ('run', 1.0, 0.6666666666666666)]
    """
    kind = input_kind(run)
    explicit = recall_levels(levels)
    table, relevant, _, run_df = _prepare(
        run,
        qrels,
        relevance_level=relevance_level,
        missing=missing,
        depth=depth,
        judged_only=judged_only,
        compat=compat,
        columns=columns,
        strategy=strategy,
        progress=progress,
        desc="PR curves",
        func="pr_curve_data",
    )
    # precision at the n-th relevant document, then the best precision from there on
    best = (
        relevant.with_columns(pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over(KEYS).alias("n"))
        .with_columns((pl.col("n") / pl.col("rank").cast(pl.Float64)).alias("_p"))
        .with_columns(pl.col("_p").cum_max(reverse=True).over(KEYS).alias("_ip"))
        .select(*KEYS, "n", "_ip")
    )
    queries = table.select(*KEYS, "num_rel")
    if explicit is not None:
        grid = queries.join(pl.DataFrame({"recall": explicit}, schema={"recall": pl.Float64}),
                            how="cross")
    else:
        own = (
            queries.with_columns(
                pl.int_ranges(0, pl.col("num_rel") + 1, dtype=pl.Int64).alias("_j")
            )
            .explode("_j")
            .with_columns(
                pl.when(pl.col("num_rel") > 0)
                .then(pl.col("_j") / pl.col("num_rel").cast(pl.Float64))
                .otherwise(0.0)
                .alias("recall")
            )
            .select(*KEYS, "num_rel", "recall")
        )
        if per_query:
            grid = own
        else:
            union = own.select(pl.col("recall").unique().sort())
            grid = queries.join(union, how="cross")
    ctx = Context(relevance_level=relevance_level, compat=compat)
    grid = grid.with_columns(
        pl.max_horizontal(iprec_cut(ctx, pl.col("recall"), pl.col("num_rel")), pl.lit(1))  # type: ignore[arg-type]
        .cast(pl.Int64)
        .alias("n")
    )
    curve = grid.join(best, on=[*KEYS, "n"], how="left").select(
        *KEYS, "recall", pl.col("_ip").fill_null(0.0).alias("precision")
    )
    if per_query:
        result = _order(curve, run_df, ["query_id", "recall"])
    else:
        result = _order(
            curve.group_by(["run", "recall"]).agg(pl.col("precision").mean()), run_df, ["recall"]
        )
    return to_native(result, kind)
