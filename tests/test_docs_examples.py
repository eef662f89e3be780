"""Every ``python`` and ``bash`` block of README.md and docs/*.md runs, so no example drifts.

Each file's blocks run in their order in a fresh process (tests/docs_examples.py), the
python blocks sharing one namespace, in a temporary folder holding a copy of data/ (the
examples read data/example and data/seed as a user's clone would). A block that cannot
run here carries ``<!-- docs-exec: skip (why) -->``; those are listed and kept few.
docs/errors.md is the error catalogue: each of its blocks must raise the error it names.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import docs_examples as dx
import error_catalogue as cat
import pytest

REPO = dx.REPO
CATALOGUE = "errors.md"
FILES = [p for p in dx.FILES if p.name != CATALOGUE and dx.runnable(p)]
SLOW = {"scale.md"}  # starts Spark and Dask


def workdir(tmp: Path) -> Path:
    shutil.copytree(REPO / "data", tmp / "data", ignore=shutil.ignore_patterns("*.py"))
    return tmp


@pytest.mark.parametrize("path", [pytest.param(p, id=p.name, marks=[pytest.mark.slow]
                                               if p.name in SLOW else [])
                                  for p in FILES])
def test_the_blocks_of_a_page_run_in_order(path, tmp_path):
    spec = dx.spec_of(path, tmp_path / "blocks.json")
    cwd = workdir(tmp_path / "work")
    env = {**os.environ, "PYTHONPATH": str(REPO), "MPLBACKEND": "Agg"}
    proc = subprocess.run([sys.executable, str(REPO / "tests" / "docs_examples.py"), str(spec)],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{proc.stderr[-6000:]}\n--- stdout ---\n{proc.stdout[-2000:]}"
    ran = proc.stdout.count("\n--- ") + proc.stdout.startswith("--- ")
    assert ran == len(dx.runnable(path))


def test_every_code_block_runs_or_says_why_not():
    """No ``python``/``bash`` block is silently left out: it runs, or has a skip marker
    with a reason; the skipped ones are few."""
    skipped = [(b.file, b.line, b.skip) for p in dx.FILES for b in dx.blocks(p)
               if b.lang in dx.RUN and b.skip is not None]
    assert all(reason != "no reason given" for _, _, reason in skipped), skipped
    assert len(skipped) <= 6, skipped
    runs = sum(len(dx.runnable(p)) for p in FILES)
    assert runs >= 25


def test_blocks_are_found_with_their_marker(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("text\n\n```python\nx = 1\n```\n<!-- docs-exec: skip (needs a key) -->\n\n"
                    "```bash\nsearcheval --help\n```\n```text\nout\n```\n")
    found = dx.blocks(page)
    assert [(b.line, b.lang, b.code, b.skip) for b in found] == [
        (3, "python", "x = 1", None), (8, "bash", "searcheval --help", "(needs a key)"),
        (11, "text", "out", None)]
    assert [b.line for b in dx.runnable(page)] == [3]


def test_error_catalogue_blocks_raise_the_error_they_name(tmp_path, monkeypatch):
    """docs/errors.md shows a call, then the class it raises: run each call as printed."""
    scope = cat._files(tmp_path)
    monkeypatch.chdir(tmp_path)  # the page shows the case's files by their names
    text = (REPO / "docs" / CATALOGUE).read_text(encoding="utf-8")
    cases = re.findall(r"```python\n(.*?)\n```\n\n`(\w+)`:", text, re.S)
    assert len(cases) == len(cat.CASES) == sum(b.lang == "python" for b in dx.blocks(
        REPO / "docs" / CATALOGUE))
    import polars as pl

    import searcheval_frames as sef

    classes = {c.error.__name__: c.error for c in cat.CASES}
    for code, name in cases:
        with pytest.raises(classes[name]), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # as the catalogue does: the error is the point
            eval(code, {"sef": sef, "pl": pl, **scope})
