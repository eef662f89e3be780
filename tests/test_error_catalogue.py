"""docs/errors.md is the catalogue of tests/error_catalogue.py, with the real messages."""

from __future__ import annotations

import error_catalogue as cat
import pytest


@pytest.mark.parametrize("case", cat.CASES, ids=[c.title for c in cat.CASES])
def test_case_raises_its_error_with_a_useful_message(case, tmp_path):
    scope = cat._files(tmp_path)
    msg = cat.message(case, scope)
    assert len(msg) > 30, msg  # says more than the class name
    if case.section == "Files":
        assert "no_such_file" in msg or ":" in msg.split()[0], "names the file"


def test_docs_errors_md_is_up_to_date():
    expected = cat.render()
    actual = cat.DOC.read_text(encoding="utf-8")
    assert actual == expected, (
        "docs/errors.md is out of date: run `python tests/error_catalogue.py`"
    )
