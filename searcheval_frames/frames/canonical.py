"""Accept any dataframe, give back canonical polars frames.

This is the single place where user input becomes the canonical long frames
that the rest of the package works on:

* run:   ``run`` (str), ``query_id`` (str), ``doc_id`` (str), ``score`` (f64)
  and ``rank`` (i64) when the input had one;
* qrels: ``query_id`` (str), ``doc_id`` (str), ``relevance`` (i64).

Accepted inputs are pandas, polars (eager or lazy), pyarrow and anything else
`narwhals <https://narwhals-dev.github.io/narwhals/>`_ understands, a dict
``{run_name: frame}``, and pytrec_eval-style dicts of dicts
(``{qid: {docid: score}}`` for runs, ``{qid: {docid: relevance}}`` for qrels).
Common column names are recognised (``qid``, ``docno``, ``label``, ``tag`` ...)
and ``columns=`` maps canonical names to the caller's own.

Ids are compared as strings: an integer ``qid`` in one frame and a string
``qid`` in the other still join. Integral float ids (``1.0``, as pandas makes
them after a NaN) become ``"1"``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from ..errors import (
    DuplicateRowsError,
    EmptyInputError,
    InvalidIdError,
    InvalidOptionError,
    InvalidRelevanceError,
    InvalidScoreError,
    MissingColumnError,
    UnsupportedInputError,
    format_rows,
)
from .blocks import (  # noqa: F401
    BAD_SCORE,
    Blocks,
    duplicate_rows,
    has_repeats,
    key_hash,
    query_blocks,
    run_checks,
)
from .checked import checked_blocks
from .hazards import ambiguous_columns, float_ids, nested_hint, padded_ids
from .kinds import Kind, input_kind, is_path, to_native, to_polars  # noqa: F401

__all__ = [
    "ALIASES",
    "QRELS_COLUMNS",
    "RUN_COLUMNS",
    "Kind",
    "input_kind",
    "qrels_frame",
    "run_frame",
    "to_native",
]

RUN_COLUMNS = ("run", "query_id", "doc_id", "score")
QRELS_COLUMNS = ("query_id", "doc_id", "relevance")
DEFAULT_RUN_NAME = "run"

#: Column names recognised for each canonical column (case-insensitive, in
#: order of preference; the canonical name itself always wins).
ALIASES: dict[str, tuple[str, ...]] = {
    "query_id": ("query_id", "qid", "queryid", "query-id", "q_id", "topic", "topic_id",
                 "topicid", "query_no", "question_id"),
    "doc_id": ("doc_id", "docno", "docid", "doc-id", "doc", "document", "document_id",
               "documentid", "pid", "passage_id", "corpus_id", "did"),
    "score": ("score", "sim", "similarity", "retrieval_score", "rank_score"),
    "rank": ("rank", "position", "pos"),
    "run": ("run", "run_name", "run_id", "runid", "system", "system_name", "tag"),
    "relevance": ("relevance", "rel", "label", "judgment", "judgement", "grade", "qrel",
                  "relevance_label", "rating", "gain"),
    # only read by qrels_frame(..., subtopics=True) (diversity measures such as alpha-nDCG)
    "subtopic": ("subtopic", "subtopic_id", "subtopicid", "intent", "intent_id", "aspect"),
}



def find_column(df: pl.DataFrame, names: Sequence[str], exclude: Sequence[str] = ()) -> str | None:
    """The first of ``names`` (lower case, in order of preference) that is a column of
    ``df``, matched case-insensitively; ``exclude`` lists columns already taken."""
    lower = {c.lower(): c for c in reversed(df.columns) if c not in exclude}
    return next((lower[n] for n in names if n in lower), None)


def resolve_columns(
    df: pl.DataFrame,
    wanted: tuple[str, ...],
    optional: tuple[str, ...],
    columns: Mapping[str, str] | None,
    arg: str,
    how_to_fix: str,
) -> dict[str, str]:
    """Map canonical names to the frame's column names."""
    columns = dict(columns or {})
    unknown = set(columns) - set(ALIASES)
    if unknown:
        raise InvalidOptionError(
            f"columns={columns!r}: unknown canonical name(s) {sorted(unknown)}; the keys are "
            f"canonical names {sorted(ALIASES)} and the values your column names. "
            "Example: columns={'query_id': 'topic'}"
        )
    lower = {c.lower(): c for c in reversed(df.columns)}
    found: dict[str, str] = {}
    taken: set[str] = set()
    for canon in wanted + optional:
        if canon in columns:
            user = columns[canon]
            if user not in df.columns:
                raise MissingColumnError(
                    f"{arg}: columns= maps {canon!r} to {user!r}, but there is no such "
                    f"column; the columns are {df.columns}"
                )
            found[canon] = user
            taken.add(user)
            continue
        for alias in ALIASES[canon]:
            col = lower.get(alias)
            if col is not None and col not in taken and col not in columns.values():
                found[canon] = col
                taken.add(col)
                break
    missing = [c for c in wanted if c not in found]
    if missing:
        raise MissingColumnError(
            f"{arg}: no column for {', '.join(repr(m) for m in missing)}; the columns are "
            f"{df.columns}. Recognised names for {missing[0]!r}: "
            f"{', '.join(ALIASES[missing[0]])}. {how_to_fix}"
        )
    ambiguous_columns(df, found, ALIASES, columns, arg)
    return found


