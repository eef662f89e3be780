"""``sef.sweep``: a system per grid point, run, evaluated, with its holes in view.

Each point of the grid builds a system (``make_system(**point)``), runs the queries
through :func:`~searcheval_frames.retrieve` (the cache: a point asked before is not
asked again) and is evaluated with :func:`~searcheval_frames.evaluate`. The frame shows,
beside each measure's mean, how much of each point's top k has no label: a knob that
moves the ranking into unlabelled documents scores lower because holes count as
non-relevant, not because it is worse (OpenSearch's optimiser drops those documents
silently, search-relevance#401). ``judge=`` labels them through
:func:`~searcheval_frames.fill_holes`.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from ..core.evaluate import evaluate
from ..errors import InvalidOptionError, SearchEvalWarning
from ..frames.kinds import Kind, input_kind, to_native
from ..io.texts import queries_table
from ..measures import parse_measures
from ..options import check_float, check_int, check_str_list, option_error
from ..systems import RetrieveResult, as_system, retrieve
from .points import grid_points, point_name

__all__ = ["SweepResult", "sweep"]


@dataclass
class SweepResult:
    """What :func:`sweep` returns.

    Attributes
    ----------
    table
        One row per grid point (polars): the knobs, ``run`` (the point's run name), each
        measure's mean over the judged queries (and ``<measure> (train)`` /
        ``<measure> (test)`` with ``train_queries``), ``Judged@k``, ``unjudged`` (the
        share of the point's top-k documents without a human label), ``filled`` (of
        those, how many the judge labelled; with ``judge=``), ``errors`` (failed
        queries), ``p50`` and ``p95`` (client seconds per query), ``unjudged_warning``.
        ``.frame`` gives it in the caller's frame kind.
    params, measures, k, min_judged
        The knobs, the measures' names, the depth and the judged share below which a
        point is flagged.
    runs
        Each point's :class:`~searcheval_frames.systems.RetrieveResult`, by run name.
    qrels
        The labels the measures used (with the judge's labels when ``judge=``).
    per_query
        The per-query values (``run, query_id, measure, value``) behind the means.
    train, test
        The query ids a best point is chosen on, and those it is scored on (empty
        without ``train_queries``).
    """

    table: pl.DataFrame
    params: list[str]
    measures: list[str]
    k: int
    min_judged: float
    runs: dict[str, RetrieveResult]
    qrels: pl.DataFrame
    per_query: pl.DataFrame
    train: list[str] = field(default_factory=list)
    test: list[str] = field(default_factory=list)
    kind: Kind = field(default_factory=lambda: Kind("polars"), repr=False)

    @property
    def frame(self) -> Any:
        """The table in the frame kind of the queries given."""
        return to_native(self.table, self.kind)

    def best(self, measure: str | None = None) -> dict[str, Any]:
        """The best point's row as a dict (the knobs, the means, ...).

        Chosen on the training queries with ``train_queries`` (its held-out score is
        ``row["<measure> (test)"]``), else on all; ties go to the first point of the grid.
        """
        name = self.measures[0] if measure is None else _measure_name(measure)
        if name not in self.measures:
            raise option_error("SweepResult.best", "measure", measure,
                               f"must be one of the sweep's measures {self.measures}",
                               f"best({self.measures[0]!r})")
        col = f"{name} (train)" if self.train else name
        values = self.table[col].fill_null(-np.inf).to_numpy()
        return self.table.row(int(np.argmax(values)), named=True)

    def plot(self, measure: str | None = None, *, x: str | None = None, ax: Any = None) -> Any:
        """Draw the sweep (:class:`~searcheval_frames.figures.sweep.SweepDisplay`)."""
        from ..figures.sweep import SweepDisplay

        return SweepDisplay.from_sweep(self, measure, x=x).plot(ax=ax)

    def __repr__(self) -> str:
        return f"SweepResult({len(self.table)} points, measures={self.measures})\n{self.table}"


def _measure_name(measure: str) -> str:
    return parse_measures([measure])[0].name


def _check(grid: Any, measures: Any, k: Any, min_judged: Any, train_queries: Any,
           max_concurrency: Any) -> tuple[list[dict[str, Any]], list[str], set[str] | None]:
    func = "sweep"
    points = grid_points(grid)
    check_int(func, "k", k, minimum=1, example="k=20")
    check_int(func, "max_concurrency", max_concurrency, minimum=1, example="max_concurrency=8")
    check_float(func, "min_judged", min_judged, minimum=0, maximum=1, example="min_judged=0.9")
    names = check_str_list(func, "measures", measures, example="measures=['nDCG@10', 'AP']") \
        if not isinstance(measures, str) else [measures]
    train = None
    if train_queries is not None:
        if isinstance(train_queries, str | bytes) or not isinstance(train_queries, Iterable):
            raise option_error(func, "train_queries", train_queries,
                               "must be a list of query ids", "train_queries=['q01', 'q02']")
        train = {str(q) for q in train_queries}
        if not train:
            raise option_error(func, "train_queries", train_queries, "must not be empty",
                               "train_queries=['q01', 'q02']")
    return points, [m.name for m in parse_measures(names)], train


def _run_points(make_system: Callable[..., Any], points: list[dict[str, Any]],
                queries: pl.DataFrame, k: int, retrieve_opts: dict[str, Any]
                ) -> dict[str, RetrieveResult]:
    """Each point's system built, run and closed; results by run name."""
    runs: dict[str, RetrieveResult] = {}
    for point in points:
        name = point_name(point)
        if name in runs:
            raise InvalidOptionError(f"sweep(grid=...): two points are both named {name!r}; "
                                     "give the grid distinct values")
        try:
            system = as_system(make_system(**point), name=name)
        except TypeError as exc:
            raise InvalidOptionError(
                f"sweep(make_system=...): make_system(**{point}) failed: {exc}. It must "
                "accept every knob of the grid as a keyword") from exc
        try:
            runs[name] = retrieve(system, queries, k, name=name, **retrieve_opts)
        finally:
            system.close()
    return runs


def _fill(run: pl.DataFrame, qrels: pl.DataFrame, judge: Any, k: int, queries: pl.DataFrame,
          docs: Any, journal: Any) -> pl.DataFrame:
    from ..evalset.judges import fill_holes

    if docs is None:
        raise option_error("sweep", "docs", None, "is needed with judge= (the texts the judge "
                           "reads)", "docs='data/example/docs.jsonl'")
    filled = fill_holes(run, qrels, judge, depth=k, queries=queries, docs=docs,
                        journal=journal, progress=False)
    return pl.DataFrame(filled.frame) if not isinstance(filled.frame, pl.DataFrame) \
        else filled.frame


def _holes(run: pl.DataFrame, human: pl.DataFrame, labels: pl.DataFrame, k: int) -> pl.DataFrame:
    """Per run: the share of its top-k rows without a human label, and how many the
    judge's labels cover."""
    top = run.filter(pl.col("rank") <= k).select("run", "query_id", "doc_id")
    keys = ["query_id", "doc_id"]
    top = top.join(human.select(keys).unique().with_columns(pl.lit(True).alias("_h")),
                   on=keys, how="left")
    top = top.join(labels.select(keys).unique().with_columns(pl.lit(True).alias("_l")),
                   on=keys, how="left")
    hole = pl.col("_h").is_null()
    return top.group_by("run").agg(
        (hole.sum() / pl.len()).alias("unjudged"),
        (hole & pl.col("_l").is_not_null()).sum().alias("filled"))


def _latency(runs: dict[str, RetrieveResult]) -> pl.DataFrame:
    rows = []
    for name, res in runs.items():
        lat = res.latency
        ok = lat.filter(pl.col("status") == "ok")["seconds"].drop_nulls().to_numpy()
        rows.append((name, int((lat["status"] != "ok").sum()),
                     float(np.quantile(ok, 0.5)) if ok.size else None,
                     float(np.quantile(ok, 0.95)) if ok.size else None))
    return pl.DataFrame(rows, schema={"run": pl.String, "errors": pl.Int64, "p50": pl.Float64,
                                      "p95": pl.Float64}, orient="row")


def _means(runs: pl.DataFrame, qrels: pl.DataFrame, measures: list[str], ids: Any,
           relevance_level: int, suffix: str) -> pl.DataFrame:
    """Each run's mean of each measure (wide), over the qrels' queries in ``ids`` (all
    when None), as :func:`evaluate` computes it."""
    q = qrels if ids is None else qrels.filter(pl.col("query_id").is_in(sorted(ids)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SearchEvalWarning)  # holes: the frame shows them
        res = evaluate(runs, q, measures, relevance_level=relevance_level)
    wide = res.pivot(on="measure", index="run", values="value")
    return wide.rename({m: f"{m}{suffix}" for m in wide.columns if m != "run"})


def _warn(table: pl.DataFrame, k: int, min_judged: float, judged: bool, first: str) -> None:
    low = table.filter(pl.col("below_min_judged"))
    if low.height == 0:
        return
    worst = low.sort("labelled").row(0, named=True)
    best = table.row(int(np.argmax(table[first].fill_null(-np.inf).to_numpy())), named=True)
    tail = (" The best point on " + first + f" ({best['run']}) is one of them."
            if best["below_min_judged"] else "")
    fix = ("label them (sef.pool, sef.label_sheet) and sweep again" if judged else
           "label them, or pass judge= (and docs=) to fill them with sef.fill_holes")
    warnings.warn(
        f"sweep: {low.height} of {table.height} points have less than {min_judged:.0%} of "
        f"their top-{k} labelled (least: {worst['run']}, {worst['labelled']:.0%}); their "
        f"scores count the holes as non-relevant, a lower bound, so the sweep cannot tell "
        f"whether they are worse.{tail} See the frame's labelled and below_min_judged "
        f"columns; {fix}.", SearchEvalWarning, stacklevel=3)


def sweep(
    make_system: Callable[..., Any],
    grid: Mapping[str, Sequence[Any]],
    *,
    queries: Any,
    qrels: Any,
    measures: str | Sequence[str],
    k: int = 20,
    judge: Any = None,
    docs: Any = None,
    journal: str | os.PathLike[str] = "labels/judge.jsonl",
    train_queries: Iterable[str] | None = None,
    min_judged: float = 0.9,
    relevance_level: int = 1,
    max_concurrency: int = 1,
    cache: str | os.PathLike[str] | bool | None = None,
    retries: int = 3,
    timeout: float | None = None,
    progress: bool | None = False,
) -> SweepResult:
    """Sweep a search system's knobs: build, run and evaluate one system per grid point.

    For each point ``p`` of ``grid`` (every combination, the first knob varying
    slowest) the system ``make_system(**p)`` runs ``queries`` at depth ``k`` through
    :func:`~searcheval_frames.retrieve` (with ``cache``: a point already asked is read
    back, not asked again) and is evaluated against ``qrels`` with
    :func:`~searcheval_frames.evaluate`: each number of the frame is that function's
    mean for that point's run. Beside them the frame shows how much of each point's
    top ``k`` has a label (``labelled``): holes count as non-relevant, so a point that
    retrieves unlabelled documents scores lower whether or not it is worse. Points
    below ``min_judged`` are flagged (``below_min_judged``) and named in a warning.

    Parameters
    ----------
    make_system
        ``make_system(**point)`` -> a :class:`~searcheval_frames.systems.System` (or a
        search function). It is closed after its run; share an index between points
        (``base = sef.systems.bm25(docs)``; ``lambda k1, b: base.with_params(k1=k1, b=b)``).
    grid
        Knob -> values, e.g. ``{"k1": [0.9, 1.2, 1.5], "b": [0.4, 0.75]}``.
    queries, qrels
        The query set (``query_id, query``: a frame, dict or file) and the labels.
    measures
        The measures, e.g. ``["nDCG@10", "AP"]`` (``Judged@k`` is added).
    k
        Hits asked per query (the run's depth; also the depth of ``labelled``).
    judge, docs, journal
        A judge (a function or :class:`~searcheval_frames.judges.OpenAICompatible`):
        the holes of every point's top ``k`` are labelled through
        :func:`~searcheval_frames.fill_holes` (``docs``: the texts it reads; ``journal``:
        where its labels are kept) and the measures use human + judge labels;
        ``unjudged`` and ``filled`` show how many holes there were and were filled.
    train_queries
        Query ids to choose the best point on; the qrels' other queries are held out:
        the frame gets ``<measure> (train)`` and ``<measure> (test)``, and
        :meth:`SweepResult.best` chooses on train (as
        :func:`~searcheval_frames.optimize_fusion` does).
    min_judged
        The labelled share of a point's top ``k`` below which it is flagged (default 0.9,
        as :func:`~searcheval_frames.report`).
    relevance_level
        Minimum label that counts as relevant (trec_eval ``-l``).
    max_concurrency, cache, retries, timeout, progress
        As for :func:`~searcheval_frames.retrieve`.

    Returns
    -------
    SweepResult
        ``.frame`` (one row per point), ``.best(measure)``, ``.plot()``, ``.runs``.

    Examples
    --------
    >>> import searcheval_frames as sef
    >>> docs = {"d1": "hnsw graph index", "d2": "hnsw hnsw hnsw", "d3": "ivf lists",
    ...         "d4": "product quantization"}
    >>> base = sef.systems.bm25(docs)
    >>> res = sef.sweep(lambda k1: base.with_params(k1=k1), {"k1": [0.0, 1.2]},
    ...                 queries={"q1": "hnsw index"}, qrels={"q1": {"d1": 1, "d2": 0}},
    ...                 measures=["RR"], k=3, cache=False)
    >>> res.frame.select("k1", "RR", "labelled").rows()
    [(0.0, 1.0, 1.0), (1.2, 1.0, 1.0)]
    >>> res.best("RR")["k1"]
    0.0
    """
    points, names, train = _check(grid, measures, k, min_judged, train_queries,
                                  max_concurrency)
    from ..core._inputs import qrels_from

    qtable = queries_table(queries)
    human = qrels_from(qrels, None)
    opts = {"max_concurrency": max_concurrency, "cache": cache, "retries": retries,
            "timeout": timeout, "progress": progress}
    runs = _run_points(make_system, points, qtable, k, opts)
    run = pl.concat([r.run for r in runs.values()])
    labels = human if judge is None else _fill(run, human, judge, k, qtable, docs, journal)
    judged = f"Judged@{k}"
    all_m = [*names, judged] if judged not in names else names
    table = pl.DataFrame({"run": list(runs), **{p: [pt[p] for pt in points] for p in points[0]}})
    table = table.join(_means(run, labels, all_m, None, relevance_level, ""), on="run",
                       how="left")
    test: set[str] = set()
    if train is not None:
        test = set(labels["query_id"].unique().to_list()) - train
        table = table.join(_means(run, labels, names, train, relevance_level, " (train)"),
                           on="run", how="left")
        if test:
            table = table.join(_means(run, labels, names, test, relevance_level, " (test)"),
                               on="run", how="left")
    holes = _holes(run, human, labels, k)
    table = table.join(holes, on="run", how="left").with_columns(
        pl.col("unjudged").fill_null(0.0), pl.col("filled").fill_null(0))
    table = table.join(_latency(runs), on="run", how="left")
    if judge is None:
        table = table.drop("filled").with_columns(labelled=1 - pl.col("unjudged"))
    else:  # labelled by a human or the judge
        after = _holes(run, labels, labels, k).select("run", (1 - pl.col("unjudged"))
                                                      .alias("labelled"))
        table = table.join(after, on="run", how="left").with_columns(
            pl.col("labelled").fill_null(1.0))
    table = table.with_columns(below_min_judged=pl.col("labelled") < min_judged)
    tail = ["labelled", "unjudged", "filled", "below_min_judged", "errors", "p50", "p95"]
    first = ["run", *points[0]]
    table = table.select(*first, *[c for c in table.columns if c not in (*first, *tail)],
                         *[c for c in tail if c in table.columns])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SearchEvalWarning)
        per_query = evaluate(run, labels, all_m, per_query=True,
                             relevance_level=relevance_level)
    _warn(table, k, min_judged, judge is not None, f"{names[0]} (train)" if train else names[0])
    return SweepResult(table, list(points[0]), names, k, min_judged, runs, labels, per_query,
                       sorted(train or []), sorted(test), kind=input_kind(queries))
