"""Notebook 04 as its users run it: JupyterLab in Chromium, label, restart, run again.

A copy of notebooks/04_build_an_evaluation_set.ipynb (with ``data/`` linked beside it)
is opened in a real JupyterLab; Run All shows the label widget (the notebook's own cell
then labels the top-10 holes by code); the test labels more documents with a key before
any click (the widget took the keyboard), two clicks and two keys pressed 40 ms apart, restarts the kernel (the old widget must say
"disconnected"), runs all cells again and checks that the widget resumes with every
label counted and that the store on disk, ``notebooks/labels/labels.db``, holds every
label given — the store's default place, not a temporary folder.

Screenshots for a look: ``SEARCHEVAL_SCREENSHOTS=<dir> pytest -m browser ...``.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import time
from pathlib import Path

import pytest
from browser_harness import (
    CHROMIUM_ARGS,
    REPO,
    TIMEOUT_MS,
    free_port,
    jupyterlab,
    requirements,
    restart_kernel,
    run_all,
    wait_all_executed,
    wait_saved,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTEBOOK = "04_build_an_evaluation_set.ipynb"


def _shot(page, name: str) -> None:
    shots = os.environ.get("SEARCHEVAL_SCREENSHOTS")
    if shots:
        page.screenshot(path=str(Path(shots) / name), full_page=False)


def _widget_state(page) -> dict:
    return page.evaluate(
        "() => { const b = document.querySelector('.sef-lw');"
        " const p = b.querySelector('.sef-lw-progress');"
        " return {done: +p.dataset.done, total: +p.dataset.total, doc: b.dataset.docId,"
        " query: b.dataset.queryId, saved: +b.dataset.saved,"
        " connected: b.dataset.connected, focused: b.dataset.focused}; }"
    )


def test_notebook04_labels_survive_restart_and_rerun(tmp_path: Path) -> None:
    chromium = requirements()
    from playwright.sync_api import sync_playwright

    from searcheval_frames.evalset.store import LabelStore

    (tmp_path / "data").symlink_to(REPO / "data")
    nbdir = tmp_path / "notebooks"
    nbdir.mkdir()
    shutil.copy(REPO / "notebooks" / NOTEBOOK, nbdir / NOTEBOOK)
    journal = nbdir / "labels" / "labels.db"
    token = secrets.token_hex(16)
    timings: dict[str, float] = {}
    with jupyterlab(tmp_path, free_port(), token) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(TIMEOUT_MS)
            console: list[str] = []
            page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
            try:
                page.goto(f"{base}/lab/tree/notebooks/{NOTEBOOK}?token={token}")
                t0 = time.monotonic()
                run_all(page)
                wait_all_executed(page, timeout_ms=600_000)
                timings["first Run All"] = time.monotonic() - t0
                page.wait_for_selector(".sef-lw button.sef-lw-grade[data-grade='3']")
                box = page.locator(".sef-lw")
                box.scroll_into_view_if_needed()
                start = _widget_state(page)
                by_code = LabelStore(journal).records().height
                assert by_code == start["done"] > 0  # the notebook's code cell labelled these
                assert str(journal) in page.inner_text(".sef-lw-journal")
                assert start["connected"] == "true"
                _shot(page, "nb04_widget_after_run_all.png")

                # the widget took the keyboard when it appeared: a key works before any click
                assert start["focused"] == "true"
                assert "keys go to this widget" in page.inner_text(".sef-lw-focus")
                given = []
                page.keyboard.press("2")
                wait_saved(page, start["saved"] + 1)
                given.append((start["query"], start["doc"], 2))
                # two clicks: each labels the document on screen
                for grade in (2, 0):
                    s = _widget_state(page)
                    page.click(f".sef-lw button.sef-lw-grade[data-grade='{grade}']")
                    wait_saved(page, s["saved"] + 1)
                    given.append((s["query"], s["doc"], grade))
                    page.wait_for_function(  # (a doc id can come back under the next query)
                        "() => { const d = document.querySelector('.sef-lw').dataset;"
                        f" return d.docId !== '{s['doc']}' || d.queryId !== '{s['query']}'; }}")
                # two keys 40 ms apart: one document each, the first the one on screen
                s = _widget_state(page)
                assert s["focused"] == "true", "a click gives the widget the keyboard"
                page.keyboard.press("1")
                page.wait_for_timeout(40)
                page.keyboard.press("3")
                wait_saved(page, s["saved"] + 2)
                _shot(page, "nb04_widget_after_labelling.png")
                lines = LabelStore(journal).records()
                assert lines.height == by_code + 5
                tail = list(lines.tail(5).select("query_id", "doc_id", "label").iter_rows())
                assert tail[:3] == given
                assert tail[3][:2] == (s["query"], s["doc"]) and tail[3][2] == 1
                assert tail[4][2] == 3 and tail[4][:2] != tail[3][:2]
                assert len({r[:2] for r in tail}) == 5  # five different documents
                labels_before = sorted(LabelStore(journal).qrels().rows())

                restart_kernel(page)
                page.wait_for_selector(".sef-lw[data-connected='false']", timeout=30_000)
                assert "run the cell again" in page.inner_text(".sef-lw-banner")
                _shot(page, "nb04_widget_disconnected.png")

                t0 = time.monotonic()
                run_all(page)
                page.wait_for_selector(".sef-lw[data-connected='true'][data-saved='0']")
                wait_all_executed(page, timeout_ms=600_000)
                timings["second Run All"] = time.monotonic() - t0
                after = _widget_state(page)
                assert after["done"] == start["done"] + 5, (start, after)  # nothing lost
                assert after["total"] == start["total"]
                assert (after["query"], after["doc"]) not in {r[:2] for r in labels_before}
                box.scroll_into_view_if_needed()
                _shot(page, "nb04_widget_resumed.png")
            except Exception:
                with contextlib.suppress(Exception):
                    page.screenshot(path=str(tmp_path / "failure.png"))
                print("\n".join(console[-40:]))
                print((tmp_path / "jupyterlab.log").read_text()[-3000:])
                raise
        finally:
            browser.close()
    # the journal on disk holds every label given, each once (the re-run adds none)
    store = LabelStore(journal)
    assert sorted(store.qrels().rows()) == labels_before
    assert store.records().height == by_code + 5
    assert not list(tmp_path.glob("**/sef-labels-*"))  # no temporary label folders
    print("notebook 04 in JupyterLab: " + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items()))
