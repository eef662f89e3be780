"""The examples in the core modules' docstrings run and print what they say."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "searcheval_frames",
    "searcheval_frames.frames.canonical",
    "searcheval_frames.frames.blocks",
    "searcheval_frames.io.parquet",
    # issue 32 (32a): sef.retrieve and the http adapter
    "searcheval_frames.systems",
    "searcheval_frames.systems.base",
    "searcheval_frames.systems.answers",
    "searcheval_frames.systems.calls",
    "searcheval_frames.systems.cache",
    "searcheval_frames.systems.result",
    "searcheval_frames.systems.runner",
    "searcheval_frames.systems.http",
    "searcheval_frames.cli.retrieve",
    "searcheval_frames.core.ranking",
    "searcheval_frames.core.evaluate",
    "searcheval_frames.core.results",
    "searcheval_frames.core.partitioned",
    "searcheval_frames.measures",
    "searcheval_frames.measures.base",
    "searcheval_frames.options",
    "searcheval_frames.io.prefs",
    "searcheval_frames.measures.prefs",
    "searcheval_frames.cli.prefs",
    "searcheval_frames.evalset.judges.prompt",
    "searcheval_frames.evalset.judges.adapter",
    "searcheval_frames.evalset.judges.engine",
    "searcheval_frames.evalset.judges.stats",
    "searcheval_frames.evalset.judges.calibrate",
    "searcheval_frames.evalset.judges.holes",
    "searcheval_frames.evalset.judges.stub",
    "searcheval_frames.evalset.judges.plot",
    "searcheval_frames.frames.display",
    "searcheval_frames.reporting.baseline",
    "searcheval_frames.figures.style",
    "searcheval_frames.optional",
    "searcheval_frames._deprecation",
    "searcheval_frames._exact",
    "searcheval_frames.notebook",
    "searcheval_frames.evalset.store",
    "searcheval_frames.evalset.widget",
    # issue 32 (32b): the adapters and sweeps
    "searcheval_frames.systems.sqlite_fts",
    "searcheval_frames.systems.bm25",
    "searcheval_frames.systems.rerank",
    "searcheval_frames.systems.retriever",
    "searcheval_frames.systems.postgres",
    "searcheval_frames.systems.engines",
    "searcheval_frames.sweeps.points",
    "searcheval_frames.sweeps.run",
    "searcheval_frames.figures.sweep",
    "searcheval_frames.figures.latency",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    assert result.attempted > 0, f"{name} has no examples"
