"""Two assessors on one label store, each in their own browser (issue #33).

One JupyterLab, two Chromium browser contexts (two people, two notebooks, two kernels)
labelling one SQLite store with ``per_pair=2``: they are shown different pairs at the
same time (routing, leases), keys ``x`` / ``u`` / ``n`` work, the query's terms are
highlighted, a document's markup stays text, the team's progress with its ETA shows
both. Then one of them reviews the conflicts (``mode="review"``): the disagreeing labels
are shown, a key records the adjudicated label. Nothing overflows the screen, no cell
writes an error. ``SEARCHEVAL_SCREENSHOTS=<dir>`` keeps screenshots.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from pathlib import Path

import pytest
from browser_harness import CHROMIUM_ARGS, TIMEOUT_MS, free_port, jupyterlab, requirements

pytestmark = pytest.mark.browser

SETUP = """import polars as pl
import searcheval_frames as sef

pool = pl.DataFrame({"query_id": ["q1"] * 4 + ["q2"] * 2,
                     "doc_id": ["d1", "d2", "d3", "d4", "d5", "d6"],
                     "best_rank": [1, 2, 3, 4, 1, 2]})
queries = {"q1": "hnsw index parameters", "q2": "bm25 saturation"}
docs = {"d1": "HNSW builds a graph index; its parameters are M and efConstruction.",
        "d2": "An index of <img src=x onerror=\\"window.__xss=1\\"> things, with HNSW.",
        "d3": "Parameters of the index: " + "long text " * 60,
        "d4": "Nothing about graphs here.",
        "d5": "BM25 term saturation is set by k1.", "d6": "Saturation of colours."}
