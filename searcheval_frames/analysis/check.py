"""``sef.check``: explain the data before any number (issue #22).

Every check is a few columnar polars expressions over the canonical run and qrels (no
Python loop over rows or queries), so it is cheap enough to run before every
evaluation. Each finding has a ``code``, a ``severity`` (``error``: the evaluation would
refuse the input or its numbers would be wrong; ``warning``: the numbers are what
trec_eval computes but probably not what was meant; ``info``: worth knowing), a count,
a message, up to five example query and document ids and a fix.

The codes:

========================  ========  ==================================================
code                      severity  what
========================  ========  ==================================================
unreadable_run/_qrels     error     the input cannot be read (the error's own message)
duplicate_results         error     a document twice in one query of one run
duplicate_labels          error     a (query, document) labelled twice
bad_scores                error     missing, NaN or infinite scores
padded_ids                error     ids with whitespace at either end (match nothing)
id_format_mismatch        error     ids that differ only in case, padding, leading
                                    zeros or ``.0`` (``"001"`` vs ``"1"``)
no_common_queries         error     run and qrels share no query id
relevance_level_too_high  error     no label reaches the relevance level
label_outside_scale       error     labels outside ``scale=(lo, hi)``
queries_without_labels    warning   run queries without labels (not evaluated)
labels_without_results    warning   labelled queries a run lacks (score 0, ``-c``)
query_set_mismatch        warning   ``queries=`` and the qrels hold other queries
no_relevant               warning   queries with no relevant document (every measure 0)
self_retrieval            warning   a document id equal to its query id
relevance_level_low       warning   graded labels, the default level below the scale's
                                    middle (``info`` when ``relevance_level=`` is passed)
label_gap                 warning   a label value far from the others (``0, 1, 4``)
constant_scores           warning   every document of a query has the same score
ties_at_cutoff            warning   the documents at rank k and k+1 tie (``@k``)
run_shallower             warning   fewer documents than a cutoff or ``depth``
run_deeper                info      more documents than ``depth`` (truncated)
depth_differs             warning   runs cut at very different depths (AP, R, nDCG)
negative_labels           info      labels below 0 (judged but unusable)
========================  ========  ==================================================

The relevance level's middle: for labels ``0..m`` (``m >= 2``) a level below ``m / 2``
counts "related" documents as relevant (TREC DL, 0..3, needs level 2: anserini#1525).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from .. import frames
from ..errors import InvalidOptionError, SearchEvalError
from ..frames import input_kind, is_path, qrels_frame, run_frame
from ..measures import parse_measures
from ..options import check_int, check_optional_int
from .findings import SCHEMA, Findings

__all__ = ["check"]

_EXAMPLES = 5
_SAMPLE = 100_000
_KEYS = ["run", "query_id"]


def check(
    run: Any,
    qrels: Any,
    queries: Any = None,
    measures: str | Iterable[str] | None = None,
    relevance_level: int | None = None,
    *,
    scale: tuple[int, int] | None = None,
    depth: int | None = None,
    columns: Mapping[str, str] | None = None,
) -> Findings:
    """Check a run (or runs) and qrels for what makes evaluation numbers silently wrong.

    Parameters
    ----------
    run
        Run(s) as :func:`~searcheval_frames.evaluate` takes them (frames, dicts, paths).
    qrels
        Relevance labels (a frame, a pytrec_eval dict or a path).
    queries
        The query set the mean should be over: ids (a list), or a frame / dict / file of
        queries; checked against the qrels and the run.
    measures
        The measures you will compute; their cutoffs are checked for ties and depth.
    relevance_level
        The level you will pass to evaluate (None: evaluate's default 1).
    scale
        ``(lowest, highest)`` label of the scale; labels outside are errors.
    depth
        The depth you will evaluate at (trec_eval ``-M``).
    columns
        Canonical name → your column name, as for evaluate.

    Returns
    -------
    Findings
        ``.frame`` (caller's kind): ``code, severity, count, message, query_id, doc_id,
        fix``; ``.ok``, ``.summary()``, ``.raise_for_errors()``; renders in notebooks.

    Notes
    -----
    The relevance-level rule: with labels :math:`0..m`, :math:`m \\ge 2`, a level
    :math:`\\ell < m/2` is reported (Craswell et al., "Overview of the TREC 2019 deep
    learning track": binary measures count labels :math:`\\ge 2`).

    Examples
    --------
    >>> import searcheval_frames as sef
    >>> run = {"q1": {"q1": 3.0, "d1": 2.0, "d2": 2.0}}
    >>> qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 1}}
    >>> sef.check(run, qrels, measures=["P@1", "P@2"]).codes()
    ['labels_without_results', 'self_retrieval', 'ties_at_cutoff']
    """
    check_optional_int("check", "relevance_level", relevance_level, minimum=0,
                       example="relevance_level=2 for TREC DL")
    check_optional_int("check", "depth", depth, minimum=1, example="depth=1000")
    if scale is not None:
        if not (isinstance(scale, Sequence) and len(scale) == 2):
            raise InvalidOptionError(f"check(scale={scale!r}): must be a pair (lowest, "
                                     f"highest label); got {scale!r}. Example: scale=(0, 3)")
        check_int("check", "scale[0]", scale[0], example="scale=(0, 3)")
        check_int("check", "scale[1]", scale[1], minimum=scale[0], example="scale=(0, 3)")
    kind = input_kind(run)
    out: list[dict[str, Any]] = []
    ms = parse_measures(measures) if measures is not None else []
    r = _load(run, "run", out, columns)
    q = _load(qrels, "qrels", out, columns)
    if r is None or q is None:
        return Findings(_frame(out), kind)
    level = 1 if relevance_level is None else relevance_level
    cut = [m for m in ms if isinstance(m.cutoff, int)]  # (rank cutoffs, not IPrec's levels)
    ks: list[int] = [m.cutoff for m in cut if isinstance(m.cutoff, int)]
    # a run validated already (sef.read_run, the report) has finite scores, no repeated
    # document and maybe its blocks: those checks cannot find anything, they are skipped
    known, blocks = frames.checked_blocks(r)
    stats = _ranked(r, max(ks, default=0) + 1, blocks, finite=known)  # (every per-query check)
    _ids(r, q, stats, out, validated=known)
    _queries(stats, q, queries, out)
    _labels(q, level, relevance_level is None, scale, out)
    _run_rows(r, stats, out, validated=known)
    _cutoffs(stats, cut, depth, out)
    _depths(stats, ms, out)
    return Findings(_frame(out), kind)


# ----------------------------------------------------------------------------- helpers
def _add(out: list[dict[str, Any]], code: str, severity: str, count: int, message: str,
         fix: str, queries: Iterable[Any] = (), docs: Iterable[Any] = ()) -> None:
    out.append({"code": code, "severity": severity, "count": int(count), "message": message,
                "query_id": [str(x) for x in list(queries)[:_EXAMPLES]],
                "doc_id": [str(x) for x in list(docs)[:_EXAMPLES]], "fix": fix})


def _frame(out: list[dict[str, Any]]) -> pl.DataFrame:
    return pl.DataFrame(out, schema=SCHEMA)


def _first(df: pl.DataFrame, col: str) -> list[Any]:
    return df.get_column(col).head(_EXAMPLES).to_list()


def _load(obj: Any, what: str, out: list[dict[str, Any]],
          columns: Mapping[str, str] | None) -> pl.DataFrame | None:
    """The canonical frame without validation (the checks below report what it would
    raise), or None with an ``unreadable_*`` error."""
    try:
        if is_path(obj):
            from .. import io

            obj = io.read_run(obj) if what == "run" else io.read_qrels(obj)
        if what == "run":
            return run_frame(obj, columns=columns, validate=False)
        return qrels_frame(obj, columns=columns, validate=False)
    except SearchEvalError as exc:
        _add(out, f"unreadable_{what}", "error", 1, " ".join(str(exc).split()),
             f"fix the {what} as the message says; nothing else was checked")
        return None


def _norm(col: str) -> pl.Expr:
    """An id as it might have been meant: trimmed, lower case, no leading zeros, no .0."""
    s = pl.col(col).str.strip_chars().str.to_lowercase().str.replace(r"\.0+$", "")
    return s.str.replace(r"^0+(\d)", "$1").alias("_norm")


def _ids(r: pl.DataFrame, q: pl.DataFrame, stats: pl.DataFrame,
         out: list[dict[str, Any]], validated: bool = False) -> None:
    # (a validated run has no padded id: validation raised PaddedIdError for one)
    for name, df in (("run", r), ("qrels", q))[1 if validated else 0:]:
        for col in ("query_id", "doc_id"):
            ids = stats if name == "run" and col == "query_id" else df  # (one row a query)
            bad = ids.filter(pl.col(col).str.contains(r"^\s|\s$"))
            if bad.height:
                if ids is stats:  # results, not (run, query) pairs
                    bad = df.join(bad.select(_KEYS), on=_KEYS)
                _add(out, "padded_ids", "error", bad.height,
                     f"{bad.height} {col} value(s) of the {name} have whitespace at either "
                     "end; they match no label.",
                     f"strip them: pl.col({col!r}).str.strip_chars() (pandas: .str.strip())",
                     _first(bad, "query_id"), _first(bad, "doc_id") if col == "doc_id" else [])
    for col in ("query_id", "doc_id"):
        # (doc ids: the first _SAMPLE results, as the unique doc ids of a long run cost
        # more than the evaluation; a format mismatch is systematic, a sample shows it)
        rid = (stats if col == "query_id" else r.head(_SAMPLE)).select(pl.col(col).unique())
        qid = q.select(pl.col(col).unique())
        lost = rid.join(qid, on=col, how="anti").with_columns(_norm(col))
        near = lost.join(qid.with_columns(_norm(col)), on="_norm", suffix="_qrels")
        if near.height:
            severity = "error" if col == "doc_id" or rid.join(qid, on=col).height == 0 \
                else "warning"
            pairs = [f"{a!r}~{b!r}" for a, b in near.select(col, f"{col}_qrels").head(3).rows()]
            where = "" if col == "query_id" or r.height <= _SAMPLE else \
                f" (in the first {_SAMPLE:,} results)"
            _add(out, "id_format_mismatch", severity, near.height,
                 f"{near.height} {col} value(s) of the run{where} match a qrels id only after "
                 f"trimming, lower-casing or dropping leading zeros / '.0' ({', '.join(pairs)}).",
                 "write ids the same way in both (read them as strings, e.g. "
                 "pd.read_csv(..., dtype=str), and keep their leading zeros)",
                 near.get_column(col) if col == "query_id" else [],
                 near.get_column(col) if col == "doc_id" else [])
    common = stats.select("query_id").unique().join(q.select("query_id").unique(),
                                                    on="query_id")
    if common.height == 0:
        _add(out, "no_common_queries", "error", 0,
             "the run and the qrels have no query id in common; evaluate would refuse them.",
             "use one id scheme in both (e.g. '301' vs 'q301'), or check the files belong "
             "together", _first(r.head(_SAMPLE).unique("query_id", maintain_order=True),
                                "query_id"))


def _queries(stats: pl.DataFrame, q: pl.DataFrame, queries: Any,
             out: list[dict[str, Any]]) -> None:
    judged = q.select("query_id").unique(maintain_order=True)
    pairs = stats.select(_KEYS)
    unlabelled = pairs.select("query_id").unique(maintain_order=True).join(
        judged, on="query_id", how="anti")
    if unlabelled.height:
        _add(out, "queries_without_labels", "warning", unlabelled.height,
             f"{unlabelled.height} query id(s) of the run have no label in the qrels; they "
             "are left out of every mean.",
             "judge them, or drop them from the run so that the set of queries is explicit",
             _first(unlabelled, "query_id"))
    runs = pairs.select("run").unique(maintain_order=True)
    lacking = runs.join(judged, how="cross").join(pairs, on=_KEYS, how="anti")
    if lacking.height:
        per_run = lacking.group_by("run", maintain_order=True).len()
        names = ", ".join(f"{a!r} ({n})" for a, n in per_run.head(3).rows())
        _add(out, "labels_without_results", "warning", lacking.height,
             f"{lacking.height} (run, labelled query) pair(s) have no results: {names}; "
             "they score 0 with missing='zero' (trec_eval -c) and are left out with "
             "missing='skip'.",
             "check the run is complete; choose missing= on purpose",
             _first(lacking.unique("query_id", maintain_order=True), "query_id"))
    if queries is None:
        return
    wanted = _query_ids(queries)
    for name, df, what in (("qrels", judged, "labelled queries outside the query set: the "
                            "mean includes them"),
                           ("queries", wanted, "queries of the set without labels: the "
                            "mean leaves them out")):
        other = wanted if name == "qrels" else judged
        extra = df.join(other, on="query_id", how="anti")
        if extra.height:
            _add(out, "query_set_mismatch", "warning", extra.height,
                 f"{extra.height} {what} (trec_eval averages over the labelled queries).",
                 "filter the qrels to the query set, or label the missing queries",
                 _first(extra, "query_id"))


def _query_ids(queries: Any) -> pl.DataFrame:
    if isinstance(queries, list | tuple | set | frozenset) and not (
            is_path(list(queries)) and all(Path(p).is_file() for p in queries)):
        ids = [str(x) for x in queries]  # ids (a list of existing files is read instead)
    else:
        from ._inputs import queries_table

        table = queries_table(queries)
        ids = [] if table is None else table.get_column("query_id").cast(pl.String).to_list()
    return pl.DataFrame({"query_id": ids}, schema={"query_id": pl.String}).unique(
        maintain_order=True)


def _labels(q: pl.DataFrame, level: int, default: bool, scale: tuple[int, int] | None,
            out: list[dict[str, Any]]) -> None:
    rel = pl.col("relevance")
    dup = q.filter(pl.len().over("query_id", "doc_id") > 1)
    if dup.height:
        _add(out, "duplicate_labels", "error", dup.height,
             f"{dup.height} qrels rows label a (query, document) pair more than once.",
             "keep one label per pair, e.g. group_by(['query_id', 'doc_id']).agg("
             "pl.col('relevance').max())", _first(dup, "query_id"), _first(dup, "doc_id"))
    stats = q.select(rel.max().alias("hi"), (rel < 0).sum().alias("neg"),
                     rel.filter(rel >= 0).unique().sort().alias("values").implode()).row(0)
    hi, neg, values = stats
    lvl = "the default relevance_level=1" if default else f"relevance_level={level}"
    if hi is not None and hi < level:
        _add(out, "relevance_level_too_high", "error", 0,
             f"no label reaches {lvl} (the largest is {hi}): every relevance measure is 0.",
             f"use relevance_level<={hi}")
    elif hi is not None and hi >= 2 and level < hi / 2:
        _add(out, "relevance_level_low", "warning" if default else "info",
             q.filter((rel >= level) & (rel < (hi + 1) // 2)).height,  # (labels it adds)
             f"the labels are graded 0..{hi} and {lvl} counts everything from {level} up as "
             f"relevant, below the scale's middle ({hi / 2:g}).",
             f"pass relevance_level={(hi + 1) // 2} if the lower grades mean 'related' "
             "(TREC DL: relevance_level=2); nDCG uses the grades either way")
    norel = q.group_by("query_id", maintain_order=True).agg(rel.max().alias("m")).filter(
        pl.col("m") < level)
    if norel.height and not (hi is not None and hi < level):
        _add(out, "no_relevant", "warning", norel.height,
             f"{norel.height} labelled query(ies) have no document at {lvl} or above: "
             "every recall-based measure is 0 for them and they pull the mean down.",
             "drop them from the qrels (most tracks do) or label more documents",
             _first(norel, "query_id"))
    if neg:
        _add(out, "negative_labels", "info", neg,
             f"{neg} label(s) are below 0: judged but unusable (never relevant, as "
             "trec_eval).", "nothing to do if that is what they mean")
    if scale is not None:
        bad = q.filter((rel < scale[0]) | (rel > scale[1]))
        if bad.height:
            _add(out, "label_outside_scale", "error", bad.height,
                 f"{bad.height} label(s) are outside the scale {scale[0]}..{scale[1]}.",
                 "fix the labels or the scale", _first(bad, "query_id"), _first(bad, "doc_id"))
    elif values is not None and len(values) >= 2 and values[-1] > 2 * values[-2] + 1:
        far = q.filter(rel == values[-1])
        _add(out, "label_gap", "warning", far.height,
             f"the label {values[-1]} is far from the others ({', '.join(map(str, values[:-1]))}"
             "): a typo or a label from another scale?",
             "check those rows, or pass scale=(lo, hi) to make the scale explicit",
             _first(far, "query_id"), _first(far, "doc_id"))


def _run_rows(r: pl.DataFrame, stats: pl.DataFrame, out: list[dict[str, Any]], *,
              validated: bool = False) -> None:
    score = pl.col("score")
    if validated:  # (no bad score, no repeated document: validation would have raised)
        has_bad, blocks, h = False, None, None
    else:
        has_bad, blocks, h = frames.run_checks(r)  # (the fused pass of run validation)
    bad = r.filter(score.is_null() | ~score.is_finite()) if has_bad else r.clear()
    if bad.height:
        _add(out, "bad_scores", "error", bad.height,
             f"{bad.height} result(s) have a missing, NaN or infinite score.",
             "drop those rows or give them a finite score", _first(bad, "query_id"),
             _first(bad, "doc_id"))
    dup = (r.filter(pl.len().over("run", "query_id", "doc_id") > 1)
           if h is not None and frames.has_repeats(h, blocks) else r.clear())
    if dup.height:
        _add(out, "duplicate_results", "error", dup.height,
             f"{dup.height} rows repeat a document within one query of one run "
             "(trec_eval refuses them).",
             "keep the best row per document: df.sort('score', descending=True).unique("
             "['run', 'query_id', 'doc_id'], keep='first')", _first(dup, "query_id"),
             _first(dup, "doc_id"))
    selfs = r.filter(pl.col("doc_id") == pl.col("query_id"))
    if selfs.height:
        _add(out, "self_retrieval", "warning", selfs.height,
             f"{selfs.height} result(s) retrieve a document whose id is the query's id (the "
             "query found itself, as in BEIR's Quora and ArguAna).",
             "drop them before evaluating: df.filter(pl.col('doc_id') != pl.col('query_id'))",
             _first(selfs, "query_id"), _first(selfs, "doc_id"))
    flat = stats.filter((pl.col("hi") == pl.col("lo")) & (pl.col("n") > 1))
    if flat.height:
        _add(out, "constant_scores", "warning", flat.height,
             f"in {flat.height} (run, query) pair(s) every document has the same score: the "
             "order is decided by the document ids alone (trec_eval: descending), so the "
             "numbers measure the id scheme (mteb#5092).",
             "check the scorer; evaluate(..., ties='bounds') shows the range",
             _first(flat, "query_id"))


def _ranked(r: pl.DataFrame, k: int, blocks: frames.Blocks | None = None, *,
            finite: bool = False) -> pl.DataFrame:
    """Per (run, query), in one group_by: ``n`` results, the largest and smallest score
    (``hi``, ``lo``) and the ``k`` largest scores, largest first (only scores matter for
    a tie at a cutoff, not which document: no sort of the whole run). ``blocks``: the
    run's blocks when known; ``finite``: every score is a number (a validated run)."""
    aggs = [pl.len().alias("n"), pl.col("score").max().alias("hi"),
            pl.col("score").min().alias("lo"), pl.col("score").top_k(k).sort(descending=True)]
    blocks = blocks or frames.query_blocks(r)
    if blocks is None:  # a query split over the frame: group by the id strings
        return r.group_by(_KEYS).agg(aggs).sort(_KEYS)
    lengths = blocks.lengths
    if finite and (lengths == lengths[0]).all():  # blocks of one length: a 2-D view
        per_block = _grid_stats(r.get_column("score").to_numpy(), lengths.size, k)
    else:
        # each (run, query) is a block of rows: group by the block's number (an integer)
        # instead of hashing two strings per row, then name the blocks
        block = np.repeat(np.arange(blocks.starts.size), lengths)
        per_block = (pl.DataFrame({"_b": block}).with_columns(r.get_column("score"))
                     .group_by("_b").agg(aggs).sort("_b").drop("_b"))
    return pl.concat([blocks.keys.select(_KEYS), per_block], how="horizontal").sort(_KEYS)


def _grid_stats(score: np.ndarray, n_blocks: int, k: int) -> pl.DataFrame:
    """:func:`_ranked`'s columns for blocks of one length (a row of ``grid`` each)."""
    grid = score.reshape(n_blocks, -1)
    width = grid.shape[1]
    kk = min(k, width)
    top = np.sort(np.partition(grid, width - kk, axis=1)[:, width - kk:], axis=1)[:, ::-1]
    return pl.DataFrame([
        pl.Series("n", np.full(n_blocks, width), dtype=pl.UInt32),
        pl.Series("hi", grid.max(axis=1), dtype=pl.Float64),
        pl.Series("lo", grid.min(axis=1), dtype=pl.Float64),
        pl.Series("score", np.ascontiguousarray(top)).cast(pl.List(pl.Float64)),
    ])


def _cutoffs(lists: pl.DataFrame, ms: list[Any], depth: int | None,
             out: list[dict[str, Any]]) -> None:
    ks = sorted({int(m.cutoff) for m in ms})
    if not ks and depth is None:
        return
    for k in ks:
        tied = lists.filter((pl.col("n") > k) & (pl.col("score").list.get(k - 1, null_on_oob=True)
                                                 == pl.col("score").list.get(k, null_on_oob=True)))
        if tied.height:
            names = ", ".join(m.name for m in ms if m.cutoff == k)
            per_run = tied.group_by("run").len().sort("len", "run", descending=[True, False])
            runs = ", ".join(f"{a!r} ({n})" for a, n in per_run.head(3).rows())
            _add(out, "ties_at_cutoff", "warning", tied.height,
                 f"in {tied.height} of {lists.height} (run, query) pair(s) the documents at "
                 f"rank {k} and {k + 1} have the same score ({runs}): which one counts in "
                 f"{names} is decided by document id (trec_eval).",
                 "evaluate(..., ties='bounds') shows how much it matters; ties='given_order' "
                 "uses the run's own order", _first(tied, "query_id"))
    asked = depth if depth is not None else (max(ks) if ks else None)
    if asked is not None:
        short = lists.filter(pl.col("n") < asked)
        if short.height:
            _add(out, "run_shallower", "warning", short.height,
                 f"{short.height} (run, query) pair(s) have fewer than {asked} results "
                 f"(the smallest: {short.select(pl.col('n').min()).item()}); the missing "
                 "ranks count as non-relevant.",
                 "retrieve deeper, or use cutoffs the run reaches", _first(short, "query_id"))
    if depth is not None:
        deep = lists.filter(pl.col("n") > depth)
        if deep.height:
            _add(out, "run_deeper", "info", deep.height,
                 f"{deep.height} (run, query) pair(s) have more than depth={depth} results "
                 f"(up to {deep.select(pl.col('n').max()).item()}); evaluate(depth={depth}) keeps the "
                 f"top {depth}.", "nothing to do if that is the intent",
                 _first(deep, "query_id"))


def _depths(stats: pl.DataFrame, ms: list[Any], out: list[dict[str, Any]]) -> None:
    """Runs cut at very different depths, for measures over the whole ranking."""
    if ms and all(isinstance(m.cutoff, int) for m in ms):
        return
    per_run = stats.group_by("run").agg(pl.col("n").median().alias("depth")).sort("run")
    if per_run.height < 2:
        return
    lo, hi = (float(x) for x in per_run.select(pl.col("depth").min().alias("lo"),
                                                    pl.col("depth").max().alias("hi")).row(0))
    if hi > 2 * lo:
        runs = ", ".join(f"{a!r}: {d:g}" for a, d in per_run.rows())
        _add(out, "depth_differs", "warning", per_run.height,
             f"the runs are cut at very different depths (median results per query: {runs}); "
             "AP, recall and nDCG without a cutoff favour the deeper runs.",
             "compare at one depth: evaluate(..., depth=k) with k at most the shallowest run")
