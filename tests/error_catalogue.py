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
    # issue #22
    (tmp / "cr.run").write_bytes(b"q1 Q0 d1 1 2.5 bm25\rq1 Q0 d2 2 1.5 bm25\r")
    (tmp / "joined.run").write_text("q1 Q0 d1 1 2.5 bm25q1 Q0 d2 2 1.5 bm25\n")
    (tmp / "utf16.qrels").write_bytes("q1 0 d1 1\n".encode("utf-16"))
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
         E.MeasureParameterError,
         "Write a positive integer cutoff: `P@2`, `P@3`.", "Measures"),
    Case("Two spellings of one measure in one call",
         "sef.evaluate(" + RUN + ", " + QRELS + ", ['P@5', 'P_5'])",
         E.UnknownMeasureError,
         "Ask for each measure once (`names='as_given'` keeps your spelling).", "Measures"),
    Case("A negative relevance level in a measure",
         "sef.evaluate(" + RUN + ", " + QRELS + ", ['P(rel=-1)@5'])",
         E.MeasureParameterError,
         "Levels are labels >= 0; `P(rel=2)@5` counts grade 2 and above.", "Measures"),
    Case("A diversity measure (alpha-nDCG, ERR-IA, NRBP, StRecall, ...) on qrels without "
         "subtopics",
         "sef.evaluate(" + RUN + ", " + QRELS + ", ['ERR-IA@20'])",
         E.MissingColumnError,
         "Pass judgments per subtopic: columns query_id, subtopic, doc_id, relevance (TREC "
         "diversity qrels).", "Measures"),
    Case("A C/W/L measure (INST, INSQ, BPM, SDCG) whose label scale is empty",
         "sef.evaluate(" + RUN + ", " + QRELS + ", ['INST(min_rel=2,max_rel=2)'])",
         E.MeasureParameterError,
         "Give the bottom and top of your label scale, min_rel < max_rel: "
         "`INST(T=1,max_rel=3)` for TREC DL.", "Measures"),
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
         E.FileAccessError,
         "Check the path (it is shown as given and as resolved).", "Files"),
    # ------------------------------------------------------------------ labels
    Case("Conflicting labels from two assessors, merged without a policy",
         "sef.merge_labels(pl.DataFrame({'query_id': ['q1', 'q1'], 'doc_id': ['d1', 'd1'], "
         "'relevance': [0, 2], 'assessor': ['ann', 'bob']}))",
         E.LabelConflictError,
         "Pick a policy (`'majority'`, `'max'`, `'min'`, `prefer='ann'`) or resolve the "
         "conflicts listed.", "Labels"),
    # ------------------------------------------------------------------ comparisons
    Case("A baseline that is not one of the runs",
         "sef.compare(per_query=sef.evaluate(" + RUN + ", " + QRELS + ", ['P@1'], "
         "per_query=True), baseline='bm25')",
         E.InvalidOptionError,
         "Pass one of the run names listed in the message.", "Comparisons"),
    Case("Comparing a single run",
         "sef.compare(per_query=sef.evaluate(" + RUN + ", " + QRELS + ", ['P@1'], "
         "per_query=True))",
         E.InsufficientDataError,
         "Evaluate two runs or more together (a long frame whose `run` column names each "
         "system) and compare those.", "Comparisons"),
    # ------------------------------------------------------------------ slices, custom measures, chunks
    Case("Slicing by a column the query metadata lacks",
         "sef.evaluate(" + RUN + ", " + QRELS + ", ['P@5'], by='intent', "
         "queries=pl.DataFrame({'query_id': ['q1'], 'length': ['short']}))",
         E.MissingColumnError,
         "Slice by a column of `queries=` (or add it), or pass a polars expression over "
         "its columns, e.g. `by=pl.col('query').str.len_chars() > 30`.",
         "Slices, custom measures and chunks"),
    Case("A custom measure named like a built-in",
         "sef.measure('P', cutoff=True)",
         E.MeasureDefinitionError,
         "Give your measure its own name, e.g. `@sef.measure('MyP', cutoff=True)`.",
         "Slices, custom measures and chunks"),
    Case("Chunk ids and document ids mixed in one qrels",
         "sef.collapse(pl.DataFrame({'query_id': 'q1', 'doc_id': ['d1#0', 'd2'], "
         "'relevance': [1, 1]}))",
         E.IdMismatchError,
         "Judge at one level: give every label a chunk id (`doc#chunk`) or a document id, "
         "then `sef.collapse(run, qrels=qrels)` puts run and qrels at one level.",
         "Slices, custom measures and chunks"),
    # ------------------------------------------------------------------ automatic judges
    Case("A judge's answer without a grade",
         "sef.judges.parse_grade('The passage is relevant.')",
         sef.judges.JudgeAnswerError,
         "Nothing to do at once: `sef.judge` retries, then records the pair and the answer in "
         "`<journal>.errors` and leaves it without a label (never 0); run it again to retry. "
         "If it keeps happening, the model ignores the format: raise `max_tokens` or adapt "
         "the prompt.", "Automatic judges"),
    Case("Pairs without texts for the judge",
         "sef.judge(pl.DataFrame({'query_id': ['q1'], 'doc_id': ['d1']}), lambda p: p, "
         "journal=f'{tmp}/judge.jsonl')",
         E.MissingColumnError,
         "Pass `queries=` and `docs=` (frames, dicts or files, as for `sef.label_widget`) or "
         "put the texts on the pairs as `query` and `text`.", "Automatic judges"),
    Case("A pooled document missing from docs=",
         "sef.judge(pl.DataFrame({'query_id': ['q1'], 'doc_id': ['d9']}), lambda p: p, "
         "queries={'q1': 'bm25'}, docs={'d1': 'BM25 is a ranking function'}, "
         "journal=f'{tmp}/judge.jsonl')",
         E.IdMismatchError,
         "Add the documents listed to `docs=` or drop those pairs.", "Automatic judges"),
    Case("A prompt template without {passage}",
         "sef.judges.OpenAICompatible('http://localhost:11434/v1', 'llama3.1', "
         "prompt='Rate the relevance to {query}.')",
         E.InvalidOptionError,
         "Put `{query}` and `{passage}` in the user part of the template (after a `---` line "
         "that ends the system part).", "Automatic judges"),
    Case("Calibrating a judge on pairs the humans did not label",
         "sef.judge_agreement(None, " + QRELS + ", pl.DataFrame({'query_id': ['q1'], "
         "'doc_id': ['d7'], 'relevance': [2]}))",
         E.IdMismatchError,
         "Judge the human sample itself: `sef.judge(human_qrels, judge, queries=..., "
         "docs=...)`, then compare.", "Automatic judges"),
    Case("A report baseline that matches several runs",
         "sef.report(pl.DataFrame({'run': ['run.dl19.bm25', 'run.dl19.bm25-rm3'], "
         "'query_id': 'q1', 'doc_id': 'd1', 'score': 1.0}), " + QRELS + ", "
         "baseline='dl19', figures=False)",
         E.InvalidOptionError,
         "Pass more of the name: a unique part (`'rm3'`), the name shown in the report's "
         "tables (`'bm25'`) or the whole name.", "Comparisons"),
]