def ids_to_str(df: pl.DataFrame, col: str, arg: str, user_col: str) -> pl.DataFrame:
    dtype = df.schema[col]
    if df.get_column(col).null_count():
        nulls = df.filter(pl.col(col).is_null())
        raise InvalidIdError(
            f"{arg}: column {user_col!r} has {nulls.height} missing id(s):\n"
            f"{format_rows(nulls)}\nDrop or fill those rows first."
        )
    if dtype == pl.String:
        return df
    if dtype.is_integer() or dtype in (pl.Categorical, pl.Boolean) or isinstance(dtype, pl.Enum):
        return df.with_columns(pl.col(col).cast(pl.String))
    if dtype.is_float():
        bad = df.filter(~pl.col(col).is_finite() | (pl.col(col) != pl.col(col).floor()))
        if bad.height:
            raise InvalidIdError(
                f"{arg}: column {user_col!r} holds non-integral float ids:\n"
                f"{format_rows(bad)}\nIds must be strings or integers; cast the column."
            )
        float_ids(df, col, arg, user_col)
        return df.with_columns(pl.col(col).cast(pl.Int64).cast(pl.String))
    raise InvalidIdError(
        f"{arg}: column {user_col!r} has type {dtype}; ids must be strings or integers."
        + nested_hint(dtype, user_col)
    )


def _pytrec_dict_to_frame(d: Mapping[Any, Any], value: str, arg: str) -> pl.DataFrame:
    qids: list[str] = []
    dids: list[str] = []
    vals: list[Any] = []
    for qid, docs in d.items():
        if not isinstance(docs, Mapping):
            raise UnsupportedInputError(
                f"{arg}: expected {{query_id: {{doc_id: {value}}}}}, but the value for "
                f"query {qid!r} is a {type(docs).__name__}"
            )
        n = len(docs)
        qids.extend([str(qid)] * n)
        dids.extend(str(k) for k in docs)
        vals.extend(docs.values())
    return pl.DataFrame(
        {"query_id": qids, "doc_id": dids, value: vals},
        schema_overrides={"query_id": pl.String, "doc_id": pl.String},
        strict=False,
    )


def _is_pytrec_dict(obj: Mapping[Any, Any]) -> bool:
    """``{qid: {docid: number}}`` (as opposed to ``{run: frame}`` or ``{run: {qid: {...}}}``)."""
    for v in obj.values():
        if not isinstance(v, Mapping):
            return False
        for inner in v.values():
            return not isinstance(inner, Mapping)
    return True


