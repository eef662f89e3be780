"""The code blocks of README.md and docs/*.md, and a runner that executes them.

`blocks(path)` lists a Markdown file's fenced blocks. `python -m docs_examples FILE.json`
(how tests/test_docs_examples.py calls it, in a fresh process with a copy of data/ as the
working folder) runs one file's ``python``, ``bash`` and ``console`` blocks in their order: the python
blocks share one namespace as cells of one notebook do (a bare expression is displayed:
its ``_repr_html_`` is called, as JupyterLab would), each ``bash`` block runs in bash with
``searcheval`` on the PATH; a ``console`` block's ``$ command`` lines run in one shell
and each must print the lines shown under it (a shown line ending in ``...`` is a prefix). Warnings are errors under the test suite's own filters
(pyproject's ``filterwarnings``), so an example that warns fails like a test would; the
package's own ``SearchEvalWarning`` (a note on the data, shown under a cell) is printed.

A block that cannot run here (it needs a network service or an API key, or it is the
test suite itself) is preceded by the marker ``<!-- docs-exec: skip (why) -->``.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import tomllib
import traceback
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FILES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
RUN = ("python", "bash", "console")  # the languages that are executed
CMD = "@@sef-docs-command@@"
SKIP = re.compile(r"<!--\s*docs-exec:\s*skip\b\s*(.*?)\s*-->")


@dataclass
class Block:
    file: str
    line: int  # of the opening fence, 1-based
    lang: str
    code: str
    skip: str | None  # the reason given in the marker, or None


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of a Markdown file, with the skip marker on the line before each."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out: list[Block] = []
    start: int | None = None
    for i, line in enumerate(lines):
        if not line.startswith("```"):
            continue
        if start is None:
            start = i
            continue
        above = next((lines[k] for k in range(start - 1, -1, -1) if lines[k].strip()), "")
        mark = SKIP.search(above)
        out.append(Block(path.name, start + 1, lines[start][3:].strip(), "\n".join(lines[start + 1:i]),
                         mark.group(1) or "no reason given" if mark else None))
        start = None
    return out


def runnable(path: Path) -> list[Block]:
    return [b for b in blocks(path) if b.lang in RUN and b.skip is None]


def suite_warning_filters() -> None:
    """The test suite's warning policy (pyproject's filterwarnings, pytest's syntax)."""
    from _pytest.config import parse_warning_filter

    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    for spec in config["tool"]["pytest"]["ini_options"].get("filterwarnings", []):
        warnings.filterwarnings(*parse_warning_filter(spec, escape=False))
    # the package's own notes to the user (few queries in a slice, a baseline picked) are
    # what a reader of the example sees under the cell: shown, not errors
    from searcheval_frames.errors import SearchEvalWarning

    warnings.filterwarnings("default", category=SearchEvalWarning)


def display(value: object) -> None:
    """What JupyterLab does with a cell's bare expression: the HTML if there is one."""
    if value is None:
        return
    html = getattr(value, "_repr_html_", None)
    text = html() if callable(html) and not isinstance(value, type) else repr(value)
    print(f"[{type(value).__name__}: {len(text or '')} characters]")


def run_python(code: str, scope: dict[str, object], name: str) -> None:
    for stmt in ast.parse(code).body:
        if isinstance(stmt, ast.Expr):
            display(eval(compile(ast.Expression(stmt.value), name, "eval"), scope))
        else:
            exec(compile(ast.Module([stmt], []), name, "exec"), scope)
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


def console(code: str) -> list[tuple[str, list[str]]]:
    """A ``console`` block's ``$ command`` lines, each with the output shown under it."""
    out: list[tuple[str, list[str]]] = []
    for line in code.splitlines():
        if line.startswith("$ "):
            out.append((line[2:], []))
        elif out:
            out[-1][1].append(line)
    return out


def same_line(shown: str, got: str) -> bool:
    """A shown line equals the printed one; a shown line ending in "..." is its start."""
    shown, got = shown.rstrip(), got.rstrip()
    if shown.endswith("..."):
        return got.startswith(shown[:-3].rstrip())
    return shown == got


def run_console(code: str, bin_dir: Path) -> None:
    """Run the commands in one shell (a `cd` holds for the next) and compare each one's
    output (stdout and stderr, as a terminal shows them) with the lines shown under it."""
    steps = console(code)
    script = "\n".join(f"echo {CMD}\n{{ {cmd}\n}} 2>&1" for cmd, _ in steps)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "COLUMNS": "100"}
    proc = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True,
                          timeout=300)
    outputs = proc.stdout.split(CMD + "\n")[1:]
    assert len(outputs) == len(steps), proc.stdout + proc.stderr
    for (cmd, shown), got in zip(steps, outputs, strict=True):
        lines = got.rstrip("\n").split("\n") if got.strip() else []
        if len(lines) != len(shown) or not all(map(same_line, shown, lines)):
            raise AssertionError(f"$ {cmd}\nthe page shows:\n" + "\n".join(shown)
                                 + "\nit prints:\n" + "\n".join(lines))


def run_bash(code: str, bin_dir: Path) -> None:
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", code], env=env, capture_output=True,
                          text=True, timeout=300)
    print(proc.stdout[-2000:])
    if proc.returncode != 0:
        raise RuntimeError(f"exit {proc.returncode}\n{proc.stderr[-3000:]}")


def searcheval_on_path(folder: Path) -> Path:
    """A `searcheval` command that runs this interpreter's package (PYTHONPATH's)."""
    folder.mkdir(exist_ok=True)
    script = folder / "searcheval"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m searcheval_frames "$@"\n')
    script.chmod(0o755)
    return folder


def main(spec: str) -> int:
    todo = [Block(**b) for b in json.loads(Path(spec).read_text(encoding="utf-8"))]
    os.environ.setdefault("MPLBACKEND", "Agg")
    suite_warning_filters()
    bin_dir = searcheval_on_path(Path.cwd() / ".bin")
    scope: dict[str, object] = {"__name__": "__main__"}
    for block in todo:
        where = f"{block.file}:{block.line}"
        print(f"--- {where} ({block.lang})", flush=True)
        try:
            if block.lang == "python":
                run_python(block.code, scope, where)
            elif block.lang == "console":
                run_console(block.code, bin_dir)
            else:
                run_bash(block.code, bin_dir)
        except BaseException:
            print(f"FAILED: the {block.lang} block at {where}\n{block.code}\n", file=sys.stderr)
            traceback.print_exc()
            return 1
    return 0


def spec_of(path: Path, out: Path) -> Path:
    out.write_text(json.dumps([asdict(b) for b in runnable(path)]), encoding="utf-8")
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