"""


def _notebook(path: Path, cells: list[str]) -> None:
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {},
                     "outputs": [], "source": src} for i, src in enumerate(cells)],
          "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                      "name": "python3"}, "language_info": {"name": "python"}},
          "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(nb, indent=1))


def _open(ctx, base: str, token: str, name: str):
    page = ctx.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    # a workspace per person: one shared workspace would open both notebooks in both
    # browsers, and two views saving one notebook ask "File Changed" in a dialog
    page.goto(f"{base}/lab/workspaces/{Path(name).stem}/tree/{name}?token={token}&reset")
    page.wait_for_function(
        "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
        " const k = w && w.sessionContext && w.sessionContext.session"
        " && w.sessionContext.session.kernel; return k && k.status === 'idle'; }",
        timeout=TIMEOUT_MS)
    return page


def _run_cell(page, index: int) -> None:
    page.evaluate(f"""() => {{ const nb = window.jupyterapp.shell.currentWidget;
        nb.content.activeCellIndex = {index};
        return window.jupyterapp.commands.execute('notebook:run-cell'); }}""")


def _state(page, sel: str = ".sef-lw") -> dict:
    return page.evaluate(f"""() => {{ const b = document.querySelectorAll('{sel}');
        const w = b[b.length - 1];
        return {{doc: w.dataset.docId, query: w.dataset.queryId, saved: +w.dataset.saved,
                 marks: w.querySelectorAll('mark.sef-lw-hit').length,
                 team: [...w.querySelectorAll('.sef-lw-team-row')].map(r => r.textContent),
                 others: w.querySelector('.sef-lw-others').textContent,
                 text: w.querySelector('.sef-lw-text').textContent,
                 mode: w.dataset.mode, status: w.querySelector('.sef-lw-status').textContent,
                 wide: w.scrollWidth > w.clientWidth + 1
                       || w.getBoundingClientRect().right > window.innerWidth,
                 errors: document.querySelectorAll(
                   '[data-mime-type="application/vnd.jupyter.stderr"], .jp-OutputArea-output'
                   + '[data-mime-type="application/vnd.jupyter.error"]').length}}; }}""")


def _wait_saved(page, n: int, sel: str = ".sef-lw") -> None:
    page.wait_for_function(
        f"() => {{ const b = document.querySelectorAll('{sel}');"
        f" return b.length && +b[b.length - 1].dataset.saved >= {n}; }}", timeout=30_000)


def _press(page, key: str, n_saved: int) -> None:
    page.locator(".sef-lw").last.focus()
    page.keyboard.press(key)
    _wait_saved(page, n_saved)
    _wait_acked(page)


def _wait_acked(page) -> None:
    """Until the kernel answered every action the view sent (its state shown)."""
    page.wait_for_function(
        "() => { const b = document.querySelectorAll('.sef-lw'); const w = b[b.length - 1];"
        " return +(w.dataset.acked || 0) >= +(w.dataset.sent || 0); }", timeout=30_000)


def test_two_assessors_route_label_and_review(tmp_path: Path) -> None:
    chromium = requirements()
    from playwright.sync_api import sync_playwright

    from searcheval_frames.evalset.store import LabelStore

    store = tmp_path / "team.db"
    seed = LabelStore(store, assessor="cy")  # two earlier assessors disagree on q2
    seed.extend({"q2": {"d5": 2, "d6": 0}})
    seed.extend({"q2": {"d5": 0, "d6": 0}}, assessor="dan")
    seed.close()
    for who in ("ana", "ben"):
        _notebook(tmp_path / f"{who}.ipynb", [
            SETUP + f'w = sef.label_widget(pool, store="team.db", assessor="{who}", '
            "per_pair=2, queries=queries, docs=docs)\nw",
            'r = sef.label_widget(pool, store="team.db", assessor="' + who
            + '", mode="review", queries=queries, docs=docs)\nr'])
    shots = os.environ.get("SEARCHEVAL_SCREENSHOTS")
    token = secrets.token_hex(16)
    with jupyterlab(tmp_path, free_port(), token) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, headless=True)
        pages = {}
        try:
            for who in ("ana", "ben"):  # two people: two browser contexts
                ctx = browser.new_context(viewport={"width": 1280, "height": 900})
                pages[who] = _open(ctx, base, token, f"{who}.ipynb")
            ana, ben = pages["ana"], pages["ben"]
            _run_cell(ana, 0)
            ana.wait_for_selector(".sef-lw[data-doc-id]")
            _run_cell(ben, 0)
            ben.wait_for_selector(".sef-lw[data-doc-id]")
            a0, b0 = _state(ana), _state(ben)
            assert a0["doc"] != b0["doc"], "two people were sent the same pair at once"
            assert a0["query"] == "q1" and a0["marks"] >= 2  # query terms highlighted
            # keys: grades, can't judge, undo, a note
            _press(ana, "2", 1)
            a1 = _state(ana)
            _press(ana, "x", 2)
            _press(ana, "u", 3)
            assert _state(ana)["doc"] == a1["doc"] and "undone" in _state(ana)["status"]
            ana.locator(".sef-lw").last.focus()
            ana.keyboard.press("n")
            ana.keyboard.type("hard one 1")  # a digit typed in the note labels nothing
            ana.keyboard.press("Enter")
            _wait_saved(ana, 4)
            _wait_acked(ana)
            _press(ana, "1", 5)
            for k, key in enumerate(("3", "1"), start=1):
                _press(ben, key, k)
            # d2's markup is text (and ran nothing)
            for page in (ana, ben):
                assert page.evaluate("() => window.__xss") is None
            ana.wait_for_timeout(2100)  # the team's progress refreshes every 2 s
            _press(ana, "3", 6)
            team = _state(ana)["team"]
            assert any(r.startswith("ana (you)") for r in team) and any(
                r.startswith("ben") for r in team) and all("ETA" in r for r in team)
            if shots:
                ana.locator(".sef-lw").last.screenshot(path=str(Path(shots) / "team_ana.png"))
                ben.locator(".sef-lw").last.screenshot(path=str(Path(shots) / "team_ben.png"))
            for page in (ana, ben):
                st = _state(page)
                assert not st["wide"] and st["errors"] == 0, st
            # the review: q2's conflict (cy 2, dan 0), and any ana and ben made
            _run_cell(ana, 1)
            ana.wait_for_selector(".sef-lw[data-mode='review']")
            rv = _state(ana)
            assert rv["mode"] == "review" and rv["others"].startswith("labels given:")
            conflicts = LabelStore(store).conflicts()
            first = (rv["query"], rv["doc"])
            assert first in conflicts.select("query_id", "doc_id").rows()
            if shots:
                ana.locator(".sef-lw").last.screenshot(path=str(Path(shots) / "team_review.png"))
            ana.locator(".sef-lw").last.focus()
            ana.keyboard.press("1")
            ana.wait_for_function(
                "() => { const b = document.querySelectorAll('.sef-lw');"
                " return +b[b.length - 1].dataset.saved >= 1; }")
            st = _state(ana)
            assert not st["wide"] and st["errors"] == 0, st
        except Exception:
            for who, page in pages.items():
                with contextlib.suppress(Exception):
                    page.screenshot(path=str(tmp_path / f"failure_{who}.png"))
            print((tmp_path / "jupyterlab.log").read_text()[-3000:])
            raise
        finally:
            browser.close()
    back = LabelStore(store)
    ev = back.events()
    judged = ev.filter(ev["kind"].is_in(["label", "cant_judge"]))
    per_person = judged.group_by("assessor", "query_id", "doc_id").len()
    labels = back.labels()
    # a person never labelled a pair twice (undo retracted the "can't judge")
    assert labels.group_by("assessor", "query_id", "doc_id").len()["len"].max() == 1
    assert per_person.filter(per_person["assessor"] == "ben")["len"].max() == 1
    assert labels.group_by("query_id", "doc_id").len()["len"].max() <= 2
    assert back.notes().select("assessor", "note").rows() == [("ana", "hard one 1")]
    adj = back.events(["adjudicate"])
    assert adj.select("assessor", "query_id", "doc_id", "label").rows() == [
        ("ana", first[0], first[1], 1)]


def test_a_postgres_server_going_away_refuses_input_then_works_again(
        tmp_path: Path, postgres_server, postgres_dsn) -> None:
    chromium = requirements()
    from playwright.sync_api import sync_playwright

    from searcheval_frames.evalset.store import LabelStore

    _notebook(tmp_path / "pg.ipynb", [SETUP + f'w = sef.label_widget(pool, store="{postgres_dsn}", '
                                      'assessor="ana", queries=queries, docs=docs)\nw'])
    shots = os.environ.get("SEARCHEVAL_SCREENSHOTS")
    token = secrets.token_hex(16)
    with jupyterlab(tmp_path, free_port(), token) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, headless=True)
        try:
            page = _open(browser.new_context(viewport={"width": 1280, "height": 900}), base,
                         token, "pg.ipynb")
            _run_cell(page, 0)
            page.wait_for_selector(".sef-lw[data-doc-id]")
            _press(page, "2", 1)
            postgres_server.stop()
            try:
                page.locator(".sef-lw").last.focus()
                page.keyboard.press("1")
                page.wait_for_selector(".sef-lw[data-store-ok='false']", timeout=30_000)
                banner = page.inner_text(".sef-lw-banner")
                assert "cannot be reached" in banner and str(postgres_server.port) in banner
                assert page.locator(".sef-lw button.sef-lw-grade").first.is_disabled()
                page.keyboard.press("3")  # refused in the view: nothing is sent
                assert "not saved" in page.inner_text(".sef-lw-status")
                if shots:
                    page.locator(".sef-lw").last.screenshot(
                        path=str(Path(shots) / "store_unreachable.png"))
            finally:
                postgres_server.start()
            page.wait_for_selector(".sef-lw[data-store-ok='true'][data-connected='true']",
                                   timeout=30_000)
            _press(page, "0", 2)
        finally:
            browser.close()
    labels = LabelStore(postgres_dsn).labels()
    assert labels["label"].to_list() == [2, 0]  # the refused keys saved nothing
