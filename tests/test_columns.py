"""``columns=`` works in every public function that takes runs or qrels, and in the CLI.

One parametrised test: each function gets the RAG example twice, once with its own
column names (``system, question, url, similarity`` / ``question, url, grade``) and
``columns=``, once renamed to the canonical names without ``columns=``, and must give
the same frame. The canonical call is the oracle: it is the path every other test of the
function checks against pytrec_eval, ir_measures and the rest.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from typing import Any

import pandas as pd
import polars as pl
import pytest
from conftest import DATA

import searcheval_frames as sef

RAG = DATA / "rag"
COLUMNS = {"run": "system", "query_id": "question", "doc_id": "url", "score": "similarity",
           "relevance": "grade"}
_CANON = {v: k for k, v in COLUMNS.items()}
QUESTION = "why do I keep getting redirected back to the login page after SSO?"
FAST = {"ci_method": "t"}


@pytest.fixture(scope="module")
def rag() -> tuple[pl.DataFrame, pl.DataFrame]:
    runs = pl.read_csv(RAG / "runs.csv").filter(pl.col("system") != "embedding")
    grades = pl.read_csv(RAG / "grades.csv")  # every 3rd off-topic label left out: holes
    grades = grades.filter((pl.col("grade") > 0) | (pl.int_range(pl.len()) % 3 != 0))
    return runs, grades


def _canon(df: pl.DataFrame) -> pl.DataFrame:
    return df.rename({c: _CANON[c] for c in df.columns if c in _CANON})


def _power(runs: Any, qrels: Any, **kw: Any) -> Any:
    # power takes per-query scores: the same frame under the user's names
    pq = pl.DataFrame(sef.evaluate(_canon(pl.DataFrame(runs)) if "system" in runs.columns
                                   else runs, _canon(pl.DataFrame(qrels)), ["nDCG@10"],
                                   per_query=True, relevance_level=2))
    if kw:  # a per-query frame's columns= names run, query_id, measure, value
        pq = pq.rename({"run": "system", "query_id": "question"})
        kw = {"columns": {k: kw["columns"][k] for k in ("run", "query_id")}}
    return sef.power(per_query=pq, baseline="keyword", measure="nDCG@10", **kw)


CASES: dict[str, Callable[..., Any]] = {
    "compare": lambda r, q, **kw: sef.compare(r, q, ["nDCG@10", "P@5"],
                                              baseline="keyword", relevance_level=2,
                                              **FAST, **kw).frame,
    "report": lambda r, q, **kw: sef.report(r, q, baseline="keyword", relevance_level=2,
                                            figures=False, n_examples=1, **FAST, **kw).frame,
    "query_diff": lambda r, q, **kw: sef.query_diff(r, q, baseline="keyword", run="hybrid",
                                                    relevance_level=2, **kw),
    "side_by_side": lambda r, q, **kw: sef.side_by_side(r, q, QUESTION, baseline="keyword",
                                                        run="hybrid", k=5, **kw).frame,
    "fuse": lambda r, q, **kw: sef.fuse(r, method="rrf", **kw),
    "pool": lambda r, q, **kw: sef.pool(r, q, depth=5, **kw),
    "coverage": lambda r, q, **kw: sef.coverage(r, q, 5, **kw),
    "holes": lambda r, q, **kw: sef.holes(r, q, 10, **kw),
    "metric_bounds": lambda r, q, **kw: sef.metric_bounds(r, q, ["P@5", "nDCG@10"], **kw),
    "power": _power,
}


def _same(a: Any, b: Any) -> None:
    a = pl.DataFrame(a) if isinstance(a, pd.DataFrame) else a
    b = pl.DataFrame(b) if isinstance(b, pd.DataFrame) else b
    assert a.height > 0
    assert a.columns == b.columns
    assert a.equals(b), f"{a}\n{b}"


@pytest.mark.parametrize("kind", ["polars", "pandas"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_columns_give_the_canonical_result(name: str, kind: str, rag: Any) -> None:
    runs, qrels = rag
    theirs = (runs, qrels) if kind == "polars" else (runs.to_pandas(), qrels.to_pandas())
    ours = (_canon(runs), _canon(qrels))
    if kind == "pandas":
        ours = (ours[0].to_pandas(), ours[1].to_pandas())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = CASES[name](*theirs, columns=COLUMNS)
        want = CASES[name](*ours)
    if kind == "pandas" and name not in ("power",):
        assert isinstance(got, pd.DataFrame)  # pandas in, pandas out
    _same(got, want)


def test_without_columns_the_user_names_are_refused(rag: Any) -> None:
    runs, qrels = rag
    with pytest.raises(sef.SearchEvalError, match="columns"):
        sef.report(runs, qrels, baseline="keyword", figures=False, **FAST)


def test_cli_columns(tmp_path: Any, rag: Any, capsys: Any) -> None:
    from searcheval_frames.cli import main

    runs, qrels = rag
    files = []
    for s in ("keyword", "hybrid"):
        path = tmp_path / f"{s}.csv"
        runs.filter(pl.col("system") == s).write_csv(path)
        files.append(str(path))
    out = tmp_path / "report"
    argv = ["report", str(RAG / "grades.csv"), *files, "--columns",
            ",".join(f"{k}={v}" for k, v in COLUMNS.items()), "-l", "2", "--baseline", "key",
            "--no-figures", "--ci-method", "t", "-o", str(out), "-q"]
    assert main(argv) == 0, capsys.readouterr().err
    want = sef.report(_canon(runs), _canon(qrels), baseline="keyword", relevance_level=2,
                      figures=False, **FAST)
    md = (out / "report.md").read_text()
    assert "Relevant = label ≥ 2" in md
    for r in want.data.comparison.to_polars().iter_rows(named=True):
        assert f"{r['mean']:.3f}" in md
    assert main(["report", str(RAG / "grades.csv"), *files, "--columns", "query_id"]) == 2
    assert "CANONICAL=YOURS" in capsys.readouterr().err


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
