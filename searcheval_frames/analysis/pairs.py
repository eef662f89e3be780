"""The input of :func:`~searcheval_frames.compare`, resolved and paired query by query.

* :func:`resolve_input`: what the input is (runs + qrels, or per-query values), decided
  in this one place; :func:`load_input`: that input as the polars per-query frame
  ``run, query_id, measure, value`` (runs evaluated first), validated, with the
  measures chosen (:func:`load`: the same from the leaderboard's arguments).
* :func:`choose_baselines`: the baseline run(s).
* :func:`run_pairs`: which (run, baseline) pairs are tested, and the display order.
* :func:`pair_queries`: the (measure, query) x run grid, completed by the
  missing-query policy (``zero``, ``skip`` or ``error``; see
  :mod:`searcheval_frames.analysis.compare`).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import polars as pl

from .._deprecation import outside_stacklevel
from ..errors import (
    DuplicateRowsError,
    EmptyInputError,
    IdMismatchError,
    InsufficientDataError,
    InvalidOptionError,
    InvalidScoreError,
    MissingColumnError,
    SearchEvalWarning,
    UnknownMeasureError,
    format_rows,
)
from ..frames import ALIASES, Kind, input_kind

__all__ = ["CompareInput", "choose_baselines", "load", "load_input", "pair_queries",
           "resolve_input", "run_pairs"]

_PQ_ALIASES: dict[str, tuple[str, ...]] = {
    "run": ALIASES["run"],
    "query_id": ALIASES["query_id"],
    "measure": ("measure", "metric", "measure_name", "metric_name"),
    "value": ("value", "score", "val", "result"),
}



def _resolve(df: pl.DataFrame, columns: Mapping[str, str] | None) -> pl.DataFrame:
    columns = dict(columns or {})
    unknown = set(columns) - set(_PQ_ALIASES)
    if unknown:
        raise InvalidOptionError(
            f"columns=: unknown name(s) {sorted(unknown)}; the keys are {sorted(_PQ_ALIASES)} "
            "and the values your column names, e.g. columns={'measure': 'metric'}"
        )
    lower = {c.lower(): c for c in reversed(df.columns)}
    found: dict[str, str] = {}
    for canon, aliases in _PQ_ALIASES.items():
        if canon in columns:
            if columns[canon] not in df.columns:
                raise MissingColumnError(
                    f"per_query: columns= maps {canon!r} to {columns[canon]!r}, but there is no "
                    f"such column; the columns are {df.columns}"
                )
            found[canon] = columns[canon]
            continue
        for alias in aliases:
            col = lower.get(alias)
            if col is not None and col not in found.values():
                found[canon] = col
                break
    missing = [c for c in _PQ_ALIASES if c not in found]
    if missing:
        raise MissingColumnError(
            f"per_query: no column for {', '.join(repr(m) for m in missing)}; the columns are "
            f"{df.columns}. compare() needs the long per-query frame of "
            "evaluate(..., per_query=True) with columns run, query_id, measure, value; pass "
            "columns={'value': 'your_column'} to map yours, or pass runs with qrels= and "
            "measures= to evaluate them first."
        )
    out = df.select(
        pl.col(found["run"]).alias("run"),
        pl.col(found["query_id"]).alias("query_id"),
        pl.col(found["measure"]).alias("measure"),
        pl.col(found["value"]).alias("value"),
    )
    for col in ("run", "query_id", "measure"):
        if out.schema[col] != pl.String:
            out = out.with_columns(pl.col(col).cast(pl.String))
        nulls = out.filter(pl.col(col).is_null())
        if nulls.height:
            raise IdMismatchError(
                f"per_query: column {found[col]!r} has {nulls.height} missing value(s):\n"
                f"{format_rows(nulls)}\nDrop or fill those rows first."
            )
    if not out.schema["value"].is_numeric():
        raise InvalidScoreError(
            f"per_query: column {found['value']!r} has type {out.schema['value']}; the "
            "per-query values must be numbers."
        )
    out = out.with_columns(pl.col("value").cast(pl.Float64))
    bad = out.filter(pl.col("value").is_null() | ~pl.col("value").is_finite())
    if bad.height:
        raise InvalidScoreError(
            f"per_query: column {found['value']!r} has {bad.height} null, NaN or infinite "
            f"value(s):\n{format_rows(bad)}\nA per-query score must be a number; drop those "
            "rows (and choose missing='zero' or 'skip' for the gaps) or fill them."
        )
    dup = out.filter(pl.struct("run", "query_id", "measure").is_duplicated())
    if dup.height:
        raise DuplicateRowsError(
            f"per_query: {dup.height} rows repeat the same (run, query_id, measure):\n"
            f"{format_rows(dup.sort('run', 'query_id', 'measure'))}\nEach run must have one "
            "value per query and measure; deduplicate or aggregate first."
        )
    return out


def per_query_input(obj: Any, columns: Mapping[str, str] | None) -> pl.DataFrame:
    from ..frames import to_polars

    if isinstance(obj, Mapping) and obj and all(not isinstance(v, Mapping) for v in obj.values()):
        parts = []
        for name, frame in obj.items():
            df = to_polars(frame, f"per_query[{name!r}]")
            has_run = any(c.lower() in _PQ_ALIASES["run"] for c in df.columns) or (
                columns and "run" in columns
            )
            if not has_run:
                df = df.with_columns(pl.lit(str(name)).alias("run"))
            parts.append(_resolve(df, columns))
        df = pl.concat(parts, how="vertical")
    else:
        df = _resolve(to_polars(obj, "per_query"), columns)
    if df.height == 0:
        raise EmptyInputError("per_query: the frame has no rows")
    return df


def select_measures(pq: pl.DataFrame, measures: Any) -> tuple[pl.DataFrame, list[str]]:
    present = pq.get_column("measure").unique(maintain_order=True).to_list()
    if measures is None:
        return pq, present
    wanted = [measures] if isinstance(measures, str) else [str(m) for m in measures]
    canon_present: dict[str, str] = {}
    try:
        from ..measures import parse_measure

        for name in present:
            with contextlib.suppress(Exception):
                canon_present.setdefault(parse_measure(name).name, name)
    except ImportError:  # pragma: no cover - core not installed
        parse_measure = None  # type: ignore[assignment]
    chosen: list[str] = []
    for name in wanted:
        if name in present:
            chosen.append(name)
            continue
        hit = None
        if parse_measure is not None:
            try:
                hit = canon_present.get(parse_measure(name).name)
            except Exception:
                hit = None
        if hit is None:
            raise UnknownMeasureError(
                f"measures=: {name!r} is not in the per-query frame; its measures are {present}"
            )
        chosen.append(hit)
    chosen = list(dict.fromkeys(chosen))
    return pq.filter(pl.col("measure").is_in(chosen)), chosen


def run_pairs(
    runs: list[str], baselines: list[str], mode: str
) -> tuple[list[tuple[str, str]], list[str]]:
    order = baselines + [r for r in runs if r not in baselines]
    out: list[tuple[str, str]] = []
    if mode == "all":
        for j in range(len(order)):
            for i in range(j):
                out.append((order[j], order[i]))
        return out, order
    seen: set[frozenset[str]] = set()
    for b in baselines:
        for r in order:
            key = frozenset((r, b))
            if r != b and key not in seen:
                seen.add(key)
                out.append((r, b))
    return out, order


def pair_queries(
    pq: pl.DataFrame, runs: list[str], missing: str
) -> pl.DataFrame:
    """Complete the (measure, query) x run grid following the missing-query policy."""
    pq = pq.filter(pl.col("run").is_in(runs))
    grid = (
        pq.select("measure", "query_id")
        .unique(maintain_order=True)
        .join(pl.DataFrame({"run": runs}, schema={"run": pl.String}), how="cross")
    )
    full = grid.join(pq, on=["measure", "query_id", "run"], how="left")
    gaps = full.filter(pl.col("value").is_null()).select("run", "query_id", "measure")
    if gaps.height == 0:
        return full
    queries = gaps.get_column("query_id").unique(maintain_order=True).to_list()
    shown = ", ".join(repr(q) for q in queries[:10]) + (" ..." if len(queries) > 10 else "")
    if missing == "error":
        raise IdMismatchError(
            f"per_query: {gaps.height} (run, query, measure) value(s) are missing for a "
            f"query that another compared run has, e.g.:\n{format_rows(gaps)}\n"
            "Paired tests need every query in every run. Pass missing='zero' to score the "
            "missing queries 0 (trec_eval -c) or missing='skip' to drop them from all runs."
        )
    if missing == "zero":
        warnings.warn(
            f"compare: {gaps.height} per-query value(s) missing in some runs (queries "
            f"{shown}); they score 0 (missing='zero', like trec_eval -c). Pass "
            "missing='skip' to drop those queries from all runs instead.",
            SearchEvalWarning,
            stacklevel=outside_stacklevel(),
        )
        return full.with_columns(pl.col("value").fill_null(0.0))
    warnings.warn(
        f"compare: dropping {len(queries)} query(ies) missing in some runs from all runs "
        f"(missing='skip'): {shown}. Pass missing='zero' to score them 0 instead.",
        SearchEvalWarning,
        stacklevel=outside_stacklevel(),
    )
    drop = gaps.select("measure", "query_id").unique()
    return full.join(drop, on=["measure", "query_id"], how="anti")


@dataclass(frozen=True)
class CompareInput:
    """What :func:`~searcheval_frames.compare` was given, decided once: ``runs`` to
    evaluate against ``qrels``, or precomputed ``per_query`` values."""

    kind: Literal["runs", "per_query"]
    data: Any
    qrels: Any = None


def resolve_input(runs: Any, qrels: Any, per_query: Any, func: str = "compare"
                  ) -> CompareInput:
    """The one place that decides what ``func``'s inputs are (the calling convention of
    issue #31): ``per_query=`` (precomputed values; nothing else may hold data), or runs
    and qrels, evaluated first."""
    example = f"{func}(runs, qrels, ['nDCG@10'], baseline='bm25')"
    if per_query is not None:
        if runs is not None or qrels is not None:
            raise InvalidOptionError(
                f"{func}: per_query= holds values already evaluated, so runs and qrels have "
                f"no use; pass one or the other, e.g. {func}(per_query=pq, baseline='bm25') "
                f"or {example}")
        return CompareInput("per_query", per_query)
    if runs is None or qrels is None:
        raise InvalidOptionError(
            f"{func}: pass runs and qrels (and the measures) to evaluate, e.g. {example}, or "
            f"per-query values as {func}(per_query=pq, baseline='bm25')")
    return CompareInput("runs", runs, qrels)


def load(
    per_query: Any,
    *,
    runs: Any,
    qrels: Any,
    measures: str | Sequence[str] | None,
    columns: Mapping[str, str] | None,
    missing: str,
    evaluate_options: Mapping[str, Any],
    func: str = "compare",
) -> tuple[pl.DataFrame, list[str], Kind]:
    """:func:`load_input` of :func:`resolve_input`'s inputs."""
    return load_input(resolve_input(runs, qrels, per_query, func), measures=measures,
                      columns=columns, missing=missing, evaluate_options=evaluate_options,
                      func=func)


