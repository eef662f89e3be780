"""The generated blocks of docs/measures.md and docs/architecture.md match the code.

When this fails, run ``python -m searcheval_frames.measures.docs`` and commit the docs.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from searcheval_frames.measures import REGISTRY, docs, list_measures

REPO = Path(__file__).resolve().parents[1]


def test_generated_blocks_have_not_drifted():
    stale = docs.update(REPO / "docs", check=True)
    assert stale == [], f"run python -m searcheval_frames.measures.docs ({stale} drifted)"


def test_check_command_fails_on_drift(tmp_path):
    # the command the message tells people to run: --check exits 1 on a stale copy, 0 after
    for f in {f for f, _, _ in docs.BLOCKS}:
        (tmp_path / f).write_text((REPO / "docs" / f).read_text(encoding="utf-8"), encoding="utf-8")
    md = tmp_path / "measures.md"
    md.write_text(md.read_text(encoding="utf-8").replace("| `nDCG` |", "| `nDCG-old` |"),
                  encoding="utf-8")
    assert docs.update(tmp_path, check=True) == ["measures.md"]
    assert docs.update(tmp_path) == ["measures.md"]
    assert docs.update(tmp_path, check=True) == []
    res = subprocess.run([sys.executable, "-m", "searcheval_frames.measures.docs", "--check"],
                         cwd=REPO, capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stdout + res.stderr


def test_hand_written_text_around_a_block_stays():
    text = "# Title\n\nhand text\n\n" + docs.render("", "x", "old") + "\nafter\n"
    out = docs.render(text, "x", "new")
    assert out.startswith("# Title\n\nhand text\n\n") and out.endswith("\nafter\n")
    assert "new" in out and "old" not in out


def test_every_family_and_module_is_in_the_docs():
    # independent of the generator: read the tree and the registry directly
    arch = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = (REPO / "docs" / "measures.md").read_text(encoding="utf-8")
    pkg = REPO / "searcheval_frames"
    for path in pkg.rglob("*.py"):
        assert f"`{path.relative_to(pkg).as_posix()}`" in arch, path
    for fam in list_measures()["family"]:
        if not REGISTRY[fam].custom:
            assert f"| `{fam}` |" in table, fam
    assert "one module per family" not in arch


@pytest.mark.parametrize("family", sorted(f for f in REGISTRY if not REGISTRY[f].custom))
def test_index_names_the_module_that_defines_the_family(family):
    # (built-ins only: another test module may have registered a custom measure first)
    fam = REGISTRY[family]
    module = type(fam).__module__.removeprefix("searcheval_frames.")
    src = (REPO / "searcheval_frames" / (module.replace(".", "/") + ".py")).read_text(encoding="utf-8")
    names = {node.name for node in ast.walk(ast.parse(src)) if isinstance(node, ast.ClassDef)}
    assert type(fam).__name__ in names
    row = next(line for line in docs.family_index().splitlines() if line.startswith(f"| `{module}` |"))
    assert f"`{family}`" in row


@pytest.mark.parametrize("make", [docs.measures_table, docs.family_index, docs.module_index])
def test_generated_tables_are_well_formed_markdown(make):
    # every row has the header's number of cells ("\|" inside a cell is not a separator)
    rows = make().splitlines()
    width = rows[0].count("|")
    assert rows[1] == "|" + "---|" * (width - 1)
    for row in rows[2:]:
        assert row.replace("\\|", "").count("|") == width, row
        assert "``" not in row  # reST literals were turned into markdown code
