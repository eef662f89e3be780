"""The package's layout: imports point down the pipeline, no circles, small modules.

Every module of ``searcheval_frames`` belongs to one layer (docs/architecture.md). A
module may import from a lower layer, or from a module of its own subpackage as long as
the imports inside that subpackage form no cycle. Imports inside functions and under
``TYPE_CHECKING`` count too: a lazy upward import is still an upward dependency.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "searcheval_frames"
ARCH = PKG.parent / "docs" / "architecture.md"

#: Layers, lowest first. Keys are module paths relative to the package ("frames" is
#: the subpackage and everything in it; "demo" is demo.py). Within one layer, entries
#: are ordered too: a later entry may import an earlier one, never the reverse.
LAYERS: list[list[str]] = [
    ["version", "_deprecation", "_exact", "errors", "optional", "notebook", "options"],
    ["frames"],
    ["io", "measures", "systems"],
    ["core"],
    ["fusion"],
    ["analysis", "figures", "evalset", "sweeps"],
    ["reporting"],
    ["cli", "demo", "scale", "__main__"],
]
MAX_LINES = 500
#: Line limit exceptions, each with its reason (kept empty when possible).
LONG_MODULES: dict[str, str] = {}


def _unit(rel: Path) -> str:
    """The LAYERS entry a module belongs to ("" for the package's __init__)."""
    parts = rel.with_suffix("").parts
    return "" if parts == ("__init__",) else parts[0]


def _rank() -> dict[str, tuple[int, int]]:
    return {name: (i, j) for i, layer in enumerate(LAYERS) for j, name in enumerate(layer)}


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG)
        name = ".".join(rel.with_suffix("").parts)
        out[name.removesuffix(".__init__") if name != "__init__" else ""] = path
    return out


def _imports(path: Path, name: str) -> set[str]:
    """Package-relative names of the package modules that ``path`` imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.name == "__init__.py"
    base = name.split(".") if name else []
    if not is_pkg:
        base = base[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                target = [*anchor, *(node.module.split(".") if node.module else [])]
                # "from . import x" imports the submodule x when x is one, else a
                # name defined by the package's __init__
                for alias in node.names:
                    sub = ".".join([*target, alias.name])
                    found.add(sub if _is_module(sub) else ".".join(target))
            elif node.module and node.module.split(".")[0] == "searcheval_frames":
                rest = node.module.split(".")[1:]
                found.add(".".join(rest))
                for alias in node.names:
                    found.add(".".join([*rest, alias.name]))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "searcheval_frames":
                    found.add(".".join(alias.name.split(".")[1:]))
    return found


def _is_module(name: str) -> bool:
    path = PKG.joinpath(*name.split("."))
    return path.is_dir() or path.with_suffix(".py").is_file()


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    graph = {}
    for name, path in mods.items():
        deps = {d for d in _imports(path, name) if d in mods and d != name}
        graph[name] = deps
    return graph


def test_every_module_has_a_layer():
    rank = _rank()
    missing = sorted({_unit(p.relative_to(PKG)) for p in PKG.rglob("*.py")} - set(rank) - {""})
    assert not missing, f"add these to LAYERS in tests/test_architecture.py and docs: {missing}"


def test_imports_point_down_the_pipeline():
    rank = _rank()
    bad = []
    for name, deps in _graph().items():
        if not name:  # the package's __init__ re-exports the public API from anywhere
            continue
        here = name.split(".")[0]
        for dep in deps:
            there = dep.split(".")[0] if dep else ""
            if there == here:
                continue  # inside one subpackage: checked for cycles below
            if not there or rank[there] >= rank[here]:
                bad.append(f"{name} imports {dep or 'searcheval_frames'}")
    assert not bad, "upward or sideways imports:\n" + "\n".join(sorted(bad))


def test_no_import_cycles():
    graph = _graph()
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph.get(node, ())):
            if dep == "" or node == "":
                continue
            # a package's __init__ re-exporting its own modules is not a cycle
            if node and dep == node.rsplit(".", 1)[0] and (PKG / dep.replace(".", "/")).is_dir():
                continue
            if state.get(dep) == 1:
                cycles.append(" -> ".join([*stack[stack.index(dep):], dep]))
            elif dep not in state:
                visit(dep)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def _doc_layers() -> dict[str, tuple[int, str]]:
    """docs/architecture.md's layer table: each entry of its second column (`frames/`,
    `demo.py`, as LAYERS spells it) -> (the row's layer number, the row)."""
    rows = {}
    for line in ARCH.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\| (\d+) \| ([^|]+) \|", line)
        for entry in re.findall(r"`([^`]+)`", m.group(2)) if m else []:
            rows[entry.removesuffix("/").removesuffix(".py")] = (int(m.group(1)), line)
    return rows


def test_the_docs_layer_table_is_layers_and_names_every_module():
    # the hand-written table drifted once (modules missing, a row twice, a package that
    # had been renamed): it must list LAYERS at their numbers, and each row must name
    # every module of its subpackages, measure family modules excepted (their index is
    # generated below it)
    rows = _doc_layers()
    assert {name: layer for name, (layer, _) in rows.items()} == {
        name: i for i, layer in enumerate(LAYERS) for name in layer}
    families = set(re.findall(r"^\| `measures\.(\w+)` \|", ARCH.read_text(encoding="utf-8"), re.M))
    missing = []
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG)
        if len(rel.parts) == 1 or path.stem == "__init__":
            continue  # top-level modules are LAYERS entries themselves
        row = rows[rel.parts[0]][1].split("|", 3)[3]
        if f"`{path.stem}`" not in row and not (rel.parts[0] == "measures" and path.stem in families):
            missing.append(rel.as_posix())
    assert not missing, f"name these in docs/architecture.md's layer table: {missing}"


@pytest.mark.parametrize(
    "path", sorted(PKG.rglob("*.py")), ids=lambda p: str(p.relative_to(PKG))
)
def test_module_size(path):
    rel = str(path.relative_to(PKG))
    n = len(path.read_text(encoding="utf-8").splitlines())
    if rel in LONG_MODULES:
        return
    assert n <= MAX_LINES, f"{rel} has {n} lines; split it by concern (docs/architecture.md)"


def test_the_check_catches_an_upward_import(tmp_path, monkeypatch):
    """The checker itself: a fake io module importing core is reported."""
    fake = tmp_path / "searcheval_frames"
    (fake / "io").mkdir(parents=True)
    (fake / "core").mkdir()
    (fake / "__init__.py").write_text("")
    (fake / "io" / "__init__.py").write_text("def f():\n    from ..core import evaluate\n")
    (fake / "core" / "__init__.py").write_text("")
    (fake / "core" / "evaluate.py").write_text("from ..io import x\n")
    monkeypatch.setitem(globals(), "PKG", fake)  # the checks read PKG; restored after
    with pytest.raises(AssertionError, match="io imports core"):
        test_imports_point_down_the_pipeline()
    (fake / "io" / "__init__.py").write_text("from .a import x\n")
    (fake / "io" / "a.py").write_text("from .b import y\n")
    (fake / "io" / "b.py").write_text("def g():\n    from .a import x\n")
    with pytest.raises(AssertionError, match=r"io\.a -> io\.b -> io\.a"):
        test_no_import_cycles()
