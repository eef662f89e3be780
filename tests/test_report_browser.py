"""The HTML report opened in a real browser (headless Debian chromium via Playwright).

The report is written with ``sef.report(...).save()``, opened through ``file://``,
and checked the way a reader sees it: the tables are there with the numbers of the
report's frame, every figure decodes (natural width > 0), nothing is fetched from
the network, and a full-page screenshot has a plausible size. Set
``SEARCHEVAL_SCREENSHOTS=dir`` to keep the screenshot. Run with ``pytest -m browser``.
"""

from __future__ import annotations

import os
import shutil
import struct
import warnings
from pathlib import Path
from typing import Any

import pytest
from browser_harness import CHROMIUM_ARGS, TIMEOUT_MS
from browser_harness import chromium_path as _chromium
from conftest import DATA, shared_path

pytestmark = pytest.mark.browser

EX = DATA / "example"


def test_report_renders_in_chromium(tmp_path: Path) -> None:
    pytest.importorskip("playwright.sync_api", reason="pip install playwright (no browser download)")
    pytest.importorskip("matplotlib")
    pytest.importorskip("scipy")
    chromium = _chromium()
    from playwright.sync_api import sync_playwright

    import searcheval_frames as sef

    rep = sef.report([str(EX / "runs" / "bm25.run"), str(EX / "runs" / "bm25-rerank.run")],
                     str(EX / "qrels.txt"), baseline="bm25", queries=str(EX / "queries.tsv"),
                     docs=str(EX / "docs.jsonl"), n_resamples=2000)
    index = rep.save(tmp_path / "report")
    shot = tmp_path / "report.png"
    requests: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.set_default_timeout(TIMEOUT_MS)
            page.on("request", lambda r: requests.append(r.url))
            page.goto(index.as_uri())
            page.wait_for_load_state("load")
            assert page.title() == rep.data.title
            images = page.evaluate(
                "() => Array.from(document.images).map(i => [i.complete, i.naturalWidth,"
                " i.naturalHeight, i.getBoundingClientRect().width])"
            )
            assert len(images) == 3
            for complete, w, h, shown in images:
                assert complete and w > 300 and h > 200 and shown > 100
            # the before -> after table shows the frame's numbers
            cells = page.eval_on_selector_all(
                "#before-after tbody tr",
                "rows => rows.map(r => Array.from(r.cells).map(c => c.innerText.trim()))",
            )
            frame = rep.frame
            assert len(cells) == frame.height == 6
            for row, r in zip(cells, frame.iter_rows(named=True), strict=True):
                assert row[0] == r["measure"]
                assert float(row[1]) == round(r["baseline_mean"], 3)
                assert float(row[2]) == round(r["mean"], 3)
                assert row[3].startswith(f"{r['delta']:+.3f}")
                assert row[6] == f"{r['wins']}/{r['ties']}/{r['losses']}"
            # the summary table: one row per run, best mean bold
            summary = page.eval_on_selector_all(
                "#summary tbody tr",
                "rows => rows.map(r => Array.from(r.cells).map(c => c.innerText.trim()))",
            )
            assert [r[1] for r in summary] == ["bm25", "bm25-rerank"]
            bold = page.eval_on_selector_all("#summary tbody b", "bs => bs.map(b => b.innerText)")
            assert len(bold) == 6
            # the examples: five losses with their lists, shown open
            assert page.locator("#losses .sef-side-by-side").count() == 5
            assert page.locator("#losses .sef-side-by-side").first.is_visible()
            assert page.locator("#verdicts li").count() == 6
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    assert all(u.startswith(("file:", "data:")) for u in requests), requests
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert width == 1200 and 3000 < height < 20000
    assert len(data) > 100_000
    keep = os.environ.get("SEARCHEVAL_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / "report.png")


# ------------------------------------------------------------------ no sideways scrolling
RAG = DATA / "rag"
RAG_COLUMNS = {"run": "system", "query_id": "question", "doc_id": "url",
               "score": "similarity", "relevance": "grade"}
WIDTHS = (1024, 1280, 1440)


def _demo(sef: Any) -> Any:
    return sef.report([str(EX / "runs" / "bm25.run"), str(EX / "runs" / "bm25-rerank.run")],
                      str(EX / "qrels.txt"), baseline="bm25", queries=str(EX / "queries.tsv"),
                      docs=str(EX / "docs.jsonl"), n_resamples=1000)


def _trec_dl(sef: Any) -> Any:
    """TREC DL 2019 passage: bm25 and six published systems, relevant = label >= 2."""
    import polars as pl

    qrels = shared_path("trec_dl_passage", "qrels.dl19-passage.txt")
    files = sorted((qrels.parent / "runs").glob("run.dl19-passage.*.txt"))
    runs = pl.concat([pl.DataFrame(sef.read_run(f, name_from="file")) for f in files])
    return sef.report(runs, str(qrels), baseline="bm25", relevance_level=2,
                      queries=str(qrels.parent / "topics.dl19-passage.txt"), n_resamples=1000)


def _rag(sef: Any) -> Any:
    import polars as pl

    return sef.report(pl.read_csv(RAG / "runs.csv"), pl.read_csv(RAG / "grades.csv"),
                      columns=RAG_COLUMNS, baseline="keyword", run="hybrid",
                      relevance_level=2, docs=str(RAG / "chunks.jsonl"), n_resamples=1000)


@pytest.mark.parametrize("make", [_demo, _trec_dl, _rag], ids=["demo", "trec-dl-2019", "rag"])
def test_report_never_scrolls_sideways(make: Any, tmp_path: Path) -> None:
    """At 1024, 1280 and 1440 px the page is as wide as the window, no figure is wider
    than its column, and the side-by-side tables fit (their cells wrap or are cut)."""
    pytest.importorskip("playwright.sync_api", reason="pip install playwright (no browser download)")
    pytest.importorskip("matplotlib")
    chromium = _chromium()
    from playwright.sync_api import sync_playwright

    import searcheval_frames as sef

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = make(sef)
    index = rep.save(tmp_path / "report")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, headless=True)
        try:
            for width in WIDTHS:
                page = browser.new_page(viewport={"width": width, "height": 900})
                page.set_default_timeout(TIMEOUT_MS)
                page.goto(index.as_uri())
                page.wait_for_load_state("load")
                page.evaluate("() => document.querySelectorAll('details')"
                              ".forEach(d => d.open = true)")  # every table laid out
                scroll = page.evaluate("() => document.scrollingElement.scrollWidth")
                assert scroll <= width, f"{width} px window: page {scroll} px wide"
                wider = page.evaluate(
                    "() => Array.from(document.querySelectorAll('.sef-report table, "
                    ".sef-report img')).filter(e => e.getBoundingClientRect().right > "
                    "document.querySelector('.sef-report').getBoundingClientRect().right + 1)"
                    ".map(e => e.tagName + ' ' + Math.round(e.getBoundingClientRect().width))")
                assert not wider, f"{width} px: wider than the report column: {wider[:3]}"
                if width == 1280 and os.environ.get("SEARCHEVAL_SCREENSHOTS"):
                    keep = Path(os.environ["SEARCHEVAL_SCREENSHOTS"])
                    keep.mkdir(parents=True, exist_ok=True)
                    page.screenshot(path=str(keep / f"report-{make.__name__[1:]}-1280.png"),
                                    full_page=True)
                page.close()
        finally:
            browser.close()
