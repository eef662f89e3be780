"""trec_eval's preference measures (``-m all_prefs`` with ``-R prefs`` / ``-R qrels_prefs``).

Judgments are preferences between documents (:mod:`searcheval_frames.io.prefs`): in a
*judgment group* (JG) of a query, within each *sub-group* (JSG), a document with a higher
``rel_level`` is preferred to one with a lower level. A JG with one JSG is complete (every
pair of different levels is a preference, duplicates counted: trec_eval's "equivalence
classes"); a JG with several JSGs is partial, and its preferences are closed transitively
(A>B in one JSG and B>C in another give A>C; a cycle is an error).

A preference A>B (trec_eval ``form_prefs_counts.c``) is

* *fulfilled, retrieved*: both retrieved, A ranked above B;
* *not fulfilled, retrieved*: both retrieved, B above A;
* *fulfilled, implied*: A retrieved, B not;  *not fulfilled, implied*: B retrieved, A not;
* *not occurring*: neither retrieved (counted as possible, never fulfilled).

Ranks: the run sorted by score (descending), ties by docno (ascending byte order, which is
trec_eval's order here), cut at ``depth``; only documents judged somewhere in the query's
preferences count.

Measures, per query (trec_eval ``m_prefs_*.c``), ``ful/poss`` = fulfilled / possible:

``prefs_num_prefs_poss`` / ``_ful`` / ``_ful_ret``
    counts (summed, not averaged, over queries);
``prefs_simp`` (all), ``prefs_simp_ret`` (both retrieved), ``prefs_simp_imp`` (at least one)
    ful/poss over all preferences of the query;
``prefs_avgjg`` / ``_ret`` / ``_imp``
    ful/poss per JG, averaged over the query's JGs;
``prefs_pair`` / ``_ret`` / ``_imp``
    per document pair, the share of its preferences (over all JGs) that the ranking
    fulfils, averaged over pairs (pairs of two unretrieved documents score 0);
``prefs_avgjg_Rnonrel`` / ``_ret``
    as ``prefs_avgjg`` with the number of non-relevant (``rel_level`` 0) documents of each
    JG set to R, its number of relevant (> 0) ones: fulfilled preferences are added when
    there are fewer, only the first R non-relevant documents in rank order kept when there
    are more (trec_eval's recalculation, with its exact counting).

Undefined ratios are 0, as in trec_eval; the summary is the mean over the evaluated queries
(the queries of the run that have preferences).

Reference: trec_eval 10 (NIST), ``form_prefs_counts.c`` and ``m_prefs_*.c``; the values
agree line for line with trec_eval's ``out.test.prefs`` and ``out.test.qrels_prefs``.
"""

from __future__ import annotations

import polars as pl

from ..errors import DuplicateRowsError, InvalidRelevanceError, MissingColumnError, format_rows
from ..options import check_int

__all__ = ["PREFS_COUNTS", "PREFS_MEASURES", "evaluate_prefs"]

#: trec_eval's measure table order
PREFS_MEASURES = (
    "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
    "prefs_simp", "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel",
    "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp",
)
#: integer counts, summed over queries in the summary
PREFS_COUNTS = frozenset(PREFS_MEASURES[:3])

Q = ["run", "query_id"]
JG = ["run", "query_id", "jg"]
_C = pl.col


