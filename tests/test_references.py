"""Every :func:/:class:/:mod:/:meth: (and :attr:/:data:/:exc:) reference resolves.

Walks the docstrings of every module of the package and of every function, class,
method and property it defines, plus the prose (README.md, docs/*.md and the notebooks'
Markdown cells), and resolves each reference the way Sphinx would look it up: the
current class, the current module, its parent packages, then an absolute dotted path
(``polars.DataFrame``). A reference to a name that moved
(``searcheval_frames.evaluate.*`` after the split into ``core/``) fails here. So does a
dotted name in code quotes, in the prose or in the package's source
(`sef.stats.paired_test`, `searcheval_frames.report.build`): the Markdown docs write
names that way rather than with roles.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
import re
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import searcheval_frames

REPO = Path(__file__).resolve().parents[1]
ROLE = re.compile(r":(func|class|mod|meth|attr|data|exc):`([^`]+)`")
#: `sef.compare`, ``searcheval_frames.core.evaluate.evaluate`` (a call's "(" ends it)
DOTTED = re.compile(r"`(?:sef|searcheval_frames)((?:\.[A-Za-z_]\w*)+)")
BROKEN_ELSEWHERE: dict[tuple[str, str], str] = {
    # (module, reference) pairs known broken; empty since the merge that fixed the nine
    # left by the other branches (issue 19). The test below fails when one resolves.
}


def _modules() -> list[str]:
    names = [searcheval_frames.__name__]
    for info in pkgutil.walk_packages(searcheval_frames.__path__, "searcheval_frames."):
        if not info.name.endswith("__main__"):  # running it is the CLI
            names.append(info.name)
    return sorted(names)


def _target(text: str) -> str:
    # "~a.b.c" shows "c"; "title <a.b>" links a.b; "a.b()" is a call written out
    text = text.strip()
    if "<" in text and text.endswith(">"):
        text = text[text.index("<") + 1:-1]
    return text.lstrip("~.").removesuffix("()")


def _lookup(dotted: str) -> bool:
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        except Exception:  # a module that fails to import resolves nothing
            return False
        try:
            for attr in parts[i:]:
                obj = _attr(obj, attr)
        except AttributeError:
            return False
        return True
    return False


def _attr(obj: Any, name: str) -> Any:
    try:
        return getattr(obj, name)
    except AttributeError:
        # dataclass fields and annotated class attributes exist without a value
        if inspect.isclass(obj) and any(name in getattr(k, "__annotations__", {})
                                         for k in obj.__mro__):
            return None
        raise


def _instance_attribute(module: str, cls: str, name: str) -> bool:
    """``self.name = ...`` in the class's source: an attribute made in ``__init__``."""
    try:
        source = inspect.getsource(getattr(importlib.import_module(module), cls))
    except (AttributeError, OSError, TypeError):
        return False
    return re.search(rf"\bself\.{re.escape(name)}\s*[:=]", source) is not None


def resolves(ref: str, module: str, cls: str | None = None) -> bool:
    """Whether ``ref`` names something, looked up from ``module`` (and class ``cls``)."""
    target = _target(ref)
    scopes = []
    if cls:
        scopes.append(f"{module}.{cls}")
    parts = module.split(".")
    scopes += [".".join(parts[:i]) for i in range(len(parts), 0, -1)]
    scopes.append("builtins")
    if any(_lookup(f"{s}.{target}") for s in scopes) or _lookup(target):
        return True
    return bool(cls) and "." not in target and _instance_attribute(module, cls, target)


def _docstrings(mod: ModuleType) -> list[tuple[str | None, str, str]]:
    """(class or None, object name, docstring) of the module and what it defines."""
    out = [(None, mod.__name__, mod.__doc__ or "")]
    for name, obj in vars(mod).items():
        if getattr(obj, "__module__", None) != mod.__name__:
            continue
        if inspect.isfunction(obj):
            out.append((None, name, obj.__doc__ or ""))
        elif inspect.isclass(obj):
            out.append((name, name, obj.__doc__ or ""))
            for mname, member in vars(obj).items():
                fn = member.fget if isinstance(member, property) else getattr(member, "__func__", member)
                if inspect.isfunction(fn) or isinstance(member, property):
                    out.append((name, f"{name}.{mname}", fn.__doc__ or ""))
    return out


