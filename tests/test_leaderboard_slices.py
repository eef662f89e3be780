"""leaderboard(by=): each slice's leaderboard equals ``sef.leaderboard`` on the per-query
scores filtered to that slice (same seed), at the stated within-slice level; p-values
equal the filtered ones times the Bonferroni factor over slices; the minimum
detectable Δ of a small slice equals a root of scipy's noncentral t power."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pytest
from conftest import shared_path
from scipy import optimize, stats

import searcheval_frames as sef
from searcheval_frames.errors import InvalidOptionError, SearchEvalError, SearchEvalWarning

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "data" / "example"
RUNS = [str(EXAMPLE / "runs" / f"{n}.run") for n in ("bm25", "bm25-rerank", "lsi")]
QRELS = str(EXAMPLE / "qrels.txt")
WORDS = pl.col("query").str.split(" ").list.len()
LENGTH = (pl.when(WORDS <= 3).then(pl.lit("1-3")).when(WORDS <= 5).then(pl.lit("4-5"))
          .otherwise(pl.lit("6+")).alias("length"))
FRAME_COLS = ["run", "mean", "ci_low", "ci_high", "rank", "rank_low", "rank_high", "p_best",
              "group"]


def quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kw)


def per_query() -> pl.DataFrame:
    return quiet(sef.evaluate, sef.read_run(RUNS), QRELS, "nDCG@10", per_query=True)


def queries() -> pl.DataFrame:
    return sef.read_queries(EXAMPLE / "queries.tsv")


def _t_detectable(n: int, sd: float, alpha: float = 0.05, target: float = 0.8) -> float:
    """Independent: the Δ whose two-sided paired t-test power is ``target`` (brentq)."""
    crit = stats.t.ppf(1 - alpha / 2, n - 1)

    def gap(effect: float) -> float:
        nc = np.sqrt(n) * effect
        lower = np.nan_to_num(stats.nct.cdf(-crit, n - 1, nc), nan=0.0)
        return stats.nct.sf(crit, n - 1, nc) + lower - target

    return optimize.brentq(gap, 1e-9, 5.0, xtol=1e-14) * sd


def check_slices(sliced, pq: pl.DataFrame, keys: pl.DataFrame, *, alpha: float, ci: float,
                 **options) -> int:
    """Every slice of ``sliced`` == sef.leaderboard on the filtered scores at the level
    the family states; returns the number of slices tested."""
    name = keys.columns[1]
    frame, pairs = pl.DataFrame(sliced.frame), pl.DataFrame(sliced.pairs)
    values = keys[name].unique().sort().to_list()
    assert sorted(frame[name].unique().to_list()) == values
    s = sliced.n_tested if sliced.family == "all" else 1
    for value in values:
        ids = keys.filter(pl.col(name) == value)["query_id"].to_list()
        want = quiet(sef.leaderboard, pq.filter(pl.col("query_id").is_in(ids)),
                     measure="nDCG@10", alpha=alpha / s, ci=1 - (1 - ci) / s, **options)
        mine = frame.filter(pl.col(name) == value)
        assert mine.select(FRAME_COLS).equals(want.to_polars().select(FRAME_COLS)), value
        assert (mine["n_queries"] == len(ids)).all()
        got_p = pairs.filter(pl.col(name) == value)
        wp = pl.DataFrame(want.pairs)
        assert got_p["run_a"].to_list() == wp["run_a"].to_list()
        assert got_p["significant"].to_list() == wp["significant"].to_list()
        np.testing.assert_allclose(got_p["p_within_slice"].to_numpy(), wp["p_value"].to_numpy(),
                                   rtol=0, atol=0)
        np.testing.assert_allclose(got_p["p_value"].to_numpy(),
                                   np.minimum(1.0, s * wp["p_value"].to_numpy()), rtol=1e-15)
        np.testing.assert_allclose(got_p["ci_low"].to_numpy(), wp["ci_low"].to_numpy())
    return len(values)


@pytest.mark.parametrize("test", ["randomized_tukey_hsd", "tukey_hsd", "holm"])
def test_each_slice_equals_the_leaderboard_of_its_queries(test):
    pq, q = per_query(), queries()
    opts = {"test": test, "n_resamples": 400, "seed": 3, "progress": False}
    got = quiet(sef.leaderboard, pq, measure="nDCG@10", queries=q, by=LENGTH, **opts)
    keys = q.select("query_id", LENGTH)
    assert got.family == "all" and got.n_tested == 3 and got.slices == ["length"]
    assert check_slices(got, pq, keys, alpha=0.05, ci=0.95, **opts) == 3
    # the stated family: p <= alpha exactly when the slice's test at alpha / S rejects
    pairs = got.pairs
    assert ((pairs["p_value"] <= 0.05) == (pairs["p_within_slice"] <= 0.05 / 3)).all()
    # one family per slice: the plain leaderboard of each slice at alpha
    own = quiet(sef.leaderboard, pq, measure="nDCG@10", queries=q, by=LENGTH, family="slice",
                **opts)
    assert check_slices(own, pq, keys, alpha=0.05, ci=0.95, **opts) == 3
    assert own.pairs["p_value"].equals(own.pairs["p_within_slice"])


def test_by_a_column_with_runs_and_qrels_pandas_in_pandas_out():
    q = queries().with_columns(LENGTH).with_columns(
        pl.when(pl.col("length") == "1-3").then(pl.lit("short")).otherwise(pl.lit("long"))
        .alias("bucket")).to_pandas()
    runs = pd.concat([sef.read_run(r).to_pandas() for r in RUNS])
    got = quiet(sef.leaderboard, runs, sef.read_qrels(QRELS).to_pandas(), measure="nDCG@10",
                queries=q, by="bucket", test="tukey_hsd", seed=0, alpha=0.1, ci=0.9)
    assert isinstance(got.frame, pd.DataFrame) and isinstance(got.pairs, pd.DataFrame)
    assert list(got.frame.columns[:2]) == ["bucket", "run"]
    assert "bucket" in got.pairs.columns
    for lb in got.per_slice.values():
        assert isinstance(lb.frame, pd.DataFrame)
    keys = pl.from_pandas(q).select("query_id", "bucket")
    assert check_slices(got, per_query(), keys, alpha=0.1, ci=0.9, test="tukey_hsd",
                        seed=0) == 2


def test_small_slice_warns_with_the_minimum_detectable_delta():
    pq, q = per_query(), queries()
    with pytest.warns(SearchEvalWarning, match="fewer than 20 queries") as rec:
        got = sef.leaderboard(per_query=pq, measure="nDCG@10", queries=q, by=LENGTH,
                              test="tukey_hsd", progress=False)
    text = " ".join(str(w.message) for w in rec)
    fr = got.to_polars().unique("length", keep="first").sort("length")
    assert fr["small"].to_list() == (fr["n_queries"] < 20).to_list() and fr["small"].any()
    for r in fr.iter_rows(named=True):
        lb = got.per_slice[(r["length"],)]
        sd = float(np.sqrt(2 * lb._anova["V_E"][0]))
        assert r["detectable_delta"] == pytest.approx(_t_detectable(r["n_queries"], sd),
                                                      rel=1e-6)
        if r["small"]:
            assert f"length={r['length']} ({r['n_queries']} queries)" in text
            assert f"|Δ| >= {r['detectable_delta']:.3f}" in text
            assert "Small slice" in got.to_markdown()


def test_untestable_slices_do_not_count_in_the_family():
    pq, q = per_query(), queries()
    ids = q["query_id"].to_list()
    meta = pl.DataFrame({"query_id": ids, "part": ["tiny"] * 2 + ["big"] * (len(ids) - 2)})
    with pytest.warns(SearchEvalWarning, match="cannot be tested"):
        got = sef.leaderboard(per_query=pq, measure="nDCG@10", queries=meta, by="part",
                              test="tukey_hsd")
    assert got.n_tested == 1  # the 2-query slice has no test: the big one is the family
    tiny = got.to_polars().filter(pl.col("part") == "tiny")
    assert (tiny["group"] == "cannot be tested").all()
    big = quiet(sef.leaderboard, pq.filter(~pl.col("query_id").is_in(ids[:2])),
                measure="nDCG@10", test="tukey_hsd")
    assert got.pairs.filter(pl.col("part") == "big")["p_value"].equals(big.pairs["p_value"])


def test_views_headline_html_and_markdown_per_slice():
    got = quiet(sef.leaderboard, per_query(), measure="nDCG@10", queries=queries(), by=LENGTH,
                test="tukey_hsd")
    lines = got.headline().splitlines()
    assert len(lines) == 3 and all(re.match(r"length=\S+ \(\d+ queries\): ", s) for s in lines)
    html = got._repr_html_()
    assert html.count('<table class="sef-leaderboard">') == 3
    assert html.count('<h4 class="sef-slice">') == 3 and "Bonferroni" in html
    md = got.to_markdown()
    assert md.count("### length=") == 3 and "alpha = 0.05/3" in md


def test_figure_facets_by_slice():
    import matplotlib

    matplotlib.use("Agg")
    got = quiet(sef.leaderboard, per_query(), measure="nDCG@10", queries=queries(), by=LENGTH,
                test="tukey_hsd")
    data = sef.leaderboard_plot_data(got)
    assert data["length"].unique().len() == 3 and data.height == 9
    assert data["y"].n_unique() == 9  # one row per (slice, run), none drawn on another
    ax = sef.leaderboard_plot(got)
    texts = [t.get_text() for t in ax.texts]
    for value in ("1-3", "4-5", "6+"):
        assert any(t.startswith(f"length={value} (") for t in texts)


def test_slice_option_errors():
    pq, q = per_query(), queries()
    with pytest.raises(InvalidOptionError, match="family"):
        sef.leaderboard(per_query=pq, measure="nDCG@10", queries=q, by=LENGTH, family="pairs")
    with pytest.raises(InvalidOptionError, match="min_queries"):
        sef.leaderboard(per_query=pq, measure="nDCG@10", queries=q, by=LENGTH, min_queries=0)
    with pytest.raises(SearchEvalError, match="needs queries="):
        sef.leaderboard(per_query=pq, measure="nDCG@10", by="intent")
    with pytest.raises(SearchEvalError, match="no column 'intent'"):
        sef.leaderboard(per_query=pq, measure="nDCG@10", queries=q, by="intent")


def test_trec_dl19_by_query_length():
    folder = shared_path("trec_dl_passage")
    q = pl.read_csv(folder / "topics.dl19-passage.txt", separator="\t", has_header=False,
                    new_columns=["query_id", "query"], schema_overrides={"query_id": pl.String},
                    quote_char=None)
    runs = sef.read_run([folder / "runs" / f"run.dl19-passage.{s}.txt"
                         for s in ("bm25", "bm25-rm3", "splade-pp-ed")], name_from="file")
    pq = quiet(sef.evaluate, runs, folder / "qrels.dl19-passage.txt", "nDCG@10",
               per_query=True, relevance_level=2)
    long = (WORDS > 5).alias("long")
    got = quiet(sef.leaderboard, pq, measure="nDCG@10", queries=q, by=long, seed=0,
                n_resamples=1000, progress=False)
    assert got.to_polars().group_by("long").agg(pl.col("n_queries").first())[
        "n_queries"].sum() == 43
    assert check_slices(got, pq, q.select("query_id", long), alpha=0.05, ci=0.95, seed=0,
                        n_resamples=1000, progress=False) == 2


def test_several_columns_and_the_null_slice():
    pq, q = per_query(), queries()
    meta = q.head(30).with_columns((WORDS > 4).alias("long"),
                                   (pl.col("query_id") < "q20").alias("early"))
    with pytest.warns(SearchEvalWarning) as rec:
        got = sef.leaderboard(per_query=pq, measure="nDCG@10", queries=meta, by=["long", "early"],
                              test="tukey_hsd", seed=1)
    said = [str(w.message) for w in rec]
    assert any("8 evaluated queries have no row in queries=" in m for m in said)
    assert any("long=None, early=None (8 queries)" in m for m in said)
    assert got.slices == ["long", "early"] and got.n_tested == 5
    rest = set(pq["query_id"]) - set(meta["query_id"])
    for key, lb in got.per_slice.items():
        if key == (None, None):  # queries without metadata: a slice of their own, last
            ids = rest
        else:
            ids = set(meta.filter(pl.col("long") == key[0], pl.col("early") == key[1])
                      ["query_id"])
        want = quiet(sef.leaderboard, pq.filter(pl.col("query_id").is_in(list(ids))),
                     measure="nDCG@10", test="tukey_hsd", alpha=0.01, ci=0.99, seed=1)
        assert lb.n_queries == len(ids)
        assert lb.to_polars().select(FRAME_COLS).equals(want.to_polars().select(FRAME_COLS))
    assert list(got.per_slice)[-1] == (None, None)
