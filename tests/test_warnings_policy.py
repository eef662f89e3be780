"""The suite runs with warnings as errors (pyproject's filterwarnings, issue #31); the
package's own warnings are one class and point at the caller's line; a judge closes its
connections when dropped."""

from __future__ import annotations

import ast
import gc
import tomllib
import warnings
from pathlib import Path

import polars as pl
import pytest

import searcheval_frames as sef
from searcheval_frames.errors import SearchEvalWarning

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "searcheval_frames"


def test_warnings_are_errors_with_named_exceptions():
    """"error" first; every exception ignores one message of one third-party module and
    has a comment saying why."""
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    filters = tomllib.loads(text)["tool"]["pytest"]["ini_options"]["filterwarnings"]
    assert filters[0] == "error"
    for spec in filters[1:]:
        action, message, _category, module = spec.split(":")[:4]
        assert action == "ignore" and message and module, spec
        assert "searcheval_frames" not in module, spec  # ours are fixed or asserted
    block = text[text.index("filterwarnings = ["):text.index("]\n", text.index("filterwarnings = ["))]
    assert block.count("#") >= len(filters) - 1 > 0


def test_a_warning_of_ours_fails_a_test():
    with pytest.raises(SearchEvalWarning):
        warnings.warn("a note", SearchEvalWarning, stacklevel=1)


def _warn_calls():
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "warn" and getattr(node.func.value, "id", "") == "warnings"):
                category = node.args[1] if len(node.args) > 1 else next(
                    (k.value for k in node.keywords if k.arg == "category"), None)
                yield path.relative_to(REPO), node.lineno, category


def test_the_packages_notes_are_search_eval_warnings():
    """One class to filter them all: a note to the user is a SearchEvalWarning (a
    UserWarning); deprecations are DeprecationWarning / FutureWarning; a caught warning
    re-emitted keeps its category."""
    allowed = {"SearchEvalWarning", "DeprecationWarning", "FutureWarning", "w.category"}
    calls = list(_warn_calls())
    assert len(calls) > 20
    bad = [(str(p), n, ast.unparse(c) if c is not None else "UserWarning (none given)")
           for p, n, c in calls if c is None or ast.unparse(c) not in allowed]
    assert not bad, bad


def test_a_warning_points_at_the_callers_line_however_deep():
    """compare(by=) reaches compare's 'cannot be tested' through analysis/slices.py; the
    warning names this file, not a line of the package."""
    pq = pl.DataFrame({"run": ["a", "b"] * 4, "query_id": ["q1", "q1", "q2", "q2", "q3", "q3",
                                                          "q4", "q4"],
                       "measure": "P@1", "value": [0.0, 1.0, 1.0, 1.0, 0.0, 0.5, 0.5, 0.0]})
    queries = pl.DataFrame({"query_id": ["q1", "q2", "q3", "q4"], "part": ["x", "x", "y", "y"]})
    with pytest.warns(SearchEvalWarning) as record:
        sef.compare(per_query=pq, baseline="a", queries=queries, by="part", min_queries=1)
    untestable = [w for w in record if "cannot be tested" in str(w.message)]
    assert untestable and all(Path(w.filename) == Path(__file__) for w in untestable), [
        (w.filename, w.lineno) for w in record]


def test_a_dropped_judge_closes_its_connections():
    """A judge that was used and dropped (as in a notebook) leaves no socket to the
    garbage collector: an unclosed socket is a ResourceWarning, an error here."""
    from searcheval_frames.evalset.judges import StubServer

    pairs = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d1", "d2"],
                          "query": ["bm25 ranking", "dense vectors"],
                          "text": ["bm25 is a ranking function", "unrelated text"]})
    with StubServer() as stub:
        judge = sef.judges.OpenAICompatible(stub.url, "stub-model", api_key_env=None)
        assert judge(pairs)["relevance"].len() == 2
        client = judge._client
        del judge
        gc.collect()
        assert client.is_closed
        with sef.judges.OpenAICompatible(stub.url, "stub-model", api_key_env=None) as j:
            j(pairs)
            client = j._client
        assert client.is_closed and j._client is None