def _ranks(run: pl.DataFrame, prefs: pl.DataFrame, depth: int | None) -> pl.DataFrame:
    """``run, query_id, doc_id, r, njr`` for every judged doc of every evaluated query.

    ``r`` is 0..njr-1 for judged retrieved docs (rank order), njr.. for the others (docno
    order); njr = number of judged retrieved docs.
    """
    judged = prefs.select("query_id", "doc_id").unique()
    ranked = (run.select(*Q, "doc_id", "score")
              .join(judged.select("query_id").unique(), on="query_id", how="semi")
              .sort([*Q, "score", "doc_id"], descending=[False, False, True, False])
              .with_columns(pl.int_range(pl.len()).over(Q).alias("pos")))
    dup = ranked.filter(pl.struct(*Q, "doc_id").is_duplicated())
    if dup.height:
        raise DuplicateRowsError(
            "a run lists the same document twice for a query (trec_eval stops there too):\n"
            + format_rows(dup.select(*Q, "doc_id", "score"))
            + "\n  fix: keep one line per (query, document) in the run")
    if depth is not None:
        ranked = ranked.filter(_C("pos") < depth)
    queries = ranked.select(Q).unique()
    ret = (ranked.join(judged, on=["query_id", "doc_id"], how="semi").sort(*Q, "pos")
           .with_columns(pl.int_range(pl.len()).over(Q).alias("r")).select(*Q, "doc_id", "r"))
    njr = queries.join(ret.group_by(Q).agg(pl.len().alias("njr")), on=Q, how="left") \
        .with_columns(_C("njr").fill_null(0).cast(pl.Int64))
    unret = (njr.join(judged, on="query_id").join(ret, on=[*Q, "doc_id"], how="anti")
             .sort(*Q, "doc_id")
             .with_columns((_C("njr") + pl.int_range(pl.len()).over(Q)).alias("r"))
             .select(*Q, "doc_id", "r"))
    both = pl.concat([ret.with_columns(_C("r").cast(pl.Int64)),
                      unret.with_columns(_C("r").cast(pl.Int64))])
    return both.join(njr, on=Q)


def _closure(pairs: pl.DataFrame) -> pl.DataFrame:
    """Transitive closure of ``JG + a, b`` preference pairs (a loop over path lengths)."""
    pairs = pairs.unique()
    while True:
        step = pairs.join(pairs.rename({"a": "b", "b": "c"}), on=[*JG, "b"]) \
            .select(*JG, "a", _C("c").alias("b"))
        grown = pl.concat([pairs, step]).unique()
        if grown.height == pairs.height:
            return pairs
        pairs = grown


def _pair_counts() -> list[pl.Expr]:
    a, b, n = _C("a"), _C("b"), _C("njr")
    return [((a < b) & (b < n)).sum().alias("ful_ret"),
            ((a > b) & (a < n)).sum().alias("nf_ret"),
            ((a < n) & (b >= n)).sum().alias("ful_imp"),
            ((a >= n) & (b < n)).sum().alias("nf_imp"),
            ((a >= n) & (b >= n)).sum().alias("notocc")]


def _recalc(pairs: pl.LazyFrame | pl.DataFrame, suffix: str, retrieved_only: bool) -> pl.DataFrame:
    """trec_eval's Rnonrel recount: fulfilled (A retrieved, above B) and all pairs per JG."""
    p = pairs.lazy()
    if retrieved_only:
        p = p.filter((_C("a") < _C("njr")) & (_C("b") < _C("njr")))
    return (p.group_by(JG).agg(((_C("a") < _C("b")) & (_C("a") < _C("njr"))).sum()
                               .alias("rc_ful" + suffix), pl.len().alias("rc_n" + suffix))
            .collect())


