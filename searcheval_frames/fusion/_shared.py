"""What :func:`~searcheval_frames.fusion.fuse` and :func:`~searcheval_frames.fusion.optimize_fusion`
share (private module): the method and norm names, option checks, the runs as one
canonical frame, and the columnar fusion itself (prepare → combine → finish).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from .._deprecation import outside_stacklevel
from .._exact import true_divide
from ..errors import (
    DuplicateRowsError,
    EmptyInputError,
    InsufficientDataError,
    SearchEvalWarning,
    format_rows,
)
from ..frames import RUN_COLUMNS, input_kind, is_path, run_frame, run_frame_blocks
from ..options import check_choice, option_error
from .parts import out_of_order

__all__ = [
    "BLOCK", "EPS", "METHODS", "METHOD_ALIASES", "NORMS", "NORM_ALIASES", "RANK_METHODS",
    "SCORE_METHODS", "check_method", "check_name", "check_norm", "check_weights", "combine",
    "finish", "max_warning", "prepare", "run_names", "runs_frame",
]

#: fusion methods that use the ranks only
RANK_METHODS = ("rrf", "borda", "isr", "logisr")
#: fusion methods that combine (normalised) scores
SCORE_METHODS = ("combsum", "combmnz", "combmax", "combmin", "combmed", "combanz", "wsum")
METHODS = RANK_METHODS + SCORE_METHODS
#: score normalisations (per run and query); ``None`` keeps the scores
NORMS = ("min-max", "max", "sum", "zmuv", "rank", "borda")
#: ranx's and other common spellings -> our names
METHOD_ALIASES = {
    "sum": "combsum", "comb_sum": "combsum", "mnz": "combmnz", "comb_mnz": "combmnz",
    "max": "combmax", "comb_max": "combmax", "min": "combmin", "comb_min": "combmin",
    "med": "combmed", "comb_med": "combmed", "anz": "combanz", "comb_anz": "combanz",
    "bordafuse": "borda", "log_isr": "logisr", "weighted_sum": "wsum",
}
NORM_ALIASES = {"none": None, "min_max": "min-max", "minmax": "min-max",
                "z-score": "zmuv", "zscore": "zmuv", "z_score": "zmuv"}
#: ranx's guard against dividing by zero (a smaller denominator is replaced by it)
EPS = 1e-9
BLOCK = ["_r", "query_id"]


# --------------------------------------------------------------------------- options
def check_method(func: str, method: Any) -> str:
    if isinstance(method, str):
        method = METHOD_ALIASES.get(method.lower(), method.lower())
    return check_choice(func, "method", method, METHODS, example="method='rrf'")


def check_norm(func: str, norm: Any, method: str) -> str | None:
    if isinstance(norm, str):
        norm = NORM_ALIASES.get(norm.lower(), norm.lower())
    if norm is None:
        return None
    norm = check_choice(func, "norm", norm, NORMS, example="norm='min-max'")
    if method in RANK_METHODS:
        raise option_error(
            func, "norm", norm,
            f"must be None for method={method!r}, which uses ranks only (every normalisation "
            "keeps each run's order); normalisations apply to the score methods "
            f"{', '.join(SCORE_METHODS)}", f"fuse(runs, method='combsum', norm={norm!r})",
        )
    return norm


def check_name(func: str, name: Any) -> str | None:
    if name is None:
        return None
    if not isinstance(name, str) or not name or any(c.isspace() for c in name):
        raise option_error(func, "name", name, "must be a non-empty string without spaces (it is "
                    "the run tag of the fused run), or None", "name='hybrid'")
    return name


def check_weights(func: str, weights: Any, names: list[str], method: str) -> list[float] | None:
    """Weights in run order, or None (the method's default)."""
    if weights is None:
        return None
    if method not in ("wsum", "rrf"):
        raise option_error(func, "weights", weights, f"are used by method='wsum' and 'rrf' only, not "
                    f"{method!r}; pass weights=None", "fuse(runs, method='wsum', weights=[0.7, 0.3])")
    example = "weights={" + ", ".join(f"{n!r}: 0.5" for n in names[:2]) + "}"
    if isinstance(weights, Mapping):
        if set(weights) != set(names):
            raise option_error(func, "weights", weights, f"must have one weight per run, keyed by run "
                        f"name ({', '.join(map(repr, names))})", example)
        values = [weights[n] for n in names]
    elif isinstance(weights, Sequence) and not isinstance(weights, str):
        values = list(weights)
        if len(values) != len(names):
            raise option_error(func, "weights", weights, f"must have {len(names)} weights, one per run "
                        f"in order ({', '.join(map(repr, names))})", example)
    else:
        raise option_error(func, "weights", weights, "must be a list of numbers (one per run, in order) "
                    "or a dict {run_name: weight}", example)
    ok = all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
             and v >= 0 for v in values)
    if not ok or not any(v > 0 for v in values):
        raise option_error(func, "weights", weights, "must be finite numbers >= 0, not all 0", example)
    return [float(v) for v in values]


