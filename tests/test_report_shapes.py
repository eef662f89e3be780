"""The report on data of real shapes: question ids, URL doc ids, long run names that share
a prefix, graded labels; and what it says about them (display names, baseline choice,
relevance level, colours, no "-0.000", the demo's command line)."""

from __future__ import annotations

import re
import shlex
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from conftest import DATA, shared_path
from hypothesis import given, settings
from hypothesis import strategies as st

import searcheval_frames as sef
from searcheval_frames.errors import InvalidOptionError, SearchEvalWarning
from searcheval_frames.frames.display import (
    resolve_name,
    run_display_names,
    shorten,
)

RAG = DATA / "rag"
EX = DATA / "example"
COLUMNS = {"run": "system", "query_id": "question", "doc_id": "url", "score": "similarity",
           "relevance": "grade"}
FAST = {"ci_method": "t", "figures": False}


@pytest.fixture(scope="module")
def rag() -> tuple[pl.DataFrame, pl.DataFrame]:
    return pl.read_csv(RAG / "runs.csv"), pl.read_csv(RAG / "grades.csv")


# ------------------------------------------------------------------ display names
names_st = st.lists(st.text(st.sampled_from("ab.-_/xyz01 "), min_size=1, max_size=90),
                    min_size=1, max_size=14, unique=True)


@settings(max_examples=300, deadline=None)
@given(names_st, st.integers(6, 40))
def test_display_names_are_unique_short_and_from_the_names(names: list[str], width: int) -> None:
    shown = run_display_names(names, width=width)
    assert list(shown) == names
    assert len(set(shown.values())) == len(names)  # unique, so a legend tells runs apart
    for n, s in shown.items():
        assert s and len(s) <= max(width + 24, len(n))
        # what is shown are pieces of the name around the ellipsis (plus a #k suffix)
        core = re.sub(r"#\d+$", "", s) if s not in n else s
        assert all(part in n for part in core.split("…")), (n, s)


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=0, max_size=200), st.integers(2, 60),
       st.sampled_from(["end", "middle", "start", "auto"]))
def test_shorten_keeps_short_text_and_cuts_long_text_to_width(text: str, width: int,
                                                              where: str) -> None:
    out = shorten(text, width, where=where)
    if len(text) <= width:
        assert out == text
    else:
        assert len(out) <= width and "…" in out


def test_display_names_of_real_run_files() -> None:
    names = [f"run.dl19-passage.{s}" for s in ("bm25", "bm25-rm3", "splade-pp-ed", "tasb")]
    assert list(run_display_names(names).values()) == ["bm25", "bm25-rm3", "splade-pp-ed", "tasb"]


def test_baseline_by_a_unique_part_of_its_name() -> None:
    names = ["run.dl19-passage.bm25", "run.dl19-passage.bm25-rm3", "run.dl19-passage.tasb"]
    assert resolve_name("bm25", names) == "run.dl19-passage.bm25"  # its display name
    assert resolve_name("rm3", names) == "run.dl19-passage.bm25-rm3"  # a unique part
    with pytest.raises(InvalidOptionError, match=r"report\(baseline='dl19'\): matches 3 runs"):
        resolve_name("dl19", names)
    with pytest.raises(InvalidOptionError, match="or a unique part of one"):
        resolve_name("dense", names)


# ------------------------------------------------------------------ the report
def test_missing_baseline_warns_naming_the_run(rag: Any) -> None:
    runs, grades = rag
    after_first = pl.concat([runs.filter(pl.col("system") == "hybrid"),
                             runs.filter(pl.col("system") == "keyword")])
    with pytest.warns(SearchEvalWarning, match=r"no baseline= given; using 'hybrid', the first"):
        rep = sef.report(after_first, grades, columns=COLUMNS, **FAST)
    assert rep.data.baseline == "hybrid"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a given baseline: no warning
        rep = sef.report(after_first, grades, columns=COLUMNS, baseline="key", **FAST)
    assert rep.data.baseline == "keyword"


def test_rag_report_states_relevance_opens_one_loss_and_shortens_urls(rag: Any,
                                                                       tmp_path: Path) -> None:
    runs, grades = rag
    rep = sef.report(runs.filter(pl.col("system") != "embedding"), grades, columns=COLUMNS,
                     baseline="keyword", relevance_level=2, docs=RAG / "chunks.jsonl",
                     n_examples=3, **FAST)
    html = rep.data and (rep.save(tmp_path / "r") and (tmp_path / "r" / "index.html").read_text())
    md = (tmp_path / "r" / "report.md").read_text()
    note = "Relevant = label ≥ 2 (labels here: 0, 1, 2, 3); nDCG gain = label"
    assert note in html and note in md
    # the first loss open, the others collapsed
    losses = html.split('id="losses"')[1].split('id="wins"')[0]
    assert losses.count("<details open>") == 1 and losses.count("<details>") == 2
    # URLs are cut in the table, whole in the tooltip; sentences cite them cut
    urls = set(runs.get_column("url").to_list())
    tips = set(re.findall(r'<td class="sef-doc"[^>]* title="([^"]+)"', html))
    assert tips and tips <= urls
    for why in re.findall(r'<p class="why">([^<]*)</p>', html):
        assert not any(u in why for u in urls)
    assert "-0.000" not in html + md and "−0.000" not in html + md
    assert "queries with holes" in md and "queries_with_holes" not in md


