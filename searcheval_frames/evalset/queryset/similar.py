"""Which test queries are near duplicates, and which copy a run of their source document.

Both are polars joins over exploded tokens (no Python loop over queries or pairs):

* :func:`near_duplicate_pairs`: every pair with token-set Jaccard
  :math:`|A \\cap B| / |A \\cup B| \\ge t`. Candidates by prefix filtering (Chaudhuri,
  Ganti & Kaushik, ICDE 2006; Bayardo, Ma & Srikant, WWW 2007): with the tokens of each
  query ordered rarest first, two queries with :math:`J \\ge t` share a token among the
  first :math:`|A| - \\lceil t |A| \\rceil + 1` of each (their overlap is at least
  :math:`t \\max(|A|, |B|)`), so only pairs sharing a prefix token are verified, and
  verified exactly. No pair is missed.
* :func:`copied_runs`: per query, the longest run of consecutive tokens it shares with
  its source document (matches on the same diagonal ``j - i``, consecutive ``i``) and
  the share of its distinct tokens found in the document.

>>> import polars as pl
>>> q = pl.DataFrame({"query_id": ["a", "b", "c"],
...                   "tokens": [["hnsw", "vs", "ivf"], ["ivf", "vs", "hnsw"], ["bm25"]]})
>>> near_duplicate_pairs(q, 0.8).rows()
[('a', 'b', 1.0)]
"""

from __future__ import annotations

import polars as pl

__all__ = ["copied_runs", "near_duplicate_pairs"]

_EPS = 1e-9


def _token_rows(queries: pl.DataFrame) -> pl.DataFrame:
    return (queries.select("query_id", pl.col("tokens").alias("token")).explode("token")
            .drop_nulls("token").unique(["query_id", "token"]))


def near_duplicate_pairs(queries: pl.DataFrame, threshold: float) -> pl.DataFrame:
    """``a, b, jaccard`` (``a < b``) for the pairs of ``queries`` (``query_id``,
    ``tokens``: a list of tokens) with token-set Jaccard >= ``threshold``."""
    toks = _token_rows(queries)
    freq = toks.group_by("token").agg(pl.len().alias("_f"))
    ranked = (toks.join(freq, on="token").sort("query_id", "_f", "token")
              .with_columns(pl.int_range(pl.len()).over("query_id").alias("_pos"),
                            pl.len().over("query_id").alias("_size")))
    prefix_len = (pl.col("_size") - (pl.col("_size") * threshold - _EPS).ceil() + 1)
    prefix = ranked.filter(pl.col("_pos") < prefix_len).select("query_id", "token", "_size")
    cand = (prefix.join(prefix, on="token", suffix="_b")
            .filter(pl.col("query_id") < pl.col("query_id_b"))
            .filter((pl.col("_size_b") >= pl.col("_size") * threshold - _EPS)
                    & (pl.col("_size") >= pl.col("_size_b") * threshold - _EPS))
            .select(pl.col("query_id").alias("a"), pl.col("query_id_b").alias("b"),
                    pl.col("_size").alias("size_a"), pl.col("_size_b").alias("size_b"))
            .unique(["a", "b"]))
    inter = (cand.select("a", "b")
             .join(toks.rename({"query_id": "a"}), on="a")
             .join(toks.rename({"query_id": "b"}), on=["b", "token"])
             .group_by("a", "b").agg(pl.len().alias("_inter")))
    return (cand.join(inter, on=["a", "b"])
            .with_columns((pl.col("_inter") / (pl.col("size_a") + pl.col("size_b")
                                               - pl.col("_inter"))).alias("jaccard"))
            .filter(pl.col("jaccard") >= threshold - _EPS)
            .select("a", "b", "jaccard").sort("a", "b"))


def copied_runs(queries: pl.DataFrame, docs: pl.DataFrame) -> pl.DataFrame:
    """``query_id, n_tokens, longest_run, overlap`` for ``queries`` (``query_id, doc_id,
    tokens``) against ``docs`` (``doc_id, tokens``); queries whose document is missing
    get 0."""
    q = (queries.select("query_id", "doc_id", pl.col("tokens").alias("token"))
         .with_columns(pl.col("token").list.len().alias("n_tokens")))
    qt = q.explode("token").drop_nulls("token").with_columns(
        pl.int_range(pl.len()).over("query_id").alias("i"))
    dt = (docs.join(q.select("doc_id").unique(), on="doc_id", how="semi")
          .select("doc_id", pl.col("tokens").alias("token")).explode("token")
          .drop_nulls("token").with_columns(pl.int_range(pl.len()).over("doc_id").alias("j")))
    hits = qt.join(dt, on=["doc_id", "token"])
    runs = (hits.select("query_id", "i", (pl.col("j") - pl.col("i")).alias("_d"))
            .unique().sort("query_id", "_d", "i")
            .with_columns((pl.col("i") - pl.int_range(pl.len()).over("query_id", "_d"))
                          .alias("_run"))
            .group_by("query_id", "_d", "_run").agg(pl.len().alias("_n"))
            .group_by("query_id").agg(pl.col("_n").max().alias("longest_run")))
    shared = (hits.select("query_id", "token").unique().group_by("query_id")
              .agg(pl.len().alias("_shared")))
    distinct = qt.select("query_id", "token").unique().group_by("query_id").agg(
        pl.len().alias("_distinct"))
    return (q.select("query_id", "n_tokens")
            .join(runs, on="query_id", how="left").join(shared, on="query_id", how="left")
            .join(distinct, on="query_id", how="left")
            .select("query_id", "n_tokens",
                    pl.col("longest_run").fill_null(0).cast(pl.Int64),
                    (pl.col("_shared").fill_null(0) / pl.col("_distinct")).fill_null(0.0)
                    .alias("overlap")))