# --------------------------------------------------------------------------- input
def runs_frame(runs: Any, columns: Mapping[str, str] | None) -> tuple[pl.DataFrame, Any]:
    """The canonical long frame of all runs (``run, query_id, doc_id, score``) and its kind."""
    if is_path(runs):
        from .. import io

        return io.read_runs(runs, rank=False)[0].select(RUN_COLUMNS), input_kind(runs)
    if isinstance(runs, list | tuple):
        if not runs:
            raise EmptyInputError("fuse: runs is an empty list; pass two runs or more.")
        parts: list[Any] = []
        where: dict[str, Any] = {}
        for i, item in enumerate(runs):
            if is_path(item):
                from .. import io

                part = io.read_runs(item, rank=False)[0]
            else:
                part = run_frame(item, columns=columns, name=f"run{i + 1}", arg=f"runs[{i}]")
            part = part.select(RUN_COLUMNS)
            for nm in part.get_column("run").unique(maintain_order=True).to_list():
                if nm in where:
                    raise DuplicateRowsError(
                        f"fuse: runs[{where[nm]}] and runs[{i}] both hold a run named {nm!r}; "
                        "they would mix into one. Pass a dict {name: frame} to name each run, "
                        "or give the frames distinct 'run' columns."
                    )
                where[nm] = i
            parts.append(part)
        native = next((r for r in runs if not is_path(r)), None)
        kind = input_kind(native) if native is not None else input_kind("x")
        return pl.concat(parts, how="vertical_relaxed"), kind
    return run_frame_blocks(runs, columns=columns, arg="runs")[0].select(RUN_COLUMNS), input_kind(runs)


def run_names(df: pl.DataFrame) -> list[str]:
    names = df.get_column("run").unique(maintain_order=True).to_list()
    if len(names) < 2:
        raise InsufficientDataError(
            f"fuse: needs two runs or more, got one ({names[0]!r}). Pass a long frame whose "
            "'run' column names each system, a dict {name: frame}, or a list of frames/files."
        )
    return names


# --------------------------------------------------------------------------- preparation
def _trec_order(df: pl.DataFrame, sort: bool | None = None) -> pl.DataFrame:
    """Rows of each (run, query) together, in trec_eval order, with ``_b`` (block id),
    ``rank`` (1-based) and ``n`` (documents of the run for the query).

    Frames already laid out so (TREC files, most frames) are only checked, not sorted.
    ``sort`` forces the decision (a part of a large input follows the whole frame's).
    """
    if sort is None:
        sort = out_of_order(df, "_r")
    if sort:
        df = df.sort([*BLOCK, "score", "doc_id"], descending=[False, False, True, True])
    new = ~((pl.col("_r") == pl.col("_r").shift(1))
            & (pl.col("query_id") == pl.col("query_id").shift(1))).fill_null(False)
    row = pl.int_range(pl.len(), dtype=pl.Int64)
    df = df.with_columns(new.cum_sum().cast(pl.Int64).alias("_b"),
                         pl.when(new).then(row).forward_fill().alias("_start"))
    return df.with_columns(
        (pl.int_range(pl.len(), dtype=pl.Int64) - pl.col("_start") + 1).alias("rank"),
        pl.len().over("_b").cast(pl.Int64).alias("n"),
    ).drop("_start")


