"""The parts of the docs that the registry and the source tree already know, generated.

``docs/measures.md`` ends with a table of every measure family, and
``docs/architecture.md`` holds the family -> module index and the list of every module
of the package; each block sits between marker comments so the hand-written text
around it stays. Regenerate after adding a family or a module::

    python -m searcheval_frames.measures.docs          # rewrite the blocks
    python -m searcheval_frames.measures.docs --check  # exit 1 when a block drifted

``tests/test_docs_generated.py`` runs the check.

>>> "| `nDCG` |" in measures_table()
True
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Callable
from pathlib import Path

from . import REGISTRY
from ._params import Param
from .base import ALIASES, Family

__all__ = ["BLOCKS", "family_index", "measures_table", "module_index", "render", "update"]

PACKAGE = Path(__file__).resolve().parents[1]
DOCS = PACKAGE.parent / "docs"
_CUTOFF = {"int": "rank k", "float": "recall level", None: "-"}


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _module(fam: Family) -> str:
    return type(fam).__module__.removeprefix("searcheval_frames.")


def _builtin() -> list[Family]:
    """Families the package registers (custom ones a session added are left out)."""
    return [f for f in REGISTRY.values() if not f.custom]


def _params(fam: Family) -> str:
    parts = []
    for key in sorted(fam.params):
        p = fam.params[key]
        default = f" (default {p.default})" if isinstance(p, Param) and p.default else ""
        desc = f": {p.description}" if isinstance(p, Param) else ""
        parts.append(f"`{key}`{default}{desc}")
    return "<br>".join(parts) or "-"


def measures_table() -> str:
    """Markdown table: one row per family, from the registry."""
    lines = ["| Family | Example | Cutoff | Parameters | trec_eval | Other spellings | Module | What it is |",
             "|---|---|---|---|---|---|---|---|"]
    for fam in sorted(_builtin(), key=lambda f: f.name.lower()):
        spellings = sorted(a for a, (f, _) in ALIASES.items()
                           if f == fam.name and a != fam.name.lower())
        lines.append("| " + " | ".join([
            f"`{fam.name}`", f"`{fam.example or fam.name}`", _CUTOFF[fam.cutoff], _params(fam),
            f"`{fam.trec}`" if fam.trec else "-",
            ", ".join(f"`{a}`" for a in spellings) or "-", f"`{_module(fam)}`",
            _cell(fam.summary)]) + " |")
    return "\n".join(lines)


def family_index() -> str:
    """Markdown table: each measures module and the families it registers."""
    by_module: dict[str, list[str]] = {}
    for fam in _builtin():
        by_module.setdefault(_module(fam), []).append(fam.name)
    lines = ["| module | families |", "|---|---|"]
    for mod in sorted(by_module):
        lines.append(f"| `{mod}` | {', '.join(f'`{n}`' for n in sorted(by_module[mod], key=str.lower))} |")
    return "\n".join(lines)


def _first_line(path: Path) -> str:
    """The first paragraph of a module's docstring, its reST roles as plain code."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    text = _cell(doc.strip().split("\n\n")[0]) if doc.strip() else ""
    text = re.sub(r":[a-z]+:`~?([^`]+)`", r"`\1`", text)
    return text.replace("``", "`")


def module_index() -> str:
    """Markdown table: every module of the package (read from the tree) and its first
    docstring paragraph."""
    lines = ["| module | what it holds |", "|---|---|"]
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        lines.append(f"| `{rel}` | {_first_line(path)} |")
    return "\n".join(lines)


#: (file under docs/, block name, generator)
BLOCKS: list[tuple[str, str, Callable[[], str]]] = [
    ("measures.md", "measures-table", measures_table),
    ("architecture.md", "measure-families", family_index),
    ("architecture.md", "modules", module_index),
]


def _markers(name: str) -> tuple[str, str]:
    return (f"<!-- BEGIN GENERATED {name}: python -m searcheval_frames.measures.docs -->",
            f"<!-- END GENERATED {name} -->")


def render(text: str, name: str, body: str) -> str:
    """``text`` with the block ``name`` replaced by ``body`` (appended when absent)."""
    begin, end = _markers(name)
    block = f"{begin}\n{body}\n{end}"
    if begin not in text:
        return text.rstrip("\n") + "\n\n" + block + "\n"
    head, _, rest = text.partition(begin)
    _, sep, tail = rest.partition(end)
    if not sep:
        raise ValueError(f"{name}: {begin!r} without {end!r}")
    return head + block + tail


def update(docs: Path = DOCS, check: bool = False) -> list[str]:
    """Rewrite the generated blocks (or, with ``check``, only report them); returns the
    files that differ from what the code generates."""
    stale = []
    for fname in sorted({f for f, _, _ in BLOCKS}):
        path = docs / fname
        old = path.read_text(encoding="utf-8")
        new = old
        for f, name, make in BLOCKS:
            if f == fname:
                new = render(new, name, make())
        if new != old:
            stale.append(fname)
            if not check:
                path.write_text(new, encoding="utf-8")
    return stale


if __name__ == "__main__":
    check = "--check" in sys.argv[1:]
    stale = update(check=check)
    if check and stale:
        print(f"generated docs drifted: {', '.join(stale)}; run python -m searcheval_frames.measures.docs")
        sys.exit(1)
    print("rewrote: " + (", ".join(stale) or "nothing"))
