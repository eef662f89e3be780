"""Fuse several runs into one ranking: RRF, the Comb family, weighted sums, BordaFuse, ISR.

Everything is one pass of polars expressions over the long frame of all runs:
the rows of each (run, query) are put in trec_eval order (score descending, ties
by ``doc_id`` descending) once, each row gets its normalised score or its rank,
and one group-by over (query, document) combines the runs. No Python loop runs
over queries or rows. An input of more than ``core.partitioned.ROWS_PER_PART`` rows
is fused so by ranges of query ids, one at a time (``fusion/parts.py``), with the
same result bit for bit: every value depends on one query's rows only.

Formulas (``r`` is a document's rank in a run, 1-based, in trec_eval order; ``R_d``
the runs that retrieved document ``d`` for the query, ``n_d = |R_d|``; ``s`` the
normalised score; ``w`` a run's weight):

============  ==============================================================
``rrf``       ``sum_{i in R_d} w_i / (k + r_i)``  (w_i = 1 unless given)
``combsum``   ``sum_{i in R_d} s_i``
``combmnz``   ``n_d * sum_{i in R_d} s_i``
``combmax``   ``max_{i in R_d} s_i``; ``combmin``: min; ``combmed``: median
``combanz``   ``sum_{i in R_d} s_i / n_d``
``wsum``      ``sum_{i in R_d} w_i s_i``  (w_i = 1/number of runs unless given)
``borda``     ``sum_i points_i``, ``points_i = C - r_i + 1`` when run i has d, else
              ``(C - n_i + 1) / 2``; ``C`` = documents of the query in any run,
              ``n_i`` = documents run i has for the query
``isr``       ``n_d * sum_{i in R_d} 1 / r_i^2``
``logisr``    ``ln(n_d) * sum_{i in R_d} 1 / r_i^2``
============  ==============================================================

A query absent from a run is treated as an empty result list for it. ranx's
``fuse`` is the reference (``tests/test_fusion.py`` compares every value); the
differences are listed in ``docs/fusion.md``.

>>> import polars as pl
>>> import searcheval_frames as sef
>>> runs = pl.DataFrame({"run": ["bm25", "bm25", "dense", "dense"], "query_id": "q1",
...                      "doc_id": ["a", "b", "b", "c"], "score": [9.0, 7.0, 0.8, 0.7]})
>>> out = sef.fuse(runs, "rrf", k=60)
>>> out["run"][0], out["doc_id"].to_list()
('rrf(bm25,dense)', ['b', 'a', 'c'])
>>> round(out["score"][0], 6)   # 1/(60+1) + 1/(60+2)
0.032522
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from .._deprecation import outside_stacklevel
from ..core import partitioned
from ..errors import SearchEvalWarning
from ..frames import to_native
from ..options import check_float, check_optional_int
from ._shared import (
    METHODS,
    NORMS,
    RANK_METHODS,
    SCORE_METHODS,
    check_method,
    check_name,
    check_norm,
    check_weights,
    combine,
    finish,
    max_warning,
    prepare,
    run_names,
    runs_frame,
)
from .parts import out_of_order, query_ranges, within

__all__ = ["METHODS", "NORMS", "RANK_METHODS", "SCORE_METHODS", "fuse"]

def fuse(
    runs: Any,
    method: str = "rrf",
    *,
    k: float = 60,
    norm: str | None = None,
    weights: Sequence[float] | Mapping[str, float] | None = None,
    depth: int | None = None,
    name: str | None = None,
    columns: Mapping[str, str] | None = None,
) -> Any:
    """Fuse several runs into one run (hybrid search: BM25 + dense, say).

    Parameters
    ----------
    runs
        Two runs or more: a long frame whose ``run`` column names the systems, a dict
        ``{name: frame}``, or a list of frames and/or run files (a frame without a
        ``run`` column in a list is named ``run1``, ``run2``, ... by position).
        pandas, polars or pyarrow; the result is the same kind.
    method
        ``"rrf"`` (reciprocal rank fusion, Cormack et al. 2009), ``"combsum"``,
        ``"combmnz"``, ``"combmax"``, ``"combmin"``, ``"combmed"``, ``"combanz"``
        (Fox & Shaw 1993), ``"wsum"`` (weighted sum), ``"borda"`` (BordaFuse, Aslam &
        Montague 2001), ``"isr"`` or ``"logisr"`` (Mourão et al. 2014). ranx's names
        (``"sum"``, ``"mnz"``, ``"bordafuse"``, ``"log_isr"``, ...) are accepted too.
    k
        RRF's constant: a document at rank r gets ``1 / (k + r)`` (default 60).
    norm
        Score normalisation per run and query before a score method: ``None`` (raw
        scores), ``"min-max"``, ``"max"``, ``"sum"``, ``"zmuv"`` (z-score),
        ``"rank"`` (``1 - (r-1)/n``) or ``"borda"`` (ranx's rank-based norm, which
        also gives a value to documents a run lacks). Must be None for rank methods.
    weights
        ``"wsum"`` (default: 1/number of runs each) and ``"rrf"`` (weighted RRF,
        default 1 each): one number >= 0 per run in order of first appearance, or
        ``{run_name: weight}``.
    depth
        Keep the top ``depth`` documents of each query of the fused run.
    name
        The fused run's name; default ``"method(run1,run2,...)"`` with ``[norm]``
        after the method when one is used, e.g. ``"combsum[min-max](bm25,dense)"``.
    columns
        Canonical name → your column name, e.g. ``{"query_id": "qid"}``.

    Returns
    -------
    DataFrame
        ``run, query_id, doc_id, score``: every document any run retrieved for a query,
        sorted by query and in trec_eval order (score descending, ``doc_id`` descending).

    Notes
    -----
    An input of more than ``searcheval_frames.core.partitioned.ROWS_PER_PART`` rows
    (5,000,000; environment variable ``SEF_PARTITION_ROWS``) is fused by ranges of
    query ids of about that many rows, which bounds the working memory; the result is
    identical to the one-piece result.

    Examples
    --------
    >>> import searcheval_frames as sef
    >>> bm25 = {"q1": {"a": 12.0, "b": 7.5}}
    >>> dense = {"q1": {"b": 0.9, "c": 0.4}}
    >>> sef.fuse({"bm25": bm25, "dense": dense}, "combsum", norm="min-max").rows()
    [('combsum[min-max](bm25,dense)', 'q1', 'b', 1.0), ('combsum[min-max](bm25,dense)', 'q1', 'a', 1.0), ('combsum[min-max](bm25,dense)', 'q1', 'c', 0.0)]
    """
    func = "fuse"
    method = check_method(func, method)
    norm = check_norm(func, norm, method)
    k = check_float(func, "k", k, minimum=0, what="RRF's constant", example="k=60")
    depth = check_optional_int(func, "depth", depth, minimum=1,
                               what="documents kept per query", example="depth=1000")
    name = check_name(func, name)
    df, kind = runs_frame(runs, columns)
    names = run_names(df)
    w = check_weights(func, weights, names, method)
    label = method + (f"[{norm}]" if norm else "")
    name = name or f"{label}({','.join(names)})"
    rows = partitioned.ROWS_PER_PART
    if df.height <= rows:
        prep = prepare(df, names, method, norm)
        out = finish(combine(prep, method, len(names), w, k), depth, name)
        return to_native(out, kind)
    # a large input: fused by ranges of query ids, one range in memory at a time
    # (every value depends on one query's rows; see fusion/parts.py)
    sort = out_of_order(df, "run", rows)
    low: list[tuple[int, pl.DataFrame, int]] = []
    pieces = []
    for lo, hi in query_ranges(df, rows):
        prep = prepare(df.filter(within(lo, hi)), names, method, norm, sort, low)
        pieces.append(finish(combine(prep, method, len(names), w, k), depth, name))
        del prep
    if low:
        warnings.warn(max_warning(sum(x[0] for x in low), pl.concat([x[1] for x in low]),
                                   sum(x[2] for x in low)), SearchEvalWarning, stacklevel=outside_stacklevel())
    return to_native(pl.concat(pieces), kind)