def load_input(
    inp: CompareInput,
    *,
    measures: str | Sequence[str] | None,
    columns: Mapping[str, str] | None,
    missing: str,
    evaluate_options: Mapping[str, Any],
    func: str = "compare",
) -> tuple[pl.DataFrame, list[str], Kind]:
    """The per-query frame to compare, its measures and the caller's frame kind.

    Runs (``inp.kind == "runs"``) are evaluated on ``measures`` first; per-query values
    are the long frame ``run, query_id, measure, value`` (or ``{run: frame}``).
    """
    kind = input_kind(inp.data)
    if inp.kind == "runs":
        if measures is None:
            raise InvalidOptionError(
                f"{func}: with runs and qrels, pass the measures to evaluate, e.g. "
                f"{func}(runs, qrels, ['P@5', 'nDCG@10'])")
        from ..core.evaluate import evaluate

        ev = evaluate(
            inp.data,
            inp.qrels,
            [measures] if isinstance(measures, str) else list(measures),
            per_query=True,
            missing="skip" if missing == "error" else missing,  # type: ignore[arg-type]
            columns=columns,
            **evaluate_options,
        )
        return (*select_measures(per_query_input(ev, None), None), kind)
    if evaluate_options:
        raise InvalidOptionError(
            f"{func}: unexpected argument(s) {sorted(evaluate_options)}; evaluation "
            "options apply only to runs and qrels")
    return (*select_measures(per_query_input(inp.data, columns), measures), kind)


