"""The labelling widget driven for real: JupyterLab (headless) + Debian chromium + Playwright.

The test starts JupyterLab on a free localhost port in a temporary directory, opens a
notebook that shows :func:`searcheval_frames.label_widget`, clicks grade buttons (and
presses a grade key), restarts the kernel, runs the notebook again and checks that the
reopened store — and the widget's progress — hold every label given.

It needs the system chromium (``apt-get install chromium``, see
``scripts/ci_browser_setup.sh``), the ``playwright`` Python package (its own browser
download is NOT used) and ``jupyterlab``; without them it is skipped with a message.
Run it with ``pytest -m browser``.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import time
from pathlib import Path

import pytest
from browser_harness import (
    CHROMIUM_ARGS,
    TIMEOUT_MS,
    free_port,
    jupyterlab,
    requirements,
    restart_kernel,
    run_all,
    wait_saved,
)

pytestmark = pytest.mark.browser

NOTEBOOK_CELLS = [
    """import polars as pl
import searcheval_frames as sef

pool = pl.DataFrame({"query_id": ["q1", "q1", "q1", "q2", "q2", "q3", "q3", "q3"],
                     "doc_id": ["d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8"]})
queries = {"q1": "how to create an index", "q2": "what is hnsw", "q3": "bm25 parameters"}
docs = {f"d{i}": f"Text of document {i}." for i in range(1, 9)}
w = sef.label_widget(pool, store="labels.jsonl", queries=queries, docs=docs,
                     assessor="tester", grades=[0, 1, 2, 3])
w""",
    """import os