def evaluate_prefs(run: pl.DataFrame, prefs: pl.DataFrame,
                   depth: int | None = None) -> pl.DataFrame:
    """Per-query values of trec_eval's 14 preference measures.

    Parameters
    ----------
    run
        Canonical run frame ``run, query_id, doc_id, score`` (polars).
    prefs
        ``query_id, jg, jsg, doc_id, rel_level``, as from
        :func:`searcheval_frames.io.prefs.read_prefs` or ``read_qrels_prefs``.
    depth
        Keep only the top ``depth`` documents of each ranking (trec_eval ``-M``).

    Returns
    -------
    polars.DataFrame
        ``run, query_id, measure, value`` for the queries in both inputs; ``measure`` is
        one of :data:`PREFS_MEASURES` (the trec_eval names).

    Raises
    ------
    InvalidOptionError
        ``depth`` is not a positive integer.
    MissingColumnError
        An input is not a polars frame or lacks a column.
    DuplicateRowsError
        A run lists a document twice for a query.
    InvalidRelevanceError
        Inconsistent preferences: a document at two levels in one sub-group, with both 0
        and a positive level in one group, or a preference cycle in a group.

    Examples
    --------
    >>> import polars as pl
    >>> run = pl.DataFrame({"run": "r", "query_id": "q", "doc_id": ["a", "b"],
    ...                     "score": [2.0, 1.0]})
    >>> prefs = pl.DataFrame({"query_id": "q", "jg": "u1", "jsg": "0",
    ...                       "doc_id": ["a", "b", "c"], "rel_level": [2.0, 1.0, 0.0]})
    >>> v = evaluate_prefs(run, prefs)
    >>> dict(v.select("measure", "value").iter_rows())["prefs_simp"]  # a>b, a>c, b>c: all kept
    1.0
    """
    if depth is not None:
        depth = check_int("evaluate_prefs", "depth", depth, minimum=1,
                          what="documents kept per query, or None for all")
    for arg, frame, cols in (("run", run, ("run", "query_id", "doc_id", "score")),
                             ("prefs", prefs, ("query_id", "jg", "jsg", "doc_id", "rel_level"))):
        if not isinstance(frame, pl.DataFrame):
            raise MissingColumnError(f"evaluate_prefs: {arg} must be a polars DataFrame, got "
                                     f"{type(frame).__name__}; convert it with pl.from_pandas")
        missing = [c for c in cols if c not in frame.columns]
        if missing:
            raise MissingColumnError(
                f"evaluate_prefs: {arg} lacks column(s) {', '.join(missing)}; it needs "
                f"{', '.join(cols)} (read judgments with searcheval_frames.io.prefs)")
    d = prefs.join(_ranks(run, prefs, depth), on=["query_id", "doc_id"])
    d = d.with_columns((_C("jsg").n_unique().over(["query_id", "jg"]) == 1).alias("ec"))
    dec, dpa = d.filter(_C("ec")), d.filter(~_C("ec"))
    keep = [*JG, "a", "b", "njr"]

    # complete groups ("equivalence classes"): every pair of levels, duplicates counted
    pec = (dec.lazy().join(dec.lazy(), on=JG, suffix="_b")
           .filter(_C("rel_level") > _C("rel_level_b"))
           .select(*JG, _C("r").alias("a"), _C("r_b").alias("b"), "njr",
                   _C("rel_level_b").alias("lb")).collect())
    same = pec.filter(_C("a") == _C("b"))
    if same.height:
        raise InvalidRelevanceError(
            "a document has two different levels in one judgment sub-group (trec_eval stops "
            "there too); query / group:\n" + format_rows(same.select("query_id", "jg").unique())
            + "\n  fix: give each document one level per sub-group")

    # partial groups (several sub-groups): preference pairs, closed transitively
    ppa = (dpa.lazy().join(dpa.lazy(), on=[*JG, "jsg"], suffix="_b")
           .filter(_C("rel_level") > _C("rel_level_b"))
           .select(*JG, _C("r").alias("a"), _C("r_b").alias("b")).collect())
    ppa = _closure(ppa).filter(_C("a") != _C("b"))
    cyc = ppa.join(ppa, left_on=[*JG, "a", "b"], right_on=[*JG, "b", "a"], how="semi")
    if cyc.height:
        raise InvalidRelevanceError(
            "the preferences of a judgment group contradict each other (A>B and, through "
            "other sub-groups, B>A); query / group:\n"
            + format_rows(cyc.select("query_id", "jg").unique())
            + "\n  fix: put inconsistent preferences in different judgment groups")
    ppa = ppa.join(d.select(*Q, "njr").unique(), on=Q)
    # one level per doc in a partial group: the last assigned (sub-group order, level desc)
    lvl = (dpa.sort(*JG, "jsg", "rel_level", "r", descending=[False] * 4 + [True, False])
           .group_by([*JG, "r"], maintain_order=True)
           .agg(_C("rel_level").last().alias("lr"), (_C("rel_level") == 0).any().alias("z"),
                (_C("rel_level") > 0).any().alias("p"), _C("njr").first()))
    mixed = lvl.filter(_C("z") & _C("p"))
    if mixed.height:
        raise InvalidRelevanceError(
            "a document has both level 0 and a positive level in one judgment group; "
            "query / group:\n" + format_rows(mixed.select("query_id", "jg").unique())
            + "\n  fix: a document is either relevant or not within a judgment group")

    pairs = pl.concat([pec.select(keep), ppa.select(keep)])
    groups = d.select(JG).unique()
    cnt = groups.join(pairs.group_by(JG).agg(_pair_counts()), on=JG, how="left").fill_null(0)

    # relevant / non-relevant docs of each group (rows in complete groups, docs in partial)
    rel_ec = dec.group_by(JG).agg(
        (_C("rel_level") > 0).sum().alias("rel"),
        ((_C("rel_level") > 0) & (_C("r") < _C("njr"))).sum().alias("rel_ret"),
        (_C("rel_level") <= 0).sum().alias("nonrel"),
        ((_C("rel_level") <= 0) & (_C("r") < _C("njr"))).sum().alias("nonrel_ret"))
    rel_pa = lvl.group_by(JG).agg(
        (_C("lr") > 0).sum().alias("rel"),
        ((_C("lr") > 0) & (_C("r") < _C("njr"))).sum().alias("rel_ret"),
        (_C("lr") == 0).sum().alias("nonrel"),
        ((_C("lr") == 0) & (_C("r") < _C("njr"))).sum().alias("nonrel_ret"))
    cnt = cnt.join(pl.concat([rel_ec, rel_pa]), on=JG, how="left")
    cnt = _with_recalc(cnt, dec, pec, lvl, ppa)
    return _measures(cnt, pairs)


