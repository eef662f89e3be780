"""Subtopic judgments for the alpha-nDCG tests of sef.spark and sef.dask (generated with
numpy), and the hand-computed example of test_measures_graded."""

from __future__ import annotations

import math

import numpy as np
import polars as pl

#: a diversity measure mixed with flat ones (which see the largest label over subtopics)
DIV_MEASURES = ["alpha-nDCG@20", "nDCG@10", "P@5", "alpha-nDCG(alpha=0.3,rel=2)@5",
                "alpha-nDCG@1", "AP", "NumRel", "Judged@10",
                # the intent-aware family (measures/intent_aware.py)
                "ERR-IA@20", "nERR-IA@5", "P-IA@10", "StRecall@10", "AP-IA", "NRBP",
                "nNRBP(alpha=0.3,beta=0.8)", "ERR-IA(rel=2)@3"]


def make_subtopic_qrels(seed: int, n_q: int = 40, depth: int = 30,
                        int_ids: bool = False) -> pl.DataFrame:
    """``query_id, subtopic, doc_id, relevance`` for the runs of ``test_scale.make_run``
    with the same ``n_q``, ``depth``, ``int_ids``: 1-4 subtopics per query, labels -1..2,
    documents labelled for several subtopics, unjudged documents, and queries on one side
    only (the runs use ids 0..n_q+9, the labels 5..n_q+19)."""
    rng = np.random.default_rng(seed + 7919)
    n = 16 * n_q
    qrels = pl.DataFrame({"query_id": rng.integers(5, n_q + 20, n),
                          "subtopic": rng.integers(1, 5, n),
                          "doc_id": rng.integers(0, 3 * depth, n),
                          "relevance": rng.integers(-1, 3, n)})
    qrels = qrels.unique(["query_id", "subtopic", "doc_id"], maintain_order=True)
    if not int_ids:
        qrels = qrels.with_columns(pl.format("q{}", "query_id").alias("query_id"),
                                   pl.format("d{}", "doc_id").alias("doc_id"),
                                   pl.format("s{}", "subtopic").alias("subtopic"))
    return qrels


# the example of test_measures_graded.test_alpha_ndcg_by_hand: ranking a, b, c
HAND_RUN = pl.DataFrame({"query_id": "q1", "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
HAND_SUB = pl.DataFrame({"query_id": "q1",
                         "subtopic": ["1", "2", "1", "3", "2", "1"],
                         "doc_id": ["a", "a", "b", "c", "d", "e"],
                         "relevance": [1, 1, 1, 1, 1, 0]})
#: alpha-nDCG@3 of HAND_RUN: a covers 1 and 2, b covers 1 again (gain 0.5), c covers 3;
#: greedy ideal a, c, then d (ties with b, the larger doc id wins)
HAND_ALPHA_NDCG_3 = ((2 + 0.5 / math.log2(3) + 1 / math.log2(4))
                     / (2 + 1 / math.log2(3) + 0.5 / math.log2(4)))
