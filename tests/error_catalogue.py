"""The catalogue of errors a user can meet, as runnable cases.

Each case is a situation a user gets into, the code that gets them there, the error
class expected and the fix. ``tests/test_error_catalogue.py`` runs every case and checks
that ``docs/errors.md`` is exactly what ``render()`` makes of them (regenerate with
``python tests/error_catalogue.py``), so the documented messages are the real ones.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import searcheval_frames as sef  # noqa: E402
from searcheval_frames import errors as E  # noqa: E402

DOC = ROOT / "docs" / "errors.md"


@dataclass
class Case:
    title: str
    code: str  # shown in the doc; executed with sef, pl and the files below in scope
    error: type[Exception]
    fix: str
    section: str


def _files(tmp: Path) -> dict[str, str]:
    """Small files the cases read (paths are replaced by their names in the doc)."""
    (tmp / "run.txt").write_text("q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 1.5 bm25\n")
    (tmp / "qrels.txt").write_text("q1 0 d1 1\nq1 0 d2 0\n")
    (tmp / "bad_score.run").write_text("q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 high bm25\n")
    (tmp / "short_line.run").write_text("q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2\n")
    (tmp / "dup.run").write_text("q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 1.5 bm25\nq1 Q0 d1 3 1.0 bm25\n")
    (tmp / "grade.qrels").write_text("q1 0 d1 1\nq1 0 d2 very\n")
    (tmp / "latin1.run").write_bytes("q1 Q0 caf\xe9 1 2.5 bm25\n".encode("latin-1"))
    return {"tmp": str(tmp)}


RUN = "pl.DataFrame({'query_id': ['q1', 'q1'], 'doc_id': ['d1', 'd2'], 'score': [2.5, 1.5]})"
QRELS = "pl.DataFrame({'query_id': ['q1'], 'doc_id': ['d1'], 'relevance': [1]})"

CASES: list[Case] = [
    # ------------------------------------------------------------------ frames
    Case("A required column is missing",
         "sef.evaluate(pl.DataFrame({'query_id': ['q1'], 'doc_id': ['d1']}), " + QRELS + ", ['P@5'])",
         E.MissingColumnError,
         "Name the column (`columns={'score': 'my_score'}`) or add it.", "Frames"),
    Case("The same document twice in one query of a run",
         "sef.evaluate(pl.DataFrame({'query_id': ['q1', 'q1'], 'doc_id': ['d1', 'd1'], "
         "'score': [2.0, 1.0]}), " + QRELS + ", ['P@5'])",
         E.DuplicateRowsError,
         "Keep one row per (run, query, document), e.g. the best score: "
         "`run.group_by('query_id', 'doc_id').agg(pl.col('score').max())`.", "Frames"),
    Case("A NaN score",
         "sef.evaluate(pl.DataFrame({'query_id': ['q1', 'q1'], 'doc_id': ['d1', 'd2'], "
         "'score': [2.0, float('nan')]}), " + QRELS + ", ['P@5'])",
         E.InvalidScoreError,
         "Drop or fill the rows without a score before evaluating.", "Frames"),
    Case("Labels that are not integers",
         "sef.evaluate(" + RUN + ", pl.DataFrame({'query_id': ['q1'], 'doc_id': ['d1'], "
         "'relevance': [0.5]}), ['P@5'])",
         E.InvalidRelevanceError,
         "Map the labels to integer grades (0, 1, 2, ...).", "Frames"),
    Case("An empty run",
         "sef.evaluate(pl.DataFrame({'query_id': [], 'doc_id': [], 'score': []}, "
         "schema={'query_id': pl.String, 'doc_id': pl.String, 'score': pl.Float64}), "
         + QRELS + ", ['P@5'])",
         E.EmptyInputError,
         "Check the filter or file that produced the run.", "Frames"),
    Case("Run and qrels share no query id",
         "sef.evaluate(" + RUN + ", pl.DataFrame({'query_id': ['301'], 'doc_id': ['d1'], "
         "'relevance': [1]}), ['P@5'])",
         E.IdMismatchError,
         "Use one id scheme in both (e.g. strip a 'q' prefix), or map columns with "
         "`columns=`.", "Frames"),
    # ------------------------------------------------------------------ measures
    Case("A misspelt measure",
         "sef.evaluate(" + RUN + ", " + QRELS + ", ['nDGC@10'])",
         E.UnknownMeasureError,
         "Use one of the suggested names; `sef.list_measures()` lists them all.", "Measures"),
    Case("A cutoff that is not a whole number of documents",
         "sef.evaluate(" + RUN + ", " + QRELS + ", ['P@2.5'])",
         E.UnknownMeasureError,
         "Write a positive integer cutoff: `P@2`, `P@3`.", "Measures"),
    Case("Two spellings of one measure in one call",
         "sef.evaluate(" + RUN + ", " + QRELS + ", ['P@5', 'P_5'])",
         E.UnknownMeasureError,
         "Ask for each measure once (`names='as_given'` keeps your spelling).", "Measures"),
    Case("A negative relevance level in a measure",
         "sef.evaluate(" + RUN + ", " + QRELS + ", ['P(rel=-1)@5'])",
         E.UnknownMeasureError,
         "Levels are labels >= 0; `P(rel=2)@5` counts grade 2 and above.", "Measures"),
    # ------------------------------------------------------------------ options
    Case("A negative relevance level",
         "sef.evaluate(" + RUN + ", " + QRELS + ", ['P@5'], relevance_level=-1)",
         E.InvalidOptionError,
         "Pass a label >= 0 (`relevance_level=2` for TREC DL passage qrels).", "Options"),
    Case("A depth of zero",
         "sef.pool(" + RUN + ", depth=0)",
         E.InvalidOptionError,
         "Pass a positive integer: `depth=20`.", "Options"),
    Case("A value outside the allowed choices",
         "sef.evaluate(" + RUN + ", " + QRELS + ", ['P@5'], missing='drop')",
         E.InvalidOptionError,
         "Use one of the listed values.", "Options"),
    # ------------------------------------------------------------------ files
    Case("A score that is not a number, in a run file",
         "sef.read_run(f'{tmp}/bad_score.run')",
         E.FileFormatError,
         "Fix or remove the line the message names (file and line number).", "Files"),
    Case("A line with too few fields",
         "sef.read_run(f'{tmp}/short_line.run')",
         E.FileFormatError,
         "A TREC run line is `qid Q0 docno rank score tag`.", "Files"),
    Case("A document listed twice for a query, in a run file",
         "sef.read_run(f'{tmp}/dup.run')",
         E.FileFormatError,
         "Remove one of the two lines the message names.", "Files"),
    Case("A label that is not an integer, in a qrels file",
         "sef.read_qrels(f'{tmp}/grade.qrels')",
         E.FileFormatError,
         "A qrels line is `qid 0 docno label` with an integer label.", "Files"),
    Case("A file that is not UTF-8",
         "sef.read_run(f'{tmp}/latin1.run')",
         E.FileFormatError,
         "Convert the file: `iconv -f latin1 -t utf-8 in.run > out.run`.", "Files"),
    Case("A file that does not exist",
         "sef.read_qrels(f'{tmp}/no_such_file.txt')",
         E.SearchEvalError,
         "Check the path (it is shown as given and as resolved).", "Files"),
    # ------------------------------------------------------------------ labels
    Case("Conflicting labels from two assessors, merged without a policy",
         "sef.merge_labels(pl.DataFrame({'query_id': ['q1', 'q1'], 'doc_id': ['d1', 'd1'], "
         "'relevance': [0, 2], 'assessor': ['ann', 'bob']}))",
         E.SearchEvalError,
         "Pick a policy (`'majority'`, `'max'`, `'min'`, `prefer='ann'`) or resolve the "
         "conflicts listed.", "Labels"),
    # ------------------------------------------------------------------ comparisons
    Case("A baseline that is not one of the runs",
         "sef.compare(sef.evaluate(" + RUN + ", " + QRELS + ", ['P@1'], per_query=True), "
         "baseline='bm25')",
         E.SearchEvalError,
         "Pass one of the run names listed in the message.", "Comparisons"),
    Case("A leaderboard of one run",
         "sef.leaderboard(sef.evaluate(" + RUN + ", " + QRELS + ", ['P@1'], per_query=True), "
         "measure='P@1')",
         E.SearchEvalError,
         "Evaluate several runs together (a `run` column naming each system).", "Comparisons"),
    Case("A leaderboard over several measures at once",
         "sef.leaderboard(sef.evaluate(" + RUN + ", " + QRELS + ", ['P@1'], per_query=True), "
         "measure=['P@1', 'RR'])",
         E.InvalidOptionError,
         "Rank by one measure per leaderboard; make one per measure.", "Comparisons"),
]


def message(case: Case, scope: dict[str, object]) -> str:
    """Run the case; return the error message (fails if nothing or another class)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            eval(case.code, {"sef": sef, "pl": pl, **scope})
    except case.error as exc:
        return str(exc)
    raise AssertionError(f"{case.title}: no {case.error.__name__} raised")