def _docstring_refs() -> list[tuple[str, str | None, str, str]]:
    refs = []
    for name in _modules():
        try:
            mod = importlib.import_module(name)
        except ImportError as exc:  # an optional dependency missing: say so, don't hide it
            pytest.fail(f"{name} does not import: {exc}")
        for cls, where, doc in _docstrings(mod):
            for _, ref in ROLE.findall(doc):
                refs.append((name, cls, f"{name}:{where}", ref))
    return refs


REFS = _docstring_refs()


def test_the_walk_finds_references():
    assert len(REFS) > 50
    assert any(ref.endswith("Measure") for *_, ref in REFS)


def test_every_docstring_reference_resolves():
    broken = [(where, ref) for mod, cls, where, ref in REFS
              if not resolves(ref, mod, cls) and (mod, ref) not in BROKEN_ELSEWHERE]
    assert broken == []


def test_known_broken_references_are_still_broken():
    # an entry fixed at merge must leave the list, so the list cannot hide a new break
    for (module, ref), why in BROKEN_ELSEWHERE.items():
        assert not resolves(ref, module), f"{module} {ref} resolves now; drop it ({why})"


def _prose() -> list[tuple[str, str]]:
    """(file, text): README.md, docs/*.md and each Markdown cell of notebooks/*.ipynb (their
    code cells run in tests/test_notebooks.py)."""
    out = [(p.name, p.read_text(encoding="utf-8"))
           for p in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]]
    for nb in sorted((REPO / "notebooks").glob("*.ipynb")):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        out += [(nb.name, "".join(c["source"])) for c in cells if c["cell_type"] == "markdown"]
    return out


def _dotted_resolves(rest: str) -> bool:
    with warnings.catch_warnings():  # a deprecated name (named in docs/changelog.md) resolves
        warnings.simplefilter("ignore", DeprecationWarning)
        return _lookup("searcheval_frames" + rest)


def test_every_docs_reference_resolves():
    prose = _prose()
    assert {"README.md", "architecture.md"} <= {f for f, _ in prose}
    assert any(f.endswith(".ipynb") for f, _ in prose)
    broken = [(f, ref) for f, text in prose for _, ref in ROLE.findall(text)
              if not resolves(ref, "searcheval_frames")]
    assert broken == []


def test_every_dotted_name_in_the_docs_and_the_source_resolves():
    texts = _prose() + [(name, inspect.getsource(importlib.import_module(name)))
                        for name in _modules()]
    found = [(f, rest) for f, text in texts for rest in DOTTED.findall(text)]
    assert len(found) > 200
    broken = [(f, "sef" + rest) for f, rest in found if not _dotted_resolves(rest)]
    assert broken == []


def test_the_resolver_refuses_what_does_not_exist():
    assert resolves("Measure", "searcheval_frames.measures.base")
    assert resolves("~searcheval_frames.core.evaluate.evaluate", "searcheval_frames")
    assert resolves("num_rel", "searcheval_frames.measures.base", "Context")
    assert resolves("polars.DataFrame", "searcheval_frames")
    assert not resolves("searcheval_frames.evaluate.evaluate_frames", "searcheval_frames.io")
    assert DOTTED.findall("see `sef.stats.paired_test(x, y)` and ``sef.report``") == [
        ".stats.paired_test", ".report"]
    assert not _dotted_resolves(".stats.paired_test")  # the module is analysis.stats
    assert not _dotted_resolves(".reporting.report.build")  # report is a function there
    assert _dotted_resolves(".reporting.build.ReportData") and _dotted_resolves(".Report")
    assert not resolves("NoSuchThing", "searcheval_frames.measures.base")
    assert not resolves("num_rel", "searcheval_frames.measures.base", "Measure")
    assert resolves("ValueError", "searcheval_frames.errors")
    assert resolves("params", "searcheval_frames.measures.custom", "Rows")  # self.params = ...
    assert not resolves("nothing", "searcheval_frames.measures.custom", "Rows")