def _with_recalc(cnt: pl.DataFrame, dec: pl.DataFrame, pec: pl.DataFrame,
                 lvl: pl.DataFrame, ppa: pl.DataFrame) -> pl.DataFrame:
    """Add trec_eval's Rnonrel recount (``rc_ful``, ``rc_n`` and their ``_ret``)."""
    r = cnt.select(*JG, "rel", "rel_ret")
    # complete groups: the last (lowest-level) class, its first R rows in rank order
    last = (dec.filter(_C("rel_level") == _C("rel_level").min().over(JG)).sort(*JG, "r")
            .with_columns(pl.int_range(pl.len()).over(JG).alias("k")).join(r, on=JG))
    lowest = dec.group_by(JG).agg(_C("rel_level").min().alias("m"))
    above = pec.join(lowest, on=JG).filter(_C("lb") != _C("m"))  # both above the last class
    a_rows = dec.select(*JG, _C("r").alias("a"), "njr")
    kept = last.filter(_C("k") < _C("rel")).select(*JG, _C("r").alias("b"))
    kept_ret = last.filter((_C("k") < _C("rel_ret")) & (_C("r") < _C("njr"))) \
        .select(*JG, _C("r").alias("b"))
    cols = [*JG, "a", "b", "njr"]
    ec_all = pl.concat([above.select(cols), a_rows.join(kept, on=JG).select(cols)])
    ec_ret = pl.concat([above.select(cols), a_rows.join(kept_ret, on=JG).select(cols)])
    # partial groups: drop the non-relevant docs after the first R (rank order)
    nonrel = (lvl.filter(_C("lr") == 0).sort(*JG, "r")
              .with_columns(pl.int_range(pl.len()).over(JG).alias("k")).join(r, on=JG))
    gone = nonrel.filter(_C("k") >= _C("rel")).select(*JG, "r")
    gone_ret = (nonrel.filter(_C("r") < _C("njr"))
                .with_columns(pl.int_range(pl.len()).over(JG).alias("k"))
                .filter(_C("k") >= _C("rel")).select(*JG, "r"))

    def drop(p: pl.DataFrame, g: pl.DataFrame) -> pl.DataFrame:
        for side in ("a", "b"):
            p = p.join(g.rename({"r": side}), on=[*JG, side], how="anti")
        return p

    pa_all, pa_ret = drop(ppa.select(cols), gone), drop(ppa.select(cols), gone_ret)
    full = _recalc(pl.concat([ec_all, pa_all]), "", False)
    ret = _recalc(pl.concat([ec_ret, pa_ret]), "_ret", True)
    return (cnt.join(full, on=JG, how="left").join(ret, on=JG, how="left")
            .with_columns(pl.col("rc_ful", "rc_n", "rc_ful_ret", "rc_n_ret").fill_null(0)))


def _ratio(num: pl.Expr, den: pl.Expr) -> pl.Expr:
    """``num / den``, 0 when ``den`` is 0 (trec_eval leaves the value at 0)."""
    return pl.when(den > 0).then(num.cast(pl.Float64) / den).otherwise(0.0)