print("LABELS", sorted(w.store.qrels().rows()), "POSITION", w.position, "PID", os.getpid())""",
]


#: every label the test gives, in the journal at the end
GIVEN = [("q1", "d1", 2), ("q1", "d2", 0), ("q2", "d4", 3), ("q2", "d5", 1), ("q3", "d6", 2),
         ("q3", "d7", 0)]


def _write_notebook(path: Path) -> None:
    nb = {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": None,
                "id": f"cell{i}",
                "metadata": {},
                "outputs": [],
                "source": src,
            }
            for i, src in enumerate(NOTEBOOK_CELLS)
        ],
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(nb, indent=1))


def test_widget_labels_survive_kernel_restart(tmp_path: Path) -> None:
    chromium = requirements()
    from playwright.sync_api import sync_playwright

    from searcheval_frames.evalset.store import LabelStore

    _write_notebook(tmp_path / "label.ipynb")
    shots = os.environ.get("SEARCHEVAL_SCREENSHOTS")
    token = secrets.token_hex(16)
    started = time.monotonic()
    with jupyterlab(tmp_path, free_port(), token) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            console: list[str] = []
            page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
            page.set_default_timeout(TIMEOUT_MS)
            try:
                page.goto(f"{base}/lab/tree/label.ipynb?token={token}")
                run_all(page)
                page.wait_for_selector(".sef-lw button.sef-lw-grade[data-grade='2']")
                box = page.locator(".sef-lw")
                assert box.get_attribute("data-index") == "0"
                assert box.get_attribute("data-query-id") == "q1"

                # two clicks ...
                page.click(".sef-lw button.sef-lw-grade[data-grade='2']")
                wait_saved(page, 1)
                page.wait_for_selector(".sef-lw[data-doc-id='d2']")
                page.click(".sef-lw button.sef-lw-grade[data-grade='0']")
                wait_saved(page, 2)
                page.wait_for_selector(".sef-lw[data-doc-id='d3']")
                # ... a skip, and a key press on the focused widget
                page.click(".sef-lw button.sef-lw-skip")
                page.wait_for_selector(".sef-lw[data-doc-id='d4']")
                box.focus()
                page.keyboard.press("3")
                wait_saved(page, 3)
                page.wait_for_selector(".sef-lw[data-doc-id='d5']")
                assert "saved q2 / d4 = 3" in page.inner_text(".sef-lw-status")
                overall = page.locator(".sef-lw-progress").first
                assert overall.get_attribute("data-done") == "3"
                assert overall.get_attribute("data-total") == "8"
                # the widget has the keyboard and says so
                assert box.get_attribute("data-focused") == "true"
                assert "keys go to this widget" in page.inner_text(".sef-lw-focus")
                # keys 40 ms apart, faster than the kernel answers: one document each
                t0 = time.monotonic()
                for key in ("1", "2", "0"):
                    page.keyboard.press(key)
                    page.wait_for_timeout(40)
                fast_keys_s = time.monotonic() - t0
                wait_saved(page, 6)
                page.wait_for_selector(".sef-lw[data-doc-id='d8']")
                assert page.locator(".sef-lw-queries").get_attribute("data-done") == "1"  # q2 (q1: d3 skipped)
                # focus elsewhere: the widget says plainly that keys do not reach it
                page.locator(".jp-Notebook").first.click(position={"x": 5, "y": 5})
                page.wait_for_selector(".sef-lw[data-focused='false']")
                assert "NOT going to this widget" in page.inner_text(".sef-lw-focus")
                box.click()
                page.wait_for_selector(".sef-lw[data-focused='true']")
                if shots:  # for a look at the widget: SEARCHEVAL_SCREENSHOTS=dir
                    box.screenshot(path=str(Path(shots) / "label_widget.png"))

                # on disk already, before any shutdown: the journal is fsync-ed per label
                on_disk = LabelStore(tmp_path / "labels.jsonl").qrels().rows()
                assert sorted(on_disk) == GIVEN
                assert str(tmp_path / "labels.jsonl") in page.inner_text(".sef-lw-journal")

                # a kernel that stops answering (here: SIGSTOP, as a hung or dead kernel
                # the browser was not told about): after the heartbeat's NO_ANSWER_MS the
                # widget refuses input; when the kernel answers again it works again
                pid = int(page.wait_for_selector("text=/PID \\d+/").inner_text().split("PID")[1])
                os.kill(pid, signal.SIGSTOP)
                try:
                    t0 = time.monotonic()
                    page.wait_for_selector(".sef-lw[data-connected='false']", timeout=15_000)
                    hang_s = time.monotonic() - t0
                    assert "no answer from the kernel" in page.inner_text(".sef-lw-banner")
                    box.focus()
                    page.keyboard.press("1")
                    assert "not saved" in page.inner_text(".sef-lw-status")
                finally:
                    os.kill(pid, signal.SIGCONT)
                page.wait_for_selector(".sef-lw[data-connected='true']", timeout=30_000)
                page.wait_for_timeout(500)
                assert box.get_attribute("data-saved") == "6"  # the refused key saved nothing
                assert sorted(LabelStore(tmp_path / "labels.jsonl").qrels().rows()) == GIVEN

                # restart the kernel (as a user does: command + confirm dialog)
                restart_kernel(page)
                # the old widget knows its kernel is gone and refuses input
                t0 = time.monotonic()
                page.wait_for_selector(".sef-lw[data-connected='false']", timeout=15_000)
                detect_s = time.monotonic() - t0
                assert "disconnected — run the cell again" in page.inner_text(".sef-lw-banner")
                assert page.locator(".sef-lw button.sef-lw-grade").first.is_disabled()
                box.focus()
                page.keyboard.press("3")
                assert "not saved" in page.inner_text(".sef-lw-status")
                if shots:
                    box.screenshot(path=str(Path(shots) / "label_widget_disconnected.png"))
                run_all(page)
                page.wait_for_selector(".sef-lw[data-saved='0'][data-doc-id='d3']")
                page.wait_for_selector(".sef-lw[data-connected='true']")
                overall = page.locator(".sef-lw-progress").first
                assert overall.get_attribute("data-done") == "6"
                out = page.wait_for_selector("text=/LABELS \\[/")
                text = out.inner_text()
                assert str(GIVEN).strip("[]") in text
                assert "POSITION 2" in text  # resumed at the first unlabelled document
                print(f"keys 40 ms apart took {fast_keys_s:.2f} s to press; the old view "
                      f"showed 'disconnected' {detect_s:.1f} s after the restart and "
                      f"{hang_s:.1f} s after the kernel stopped answering")
            except Exception:
                with contextlib.suppress(Exception):
                    page.screenshot(path=str(tmp_path / "failure.png"))
                print("\n".join(console[-40:]))
                print((tmp_path / "jupyterlab.log").read_text()[-3000:])
                raise
        finally:
            browser.close()
    # the store read again from a fresh process state
    store = LabelStore(tmp_path / "labels.jsonl")
    assert sorted(store.qrels().rows()) == GIVEN
    assert store.records().height == len(GIVEN)  # the refused key wrote nothing
    assert set(store.labels()["assessor"]) == {"tester"}
    print(f"browser test took {time.monotonic() - started:.1f} s")
