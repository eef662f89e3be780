"""Pick fusion weights or RRF's ``k`` on training queries (layer 4).

Each candidate is fused with the same columnar code as :func:`fuse` (the runs are
normalised and ranked once) and evaluated with the engine of
:func:`searcheval_frames.evaluate`; candidates are evaluated in batches, as runs of
one long frame, so a grid of a thousand weight vectors costs a few group-bys.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from .._deprecation import outside_stacklevel
from ..core._inputs import qrels_from
from ..core.evaluate import evaluate_frames
from ..errors import IdMismatchError, SearchEvalWarning
from ..frames import Kind, to_native
from ..measures import parse_measures
from ..options import check_choice, check_float, check_int, check_optional_int, option_error
from ._shared import (
    RANK_METHODS,
    check_method,
    check_norm,
    combine,
    finish,
    prepare,
    run_names,
    runs_frame,
)

__all__ = ["FusionSearch", "optimize_fusion"]

TUNABLE = ("wsum", "rrf")
DEFAULT_KS = (1, 5, 10, 20, 40, 60, 80, 100)
MAX_CANDIDATES = 20_000
BATCH = 64  # candidates evaluated together as one long frame

Candidate = tuple[float, tuple[float, ...] | None]  # (RRF's k, weights or None)


@dataclass
class FusionSearch:
    """What :func:`optimize_fusion` chose and how well it did.

    Attributes
    ----------
    params
        Keyword arguments for :func:`fuse` that reproduce the chosen fusion:
        ``sef.fuse(runs, **search.params)``.
    measure
        The measure optimised (canonical name).
    train_score, test_score
        Mean of the measure over the training queries, and over the held-out
        queries (the qrels' queries not in ``train_queries``; None without them).
    n_train, n_test
        Number of training and held-out queries.
    trials
        One row per candidate: ``k`` (RRF only), one weight column per run (when
        weights were tuned), ``train`` score; best first (polars).
    frame
        A one-row summary in the caller's frame kind (``kind``, the kind of ``runs``).
    """

    params: dict[str, Any]
    measure: str
    train_score: float
    test_score: float | None
    n_train: int
    n_test: int
    trials: pl.DataFrame = field(repr=False)
    kind: Kind = field(default_factory=lambda: Kind("polars"), repr=False)

    @property
    def weights(self) -> dict[str, float] | None:
        return self.params.get("weights")

    @property
    def k(self) -> float | None:
        return self.params.get("k")

    @property
    def frame(self) -> Any:
        """A one-row summary: method, norm, k, weights, scores; in the caller's frame
        kind (the kind of ``runs``: pandas in, pandas out)."""
        return to_native(self.to_polars(), self.kind)

    def to_polars(self) -> pl.DataFrame:
        """The one-row summary of :attr:`frame` as a polars DataFrame."""
        return pl.DataFrame([{
            "method": self.params["method"], "norm": self.params.get("norm"),
            "k": self.k, "weights": str(self.weights), "measure": self.measure,
            "train": self.train_score, "n_train": self.n_train,
            "test": self.test_score, "n_test": self.n_test,
        }])

    def __str__(self) -> str:
        p = self.params
        text = (f"{p['method']}" + (f"[{p['norm']}]" if p.get("norm") else "")
                + (f" k={self.k:g}" if self.k is not None else "")
                + (f" weights={self.weights}" if self.weights else "")
                + f": {self.measure} = {self.train_score:.4f} on {self.n_train} training queries")
        if self.test_score is not None:
            text += f", {self.test_score:.4f} on {self.n_test} held-out queries"
        return text


def _simplex_grid(func: str, step: Any, n: int) -> list[tuple[float, ...]]:
    step = check_float(func, "grid", step, minimum=0, maximum=1, open_min=True,
                       what="the step of a grid of weights that sum to 1", example="grid=0.1")
    m = round(1 / step)
    if abs(m * step - 1) > 1e-9:
        raise option_error(func, "grid", step, "must divide 1 into whole steps (0.5, 0.25, 0.1, 0.05, ...)",
                    "grid=0.1")
    count = math.comb(m + n - 1, n - 1)
    if count > MAX_CANDIDATES:
        raise option_error(func, "grid", step, f"gives {count:,} weight vectors for {n} runs (more than "
                    f"{MAX_CANDIDATES:,}); use a larger step or trials=", "trials=500")
    # compositions of m into n parts (stars and bars), in a fixed order
    out = []
    for bars in itertools.combinations(range(m + n - 1), n - 1):
        parts = np.diff(np.array((-1, *bars, m + n - 1))) - 1
        out.append(tuple(float(p) / m for p in parts))
    return out


def _check_ks(func: str, ks: Any) -> list[float]:
    items = [ks] if isinstance(ks, int | float) and not isinstance(ks, bool) else ks
    if not isinstance(items, Iterable) or isinstance(items, str | bytes | Mapping):
        raise option_error(func, "k", ks, "must be a number >= 0 or a list of them", "k=[10, 60, 100]")
    items = list(items)
    if not items:
        raise option_error(func, "k", ks, "must not be empty", "k=[10, 60, 100]")
    return [check_float(func, "k", v, minimum=0, what="RRF's constant", example="k=[10, 60]")
            for v in items]


def _query_set(func: str, train_queries: Any) -> set[str] | None:
    if train_queries is None:
        return None
    if isinstance(train_queries, str | bytes) or not isinstance(train_queries, Iterable):
        raise option_error(func, "train_queries", train_queries, "must be a list of query ids, or None",
                    "train_queries=['q01', 'q02']")
    ids = {str(q) for q in train_queries}
    if not ids:
        raise option_error(func, "train_queries", train_queries, "must not be empty",
                    "train_queries=['q01', 'q02']")
    return ids


def optimize_fusion(
    runs: Any,
    qrels: Any,
    measure: str = "nDCG@10",
    method: str = "wsum",
    *,
    norm: str | None = "auto",
    grid: float | None = None,
    trials: int | None = None,
    k: float | Sequence[float] = DEFAULT_KS,
    seed: int = 0,
    train_queries: Iterable[str] | None = None,
    depth: int | None = None,
    relevance_level: int = 1,
) -> FusionSearch:
    """Choose fusion weights (``wsum``, ``rrf``) and RRF's ``k`` on training queries.

    Parameters
    ----------
    runs, qrels
        As for :func:`fuse` and :func:`~searcheval_frames.evaluate`.
    measure
        The measure to maximise, e.g. ``"nDCG@10"``, ``"AP"``, ``"RR@10"``.
    method
        ``"wsum"`` (weights) or ``"rrf"`` (``k``, and weights when ``grid`` or
        ``trials`` is given).
    norm
        Normalisation for ``wsum`` (``"auto"``: ``"min-max"``, as ranx's default);
        ignored (None) for ``rrf``.
    grid
        Step of a grid of weight vectors that sum to 1 (``0.1``: 0, 0.1, ..., 1 for
        each run). Default for ``wsum`` when ``trials`` is not given: 0.1.
    trials
        Instead of a grid: this many random weight vectors (uniform on the simplex,
        Dirichlet(1)), drawn with ``seed``; equal weights are always tried too.
    k
        RRF's constant, or a list of them to try (default 1, 5, 10, 20, 40, 60, 80, 100).
    seed
        Seed of the random trials.
    train_queries
        Query ids to tune on; the qrels' other queries are held out and scored with
        the chosen values. None: tune and score on every query (no held-out score).
    depth
        Passed to :func:`fuse`: documents kept per query of the fused run.
    relevance_level
        Minimum label that counts as relevant (trec_eval ``-l``).

    Returns
    -------
    FusionSearch
        ``params`` (for :func:`fuse`), ``train_score``, ``test_score``, ``trials``.
        Ties between candidates go to the first one tried (grid order, or equal
        weights first).

    Examples
    --------
    >>> import searcheval_frames as sef
    >>> runs = {"a": {"q1": {"d1": 2.0, "d2": 1.0}}, "b": {"q1": {"d2": 5.0, "d3": 1.0}}}
    >>> best = sef.optimize_fusion(runs, {"q1": {"d2": 1}}, "RR", grid=0.5)
    >>> best.weights, best.train_score
    ({'a': 0.0, 'b': 1.0}, 1.0)
    """
    func = "optimize_fusion"
    ms = parse_measures(measure)
    if len(ms) != 1:
        raise option_error(func, "measure", measure, "must name one measure", "measure='nDCG@10'")
    method = check_method(func, method)
    method = check_choice(func, "method", method, TUNABLE, example="method='wsum'")
    if norm == "auto":
        norm = None if method in RANK_METHODS else "min-max"
    norm = check_norm(func, norm, method)
    if grid is not None and trials is not None:
        raise option_error(func, "trials", trials, "cannot be combined with grid=; pick one",
                    "grid=0.1 or trials=200")
    trials = check_optional_int(func, "trials", trials, minimum=1, example="trials=200")
    seed = check_int(func, "seed", seed, example="seed=0")
    depth = check_optional_int(func, "depth", depth, minimum=1, example="depth=1000")
    relevance_level = check_int(func, "relevance_level", relevance_level, example="relevance_level=1")
    ks = _check_ks(func, k) if method == "rrf" else [60.0]
    train_ids = _query_set(func, train_queries)

    df, kind = runs_frame(runs, None)
    names = run_names(df)
    qrels_df = qrels_from(qrels, None)
    tune_weights = method == "wsum" or grid is not None or trials is not None
    cands = _candidates(func, ks, len(names), tune_weights, grid, trials, seed, k)
    train_q, test_q = _split_queries(func, qrels_df, train_ids)
    prep = prepare(df, names, method, norm)

    def scores(q: pl.Series, chosen: list[Candidate]) -> list[float]:
        return _scores(prep, qrels_df, q, chosen, method=method, n=len(names), depth=depth,
                       ms=ms, relevance_level=relevance_level)

    train = scores(train_q, cands)
    best = int(np.argmax(train))  # first of the best
    kv, w = cands[best]
    params: dict[str, Any] = {"method": method, "norm": norm}
    if method == "rrf":
        params["k"] = kv
    if w is not None:
        params["weights"] = dict(zip(names, w, strict=True))
    if depth is not None:
        params["depth"] = depth
    test = scores(test_q, [cands[best]])[0] if test_q.len() else None
    table = _trials_table(cands, train, names, rrf=method == "rrf", weights=w is not None)
    return FusionSearch(params, ms[0].name, float(train[best]), test,
                        train_q.len(), test_q.len(), table, kind=kind)



def _candidates(func: str, ks: list[float], n: int, tune_weights: bool, grid: Any,
                trials: int | None, seed: int, k: Any) -> list[Candidate]:
    """Every (k, weights) to try: the k values times the weight vectors (grid or draws)."""
    if not tune_weights:
        weight_sets: list[tuple[float, ...] | None] = [None]
    elif trials is not None:
        rng = np.random.default_rng(seed)
        draws = rng.dirichlet(np.ones(n), size=trials)
        weight_sets = [tuple([1.0 / n] * n), *(tuple(map(float, w)) for w in draws)]
    else:
        weight_sets = list(_simplex_grid(func, 0.1 if grid is None else grid, n))
    cands = [(kv, w) for kv in ks for w in weight_sets]
    if len(cands) > MAX_CANDIDATES:
        raise option_error(func, "k", k, f"with the weights gives {len(cands):,} candidates (more "
                    f"than {MAX_CANDIDATES:,})", "k=[10, 60]")
    return cands


def _split_queries(func: str, qrels_df: pl.DataFrame, train_ids: set[str] | None
                   ) -> tuple[pl.Series, pl.Series]:
    """The judged training queries and the judged held-out ones (none without train_ids)."""
    judged = qrels_df.get_column("query_id").unique()
    if train_ids is None:
        return judged, judged.clear()
    unknown = sorted(train_ids - set(judged.to_list()))
    if len(unknown) == len(train_ids):
        raise IdMismatchError(
            f"{func}: none of the train_queries has relevance labels (e.g. "
            f"{unknown[:3]}); the qrels' query ids look like {judged.head(3).to_list()}"
        )
    if unknown:
        warnings.warn(f"{func}: {len(unknown)} train_queries have no labels and are "
                      f"ignored: {unknown[:5]}", SearchEvalWarning, stacklevel=outside_stacklevel())
    return judged.filter(judged.is_in(list(train_ids))), judged.filter(~judged.is_in(list(train_ids)))


def _scores(prep: pl.DataFrame, qrels_df: pl.DataFrame, q: pl.Series, chosen: list[Candidate],
            *, method: str, n: int, depth: int | None, ms: Any, relevance_level: int) -> list[float]:
    """Mean of the measure over the queries ``q`` for each candidate, in batches."""
    qrels_q = qrels_df.filter(pl.col("query_id").is_in(q.implode()))
    prep_q = prep.filter(pl.col("query_id").is_in(q.implode()))
    out: list[float] = []
    for start in range(0, len(chosen), BATCH):
        batch = chosen[start:start + BATCH]
        fused = pl.concat([
            finish(combine(prep_q, method, n, list(w) if w else None, kv), depth, f"c{i}")
            for i, (kv, w) in enumerate(batch, start=start)
        ])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SearchEvalWarning)
            res = evaluate_frames(fused, qrels_q, ms, relevance_level=relevance_level)
        vals = dict(zip(res["run"].to_list(), res["value"].to_list(), strict=True))
        out += [vals.get(f"c{i}", 0.0) for i in range(start, start + len(batch))]
    return out


def _trials_table(cands: list[Candidate], train: list[float], names: list[str], *,
                  rrf: bool, weights: bool) -> pl.DataFrame:
    """One row per candidate, best first; only the columns that were searched (no
    all-null k for wsum, no null weights for an RRF that tunes k alone)."""
    columns: dict[str, list[Any]] = {}
    if rrf:
        columns["k"] = [float(c[0]) for c in cands]
    if weights:
        ws = [c[1] or () for c in cands]  # every candidate has weights here
        columns.update({nm: [cw[j] for cw in ws] for j, nm in enumerate(names)})
    columns["train"] = list(train)
    table = pl.DataFrame(columns).with_row_index("_i")
    return table.sort(["train", "_i"], descending=[True, False]).drop("_i")
