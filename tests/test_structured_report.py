"""Issue #35 in the report and on the bundled example: ``report(replicate=, dataset=)``,
the Seeds and Datasets sections, the figures, and the bundled data's shape."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import polars as pl
import pytest

import searcheval_frames as sef

DATA = Path(__file__).resolve().parents[1] / "data" / "structured"


def bundled() -> tuple[pl.DataFrame, pl.DataFrame]:
    schema = {"query_id": pl.String, "seed": pl.String}
    runs = pl.read_csv(DATA / "runs.csv", schema_overrides=schema)
    qrels = pl.read_csv(DATA / "qrels.csv", schema_overrides={"query_id": pl.String})
    return runs, qrels


def test_bundled_example_has_three_systems_three_seeds_two_query_sets() -> None:
    runs, qrels = bundled()
    assert runs.group_by("collection", "run", "seed").len().height == 2 * 3 * 3
    assert set(qrels["collection"]) == {"docs", "help"}
    # query ids repeat across the two sets: a query is (collection, query_id)
    shared = set(qrels.filter(pl.col("collection") == "docs")["query_id"]) & set(
        qrels.filter(pl.col("collection") == "help")["query_id"])
    assert len(shared) == 25
    # the seeds of the stochastic systems differ; bm25's are the same run
    per_seed = sef.evaluate(runs.filter(pl.col("collection") == "docs").with_columns(
        pl.concat_str(["run", "seed"], separator="#").alias("run")).drop("seed", "collection"),
        qrels.filter(pl.col("collection") == "docs").drop("collection"), ["nDCG@10"])
    values = dict(per_seed.select("run", "value").iter_rows())
    assert len({values[f"bm25#{s}"] for s in "012"}) == 1
    assert len({values[f"hybrid-lsi#{s}"] for s in "012"}) == 3


def test_the_script_rebuilds_the_bundled_files_byte_for_byte(tmp_path: Path) -> None:
    before = {p.name: p.read_bytes() for p in DATA.glob("*.csv")}
    subprocess.run([sys.executable, str(DATA.parent / "make_structured_example.py")],
                   check=True, capture_output=True)
    assert {p.name: p.read_bytes() for p in DATA.glob("*.csv")} == before


def test_report_with_seeds_and_datasets() -> None:
    runs, qrels = bundled()
    rep = sef.report(runs, qrels, baseline="bm25", replicate="seed", dataset="collection",
                     figures=False, measures=["nDCG@10", "P@5"], focus="nDCG@10")
    md = rep.to_markdown()
    assert "## Seeds: is the difference bigger than the seed noise?" in md
    assert "## Datasets: per collection and over all of them" in md
    assert "Most of the variance of nDCG@10 is query variance" in md
    assert "seed noise is" in md
    # the main report shows seed 0, queries keyed collection:query_id
    first = runs.filter(pl.col("seed") == "0").drop("seed")
    key = pl.concat_str(["collection", "query_id"], separator=":").alias("query_id")
    cmp = sef.compare(first.with_columns(key).drop("collection"),
                      qrels=qrels.with_columns(key).drop("collection"),
                      measures=["nDCG@10"], baseline="bm25").to_polars()
    ours = rep.comparison.to_polars() if hasattr(rep.comparison, "to_polars") else \
        pl.from_pandas(rep.frame)
    got = ours.filter(pl.col("measure") == "nDCG@10").sort("run")["delta"].to_list()
    assert got == pytest.approx(cmp.sort("run")["delta"].to_list(), abs=1e-12)


def test_report_figures_with_seeds() -> None:
    runs, qrels = bundled()
    docs = runs.filter(pl.col("collection") == "docs").drop("collection")
    q = qrels.filter(pl.col("collection") == "docs").drop("collection")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the report's own warnings on this small set
        rep = sef.report(docs, q, baseline="bm25", replicate="seed",
                         measures=["nDCG@10"])
    names = [f.name for f in rep.data.figures]
    assert "replicate-strip" in names and "variance-components" in names
    assert "## Datasets" not in rep.to_markdown()


def test_report_without_structure_is_unchanged() -> None:
    runs, qrels = bundled()
    plain = runs.filter(pl.col("seed") == "0", pl.col("collection") == "docs").drop(
        "seed", "collection")
    q = qrels.filter(pl.col("collection") == "docs").drop("collection")
    rep = sef.report(plain, q, baseline="bm25", figures=False, measures=["nDCG@10"])
    assert "## Seeds" not in rep.to_markdown()