def check_empty(df: pl.DataFrame, arg: str) -> None:
    if df.height == 0:
        raise EmptyInputError(f"{arg} has no rows; there is nothing to evaluate.")


# --------------------------------------------------------------------------- runs
def run_frame(
    run: Any,
    *,
    columns: Mapping[str, str] | None = None,
    name: str | None = None,
    arg: str = "run",
    validate: bool = True,
) -> pl.DataFrame:
    """Turn a user's run(s) into the canonical run frame.

    Parameters
    ----------
    run
        A frame with query id, doc id and score (or rank) columns, optionally a
        ``run`` column naming the system; a dict ``{run_name: frame}``; or a
        pytrec_eval-style dict ``{query_id: {doc_id: score}}`` (or a dict of those
        keyed by run name).
    columns
        Canonical name → your column name, e.g. ``{"query_id": "topic"}``.
    name
        Run name to use when the input has no ``run`` column (default ``"run"``).
    validate
        Check for duplicate documents and bad scores (on by default).

    Returns
    -------
    polars.DataFrame
        Columns ``run, query_id, doc_id, score`` (+ ``rank`` when given).

    Examples
    --------
    >>> import polars as pl
    >>> from searcheval_frames.frames import run_frame
    >>> run_frame(pl.DataFrame({"qid": [1], "docno": ["d1"], "score": [2.0]})).columns
    ['run', 'query_id', 'doc_id', 'score']
    """
    return run_frame_blocks(run, columns=columns, name=name, arg=arg, validate=validate)[0]


def run_frame_blocks(
    run: Any,
    *,
    columns: Mapping[str, str] | None = None,
    name: str | None = None,
    arg: str = "run",
    validate: bool = True,
) -> tuple[pl.DataFrame, Blocks | None]:
    """:func:`run_frame`, with the run's (run, query) blocks when validation found them."""
    if isinstance(run, Mapping):
        if not run:
            raise EmptyInputError(f"{arg} is an empty dict; there is nothing to evaluate.")
        if _is_pytrec_dict(run):
            df = _pytrec_dict_to_frame(run, "score", arg)
            return run_frame_blocks(df, name=name, arg=arg, validate=validate)
        parts = [
            run_frame(v, columns=columns, name=str(k), arg=f"{arg}[{k!r}]", validate=False)
            .with_columns(pl.lit(str(k)).alias("run"))
            for k, v in run.items()
        ]
        rank_cols = {"rank" in p.columns for p in parts}
        if len(rank_cols) > 1:
            parts = [p.drop("rank", strict=False) for p in parts]
        df = pl.concat(parts, how="vertical_relaxed")
        return df, (_checked_run(df, arg) if validate else None)

    if columns is None and isinstance(run, pl.DataFrame):
        known, blocks = checked_blocks(run)  # read and checked by sef.read_run
        if known:
            return run, (blocks if validate else None)
    df = to_polars(run, arg)
    check_empty(df, arg)
    found = resolve_columns(
        df,
        ("query_id", "doc_id"),
        ("score", "rank", "run"),
        columns,
        arg,
        "Rename the column or pass columns={'query_id': ..., 'doc_id': ..., 'score': ...}.",
    )
    if "score" not in found and "rank" not in found:
        raise MissingColumnError(
            f"{arg}: needs a 'score' or a 'rank' column to order documents; the columns are "
            f"{df.columns}. Pass columns={{'score': 'your_column'}}."
        )
    select = [pl.col(found[c]).alias(c) for c in ("query_id", "doc_id", "score", "rank", "run")
              if c in found]
    df = df.select(select)
    for c in ("query_id", "doc_id"):
        df = ids_to_str(df, c, arg, found[c])
    if "run" in found:
        df = ids_to_str(df, "run", arg, found["run"])
    else:
        df = df.with_columns(pl.lit(name or DEFAULT_RUN_NAME).alias("run"))
    if "rank" in found:
        df = df.with_columns(_numeric(df, "rank", arg, found["rank"], pl.Int64))
    if "score" in found:
        df = df.with_columns(_numeric(df, "score", arg, found["score"], pl.Float64))
    else:
        # rank-only runs (a list of results): a higher rank number is a lower score.
        df = df.with_columns((-pl.col("rank").cast(pl.Float64)).alias("score"))
    cols = ["run", "query_id", "doc_id", "score"] + (["rank"] if "rank" in found else [])
    df = df.select(cols)
    return df, (_checked_run(df, arg, found) if validate else None)


