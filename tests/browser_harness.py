"""JupyterLab + Debian chromium + Playwright for the browser tests (marker ``browser``).

Shared by tests/test_widget_browser.py and tests/test_notebook04_browser.py: find the
system chromium (never a Playwright download), start JupyterLab on a free port in a
folder and tear it down, run all cells, restart the kernel as a user does.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
TIMEOUT_MS = 120_000


def chromium_path() -> str:
    for cand in (
        os.environ.get("SEARCHEVAL_CHROMIUM"),
        "/usr/bin/chromium",
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
    ):
        if cand and Path(cand).exists():
            return cand
    pytest.skip(
        "Debian chromium is not installed (run scripts/ci_browser_setup.sh, or set "
        "SEARCHEVAL_CHROMIUM to a chromium binary)"
    )
    raise AssertionError  # unreachable


def requirements() -> str:
    pytest.importorskip(
        "playwright.sync_api", reason="pip install playwright (no browser download)"
    )
    pytest.importorskip("jupyterlab", reason="pip install jupyterlab")
    pytest.importorskip("anywidget", reason="pip install anywidget")
    return chromium_path()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def jupyterlab(root: Path, port: int, token: str):
    env = dict(os.environ)
    env.update(
        {
            "JUPYTER_CONFIG_DIR": str(root / ".jupyter-config"),
            "JUPYTER_RUNTIME_DIR": str(root / ".jupyter-runtime"),
            "IPYTHONDIR": str(root / ".ipython"),
            "PYTHONPATH": os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(
                os.pathsep
            ),
        }
    )
    log = open(root / "jupyterlab.log", "wb")  # noqa: SIM115 - closed below
    cmd = [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        "--no-browser",
        f"--port={port}",
        "--port-retries=0",
        f"--ServerApp.token={token}",
        "--ServerApp.ip=127.0.0.1",
        "--allow-root",
        f"--ServerApp.root_dir={root}",
        "--LabApp.expose_app_in_browser=True",
        f"--LabApp.user_settings_dir={root / '.lab-settings'}",
        f"--LabApp.workspaces_dir={root / '.lab-workspaces'}",
        "--ServerApp.disable_check_xsrf=False",
    ]
    proc = subprocess.Popen(
        cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        url = f"http://127.0.0.1:{port}/api/status?token={token}"
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                log.flush()
                raise RuntimeError(
                    "JupyterLab exited early:\n" + (root / "jupyterlab.log").read_text()[-3000:]
                )
            try:
                with urllib.request.urlopen(url, timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(
                    "JupyterLab did not start in 90 s:\n"
                    + (root / "jupyterlab.log").read_text()[-3000:]
                )
            time.sleep(0.3)
        yield f"http://127.0.0.1:{port}"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        log.close()


def run_all(page) -> None:
    page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
        " && window.jupyterapp.shell.currentWidget.sessionContext"
        " && window.jupyterapp.shell.currentWidget.sessionContext.session"
        " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel"
        " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status"
        " === 'idle'",
        timeout=TIMEOUT_MS,
    )
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")


def wait_saved(page, n: int) -> None:
    page.wait_for_selector(f".sef-lw[data-saved='{n}']", timeout=30_000)




def restart_kernel(page) -> None:
    """Kernel ▸ Restart Kernel, confirmed in the dialog, as a user does."""
    page.evaluate(
        "() => { window.__sef_restart = "
        "window.jupyterapp.commands.execute('notebook:restart-kernel'); }"
    )
    page.click(".jp-Dialog-button.jp-mod-accept")
    page.wait_for_function("() => window.__sef_restart.then(() => true)")


def wait_all_executed(page, timeout_ms: int = TIMEOUT_MS) -> None:
    """Every code cell of the open notebook has run (an execution count) and the kernel
    is idle again."""
    page.wait_for_function(
        "() => { const nb = window.jupyterapp.shell.currentWidget;"
        " const k = nb.sessionContext.session && nb.sessionContext.session.kernel;"
        " return k && k.status === 'idle' && nb.content.widgets.every("
        "c => c.model.type !== 'code' || (c.model.executionCount !== null"
        " && !c.node.classList.contains('jp-mod-running'))); }",
        timeout=timeout_ms, polling=500,
    )