def render() -> str:
    with tempfile.TemporaryDirectory() as d:
        scope = _files(Path(d))
        out = [
            "# Errors you can meet, and how to fix them",
            "",
            "Every error searcheval_frames raises for bad input is a `SearchEvalError`, itself",
            "a `ValueError`, so `except ValueError` keeps working. Subclasses say what kind of",
            "problem it is. Messages name the argument, column or option, the file and line",
            "for files, show up to three offending rows, and say how to fix it.",
            "",
            "This page is generated from `tests/error_catalogue.py` by running every case",
            "(`python tests/error_catalogue.py`); `tests/test_error_catalogue.py` fails when",
            "a message changes and this page was not regenerated. The option checks of every",
            "public function are tabulated in `tests/test_options.py`.",
            "",
            "| class | raised for |",
            "|---|---|",
        ]
        for cls in (E.SearchEvalError, E.MissingColumnError, E.DuplicateRowsError,
                    E.InvalidScoreError, E.InvalidRelevanceError, E.EmptyInputError,
                    E.IdMismatchError, E.UnknownMeasureError, E.InvalidOptionError,
                    E.FileFormatError):
            doc = (cls.__doc__ or "").strip().splitlines()[0]
            out.append(f"| `{cls.__name__}` | {doc} |")
        section = None
        for case in CASES:
            if case.section != section:
                section = case.section
                out += ["", f"## {section}"]
            # the working folder first: it may itself lie below /tmp
            msg = message(case, scope).replace(os.getcwd(), "<cwd>")
            msg = msg.replace(scope["tmp"], "<dir>")
            msg = re.sub(r"/tmp/[^\s'\"]*/", "<dir>/", msg)
            code = case.code.replace("f'{tmp}/", "'")
            out += ["", f"### {case.title}", "", "```python", code, "```", "",
                    f"`{case.error.__name__}`:", "", "```text", msg, "```", "",
                    f"**Fix:** {case.fix}"]
        return "\n".join(out) + "\n"


if __name__ == "__main__":
    os.chdir(ROOT)
    DOC.write_text(render(), encoding="utf-8")
    print(f"wrote {DOC}")