def _checked_run(df: pl.DataFrame, arg: str, found: Mapping[str, str] | None = None
                 ) -> Blocks | None:
    """:func:`validate_run` and the padded-id check (query ids once a block when known)."""
    padded_ids(df, ("doc_id",), arg, found)
    blocks = validate_run(df, arg, found)
    padded_ids(df if blocks is None else blocks.keys, ("query_id",), arg, found)
    return blocks


def _numeric(df: pl.DataFrame, col: str, arg: str, user_col: str, dtype: Any) -> pl.Expr:
    src = df.schema[col]
    if src.is_numeric():
        return pl.col(col).cast(dtype)
    if src == pl.String:
        parsed = df.select(pl.col(col).str.strip_chars().cast(pl.Float64, strict=False))
        bad = df.filter(parsed.to_series().is_null() & pl.col(col).is_not_null())
        if bad.height:
            raise InvalidScoreError(
                f"{arg}: column {user_col!r} has values that are not numbers:\n"
                f"{format_rows(bad)}\nFix or drop those rows."
            )
        return pl.col(col).str.strip_chars().cast(pl.Float64).cast(dtype)
    raise InvalidScoreError(f"{arg}: column {user_col!r} has type {src}; it must be numeric."
                            + nested_hint(src, user_col))


def validate_run(
    df: pl.DataFrame, arg: str, found: Mapping[str, str] | None = None
) -> Blocks | None:
    """Check a canonical run; return its (run, query) blocks when queries are contiguous."""
    found = found or {}
    score_name = found.get("score", "score")
    has_bad, blocks, h = run_checks(df)  # (one fused pass)
    if has_bad:
        bad = df.filter(BAD_SCORE)
        raise InvalidScoreError(
            f"{arg}: column {score_name!r} has {bad.height} missing, NaN or infinite "
            f"value(s):\n{format_rows(bad)}\nEvery retrieved document needs a finite score; "
            "drop those rows or give them a score (trec_eval would order them arbitrarily)."
        )
    if "rank" in df.columns:
        bad = df.filter(pl.col("rank").is_null())
        if bad.height:
            raise InvalidScoreError(
                f"{arg}: column {found.get('rank', 'rank')!r} has missing values:\n"
                f"{format_rows(bad)}\nFill or drop the column."
            )
    key = ["run", "query_id", "doc_id"]
    dup = duplicate_rows(df, key, blocks, h)
    if dup.height:
        raise DuplicateRowsError(
            f"{arg}: {dup.select(key).unique().height} document(s) appear more than once in the "
            f"same query of the same run:\n{format_rows(dup.sort(key))}\n"
            "A ranking lists each document once (trec_eval refuses duplicates). Keep the best "
            "row per document, e.g. df.sort('score', descending=True).unique(['run', "
            "'query_id', 'doc_id'], keep='first'), or give each system its own run name."
        )
    return blocks


