"""The report loads scipy, matplotlib and the HSD kernel in a background thread while it
evaluates (reporting/_warm.py, issue #25): the thread is gone when the report returns,
the kernel is loaded, a failure in it changes nothing, and it leaves the warning filters
as they were."""

from __future__ import annotations

import subprocess
import sys
import threading
import warnings
from types import SimpleNamespace

import numpy as np
import polars as pl
import pytest

import searcheval_frames as sef
from searcheval_frames.analysis import leaderboard_stats
from searcheval_frames.reporting import _warm


def _runs(n_runs: int = 3, n_q: int = 25) -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = np.random.default_rng(5)
    rows, labels = [], []
    for q in range(n_q):
        for d in range(15):
            labels.append((f"q{q}", f"d{d}", int(rng.integers(0, 3))))
    for r in range(n_runs):
        for q in range(n_q):
            for d in rng.permutation(15)[:10]:
                rows.append((f"run{r}", f"q{q}", f"d{d}", float(rng.normal() + r * 0.2)))
    run = pl.DataFrame(rows, schema=["run", "query_id", "doc_id", "score"], orient="row")
    qrels = pl.DataFrame(labels, schema=["query_id", "doc_id", "relevance"], orient="row")
    return run, qrels


def _warm_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "searcheval-report-warm-up"]


def test_the_warm_up_thread_is_joined_and_loads_the_kernel():
    pytest.importorskip("numba")
    run, qrels = _runs()
    filters = list(warnings.filters)
    rep = sef.report(run, qrels, baseline="run0", n_resamples=200, progress=False)
    assert rep.data.leaderboard is not None
    assert not _warm_threads()
    assert leaderboard_stats._KERNEL and leaderboard_stats._KERNEL[0] is not None
    assert list(warnings.filters) == filters


def test_a_report_in_a_fresh_process_gets_its_modules_from_the_thread():
    """In a fresh process the thread imports scipy.stats and matplotlib.pyplot (the
    report's own import then finds them loaded); the report is the same either way."""
    code = (
        "import threading, sys, searcheval_frames as sef\n"
        "from searcheval_frames.reporting import _warm\n"
        "seen = []\n"
        "orig = _warm.warm_up\n"
        "def spy(**kw):\n"
        "    mods = ('scipy.stats', 'matplotlib.pyplot')\n"
        "    before = [m in sys.modules for m in mods]\n"
        "    t = orig(**kw); t.join(); seen.append((before, [m in sys.modules for m in mods]))\n"
        "    return t\n"
        "b = sys.modules['searcheval_frames.reporting.build']\n"
        "b.warm_up = spy\n"
        "run = {'a': {'q': {'d1': 2.0, 'd2': 1.0}}, 'b': {'q': {'d1': 1.0, 'd2': 2.0}}}\n"
        "rep = sef.report(run, {'q': {'d1': 1}}, baseline='a', progress=False)\n"
        "print(seen)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, check=True)
    assert out.stdout.strip() == "[([False, False], [True, True])]"


def test_a_failing_warm_up_changes_nothing(monkeypatch):
    run, qrels = _runs()
    want = sef.report(run, qrels, baseline="run0", n_resamples=200, progress=False, seed=1)

    def boom(name: str, *a: object) -> None:
        raise ImportError(f"no {name} (a test)")

    monkeypatch.setattr(_warm, "importlib", SimpleNamespace(import_module=boom))
    got = sef.report(run, qrels, baseline="run0", n_resamples=200, progress=False, seed=1)
    assert got.data.summary.equals(want.data.summary)
    assert got.data.leaderboard.frame.equals(want.data.leaderboard.frame)
    assert not _warm_threads()


def test_the_digests_computed_beside_the_figures_are_the_inputs_records():
    """The content digests run in a thread while the figures are drawn: the provenance
    records equal describe_input's, computed here in the caller's thread."""
    from searcheval_frames.analysis._inputs import qrels_pl, runs_pl
    from searcheval_frames.reporting.provenance import describe_input

    run, qrels = _runs()
    rep = sef.report(run, qrels, baseline="run0", n_resamples=100, progress=False)
    want = (describe_input(run, runs_pl(run), "run")
            + describe_input(qrels, qrels_pl(qrels), "qrels"))
    assert rep.data.provenance["inputs"] == want
    assert not [t for t in threading.enumerate() if t.name.startswith("searcheval-report")]
