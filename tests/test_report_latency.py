"""The report's latency section: numbers against numpy's percentiles, the verdicts
unchanged by it, from RetrieveResults or a latency= frame, and failed queries counted."""

from __future__ import annotations

import warnings

import matplotlib
import numpy as np
import polars as pl
import pytest
from conftest import DATA

import searcheval_frames as sef
from searcheval_frames.errors import SearchEvalWarning
from searcheval_frames.systems import rerank, sqlite_fts

matplotlib.use("Agg")

EX = DATA / "example"
QRELS = EX / "qrels.txt"


@pytest.fixture(scope="module")
def results():
    fts = sqlite_fts(EX / "docs.jsonl")
    before = sef.retrieve(fts, EX / "queries.tsv", 20, name="bm25", cache=False)
    after = sef.retrieve(rerank(fts, EX / "docs.jsonl"), EX / "queries.tsv", 20,
                         name="bm25-rerank", cache=False)
    return before, after


def _report(runs, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SearchEvalWarning)  # the data banner's notes
        return sef.report(runs, QRELS, baseline="bm25", **kw)


def _section(rep):
    return next(s for s in rep.data.sections if s.id == "latency")


def test_the_section_is_numpys_percentiles_and_the_verdicts_do_not_move(results) -> None:
    before, after = results
    rep = _report(before + after, figures=False)
    plain = _report(pl.concat([before.run, after.run]), figures=False)
    assert rep.verdicts == plain.verdicts  # quality only
    assert not any(s.id == "latency" for s in plain.data.sections)
    md = _section(rep).markdown
    assert "| run | queries | errors | p50 ms | p95 ms | p99 ms |" in md
    for res in results:
        secs = res.latency["seconds"].to_numpy()
        p = [np.percentile(secs, q) * 1000 for q in (50, 95, 99)]
        row = f"| {res.name} | 38 | 0 | " + " | ".join(f"{v:.3f}" for v in p) + " |"
        assert row in md


def test_a_dict_of_results_and_a_latency_frame_give_the_same_section(results) -> None:
    before, after = results
    from_dict = _report({"bm25": before, "bm25-rerank": after}, figures=False)
    lat = sef.systems.latency_of([before, after])
    from_frame = _report(pl.concat([before.run, after.run]), latency=lat.to_pandas(),
                         figures=False)
    assert _section(from_dict).markdown == _section(from_frame).markdown


def test_failed_queries_are_counted_and_the_figure_is_drawn(tmp_path) -> None:
    qs = {"q01": "pinecone index", "q02": "hnsw", "q03": "bm25 tuning"}
    fts = sqlite_fts(EX / "docs.jsonl")

    def flaky(query_id, query, k):
        if query_id == "q02":
            raise RuntimeError("engine down")
        return fts.search(query_id, query, k).hits

    with pytest.warns(SearchEvalWarning, match="engine down"):
        after = sef.retrieve(flaky, qs, 10, name="flaky", cache=False)
    before = sef.retrieve(fts, qs, 10, name="bm25", cache=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SearchEvalWarning)
        rep = sef.report(before + after, QRELS, baseline="bm25")
    md = _section(rep).markdown
    assert "1 queries failed" in md
    assert "| flaky | 3 | 1 |" in md
    assert [f.name for f in rep.data.figures][-1] == "latency"
    index = rep.save(tmp_path / "r")
    html = index.read_text(encoding="utf-8")
    assert 'id="latency"' in html and 'id="fig-latency"' in html
    assert "## Latency" in (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    import json

    prov = json.loads((tmp_path / "r" / "provenance.json").read_text(encoding="utf-8"))
    assert prov["systems"]["bm25"]["adapter"] == "sqlite_fts"
    assert prov["systems"]["bm25"]["fingerprint"] == fts.fingerprint()
    assert prov["systems"]["flaky"]["adapter"] == "function"


def test_answers_from_the_cache_are_said_so(tmp_path) -> None:
    fts = sqlite_fts(EX / "docs.jsonl")
    qs = {"q01": "pinecone index", "q02": "hnsw"}
    cache = tmp_path / "c.db"
    sef.retrieve(fts, qs, 10, name="bm25", cache=cache)
    again = sef.retrieve(fts, qs, 10, name="bm25", cache=cache)
    other = sef.retrieve(rerank(fts, EX / "docs.jsonl"), qs, 10, name="bm25-rerank",
                         cache=False)
    md = _section(_report(again + other, figures=False)).markdown
    assert "2 answers came from the cache" in md


def test_the_latency_files_of_searcheval_retrieve_feed_a_report_of_run_files(tmp_path) -> None:
    import subprocess
    import sys

    from conftest import REPO

    docs = (EX / "docs.jsonl").as_posix()
    (tmp_path / "a.toml").write_text(f'adapter = "sqlite_fts"\ndocs = "{docs}"\nname = "bm25"\n')
    (tmp_path / "b.toml").write_text(f'adapter = "bm25"\ndocs = "{docs}"\nk1 = 0.9\n'
                                     'name = "bm25-k1"\n')
    for sys_file, out in (("a.toml", "bm25.tsv"), ("b.toml", "k1.tsv")):
        proc = subprocess.run([sys.executable, "-m", "searcheval_frames", "retrieve", sys_file,
                               str(EX / "queries.tsv"), "-o", out, "--no-cache"],
                              capture_output=True, text=True, cwd=tmp_path, timeout=120,
                              env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
        assert proc.returncode == 0, proc.stderr
    runs = [sef.read_run(tmp_path / "bm25.tsv"), sef.read_run(tmp_path / "k1.tsv")]
    lat_files = [tmp_path / "bm25.latency.tsv", tmp_path / "k1.latency.tsv"]
    rep = _report(pl.concat([pl.DataFrame(r) for r in runs]), latency=lat_files,
                  figures=False)
    md = _section(rep).markdown
    lat = pl.concat([pl.read_csv(p, separator="\t") for p in lat_files])
    rows = {run: f"| {run} | 38 | 0 | "
            f"{np.percentile(lat.filter(pl.col('run') == run)['seconds'].to_numpy(), 50) * 1000:.3f} |"
            for run in ("bm25", "bm25-k1")}
    assert all(row in md for row in rows.values())
    # the same from the command line: searcheval report ... --latency FILES
    proc = subprocess.run([sys.executable, "-m", "searcheval_frames", "report",
                           str(QRELS), "bm25.tsv", "k1.tsv", "--latency", *map(str, lat_files),
                           "--no-figures", "-q", "-o", "rep"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=300,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    cli_md = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    assert all(row in cli_md for row in rows.values())


def test_a_list_of_results_is_a_run_wherever_a_run_is(results) -> None:
    """sef.report / evaluate / compare take [r1, r2] as they take r1 + r2 (a list of
    RetrieveResults failed in the frames layer before)."""
    before, after = results
    as_list = _report([before, after], figures=False)
    added = _report(before + after, figures=False)
    assert as_list.verdicts == added.verdicts
    assert _section(as_list).markdown == _section(added).markdown
    got = sef.evaluate([before, after], QRELS, ["nDCG@10", "P@5"])
    want = sef.evaluate(before + after, QRELS, ["nDCG@10", "P@5"])
    assert got.sort("run", "measure").equals(want.sort("run", "measure"))