# --------------------------------------------------------------------------- qrels
def qrels_frame(
    qrels: Any,
    *,
    columns: Mapping[str, str] | None = None,
    arg: str = "qrels",
    validate: bool = True,
    subtopics: bool = False,
) -> pl.DataFrame:
    """Turn user relevance labels into the canonical qrels frame.

    Parameters
    ----------
    qrels
        A frame with query id, doc id and relevance columns, or a pytrec_eval-style
        dict ``{query_id: {doc_id: relevance}}``.
    columns
        Canonical name → your column name, e.g. ``{"relevance": "grade"}``.
    validate
        Check for duplicates and non-integer labels (on by default).
    subtopics
        Keep a ``subtopic`` column when there is one (judgments per subtopic, for
        diversity measures); a document may then be labelled once per subtopic.

    Returns
    -------
    polars.DataFrame
        Columns ``query_id, doc_id, relevance`` (Int64), plus ``subtopic`` (str) with
        ``subtopics=True``. Negative labels are kept: they mean "judged but unusable",
        as in trec_eval.

    Examples
    --------
    >>> from searcheval_frames.frames import qrels_frame
    >>> qrels_frame({"q1": {"d1": 2}}).row(0)
    ('q1', 'd1', 2)
    """
    if isinstance(qrels, Mapping):
        if not qrels:
            raise EmptyInputError(f"{arg} is an empty dict; there are no relevance labels.")
        if not _is_pytrec_dict(qrels):
            raise UnsupportedInputError(
                f"{arg}: a dict must be {{query_id: {{doc_id: relevance}}}} (pytrec_eval style)"
            )
        df = _pytrec_dict_to_frame(qrels, "relevance", arg)
    else:
        df = to_polars(qrels, arg)
    check_empty(df, arg)
    found = resolve_columns(
        df,
        ("query_id", "doc_id", "relevance"),
        ("subtopic",) if subtopics else (),
        columns,
        arg,
        "Rename the column or pass columns={'query_id': ..., 'doc_id': ..., 'relevance': ...}.",
    )
    cols = QRELS_COLUMNS + (("subtopic",) if "subtopic" in found else ())
    df = df.select(pl.col(found[c]).alias(c) for c in cols)
    for c in cols:
        if c != "relevance":
            df = ids_to_str(df, c, arg, found[c])
    df = df.with_columns(_relevance(df, arg, found["relevance"]))
    if validate:
        padded_ids(df, ("query_id", "doc_id"), arg, found)
        key = ["query_id", "doc_id"] + (["subtopic"] if "subtopic" in found else [])
        dup = duplicate_rows(df, key)
        if dup.height:
            raise DuplicateRowsError(
                f"{arg}: {dup.select(key).unique().height} (query, document) pair(s) are "
                f"labelled more than once:\n{format_rows(dup.sort(key))}\n"
                "Keep one label per pair, e.g. df.group_by(['query_id', 'doc_id'])"
                ".agg(pl.col('relevance').max()), or merge assessors' labels with an "
                "explicit policy."
            )
    return df


def _relevance(df: pl.DataFrame, arg: str, user_col: str) -> pl.Series:
    src = df.schema["relevance"]
    col = pl.col("relevance")
    if src == pl.Boolean or src.is_integer():
        vals = df.select(col.cast(pl.Int64, strict=False))
    elif src.is_float():
        vals = df.select(pl.when(col.is_finite() & (col == col.floor())).then(col).cast(pl.Int64))
    elif src == pl.String:
        s = col.str.strip_chars()
        vals = df.select(
            pl.when(s.str.contains(r"^[+-]?\d+(\.0*)?$")).then(s.cast(pl.Float64, strict=False))
            .cast(pl.Int64)
        )
    else:
        raise InvalidRelevanceError(
            f"{arg}: column {user_col!r} has type {src}; relevance must be integers "
            "(0 = not relevant, 1, 2, ... graded; negative = judged but unusable)."
            + nested_hint(src, user_col)
        )
    bad = df.filter(vals.to_series().is_null())
    if bad.height:
        raise InvalidRelevanceError(
            f"{arg}: column {user_col!r} has {bad.height} value(s) that are not integers:\n"
            f"{format_rows(bad)}\nRelevance labels must be whole numbers (0 = not relevant, "
            "1, 2, ... graded); map text labels to numbers first."
        )
    return vals.to_series().alias("relevance")