def choose_baselines(all_runs: list[str], baseline: str | Sequence[str] | None, *,
                     warn: bool = True, func: str = "compare") -> list[str]:
    """The baseline run(s): ``baseline`` (a name or names) or, with a warning naming it
    when there is a choice (``warn``), the first run."""
    if baseline is None:
        baselines = [all_runs[0]]
        if warn and len(all_runs) > 1:
            others = ", ".join(repr(r) for r in all_runs[1:4])
            warnings.warn(
                f"{func}: no baseline= given; using {all_runs[0]!r}, the first run in the "
                f"input's order (the others: {others}{' ...' if len(all_runs) > 4 else ''})."
                f" Pass baseline={all_runs[0]!r} to keep it, or the name of the run the "
                "others should be compared with.", SearchEvalWarning,
                stacklevel=outside_stacklevel())
    elif isinstance(baseline, str):
        baselines = [baseline]
    else:
        baselines = list(dict.fromkeys(str(b) for b in baseline))
    unknown = [b for b in baselines if b not in all_runs]
    if unknown:
        raise InvalidOptionError(
            f"baseline={unknown[0]!r} is not a run of the per-query frame; the runs are "
            f"{all_runs}"
        )
    if len(all_runs) < 2:
        raise InsufficientDataError(
            f"compare: need at least two runs to compare; the frame has {all_runs}"
        )
    return baselines