def _avg_positive(v: pl.Expr) -> pl.Expr:
    """trec_eval's ``if (sum > 0.0) value = sum / num_jgs``: a NaN sum gives 0."""
    s = v.sum()
    return pl.when(s.is_nan().not_() & (s > 0)).then(s / pl.len()).otherwise(0.0)


def _measures(cnt: pl.DataFrame, pairs: pl.DataFrame) -> pl.DataFrame:
    f = pl.Float64
    g = cnt.with_columns(
        (_C("ful_ret") + _C("nf_ret")).alias("poss_ret"),
        (_C("ful_imp") + _C("nf_imp")).alias("poss_imp"))
    g = g.with_columns((_C("poss_ret") + _C("poss_imp") + _C("notocc")).alias("poss"),
                       (_C("ful_ret") + _C("ful_imp")).alias("ful"))
    big_r, big_n = _C("rel"), _C("nonrel")
    rr, nr = _C("rel_ret"), _C("nonrel_ret")
    rn = pl.when(big_r >= big_n).then(
        (_C("ful") + rr * (big_r - big_n)).cast(f) / (_C("poss") + big_r * (big_r - big_n)))\
        .otherwise(_C("rc_ful").cast(f) / _C("rc_n"))
    rn_ret = pl.when(rr >= nr).then(
        (_C("ful_ret") + rr * (rr - nr)).cast(f) / (_C("poss_ret") + big_r * (rr - nr)))\
        .otherwise(_C("rc_ful_ret").cast(f) / _C("rc_n_ret"))
    per_q = g.group_by(Q).agg(
        _C("poss").sum().cast(f).alias("prefs_num_prefs_poss"),
        _C("ful").sum().cast(f).alias("prefs_num_prefs_ful"),
        _C("ful_ret").sum().cast(f).alias("prefs_num_prefs_ful_ret"),
        _ratio(_C("ful").sum(), _C("poss").sum()).alias("prefs_simp"),
        _avg_positive(_ratio(_C("ful"), _C("poss"))).alias("prefs_avgjg"),
        _avg_positive(rn).alias("prefs_avgjg_Rnonrel"),
        _ratio(_C("ful_ret").sum(), _C("poss_ret").sum()).alias("prefs_simp_ret"),
        _avg_positive(_ratio(_C("ful_ret"), _C("poss_ret"))).alias("prefs_avgjg_ret"),
        _avg_positive(rn_ret).alias("prefs_avgjg_Rnonrel_ret"),
        _ratio(_C("ful").sum(), (_C("poss_ret") + _C("poss_imp")).sum()).alias("prefs_simp_imp"),
        _avg_positive(_ratio(_C("ful"), _C("poss_ret") + _C("poss_imp")))
        .alias("prefs_avgjg_imp"))
    # document pairs: share of their preferences (over all groups) the ranking fulfils
    lo, hi = pl.min_horizontal("a", "b"), pl.max_horizontal("a", "b")
    dp = (pairs.group_by(*Q, lo.alias("lo"), hi.alias("hi"))
          .agg((_C("a") < _C("b")).sum().alias("f"), pl.len().alias("n"), _C("njr").first())
          .with_columns(pl.when(_C("lo") < _C("njr")).then(_C("f") / _C("n")).otherwise(0.0)
                        .alias("v")))
    pair = dp.group_by(Q).agg(
        _ratio(_C("v").sum(), pl.len()).alias("prefs_pair"),
        _ratio(_C("v").filter(_C("hi") < _C("njr")).sum(),
               (_C("hi") < _C("njr")).sum()).alias("prefs_pair_ret"),
        _ratio(_C("v").filter(_C("lo") < _C("njr")).sum(),
               (_C("lo") < _C("njr")).sum()).alias("prefs_pair_imp"))
    wide = per_q.join(pair, on=Q, how="left").fill_null(0.0)
    return (wide.unpivot(index=Q, on=list(PREFS_MEASURES), variable_name="measure",
                         value_name="value")
            .sort("run", _C("query_id").cast(pl.Binary),
                  _C("measure").replace_strict({m: i for i, m in enumerate(PREFS_MEASURES)},
                                               return_dtype=pl.Int64)))