def test_side_by_side_colours_follow_the_reader() -> None:
    runs = pl.DataFrame({"run": ["a"] * 3 + ["b"] * 3, "query_id": "q",
                         "doc_id": ["rel", "junk", "x", "junk", "rel", "x"],
                         "score": [3.0, 2.0, 1.0, 3.0, 2.0, 1.0]})
    sbs = sef.side_by_side(runs, {"q": {"rel": 2, "junk": 0}}, "q", baseline="a", k=3)
    html = sbs.to_html()
    cells = re.findall(r'<td class="sef-move" style="[^"]*color:(#[0-9a-f]+);[^"]*">([^<]*)<',
                       html)
    # run side: junk moved up 2 → 1 (bad news, red), rel moved down 1 → 2 (red too);
    # baseline side shows the same moves; x unjudged stays grey
    from searcheval_frames.analysis.side_by_side import _GREY, _NEG

    colours = {text: c for c, text in cells}
    assert colours["2 → 1"] == _NEG and colours["1 → 2"] == _NEG
    assert colours["="] == _GREY


def test_no_minus_zero_in_tables() -> None:
    rng = np.random.default_rng(0)
    base = rng.random(40)
    pq = pl.DataFrame({"run": ["a"] * 40 + ["b"] * 40, "query_id": [str(i) for i in range(40)] * 2,
                       "measure": "AP",
                       "value": np.concatenate([base, base - 1e-5 * (rng.random(40) > 0.5)])})
    cmp = sef.compare(per_query=pq, baseline="a", ci_method="t")
    text = cmp.table("before_after", columns=["delta", "ci"]).to_markdown() + cmp.to_html()
    assert "-0.000" not in text and "(-0.0%)" not in text and "0.000" in text


def test_demo_command_line_is_quoted(monkeypatch: Any, capsys: Any, tmp_path: Path) -> None:
    """The demo prints the command it runs; pasted into a shell it must give the same argv
    (the --title has spaces and a question mark)."""
    import searcheval_frames.cli.report as cli_report
    from searcheval_frames import demo

    seen: list[list[str]] = []
    monkeypatch.setattr(cli_report, "main", lambda argv: seen.append(list(argv)) or 0)
    assert demo._report(EX, str(tmp_path / "out")) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines()
                if ln.startswith("$ searcheval report "))
    assert shlex.split(line.removeprefix("$ searcheval report ")) == seen[0]
    assert "Example: does reranking BM25 help?" in seen[0]


def test_trec_dl_report_names_runs_by_their_short_names() -> None:
    qrels = shared_path("trec_dl_passage", "qrels.dl19-passage.txt")
    runs_dir = qrels.parent / "runs"
    files = sorted(runs_dir.glob("run.dl19-passage.*.txt"))
    runs = pl.concat([pl.DataFrame(sef.read_run(f, name_from="file")) for f in files])
    rep = sef.report(runs, str(qrels), baseline="bm25", relevance_level=2,
                     measures=["nDCG@10", "AP"], **FAST)
    assert rep.data.baseline.endswith(".bm25") and len(rep.data.runs) == 7
    # the page names runs by what tells them apart, and says so once
    after = rep.data.run.removeprefix("run.dl19-passage.")
    assert rep.data.title == f"Search quality: {after} vs bm25"
    html = rep._repr_html_()
    assert "Runs are shown by shorter names: bm25 = run.dl19-passage.bm25;" in html
    assert f"{after} vs bm25 — nDCG@10:" in html
    # AP at level 2 matches pytrec_eval's map with relevance_level 2
    import pytrec_eval

    q = sef.read_qrels(str(qrels))
    qd: dict[str, dict[str, int]] = {}
    for r in pl.DataFrame(q).iter_rows(named=True):
        qd.setdefault(r["query_id"], {})[r["doc_id"]] = int(r["relevance"])
    bm = pl.DataFrame(runs).filter(pl.col("run") == rep.data.baseline)
    rd: dict[str, dict[str, float]] = {}
    for r in bm.iter_rows(named=True):
        rd.setdefault(r["query_id"], {})[r["doc_id"]] = float(r["score"])
    ev = pytrec_eval.RelevanceEvaluator(qd, {"map"}, relevance_level=2).evaluate(rd)
    want = float(np.mean([v["map"] for v in ev.values()]))
    got = pl.DataFrame(rep.data.comparison.means).filter(
        pl.col("run") == rep.data.baseline, pl.col("measure") == "AP").item(0, "mean")
    assert got == pytest.approx(want, abs=1e-9)


def test_headline_leaderboard_banner_and_power_use_the_shown_run_names():
    """Runs named by long file stems sharing a prefix: the per-run headline, the leaderboard,
    the check banner, the notes and the power sentence use the short names the tables show
    (seen on TREC DL 2019: 'run.dl19-passage.bm25' everywhere but the tables)."""
    import searcheval_frames as sef

    ex = DATA / "example"
    runs = sef.read_run([ex / "runs" / f"{n}.run" for n in ("bm25", "bm25-rerank", "lsi")])
    runs = runs.with_columns(("run.example-collection." + pl.col("run")).alias("run"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = sef.report(runs, ex / "qrels.txt", baseline="bm25", run="lsi", n_resamples=500,
                         figures=False)
    data = rep.data
    assert data.leaderboard is not None
    assert set(data.leaderboard.frame["run"].to_list()) == {"bm25", "bm25-rerank", "lsi"}
    for text in [data.headline, data.power, *data.notes, *data.check]:
        assert "run.example-collection." not in text, text
    assert "bm25" in data.headline
