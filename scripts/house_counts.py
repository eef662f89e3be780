"""Counts for issue 19's closing note: how many traps the house still has.

Run from the repository root::

    python scripts/house_counts.py            # all counts
    python scripts/house_counts.py --list     # also list each site

Counts (all over ``searcheval_frames/``):

* ``private_imports``: names starting with one underscore (not dunders) imported with
  ``from X import _name`` where X is another module of the package (a module importing
  from itself is impossible, so every hit crosses a module boundary).
* ``long_functions``: functions (and methods, nested ones too) with more than 80 lines
  of code; blank lines, comment-only lines and the docstring are not code.
* ``base_raises``: ``raise SearchEvalError(`` sites (the base class, not a subclass that
  names the cause).
* ``duplicates`` pairs and the ``import searcheval_frames`` time are measured with the
  external tools (``duplicates --most 200``, ``python -X importtime``), see ``--tools``.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "searcheval_frames"
LIMIT = 80


def modules() -> list[Path]:
    return sorted(PKG.rglob("*.py"))


def private_imports() -> list[str]:
    out = []
    for path in modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or node.module == "__future__":
                continue
            mod = node.module or ""
            if node.level == 0 and not mod.startswith("searcheval_frames"):
                continue  # a third-party private name is not the house's trap
            for a in node.names:
                if a.name.startswith("_") and not a.name.startswith("__"):
                    out.append(f"{path.relative_to(ROOT)}:{node.lineno} {'.' * node.level}{mod} {a.name}")
    return out


def code_lines(node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str], raw: bool = False) -> int:
    """Lines of ``node`` less its docstring, and less blank/comment lines unless ``raw``."""
    skip: set[int] = set()
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        skip.update(range(body[0].lineno, (body[0].end_lineno or body[0].lineno) + 1))
    n = 0
    for i in range(node.lineno, (node.end_lineno or node.lineno) + 1):
        text = lines[i - 1].strip()
        if i in skip or (not raw and (not text or text.startswith("#"))):
            continue
        n += 1
    return n


def long_functions(limit: int = LIMIT, raw: bool = False) -> list[str]:
    out = []
    for path in modules():
        src = path.read_text(encoding="utf-8")
        lines = src.splitlines()
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = code_lines(node, lines, raw)
                if n > limit:
                    out.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} {n}")
    return out


def base_raises() -> list[str]:
    pat = re.compile(r"raise\s+SearchEvalError\(")
    out = []
    for path in modules():
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pat.search(line):
                out.append(f"{path.relative_to(ROOT)}:{i}")
    return out


def duplicate_pairs() -> str:
    res = subprocess.run(["duplicates", "--most", "200", "--seconds", "120"], cwd=ROOT,
                         capture_output=True, text=True, check=False)
    return res.stdout.splitlines()[0] if res.stdout else res.stderr.strip()


def import_time_us() -> int:
    res = subprocess.run([sys.executable, "-X", "importtime", "-c", "import searcheval_frames"],
                         cwd=ROOT, capture_output=True, text=True, check=False,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    for line in res.stderr.splitlines():
        parts = [p.strip() for p in line.split("|")]
        if len(parts) == 3 and parts[2] == "searcheval_frames":
            return int(parts[1])
    return -1


def main(argv: list[str]) -> None:
    show = "--list" in argv
    for name, fn in (("private_imports", private_imports), ("long_functions", long_functions),
                     ("long_functions_with_blanks_and_comments", lambda: long_functions(raw=True)),
                     ("base_raises", base_raises)):
        items = fn()
        print(f"{name}: {len(items)}")
        if show:
            print("  " + "\n  ".join(items))
    if "--tools" in argv:
        print("duplicates:", duplicate_pairs())
        print("import searcheval_frames (cumulative us):", import_time_us())


if __name__ == "__main__":
    main(sys.argv[1:])