# ---------------------------------------------------------------------- issue #22
CASES += [
    Case("Ids with whitespace at either end",
         "sef.evaluate(pl.DataFrame({'query_id': ['q1'], 'doc_id': ['d1 '], 'score': [1.0]}), "
         + QRELS + ", ['P@1'])",
         E.PaddedIdError,
         "Strip the ids (`pl.col('doc_id').str.strip_chars()`); padded ids match no label.",
         "Frames"),
    Case("Two columns that both look like the query id, with different contents",
         "sef.evaluate(pl.DataFrame({'qid': ['q1'], 'topic': ['sports'], 'doc_id': ['d1'], "
         "'score': [1.0]}), " + QRELS + ", ['P@1'])",
         E.AmbiguousColumnError,
         "Say which one it is: `columns={'query_id': 'qid'}`, or drop the other.", "Frames"),
    Case("A pandas frame with two columns of the same name",
         "sef.evaluate(__import__('pandas').DataFrame([['q1', 'd1', 1.0, 2.0]], "
         "columns=['query_id', 'doc_id', 'score', 'score']), " + QRELS + ", ['P@1'])",
         E.AmbiguousColumnError,
         "Rename or drop the copies.", "Frames"),
    Case("Float ids beyond 2**53 (an integer column that went through float64)",
         "sef.evaluate(pl.DataFrame({'query_id': [float(2**53 + 2)], 'doc_id': ['d1'], "
         "'score': [1.0]}), " + QRELS + ", ['P@1'])",
         E.InvalidIdError,
         "Read the ids as strings (`dtype={'qid': str}`) or as Int64.", "Frames"),
    Case("A LazyFrame whose plan fails when collected",
         "sef.evaluate(pl.LazyFrame({'query_id': ['q1'], 'doc_id': ['d1'], 'score': ['high']})"
         ".with_columns(pl.col('score').cast(pl.Float64)), " + QRELS + ", ['P@1'])",
         E.LazyPlanError,
         "Collect it yourself to see the polars error, and fix that step.", "Frames"),
    Case("A misspelt keyword argument (any public function)",
         "sef.pool(" + RUN + ", dept=10)",
         E.UnknownOptionError,
         "Use the suggested name; the message lists the options.", "Options"),
    Case("A measure parameter outside its range",
         "sef.evaluate(" + RUN + ", " + QRELS + ", ['SetF(beta=-1)'])",
         E.MeasureParameterError,
         "Pass a value in the range the message gives (`beta >= 0`; 0 is precision).",
         "Measures"),
    Case("Runs given without qrels to evaluate them against",
         "sef.power(" + RUN + ".with_columns(run=pl.lit('a')), measure='P@1')",
         E.InvalidOptionError,
         "Pass runs, qrels and the measure, or values already evaluated as `per_query=`.",
         "Comparisons"),
    Case("An unknown keyword argument passed through compare",
         "sef.compare(runs=" + RUN + ".with_columns(run=pl.lit('a')), qrels=" + QRELS
         + ", measures='P@1', relevence_level=2)",
         E.UnknownOptionError,
         "Use the suggested name; the message lists the options.", "Options"),
    Case("A run file with CR line ends (or a line break lost)",
         "sef.read_run(f'{tmp}/cr.run')",
         E.FileFormatError,
         "Convert the line ends: `tr '\\r' '\\n' < in.run > out.run`.", "Files"),
    Case("Two result lines joined on one line",
         "sef.read_run(f'{tmp}/joined.run')",
         E.FileFormatError,
         "Put the second result on its own line.", "Files"),
    Case("A UTF-16 file",
         "sef.read_qrels(f'{tmp}/utf16.qrels')",
         E.FileFormatError,
         "Convert it: `iconv -f utf-16 -t utf-8 in > out`.", "Files"),
    Case("A file that cannot be written (its folder is a file, permission denied, ...)",
         "sef.write_qrels({'q1': {'d1': 1}}, f'{tmp}/run.txt/qrels.txt')",
         E.FileAccessError,
         "Write to a path you may write; the message names the target, not a temporary "
         "file.", "Files"),
    Case("A leaderboard of one run",
         "sef.leaderboard(per_query=sef.evaluate(" + RUN + ", " + QRELS + ", ['P@1'], "
         "per_query=True), measure='P@1')",
         E.SearchEvalError,
         "Evaluate several runs together (a `run` column naming each system).", "Comparisons"),
    Case("A leaderboard over several measures at once",
         "sef.leaderboard(per_query=sef.evaluate(" + RUN + ", " + QRELS + ", ['P@1'], "
         "per_query=True), measure=['P@1', 'RR'])",
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
                    E.FileFormatError, E.PaddedIdError, E.AmbiguousColumnError,
                    E.LazyPlanError, E.FileAccessError, E.UnknownOptionError,
                    E.InsufficientDataError, E.LabelConflictError, E.PluginError,
                    E.MeasureParameterError, E.MeasureDefinitionError, E.InvalidIdError,
                    E.UnsupportedInputError, E.UnwritableValueError, E.DatasetError):
            doc = (cls.__doc__ or "").strip().splitlines()[0]
            out.append(f"| `{cls.__name__}` | {doc} |")
        section = None
        first: dict[str, int] = {}  # cases appended later join their section
        for case in sorted(CASES, key=lambda c: first.setdefault(c.section, len(first))):
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