def max_warning(pairs: int, shown: pl.DataFrame, total: int) -> str:
    """The message for (run, query) pairs whose highest score is <= 0 under norm='max'."""
    rows = format_rows(shown.head(3))
    if total > 3:
        rows += f"\n    ... and {total - 3} more"
    return (f"fuse(norm='max'): {pairs} (run, query) pair(s) have a highest score <= 0, so "
            "the scores are divided by 1e-9 (as ranx does) and dwarf the other runs':\n"
            f"{rows}\nUse norm='min-max' or 'zmuv' for scores that can be negative.")


def _normalise(df: pl.DataFrame, norm: str | None, names: list[str],
               found: list[tuple[int, pl.DataFrame, int]] | None = None) -> pl.DataFrame:
    """``v``: the score normalised per (run, query), as ranx defines each norm.

    With ``found`` (a list), the pairs that norm='max' warns about are appended to it as
    ``(pairs, first rows, rows)`` instead of warned about (a part of a large input).
    """
    s = pl.col("score")
    by = "_b"
    if norm is None:
        return df.with_columns(s.alias("v"))
    if norm == "min-max":
        mn, mx = s.min().over(by), s.max().over(by)
        v = true_divide(s - mn, pl.max_horizontal(mx - mn, pl.lit(EPS)))
    elif norm == "max":
        mx = s.max().over(by)
        low = df.filter(mx <= 0)
        if low.height:
            shown = low.select(pl.col("_r").replace_strict(list(range(len(names))), names)
                               .alias("run"), "query_id", "doc_id", "score")
            pairs = low.select("_b").n_unique()
            if found is not None:
                found.append((pairs, shown.head(3), shown.height))
            else:
                warnings.warn(max_warning(pairs, shown, shown.height), SearchEvalWarning,
                              stacklevel=outside_stacklevel())
        v = true_divide(s, pl.max_horizontal(mx, pl.lit(EPS)))
    elif norm == "sum":
        mn = s.min().over(by)
        v = true_divide(s - mn, pl.max_horizontal(s.sum().over(by) - mn * pl.col("n"), pl.lit(EPS)))
    elif norm == "zmuv":
        # all-equal scores give exactly 0 (the mean of equal floats can be off by an ulp,
        # which ranx then divides by 1e-9)
        v = (pl.when(s.max().over(by) == s.min().over(by)).then(0.0)
             .otherwise(true_divide(s - s.mean().over(by),
                               pl.max_horizontal(s.std(ddof=0).over(by), pl.lit(EPS)))))
    elif norm == "rank":
        v = 1.0 - true_divide(pl.col("rank") - 1, pl.col("n"))
    else:  # borda: every candidate of the query gets a value in every run
        return _borda_norm(df, names)
    return df.with_columns(v.cast(pl.Float64).alias("v"))


def _candidates(df: pl.DataFrame) -> pl.DataFrame:
    """``query_id, C``: documents of each query retrieved by any run."""
    return df.group_by("query_id").agg(pl.col("doc_id").n_unique().cast(pl.Int64).alias("C"))


def _borda_norm(df: pl.DataFrame, names: list[str]) -> pl.DataFrame:
    """ranx's ``borda`` norm: ``1 - (r-1)/C`` for retrieved documents, and
    ``0.5 - (n-1)/(2C)`` for a candidate the run lacks (rows are added for those)."""
    cand = df.select("query_id", "doc_id").unique()
    count = _candidates(df)
    n = df.group_by(BLOCK).agg(pl.col("n").first())
    full = (
        pl.DataFrame({"_r": range(len(names))}, schema={"_r": pl.UInt32})
        .join(cand, how="cross")
        .join(df.select(*BLOCK, "doc_id", "rank"), on=[*BLOCK, "doc_id"], how="left")
        .join(n, on=BLOCK, how="left")
        .join(count, on="query_id", how="left")
        .with_columns(pl.col("n").fill_null(0))
    )
    v = (pl.when(pl.col("rank").is_not_null())
         .then(1.0 - true_divide(pl.col("rank") - 1, pl.col("C")))
         .otherwise(0.5 - true_divide(pl.col("n") - 1, 2 * pl.col("C"))))
    return full.select(*BLOCK, "doc_id", v.cast(pl.Float64).alias("v"))


