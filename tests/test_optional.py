"""Each optional dependency hidden in turn: one friendly message naming the extra.

A subprocess installs a ``sys.meta_path`` finder that refuses the extra's packages (as
if they were not installed), then calls the feature that needs them. The test checks
the error type, that the message names the extra and the pip command, and that it is
one message (no chained ``ModuleNotFoundError`` traceback).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import tomllib

import pytest
from conftest import REPO

from searcheval_frames.optional import EXTRAS, extra_available, extra_note, require

BLOCKER = """
import sys, importlib.abc
HIDDEN = set({hidden!r})
class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, Blocker())
for mod in list(sys.modules):
    if mod.split(".")[0] in HIDDEN:
        del sys.modules[mod]
"""

RUN = 'pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d1", "d2"], "score": [1.0, 2.0]})'
QRELS = 'pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d1", "d2"], "relevance": [1, 0]})'
TWO_RUNS = (
    f'pl.concat([{RUN}.with_columns(run=pl.lit("a")), '
    f'{RUN}.with_columns(run=pl.lit("b"), score=pl.col("score") * -1)])'
)

#: extra -> code that needs it (run after `import polars as pl, searcheval_frames as sef`)
FEATURES = {
    "stats": f'sef.compare({TWO_RUNS}, {QRELS}, ["P@1"], baseline="a")',
    "plots": f"sef.pr_curve({RUN}, {QRELS})",
    "labeling": f'sef.label_widget({QRELS}, store="labels/x.jsonl", assessor="t")',
    "spark": 'sef.spark.evaluate(None, None, ["P@1"])',
    "dask": 'sef.dask.evaluate(None, None, ["P@1"])',
}


def _run_hidden(hidden: tuple[str, ...], code: str, cwd) -> subprocess.CompletedProcess[str]:
    src = BLOCKER.format(hidden=sorted(hidden)) + textwrap.dedent(code)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-c", src], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=120)


@pytest.mark.parametrize("extra", sorted(FEATURES))
def test_missing_extra_gives_one_friendly_message(extra: str, tmp_path) -> None:
    others = sorted(set(EXTRAS) - {extra})
    code = f"""
import polars as pl
import searcheval_frames as sef
from searcheval_frames.optional import MissingDependencyError
assert not sef.extra_available("{extra}")
assert all(sef.extra_available(e) for e in {others!r})
try:
    {FEATURES[extra]}
except MissingDependencyError as exc:
    assert isinstance(exc, ImportError)
    assert exc.__cause__ is None and exc.__suppress_context__
    print("MESSAGE:", exc)
else:
    raise SystemExit("no error with {extra} hidden")
"""
    proc = _run_hidden(EXTRAS[extra], code, tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    msg = proc.stdout.split("MESSAGE:", 1)[1].strip()
    assert f"pip install 'searcheval_frames[{extra}]'" in msg
    assert f"the {extra!r} extra" in msg
    assert "\n" not in msg
    assert EXTRAS[extra][0] in msg or extra == "labeling"


def test_package_imports_with_every_extra_hidden(tmp_path) -> None:
    hidden = tuple(m for mods in EXTRAS.values() for m in mods)
    code = f"""
import polars as pl
import searcheval_frames as sef
print(sef.evaluate({RUN}, {QRELS}, ["P@1", "nDCG@10"])["value"].to_list())
"""
    proc = _run_hidden(hidden, code, tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "[0.5, 0.5]"


def test_report_cli_without_scipy_says_which_extra(tmp_path) -> None:
    data = REPO / "data" / "example"
    code = f"""
import sys
from searcheval_frames.cli import main
sys.exit(main(["report", {str(data / 'qrels.txt')!r}, {str(data / 'runs' / 'bm25.run')!r},
               {str(data / 'runs' / 'bm25-rerank.run')!r}, "--baseline", "bm25",
               "-o", "out"]))
"""
    proc = _run_hidden(("scipy",), code, tmp_path)
    assert proc.returncode != 0
    err = proc.stderr.strip().splitlines()
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert any("pip install 'searcheval_frames[stats]'" in line for line in err), err


def test_require_only_translates_a_missing_top_level_package() -> None:
    with pytest.raises(ImportError) as info:
        require("surely_not_installed_pkg.sub", "a test")
    assert "searcheval_frames[all]" in str(info.value)  # unknown package: the all extra
    assert require("json", "a test").__name__ == "json"


def test_extra_helpers_check_their_argument() -> None:
    assert extra_available("stats") is True  # the test environment has every extra
    assert "pip install 'searcheval_frames[spark]'" in extra_note("spark", "Section 4")
    with pytest.raises(ValueError, match="use one of"):
        extra_available("nope")


def test_pyproject_extras_match_and_all_holds_every_extra() -> None:
    meta = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = meta["optional-dependencies"]
    norm = lambda req: req.split("[")[0].split(">")[0].split("=")[0].split("<")[0].strip().lower()  # noqa: E731
    for extra, modules in EXTRAS.items():
        assert extra in extras, extra
        pkgs = {norm(r) for r in extras[extra]}
        # every module of the extra comes from a package of the extra (traitlets via ipywidgets)
        assert pkgs, extra
        if extra != "labeling":
            assert {m.replace("_", "-") for m in modules} <= pkgs | {"dask"}, (extra, pkgs)
    all_pkgs = {norm(r) for r in extras["all"]}
    for extra in EXTRAS:
        assert {norm(r) for r in extras[extra]} <= all_pkgs, extra
