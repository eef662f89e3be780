"""The documentation site (mkdocs.yml): every public name has a reference entry, the hooks
rewrite the README's links, and `mkdocs build --strict` succeeds (run as a process)."""

from __future__ import annotations

import importlib
import inspect
import os
import re
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

import searcheval_frames as sef

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO / "docs" / "reference"
sys.path.insert(0, str(REPO / "scripts"))
import docs_hooks  # noqa: E402  (scripts/ is no package)

ENTRY = re.compile(r"^::: ([\w.]+)$", re.M)


def entries() -> dict[str, str]:
    """Each `::: dotted.path` of docs/reference/*.md -> the page it is on."""
    return {m.group(1): page.name for page in sorted(REFERENCE.glob("*.md"))
            for m in ENTRY.finditer(page.read_text(encoding="utf-8"))}


def resolve(path: str) -> object:
    """The object a dotted path names: the longest importable module, then attributes."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(path)


def test_every_reference_entry_names_an_object():
    found = entries()
    assert len(found) > 60
    for path in found:
        resolve(path)  # raises on a stale path


def test_every_public_name_has_a_reference_entry():
    objects = {}  # (sef's public functions are wrapped: keywords checked, old spellings)
    for path, page in entries().items():
        objects.setdefault(id(inspect.unwrap(resolve(path))), (path, page))
    missing = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # a deprecated alias resolves
        names = [n for n in sef.__all__ if n != "__version__"]
        for name in names:
            obj = getattr(sef, name)
            if inspect.ismodule(obj):  # sef.spark, sef.dask, sef.judges: an entry inside it
                covered = any(p.startswith(obj.__name__ + ".") or p == obj.__name__
                              for p in entries())
            else:
                covered = id(inspect.unwrap(obj)) in objects
            if not covered:
                missing.append(name)
    assert not missing, f"public names without a `:::` entry in docs/reference/*.md: {missing}"


def test_readme_links_become_site_links():
    text = ("See [docs/report.md](docs/report.md), [ties](docs/semantics.md#ties-x), "
            "[the numbers](benchmarks/RESULTS.md) and [trec_eval](https://trec.nist.gov/).")
    assert docs_hooks.readme_as_home(text) == (
        "See [docs/report.md](report.md), [ties](semantics.md#ties-x), "
        "the numbers and [trec_eval](https://trec.nist.gov/).")


def test_sphinx_roles_become_code_spans():
    assert docs_hooks.sphinx_roles_to_code(
        "see :func:`~.judge`, :class:`searcheval_frames.Report` and :mod:`.spark`"
    ) == "see `judge`, `searcheval_frames.Report` and `spark`"


def test_cli_help_is_the_parsers_text():
    text = docs_hooks.cli_help("report")
    assert text.startswith("usage: searcheval report") and "--baseline" in text


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html))


@pytest.mark.slow
def test_mkdocs_build_strict(tmp_path):
    """The site builds with --strict (a broken link, anchor or reference fails), as a
    process like `make docs`, and has the guides, the README home and the reference."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_MKDOCS_2_WARNING": "1"}
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    seconds = time.perf_counter() - start
    assert proc.returncode == 0, proc.stderr[-3000:]
    pages = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.html"))
    print(f"mkdocs build --strict: {seconds:.1f} s, {len(pages)} pages")
    guides = {p.stem for p in (REPO / "docs").glob("*.md")}
    assert {f"{g}.html" for g in guides} <= set(pages)
    assert {f"reference/{p.stem}.html" for p in REFERENCE.glob("*.md")} <= set(pages)
    evaluate = text_of((tmp_path / "reference" / "evaluate.html").read_text(encoding="utf-8"))
    assert "evaluate( run: Any, qrels: Any, measures:" in evaluate.replace("\n", " ")
    assert "relevance_level" in evaluate and "Minimum label that counts as relevant" in evaluate
    home = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert 'href="report.html"' in home and 'href="docs/' not in home
    cli = text_of((tmp_path / "reference" / "cli.html").read_text(encoding="utf-8"))
    assert "usage: searcheval report" in cli and "--baseline" in cli
    assert ":func:`" not in text_of((tmp_path / "reference" / "judges.html").read_text())
