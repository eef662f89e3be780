"""``sef.sample_queries``: test queries drawn from a query log, with their inclusion
probabilities, so the test set says which traffic it stands for.

The log becomes distinct normalised queries with counts
(:mod:`~searcheval_frames.evalset.queryset.log`); each gets a stratum by cumulative
traffic share (most frequent first: a query is in the head when the searches of the more
frequent queries are below ``cuts[0]`` of all searches, in the torso below ``cuts[1]``,
else in the tail), then one of four designs (:mod:`~searcheval_frames.evalset.queryset.design`)
draws ``n`` of them. Every sampled query carries its ``inclusion_probability``
:math:`\\pi_i` and ``weight`` :math:`w_i = c_i / \\pi_i`: the searches it stands for
(the Horvitz–Thompson expansion of its count :math:`c_i`).
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import polars as pl

from ...frames import Kind, input_kind, to_native
from ...options import check_choice, check_float, check_int, check_optional_int, option_error
from .design import allocate, pps_inclusion, systematic_pps
from .log import LogError, log_table
from .normalize import check_normalize

__all__ = ["METHODS", "FramedResult", "QuerySample", "sample_queries", "stratum_names", "with_strata"]

_F = "sample_queries"
METHODS = ("pptss", "stratified", "top", "random")
SAMPLE_SCHEMA = {"query_id": pl.String, "query": pl.String, "count": pl.Int64,
                 "stratum": pl.String, "inclusion_probability": pl.Float64,
                 "weight": pl.Float64}


def stratum_names(cuts: Sequence[float]) -> list[str]:
    """``head``, ``torso`` (``torso1``, ``torso2``, ... for more cuts), ``tail``."""
    middle = ["torso"] if len(cuts) == 2 else [f"torso{i}" for i in range(1, len(cuts))]
    return ["head", *middle, "tail"]


def with_strata(table: pl.DataFrame, cuts: Sequence[float]) -> pl.DataFrame:
    """``table`` (most frequent first, a ``count`` column) with ``stratum``: by the share
    of all searches made by the queries before it."""
    before = (pl.col("count").cum_sum() - pl.col("count")) / pl.col("count").sum()
    names = stratum_names(cuts)
    expr: Any = pl.when(before < cuts[0]).then(pl.lit(names[0]))
    for cut, name in zip(cuts[1:], names[1:-1], strict=True):
        expr = expr.when(before < cut).then(pl.lit(name))
    return table.with_columns(expr.otherwise(pl.lit(names[-1])).alias("stratum"))


class FramedResult:
    """``.frame`` in the caller's frame kind and ``.to_polars()``, for the results here."""

    _frame: pl.DataFrame
    kind: Kind

    @property
    def frame(self) -> Any:
        return to_native(self._frame, self.kind)

    def to_polars(self) -> pl.DataFrame:
        return self._frame


@dataclass
class QuerySample(FramedResult):
    """Queries drawn from a log by :func:`sample_queries`.

    Attributes
    ----------
    frame
        ``query_id, query, count, stratum, inclusion_probability, weight`` in the
        caller's frame kind, most frequent first.
    method, n, seed, cuts, allocation
        How it was drawn.
    strata
        Polars ``stratum, log_queries, log_searches``: the whole log per stratum.
    """

    _frame: pl.DataFrame
    method: str
    n: int
    seed: int | None
    cuts: tuple[float, ...]
    allocation: str
    strata: pl.DataFrame
    kind: Kind = field(default_factory=lambda: Kind("polars"))

    @property
    def strata_column(self) -> str | None:
        """The column the design stratified on (what a bootstrap resamples within)."""
        return "stratum" if self.method == "stratified" else None

    def coverage(self) -> Any:
        """Per stratum and in all: the log's distinct queries and share of searches, the
        sampled queries, the share of searches they make themselves (``sample_share``)
        and the share they stand for (``represented_share``: their weights over all
        searches, the Horvitz–Thompson estimate of the stratum's share)."""
        total = float(self.strata["log_searches"].sum())
        got = self._frame.group_by("stratum").agg(
            pl.len().alias("sampled_queries"), pl.col("count").sum().alias("_s"),
            pl.col("weight").sum().alias("_w"))
        per = (self.strata.join(got, on="stratum", how="left")
               .with_columns(pl.col("sampled_queries", "_s", "_w").fill_null(0)))
        every = per.select(pl.lit("all").alias("stratum"),
                           pl.col("log_queries", "log_searches", "sampled_queries", "_s",
                                  "_w").sum())
        out = pl.concat([per, every], how="vertical_relaxed").select(
            "stratum", "log_queries", (pl.col("log_searches") / total).alias("log_share"),
            pl.col("sampled_queries").cast(pl.Int64),
            (pl.col("_s") / total).alias("sample_share"),
            (pl.col("_w") / total).alias("represented_share"))
        return to_native(out, self.kind)

    def __repr__(self) -> str:
        share = float(self._frame["count"].sum()) / float(self.strata["log_searches"].sum())
        return (f"QuerySample({self._frame.height} queries by {self.method!r} from "
                f"{int(self.strata['log_queries'].sum()):,} distinct queries / "
                f"{int(self.strata['log_searches'].sum()):,} searches; they make "
                f"{share:.1%} of the searches)")


