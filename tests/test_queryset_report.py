"""The report's weighted section: the average query beside the average search."""

from __future__ import annotations

import numpy as np
import polars as pl

import searcheval_frames as sef

DATA = sef.__file__.rsplit("/", 2)[0] + "/data/example"


def test_report_shows_both_means_and_says_which_question_each_answers():
    runs = sef.read_run([f"{DATA}/runs/bm25.run", f"{DATA}/runs/bm25-rerank.run"])
    qrels = sef.read_qrels(f"{DATA}/qrels.txt")
    ids = sorted(qrels["query_id"].unique().to_list())
    w = pl.DataFrame({"query_id": ids, "weight": [float(2 ** (i % 5)) for i in range(len(ids))]})
    rep = sef.report(runs, qrels, baseline="bm25", measures=["nDCG@10", "P@5"], figures=False,
                     weights=w, n_resamples=1000)
    html, md = rep.to_html(), rep.to_markdown()
    for text in (html, md):
        assert "Average query vs average search" in text
        assert "The average query: every test query counts once" in text
        assert "The average search" in text
    pq = sef.evaluate(runs, qrels, ["nDCG@10"], per_query=True)
    pq = pq.filter(pl.col("run") == "bm25").sort("query_id")
    want = np.average(pq["value"].to_numpy(), weights=w.sort("query_id")["weight"].to_numpy())
    assert f"{want:.3f}" in md
