"""A relevance level the caller chose is a note, the default one a warning (issue #31: the
demo's own report warned about the level the demo means). See docs/semantics.md."""

from __future__ import annotations

import polars as pl

import searcheval_frames as sef
from searcheval_frames.reporting.checks import banner

RUN = pl.DataFrame({"run": "a", "query_id": ["1"] * 3 + ["2"] * 3,
                    "doc_id": ["x", "y", "z"] * 2, "score": [3.0, 2.0, 1.0] * 2})
QRELS = pl.DataFrame({"query_id": ["1", "1", "2", "2"], "doc_id": ["x", "y", "x", "z"],
                      "relevance": [3, 1, 2, 0]})


def _severity(**kw):
    found = sef.check(RUN, QRELS, **kw).to_polars()
    return found.filter(pl.col("code") == "relevance_level_low")["severity"].to_list()


def test_the_default_level_warns_a_chosen_one_is_a_note():
    assert _severity() == ["warning"]
    assert _severity(relevance_level=1) == ["info"]
    assert _severity(relevance_level=2) == []  # at the middle of 0..3: nothing to say


def test_the_report_banner_follows_the_choice():
    default = banner(RUN, QRELS, ["P@1"], 1, chosen=False)
    chosen = banner(RUN, QRELS, ["P@1"], 1, chosen=True)
    assert any("relevance_level_low" in line for line in default)
    assert not any("relevance_level_low" in line for line in chosen)
