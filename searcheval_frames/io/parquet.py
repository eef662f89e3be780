"""Parquet runs, the fast way: polars' reader and the in-memory checks, one pass each.

A Parquet run is already typed (string ids, float scores), so it needs no text
parsing: :func:`fast_parquet_run` reads it with polars (multi-threaded; the
UTF-8 of its strings is validated by the reader), checks it with one fused
pass (missing or blank ids, scores that are not finite, missing ranks) and
one duplicate check by query blocks, and returns it with those blocks.

It returns None whenever the file is not plainly clean: polars cannot read it
(then pyarrow's reader gives the error), a column has an unexpected type, or a
check fails. The caller then takes the exact path of :mod:`.tables`, which names
the file, the rows and a fix, as for every other table format. So the fast path
changes speed only, never a result or an error.

``sef.read_run(path)`` and ``sef.evaluate(path, ...)`` both come here, so the two
ways of evaluating a Parquet run cost the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import polars as pl

from .. import frames
from .tables import found_columns


def fast_parquet_run(
    path: Path, columns: Mapping[str, str] | None
) -> tuple[pl.DataFrame, frames.Blocks | None] | None:
    """``query_id, doc_id, score[, rank][, tag]`` and the (tag, query) blocks of a clean
    Parquet run, or None for the exact path (see the module docstring).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.parquet"
    >>> pl.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "score": [2.0, 1.0]}
    ...              ).write_parquet(p)
    >>> df, blocks = fast_parquet_run(p, None)
    >>> df.columns, blocks.starts.tolist()
    (['query_id', 'doc_id', 'score'], [0])
    """
    try:
        df = pl.read_parquet(path)
    except (pl.exceptions.PolarsError, pl.exceptions.PanicException, OSError, ValueError):
        return None  # (pyarrow's reader, on the exact path, says what is wrong)
    if df.height == 0:
        return None
    found = found_columns(df, path, "parquet", "run", columns)
    schema = df.schema
    ids = [c for c in ("query_id", "doc_id", "run") if c in found]
    if "score" not in found or not schema[found["score"]].is_numeric() or any(
        not (schema[found[c]] == pl.String or schema[found[c]].is_integer()) for c in ids
    ) or ("rank" in found and not schema[found["rank"]].is_integer()):
        return None  # float ids, text scores, rank-only runs: the exact path converts them
    out = df.select(
        *[pl.col(found[c]).cast(pl.String).alias("tag" if c == "run" else c) for c in ids],
        pl.col(found["score"]).cast(pl.Float64).alias("score"),
        *([pl.col(found["rank"]).cast(pl.Int64).alias("rank")] if "rank" in found else []),
    )
    del df
    names = ["tag" if c == "run" else c for c in ids]
    bad = [pl.col(c).is_null().any() for c in names]
    if "rank" in out.columns:
        bad.append(pl.col("rank").is_null().any())
    # a blank id (empty or only whitespace) starts with a byte below "!" or a non-ASCII
    # character: only such ids need the exact (slow) test
    odd = (pl.col("doc_id") < "!") | (pl.col("doc_id") >= "\u0080")
    flags = out.select(pl.any_horizontal(bad).alias("bad"), odd.any().alias("odd")).row(0)
    if flags[0] or (flags[1] and _blank(out.filter(odd), ["doc_id"])):
        return None
    bad_score, blocks, h = frames.run_checks(out, ("tag", "query_id", "doc_id"))
    # every query id and tag is the key of a block: testing the keys tests them all
    ids_left = [c for c in names if c != "doc_id"]
    if bad_score or _blank(blocks.keys if blocks is not None else out, ids_left):
        return None
    if frames.has_repeats(h, blocks):
        return None  # (a duplicate, or rarely two keys sharing a 64-bit hash)
    return out, blocks


def _blank(df: pl.DataFrame, cols: list[str]) -> bool:
    """Whether an id in ``cols`` is empty or only whitespace (the exact path's test)."""
    return bool(cols) and bool(df.select(
        pl.any_horizontal((pl.col(c).str.strip_chars() == "").any() for c in cols)).item())