def prepare(df: pl.DataFrame, names: list[str], method: str, norm: str | None,
             sort: bool | None = None,
             low: list[tuple[int, pl.DataFrame, int]] | None = None) -> pl.DataFrame:
    """Per-row values that :func:`combine` adds up: ``_r, query_id, doc_id`` and ``v``
    (normalised score) or ``rank``/``n`` (rank methods). ``sort`` and ``low``: see
    :func:`_trec_order` and :func:`_normalise` (``found``)."""
    df = df.with_columns(
        pl.col("run").replace_strict(names, list(range(len(names))), return_dtype=pl.UInt32)
        .alias("_r")
    ).drop("run")
    df = _trec_order(df, sort)
    if method in RANK_METHODS:
        return df.select(*BLOCK, "doc_id", "rank", "n")
    return _normalise(df, norm, names, low).select(*BLOCK, "doc_id", "v")


# --------------------------------------------------------------------------- fusion
def _weight(weights: list[float]) -> pl.Expr:
    return pl.col("_r").replace_strict(list(range(len(weights))), weights,
                                       return_dtype=pl.Float64)


def combine(
    prep: pl.DataFrame, method: str, n_runs: int, weights: list[float] | None, k: float
) -> pl.DataFrame:
    """``query_id, doc_id, score``: one group-by over (query, document)."""
    v, cnt = pl.col("v"), pl.len().cast(pl.Float64)
    inv_sq = 1.0 / (pl.col("rank").cast(pl.Float64) ** 2)
    if method == "borda":
        return _borda(prep, n_runs)
    if method == "rrf":
        term = 1.0 / (k + pl.col("rank").cast(pl.Float64))
        agg = (term * _weight(weights) if weights else term).sum()
    elif method == "isr":
        agg = inv_sq.sum() * cnt
    elif method == "logisr":
        agg = inv_sq.sum() * cnt.log()
    elif method == "wsum":
        agg = (v * _weight(weights or [1.0 / n_runs] * n_runs)).sum()
    elif method == "combsum":
        agg = v.sum()
    elif method == "combmnz":
        agg = v.sum() * cnt
    elif method == "combmax":
        agg = v.max()
    elif method == "combmin":
        agg = v.min()
    elif method == "combmed":
        agg = v.median()
    else:  # combanz
        agg = v.mean()
    return prep.group_by("query_id", "doc_id").agg(agg.cast(pl.Float64).alias("score"))


def _borda(prep: pl.DataFrame, n_runs: int) -> pl.DataFrame:
    """BordaFuse without materialising the missing (run, document) pairs.

    Every run gives a document it lacks ``u_i = (C - n_i + 1) / 2`` points, so the
    total is ``U_q + sum_{i in R_d} (C - r_i + 1 - u_i)`` with ``U_q = sum_i u_i`` over
    all runs (``n_i = 0`` for a run without the query).
    """
    count = _candidates(prep)
    per_run = prep.group_by(BLOCK).agg(pl.col("n").first()).join(count, on="query_id")
    unranked = (pl.col("C") - pl.col("n") + 1) / 2
    u_q = (
        per_run.group_by("query_id")
        .agg(unranked.sum().alias("_u"), pl.len().alias("_k"), pl.col("C").first())
        # runs that lack the query give (C + 1) / 2 each
        .select("query_id", pl.col("_u") + (n_runs - pl.col("_k")) * (pl.col("C") + 1) / 2)
    )
    return (
        prep.join(count, on="query_id")
        .group_by("query_id", "doc_id")
        .agg((pl.col("C") - pl.col("rank") + 1 - unranked).sum().alias("_p"))
        .join(u_q, on="query_id")
        .select("query_id", "doc_id",
                (pl.col("_p") + pl.col("_u")).cast(pl.Float64).alias("score"))
    )


def finish(out: pl.DataFrame, depth: int | None, name: str) -> pl.DataFrame:
    out = out.sort(["query_id", "score", "doc_id"], descending=[False, True, True])
    if depth is not None:
        out = out.filter(pl.int_range(pl.len()).over("query_id") < depth)
    return out.select(pl.lit(name).alias("run"), "query_id", "doc_id", "score")