def _check(n: Any, method: Any, seed: Any, cuts: Any, allocation: Any) -> tuple[float, ...]:
    check_int(_F, "n", n, minimum=1, example="n=50")
    check_choice(_F, "method", method, METHODS, example="method='pptss'")
    check_optional_int(_F, "seed", seed, minimum=0, example="seed=0")
    check_choice(_F, "allocation", allocation, ("equal", "proportional"),
                 example="allocation='proportional'")
    if not isinstance(cuts, Sequence) or isinstance(cuts, str) or not cuts:
        raise option_error(_F, "cuts", cuts, "must be a tuple of increasing shares in (0, 1)",
                           "cuts=(0.5, 0.8)")
    out = tuple(check_float(_F, "cuts", c, minimum=0, maximum=1, open_min=True, open_max=True,
                            example="cuts=(0.5, 0.8)") for c in cuts)
    if any(b <= a for a, b in itertools.pairwise(out)):
        raise option_error(_F, "cuts", cuts, "must increase", "cuts=(0.5, 0.8)")
    return out


def _draw(table: pl.DataFrame, n: int, method: str, allocation: str,
          rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(indices of the sampled rows, inclusion probability of every row)."""
    counts = table["count"].to_numpy()
    size = counts.size
    if method == "top":
        pi = np.zeros(size)
        pi[:n] = 1.0
    elif method == "random":
        pi = np.full(size, n / size)
    elif method == "pptss":
        pi = pps_inclusion(counts, n)
    else:
        strata = table["stratum"].to_numpy()
        names = table["stratum"].unique(maintain_order=True).to_list()
        members = [np.flatnonzero(strata == s) for s in names]
        sizes = allocate([m.size for m in members], n, allocation)
        pi = np.zeros(size)
        chosen = []
        for m, k in zip(members, sizes, strict=True):
            pi[m] = k / m.size
            chosen.append(rng.choice(m, size=k, replace=False) if k else m[:0])
        return np.sort(np.concatenate(chosen)), pi
    if method == "random":
        return np.sort(rng.choice(size, size=n, replace=False)), pi
    if method == "top":
        return np.arange(n), pi
    middle = np.flatnonzero((pi > 0) & (pi < 1))
    return systematic_pps(pi, rng.permutation(middle), float(rng.random())), pi


def _ids(keys: list[str], given: list[str | None]) -> list[str]:
    """The log's query ids, else ``q`` + 10 hex digits of the normalised text's SHA-1."""
    out = [g if g is not None else "q" + hashlib.sha1(k.encode()).hexdigest()[:10]
           for k, g in zip(keys, given, strict=True)]
    if len(set(out)) < len(out):  # (two spellings with one id in the log)
        out = [f"{o}~{i}" if out.count(o) > 1 else o for i, o in enumerate(out)]
    return out


def sample_queries(
    log: Any,
    n: int,
    method: Literal["pptss", "stratified", "top", "random"] = "pptss",
    *,
    seed: int | None = 0,
    normalize: Any = True,
    columns: Mapping[str, str] | None = None,
    cuts: Sequence[float] = (0.5, 0.8),
    allocation: Literal["equal", "proportional"] = "equal",
) -> QuerySample:
    """Draw ``n`` test queries from a query log, each with its inclusion probability.

    Parameters
    ----------
    log
        One row per search (a query text column; repeats are counted) or one row per
        query with a count column (``count``, ``frequency``, ``searches``, ...); any
        frame kind, a dict ``{query: count}`` or a table file. A ``query_id`` column
        names the queries (else ``q`` + a hash of the normalised text).
    n
        How many distinct queries to draw.
    method
        ``"pptss"``: probability proportional to the query's searches, without
        replacement (randomised systematic πps; queries with :math:`\\pi_i \\ge 1` are
        taken for certain); ``"stratified"``: a simple random sample within head /
        torso / tail; ``"top"``: the ``n`` most frequent; ``"random"``: a simple random
        sample of the distinct queries.
    seed
        Seed of numpy's generator (``None``: not reproducible).
    normalize
        ``True``: NFKC, lower case, one space (one query typed two ways is one query);
        ``False``: texts as typed; or a function ``str -> str``.
    columns
        ``{"query": ..., "count": ..., "query_id": ...}``: your column names.
    cuts
        Cumulative traffic shares where the head ends and the torso ends.
    allocation
        ``"stratified"`` only: ``"equal"`` (:math:`n/H` per stratum) or
        ``"proportional"`` (:math:`n N_h/N`, :math:`N_h` distinct queries in stratum h).

    Returns
    -------
    QuerySample
        ``.frame``: ``query_id, query, count, stratum, inclusion_probability, weight``
        (:math:`w_i = c_i/\\pi_i`, the searches the query stands for); ``.coverage()``.

    Notes
    -----
    Inclusion probabilities: ``pptss`` :math:`\\pi_i = \\min(1, n c_i / C)` iterated
    over the certainty units; ``stratified`` :math:`n_h / N_h`; ``random``
    :math:`n / N`; ``top`` 1 for the chosen (it is not a probability sample of the rest
    of the log: its weighted means speak for those queries only). Särndal, Swensson &
    Wretman, *Model Assisted Survey Sampling* (1992), ch. 3.

    Examples
    --------
    >>> import polars as pl, searcheval_frames as sef
    >>> log = pl.DataFrame({"query": ["bm25", "BM25 ", "bm25", "hnsw"] + ["rag"] * 4})
    >>> s = sef.sample_queries(log, 2, "top")
    >>> s.frame.select("query", "count", "inclusion_probability").rows()
    [('rag', 4, 1.0), ('bm25', 3, 1.0)]
    >>> s.coverage().filter(pl.col("stratum") == "all")["sample_share"].to_list()
    [0.875]
    """
    cuts_t = _check(n, method, seed, cuts, allocation)
    normalize = check_normalize(_F, normalize)
    table = log_table(log, _F, normalize=normalize, columns=columns)
    table = table.filter(pl.col("count") > 0)
    if n > table.height:
        raise LogError(f"{_F}(n={n}): the log has only {table.height} distinct queries with "
                       "searches (after normalisation); ask for at most that many")
    table = with_strata(table, cuts_t)
    picked, pi = _draw(table, n, method, allocation, np.random.default_rng(seed))
    table = table.with_columns(pl.Series("inclusion_probability", pi))
    names = stratum_names(cuts_t)
    strata = (pl.DataFrame({"stratum": names})
              .join(table.group_by("stratum").agg(pl.len().alias("log_queries"),
                                                  pl.col("count").sum().alias("log_searches")),
                    on="stratum", how="left")
              .with_columns(pl.col("log_queries", "log_searches").fill_null(0).cast(pl.Int64)))
    got = table[picked]
    out = got.select(
        pl.Series("query_id", _ids(got["key"].to_list(), got["log_query_id"].to_list())),
        "query", "count", "stratum", "inclusion_probability",
        (pl.col("count") / pl.col("inclusion_probability")).alias("weight"),
    ).cast(SAMPLE_SCHEMA)  # type: ignore[arg-type]
    return QuerySample(out, method, n, seed, cuts_t, allocation, strata, input_kind(log))
