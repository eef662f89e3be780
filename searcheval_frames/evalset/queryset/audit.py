"""``sef.audit_queries``: check test queries before anyone labels them (issue #34).

Findings in the shape of :func:`~searcheval_frames.check` (``code, severity, count,
message, query_id, doc_id, fix``; ``.frame`` in the caller's kind, ``_repr_html_``), and
``.details``: the frames behind them (``near_duplicates``, ``copies``, ``distribution``,
``strata``). Columnar polars throughout; the two distribution tests are scipy's.

========================  ========  ==================================================
code                      severity  what
========================  ========  ==================================================
duplicate_query_id        error     one id, two different texts
unknown_source_document   error     a query's source ``doc_id`` is not in ``docs``
empty_query               error     no text (after normalisation)
duplicate_query           warning   one normalised text under several ids
near_duplicate            warning   token Jaccard >= ``near_duplicate`` (default 0.8)
copies_document           warning   a run of >= ``copy_run`` tokens of the source
                                    document, or >= ``copy_ratio`` of a query of 4+
                                    tokens found there in one run
one_character_query       warning   a query of one character
long_query                warning   more than ``max_words`` words or ``max_chars``
                                    characters
length_shift              warning   query lengths unlike the log's (two-sample
                                    Kolmogorov–Smirnov, p < ``alpha``)
vocabulary_shift          warning   word frequencies unlike the log's (chi-square test
                                    of homogeneity, p < ``alpha``)
small_stratum             warning   a head / torso / tail stratum with fewer than
                                    ``min_per_stratum`` queries
not_in_log                info      queries the log never saw (generated ones)
distribution_untestable   info      too few queries or words for the tests
========================  ========  ==================================================
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from ...analysis.findings import SCHEMA, Findings
from ...errors import MissingColumnError
from ...frames import find_column, input_kind
from ...frames.kinds import to_polars
from ...io.texts import QUERY_ID_COLUMNS, QUERY_TEXT_COLUMNS, docs_table
from ...options import check_choice, check_float, check_int
from .drift import add_finding, distribution_tests, strata_check
from .log import log_table
from .normalize import check_normalize, normalize_frame, tokens_expr
from .sampling import with_strata
from .similar import copied_runs, near_duplicate_pairs

__all__ = ["QueryAudit", "audit_queries"]

_F = "audit_queries"
SOURCE_COLUMNS = ("doc_id", "source_doc_id", "source_doc", "docid")


@dataclass(repr=False)
class QueryAudit(Findings):
    """What :func:`audit_queries` found (a :class:`~searcheval_frames.analysis.findings.Findings`)
    plus ``details``: the frames behind the findings."""

    details: dict[str, pl.DataFrame] = field(default_factory=dict)

    def summary(self) -> str:
        return super().summary().replace("sef.check:", "sef.audit_queries:", 1)


def _queries(queries: Any, columns: Mapping[str, str] | None) -> pl.DataFrame:
    df = to_polars(getattr(queries, "to_polars", lambda: queries)(), "queries") \
        if not isinstance(queries, Mapping) else pl.DataFrame(
            {"query_id": [str(k) for k in queries], "query": [str(v) for v in queries.values()]})
    given = dict(columns or {})
    qid = given.get("query_id") or find_column(df, QUERY_ID_COLUMNS[:-1])
    text = given.get("query") or find_column(df, QUERY_TEXT_COLUMNS, exclude=[qid or ""])
    if qid is None or text is None:
        raise MissingColumnError(f"{_F}: queries need a query id and a text column; the "
                                 f"columns are {df.columns}. Name them, e.g. columns="
                                 "{'query_id': 'id', 'query': 'question'}")
    doc = given.get("doc_id") or find_column(df, SOURCE_COLUMNS, exclude=[qid, text])
    stratum = given.get("stratum") or find_column(df, ("stratum",))
    cols = [pl.col(qid).cast(pl.String).alias("query_id"), pl.col(text).cast(pl.String).alias("query")]
    cols.append((pl.col(doc).cast(pl.String) if doc else pl.lit(None, pl.String)).alias("doc_id"))
    cols.append((pl.col(stratum).cast(pl.String) if stratum else pl.lit(None, pl.String))
                .alias("stratum"))
    return df.select(cols)


def _texts(q: pl.DataFrame, out: list[dict[str, Any]], max_words: int, max_chars: int) -> None:
    twice = q.group_by("query_id").agg(pl.col("key").n_unique().alias("_n")).filter(
        pl.col("_n") > 1)
    if twice.height:
        add_finding(out, "duplicate_query_id", "error", twice["query_id"].to_list(),
             f"{twice.height} query id(s) carry two different texts",
             "give each text its own id")
    empty = q.filter(pl.col("key").fill_null("") == "")
    if empty.height:
        add_finding(out, "empty_query", "error", empty["query_id"].to_list(),
             f"{empty.height} quer(y/ies) have no text", "drop them or write the query")
    one = q.filter(pl.col("key").str.len_chars() == 1)
    if one.height:
        add_finding(out, "one_character_query", "warning", one["query_id"].to_list(),
             f"{one.height} quer(y/ies) are one character long", "drop them unless users "
             "really search that way (the log says)")
    long = q.filter((pl.col("tokens").list.len() > max_words)
                    | (pl.col("key").str.len_chars() > max_chars))
    if long.height:
        add_finding(out, "long_query", "warning", long["query_id"].to_list(),
             f"{long.height} quer(y/ies) have more than {max_words} words or {max_chars} "
             "characters", "shorten them to what a user types, or raise max_words=")
    dup = (q.filter(pl.col("key").fill_null("") != "").unique(["query_id", "key"])
           .filter(pl.col("key").is_duplicated()).sort("key", "query_id"))
    if dup.height:
        add_finding(out, "duplicate_query", "warning", dup["query_id"].to_list(),
             f"{dup['key'].n_unique()} text(s) appear under {dup.height} ids (after "
             "normalisation): the mean counts them twice", "keep one id per text",
             count=dup.height)


def _near(q: pl.DataFrame, out: list[dict[str, Any]], threshold: float) -> pl.DataFrame:
    u = q.filter(pl.col("key").fill_null("") != "").unique("query_id", keep="first")
    pairs = near_duplicate_pairs(u.select("query_id", "tokens"), threshold)
    keys = u.select("query_id", "key")
    pairs = (pairs.join(keys.rename({"query_id": "a", "key": "query_a"}), on="a")
             .join(keys.rename({"query_id": "b", "key": "query_b"}), on="b")
             .filter(pl.col("query_a") != pl.col("query_b")).sort("a", "b"))
    if pairs.height:
        ids = pairs.select(pl.concat_list("a", "b")).to_series().explode().unique(
            maintain_order=True).to_list()
        add_finding(out, "near_duplicate", "warning", ids,
             f"{pairs.height} pair(s) of queries share >= {threshold:.0%} of their words "
             f"(token Jaccard; e.g. {pairs['query_a'][0]!r} ~ {pairs['query_b'][0]!r})",
             "keep one of each pair (.details['near_duplicates'] lists them)",
             count=pairs.height)
    return pairs


def _copies(q: pl.DataFrame, docs: Any, out: list[dict[str, Any]], copy_run: int,
            copy_ratio: float) -> pl.DataFrame | None:
    src = q.filter(pl.col("doc_id").is_not_null()).unique("query_id", keep="first")
    if docs is None or src.height == 0:
        return None
    d = docs_table(docs)
    body = pl.concat_str([pl.col(c).fill_null("") for c in ("title", "text") if c in d.columns],
                         separator=" ")
    d = d.select("doc_id", body.alias("_t"))
    missing = src.join(d, on="doc_id", how="anti")
    if missing.height:
        add_finding(out, "unknown_source_document", "error", missing["query_id"].to_list(),
             f"{missing.height} quer(y/ies) name a source document that is not in docs",
             "add the documents to docs= or drop the queries",
             docs=missing["doc_id"].unique(maintain_order=True).to_list())
    d = normalize_frame(d, "_t", True, "_k").select("doc_id", tokens_expr("_k").alias("tokens"))
    runs = copied_runs(src.select("query_id", "doc_id", "tokens"), d)
    bad = runs.filter((pl.col("longest_run") >= copy_run)
                      | ((pl.col("n_tokens") >= 4)
                         & (pl.col("longest_run") / pl.col("n_tokens") >= copy_ratio)))
    if bad.height:
        add_finding(out, "copies_document", "warning", bad["query_id"].to_list(),
             f"{bad.height} quer(y/ies) copy a run of words from their source document "
             f"(longest run >= {copy_run} words, or >= {copy_ratio:.0%} of the query)",
             "rewrite them as a user would ask (a copied sentence is an easy lexical match "
             "and flatters BM25)", docs=bad.join(src, on="query_id")["doc_id"].to_list())
    return runs


def _against_log(q: pl.DataFrame, log: Any, out: list[dict[str, Any]], *, normalize: Any,
                 log_columns: Mapping[str, str] | None, log_unit: str, alpha: float,
                 cuts: tuple[float, ...], min_per_stratum: int) -> dict[str, pl.DataFrame]:
    table = with_strata(log_table(log, _F, normalize=normalize, columns=log_columns), cuts)
    seen = q.join(table.select("key", pl.col("stratum").alias("_s")), on="key", how="left")
    unseen = seen.filter(pl.col("_s").is_null() & (pl.col("key").fill_null("") != ""))
    if unseen.height:
        add_finding(out, "not_in_log", "info", unseen["query_id"].to_list(),
                    f"{unseen.height} of {q.height} queries do not occur in the log "
                    "(generated or hand-written ones)", "nothing to fix; they carry no traffic "
                    "weight")
    weight = pl.col("count") if log_unit == "search" else pl.lit(1)
    logq = normalize_frame(table.select("key", weight.alias("_w")), "key", False, "_k").select(
        tokens_expr("key").alias("tokens"), "_w")
    details = {"distribution": distribution_tests(q, logq, alpha, out)}
    q2 = seen.with_columns(pl.coalesce("stratum", "_s").alias("stratum"))
    if q2["stratum"].is_not_null().any():  # (queries the log never saw have no stratum)
        details["strata"] = strata_check(q2.filter(pl.col("stratum").is_not_null()), cuts,
                                         min_per_stratum, out)
    return details


def audit_queries(
    queries: Any,
    *,
    log: Any = None,
    docs: Any = None,
    normalize: Any = True,
    columns: Mapping[str, str] | None = None,
    log_columns: Mapping[str, str] | None = None,
    near_duplicate: float = 0.8,
    copy_run: int = 6,
    copy_ratio: float = 0.8,
    max_words: int = 32,
    max_chars: int = 200,
    min_per_stratum: int = 5,
    alpha: float = 0.01,
    log_unit: str = "query",
    cuts: Sequence[float] = (0.5, 0.8),
) -> QueryAudit:
    """Audit test queries before they are labelled: duplicates, copies, odd lengths, drift.

    Parameters
    ----------
    queries
        ``query_id, query`` and optionally the source document ``doc_id`` and a
        ``stratum``: a frame of any kind, a dict ``{query_id: text}``, a
        :class:`~searcheval_frames.QuerySample` or a generated set.
    log
        The query log (as :func:`~searcheval_frames.sample_queries` takes it): enables
        the length and word tests, the strata and ``not_in_log``.
    docs
        Documents (``doc_id`` + text): enables ``copies_document`` and
        ``unknown_source_document``.
    normalize
        As for :func:`~searcheval_frames.sample_queries` (duplicates are compared after it).
    columns, log_columns
        Your column names of ``queries`` (``query_id``, ``query``, ``doc_id``,
        ``stratum``) and of the log.
    near_duplicate
        Token-Jaccard threshold of ``near_duplicate``.
    copy_run, copy_ratio
        ``copies_document``: a shared run of this many words, or this share of a query of
        four or more words.
    max_words, max_chars, min_per_stratum
        Limits of ``long_query`` and ``small_stratum``.
    alpha
        Level of the two distribution tests.
    log_unit
        ``"query"`` (each distinct log query once) or ``"search"`` (once per search).
    cuts
        Strata of the log, as for :func:`~searcheval_frames.sample_queries`.

    Returns
    -------
    QueryAudit
        Findings as :func:`~searcheval_frames.check` returns them, plus ``.details``.

    Examples
    --------
    >>> import searcheval_frames as sef
    >>> qs = {"q1": "what is bm25", "q2": "What is  BM25", "q3": "bm25: what is",
    ...       "q4": "x"}
    >>> sef.audit_queries(qs).codes()
    ['duplicate_query', 'near_duplicate', 'one_character_query']
    """
    check_float(_F, "near_duplicate", near_duplicate, minimum=0, maximum=1, open_min=True,
                example="near_duplicate=0.8")
    check_int(_F, "copy_run", copy_run, minimum=1, example="copy_run=6")
    check_float(_F, "copy_ratio", copy_ratio, minimum=0, maximum=1, open_min=True,
                example="copy_ratio=0.8")
    check_int(_F, "max_words", max_words, minimum=1, example="max_words=32")
    check_int(_F, "max_chars", max_chars, minimum=1, example="max_chars=200")
    check_int(_F, "min_per_stratum", min_per_stratum, minimum=0, example="min_per_stratum=5")
    check_float(_F, "alpha", alpha, minimum=0, maximum=1, open_min=True, open_max=True,
                example="alpha=0.01")
    check_choice(_F, "log_unit", log_unit, ("query", "search"), example="log_unit='search'")
    normalize = check_normalize(_F, normalize)
    cuts_t = tuple(float(c) for c in cuts)
    q = normalize_frame(_queries(queries, columns), "query", normalize, "key")
    q = q.with_columns(tokens_expr("key").alias("tokens"))
    out: list[dict[str, Any]] = []
    _texts(q, out, max_words, max_chars)
    details = {"near_duplicates": _near(q, out, near_duplicate)}
    runs = _copies(q, docs, out, copy_run, copy_ratio)
    if runs is not None:
        details["copies"] = runs
    if log is not None:
        details |= _against_log(q, log, out, normalize=normalize, log_columns=log_columns,
                                log_unit=log_unit, alpha=alpha, cuts=cuts_t,
                                min_per_stratum=min_per_stratum)
    elif q["stratum"].is_not_null().any():
        details["strata"] = strata_check(q.filter(pl.col("stratum").is_not_null()), cuts_t,
                                         min_per_stratum, out)
    return QueryAudit(pl.DataFrame(out, schema=SCHEMA), input_kind(queries), details=details)
