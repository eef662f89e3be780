"""The audit's checks against the query log: lengths and words unlike the log's (scipy's
two-sample tests), strata with too few queries, queries the log never saw; and
:func:`add_finding`, how every audit check writes its finding.

* Lengths (words per query): ``scipy.stats.ks_2samp`` of the test queries against the
  log's queries (each distinct query once, or once per search with ``log_unit="search"``).
* Words: ``scipy.stats.chi2_contingency`` on a 2 x K table of word counts, test queries
  vs log, over the log's words that the test queries are expected to use at least 5
  times (:math:`n_{test} \\cdot p_w \\ge 5`), all other words pooled in one column.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from ...optional import require
from .sampling import stratum_names

__all__ = ["add_finding", "distribution_tests", "strata_check"]

_EX = 5


def add_finding(out: list[dict[str, Any]], code: str, severity: str, ids: Sequence[Any],
                message: str, fix: str, docs: Sequence[Any] = (),
                count: int | None = None) -> None:
    """Append one finding (``analysis.findings.SCHEMA``) with up to five example ids."""
    out.append({"code": code, "severity": severity,
                "count": len(ids) if count is None else count, "message": message,
                "query_id": [str(i) for i in list(ids)[:_EX]],
                "doc_id": [str(d) for d in list(docs)[:_EX]], "fix": fix})


def _vocabulary(q_tokens: pl.Series, log: pl.DataFrame) -> tuple[np.ndarray, list[str]] | None:
    """The 2 x K contingency table (test, log) and its column labels, or None."""
    qc = q_tokens.explode().drop_nulls().value_counts(name="_q").rename({q_tokens.name: "token"})
    lc = (log.select(pl.col("tokens").alias("token"), "_w").explode("token").drop_nulls("token")
          .group_by("token").agg(pl.col("_w").sum().alias("_l")))
    n_q, n_l = int(qc["_q"].sum()), float(lc["_l"].sum())
    if n_q == 0 or n_l == 0:
        return None
    kept = lc.filter(pl.col("_l") / n_l * n_q >= 5).sort("_l", "token", descending=[True, False])
    if kept.height == 0 or (kept.height == 1 and float(kept["_l"].sum()) == n_l):
        return None
    joined = kept.join(qc, on="token", how="left").with_columns(pl.col("_q").fill_null(0))
    q_in, l_in = int(joined["_q"].sum()), float(joined["_l"].sum())
    table = np.vstack([np.append(joined["_q"].to_numpy(), n_q - q_in),
                       np.append(joined["_l"].to_numpy(), n_l - l_in)]).astype(float)
    labels = [*joined["token"].to_list(), "(other words)"]
    if table[:, -1].sum() == 0:
        table, labels = table[:, :-1], labels[:-1]
    return table, labels


def distribution_tests(q: pl.DataFrame, log: pl.DataFrame, alpha: float,
                       out: list[dict[str, Any]]) -> pl.DataFrame:
    """``test, statistic, p_value, n_queries, n_log, note`` for lengths and words; adds
    ``length_shift`` / ``vocabulary_shift`` when p < alpha, ``distribution_untestable``
    when there is too little to test. ``log``: ``tokens, _w`` (weight of each row)."""
    stats = require("scipy.stats", "sef.audit_queries")
    good = q.filter(pl.col("tokens").list.len() > 0).unique("query_id")
    rows = []
    if good.height < 5 or log.height < 5:
        add_finding(out, "distribution_untestable", "info", [],
                    f"{good.height} queries and {log.height} log queries: too few to test "
                    "whether their lengths and words differ", "audit 5 or more queries")
        return pl.DataFrame(schema={"test": pl.String, "statistic": pl.Float64,
                                    "p_value": pl.Float64})
    q_len = good["tokens"].list.len().to_numpy()
    l_len = np.repeat(log["tokens"].list.len().to_numpy(), log["_w"].to_numpy().astype(np.int64))
    ks = stats.ks_2samp(q_len, l_len)
    rows.append(("length (KS)", float(ks.statistic), float(ks.pvalue),
                 f"median words {np.median(q_len):g} vs {np.median(l_len):g} in the log"))
    if ks.pvalue < alpha:
        add_finding(out, "length_shift", "warning", [],
                    f"query lengths differ from the log's (KS D = {ks.statistic:.2f}, "
                    f"p = {ks.pvalue:.2g}; median {np.median(q_len):g} words vs "
                    f"{np.median(l_len):g})", "sample queries from the log, or rewrite the "
                    "generated ones at the log's length", count=good.height)
    vocab = _vocabulary(good["tokens"], log)
    if vocab is None:
        add_finding(out, "distribution_untestable", "info", [],
                    "too few words to test the vocabulary against the log", "audit more queries")
    else:
        table, labels = vocab
        chi = stats.chi2_contingency(table, correction=False)
        share = table[0] / table[0].sum() - table[1] / table[1].sum()
        words = share[:-1] if labels[-1] == "(other words)" else share
        top = labels[int(np.argmax(words))]
        rows.append(("words (chi-square)", float(chi.statistic), float(chi.pvalue),
                     f"{table.shape[1]} word columns; most over-used: {top!r}"))
        if chi.pvalue < alpha:
            add_finding(out, "vocabulary_shift", "warning", [],
                        f"word frequencies differ from the log's (chi-square "
                        f"{chi.statistic:.1f}, df {chi.dof}, p = {chi.pvalue:.2g}; most "
                        f"over-used: {top!r})", "compare the words with the log's; "
                        "generated queries often use the documents' words",
                        count=good.height)
    return pl.DataFrame(rows, orient="row", schema={"test": pl.String, "statistic": pl.Float64,
                                                    "p_value": pl.Float64, "note": pl.String})


def strata_check(q: pl.DataFrame, cuts: Sequence[float], minimum: int,
                 out: list[dict[str, Any]]) -> pl.DataFrame:
    """Queries per stratum (every stratum of ``cuts``, zeros too); ``small_stratum`` for
    those below ``minimum``."""
    names = stratum_names(cuts)
    u = q.unique("query_id", keep="first")
    counts = (pl.DataFrame({"stratum": names})
              .join(u.group_by("stratum").len("queries"), on="stratum", how="left")
              .with_columns(pl.col("queries").fill_null(0).cast(pl.Int64)))
    small = counts.filter(pl.col("queries") < minimum)
    if small.height:
        parts = ", ".join(f"{s} {n}" for s, n in small.iter_rows())
        ids = u.join(small, on="stratum", how="semi")["query_id"].to_list()
        add_finding(out, "small_stratum", "warning", ids,
                    f"strata with fewer than {minimum} queries: {parts}",
                    "sample more from them (sample_queries(..., method='stratified'))",
                    count=small.height)
    return counts
