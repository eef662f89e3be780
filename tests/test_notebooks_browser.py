"""Every notebook run as its users run it: Run All in JupyterLab in Chromium.

nbclient (tests/test_notebooks.py) does not see everything JupyterLab shows: output a
child process writes to the kernel's stderr (Spark's JVM) reaches the page, in red,
but not nbclient's cells. Here each ``notebooks/*.ipynb`` (a copy, with ``data/``
linked beside it) is opened in one JupyterLab, all cells are run, and the page must
show no error output and no stderr line outside tests/test_notebooks.py's HARMLESS list.
Screenshots for a look: ``SEARCHEVAL_SCREENSHOTS=<dir>``.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import time
from pathlib import Path

import pytest
from browser_harness import (
    CHROMIUM_ARGS,
    REPO,
    free_port,
    jupyterlab,
    requirements,
    run_all,
    wait_all_executed,
)
from test_notebooks import HARMLESS, NOTEBOOKS

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    chromium = requirements()
    from playwright.sync_api import sync_playwright

    root = tmp_path_factory.mktemp("lab")
    (root / "data").symlink_to(REPO / "data")
    (root / "notebooks").mkdir()
    for p in NOTEBOOKS:
        shutil.copy(p, root / "notebooks" / p.name)
    token = secrets.token_hex(16)
    with jupyterlab(root, free_port(), token) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser, base, token, root
        finally:
            browser.close()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs_clean_in_jupyterlab(lab, path: Path) -> None:
    browser, base, token, _root = lab
    page = browser.new_page(viewport={"width": 1300, "height": 1200})
    page.set_default_timeout(600_000)
    try:
        # ?reset: a fresh workspace, not the previous test's open notebooks and kernels
        page.goto(f"{base}/lab/tree/notebooks/{path.name}?reset&token={token}")
        t0 = time.monotonic()
        run_all(page)
        wait_all_executed(page, 300_000)
        took = time.monotonic() - t0
        page.wait_for_timeout(1000)  # late stderr of child processes
        stderr = page.evaluate(
            "() => [...document.querySelectorAll("
            "'.jp-OutputArea-output[data-mime-type=\"application/vnd.jupyter.stderr\"]')]"
            ".map(n => n.innerText)"
        )
        errors = page.evaluate(
            "() => [...document.querySelectorAll("
            "'.jp-OutputArea-output[data-mime-type=\"application/vnd.jupyter.error\"]')]"
            ".map(n => n.innerText.slice(0, 300))"
        )
        shots = os.environ.get("SEARCHEVAL_SCREENSHOTS")
        if shots:
            page.screenshot(path=str(Path(shots) / f"lab_{path.stem}.png"))
    finally:
        # shut the kernel down (one JupyterLab serves every notebook of the module)
        page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")
        page.close()
    assert not errors, errors
    bad = [line for block in stderr for line in block.splitlines()
           if line.strip() and not any(re.search(p, line) for p in HARMLESS)]
    assert not bad, "\n".join(bad[:20])
    print(f"{path.name}: Run All in JupyterLab {took:.1f} s, stderr blocks {len(stderr)}")
