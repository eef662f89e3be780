"""trec_eval's ``-Z``: per-query values as z-scores against a file of per-topic means.

The file has one line per (query, measure): ``qid measure mean stddev``. Each per-query
value becomes ``(value - mean) / stddev``; when the file lacks the query or the measure, or
``stddev`` is 0 and the value differs from the mean, trec_eval uses -1000000 (its
``MISSING_ZSCORE_VALUE``), and so do we, so that the summary shows the gap. Summaries are
then taken over the z-scores as usual: means, sums for the counts, and for ``gm_map`` /
``gm_bpref`` the exponential of the mean z-score of log(max(value, 1e-5)). ``num_q`` stays
the number of queries. Output lines carry trec_eval's ``Z`` prefix and four decimals.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl

from ..errors import FileFormatError
from .trec_eval import MeasureRequest

__all__ = ["MISSING_ZSCORE", "apply_zscores", "read_zscores"]

#: trec_eval's MISSING_ZSCORE_VALUE
MISSING_ZSCORE = -1000000.0
_GEOMETRIC = ("gm_map", "gm_bpref")


def read_zscores(path: str | Path) -> dict[tuple[str, str], tuple[float, float]]:
    """Read a z-score file: ``(qid, trec measure name) -> (mean, stddev)``.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".z", delete=False) as fh:
    ...     _ = fh.write("301 map 0.12 0.15\\n")
    >>> read_zscores(fh.name)
    {('301', 'map'): (0.12, 0.15)}
    >>> os.unlink(fh.name)
    """
    out: dict[tuple[str, str], tuple[float, float]] = {}
    with open(path, encoding="utf-8") as fh:
        for no, line in enumerate(fh, 1):
            parts = line.split()
            if not parts or parts[0].startswith("#"):
                continue
            try:
                if len(parts) != 4:
                    raise ValueError
                out[(parts[0], parts[1])] = (float(parts[2]), float(parts[3]))
            except ValueError:
                raise FileFormatError(
                    f"{path}:{no}: a z-score line is 'qid measure mean stddev' (4 fields, "
                    f"numbers last), got {line.strip()!r}. Fix that line or pass another -Z "
                    "file."
                ) from None
    return out


def apply_zscores(
    per_query: pl.DataFrame,
    requests: Sequence[MeasureRequest],
    zscores: dict[tuple[str, str], tuple[float, float]],
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Per-query z-scores and their summaries, as trec_eval ``-Z`` computes them.

    Parameters
    ----------
    per_query
        ``run, query_id, measure, value`` (every evaluated query).
    requests
        From :func:`~searcheval_frames.cli.trec_eval.expand_measures` (labels, families).
    zscores
        From :func:`read_zscores`.

    Returns
    -------
    (aggregate, per_query)
        ``run, measure, value`` and ``run, query_id, measure, value`` of z-scores.

    Examples
    --------
    >>> from searcheval_frames.cli.trec_eval import expand_measures
    >>> pq = pl.DataFrame({"run": "r", "query_id": ["1", "2"], "measure": "AP",
    ...                    "value": [0.5, 0.1]})
    >>> agg, zq = apply_zscores(pq, expand_measures(["map"]).requests,
    ...                         {("1", "map"): (0.3, 0.1), ("2", "map"): (0.1, 0.0)})
    >>> [round(v, 6) for v in zq["value"]], [round(v, 6) for v in agg["value"]]
    ([2.0, 0.0], [1.0])
    """
    reqs = [r for r in requests if r.measure is not None]
    table = pl.DataFrame({
        "measure": [r.name for r in reqs],
        "_label": [r.label for r in reqs],
        "_how": ["count" if r.family == "num_q" else "gmean" if r.family in _GEOMETRIC
                 else r.measure.aggregate for r in reqs],
    }, schema={"measure": pl.String, "_label": pl.String, "_how": pl.String})
    zf = pl.DataFrame([(q, m, mean, sd) for (q, m), (mean, sd) in zscores.items()],
                      schema={"query_id": pl.String, "_label": pl.String, "_mean": pl.Float64,
                              "_sd": pl.Float64}, orient="row")
    v = pl.col("value")
    v = pl.when(pl.col("_how") == "gmean").then(v.clip(lower_bound=1e-5).log()).otherwise(v)
    z = (pl.when(pl.col("_mean").is_null()).then(MISSING_ZSCORE)
         .when(pl.col("_sd") != 0).then((v - pl.col("_mean")) / pl.col("_sd"))
         .when(v == pl.col("_mean")).then(0.0)
         .otherwise(MISSING_ZSCORE))
    zq = (per_query.join(table, on="measure", how="inner")
          .join(zf, on=["query_id", "_label"], how="left")
          .with_columns(z.alias("value")))
    how = pl.col("_how").first()
    zv = pl.col("value")
    agg = zq.group_by("run", "measure", maintain_order=True).agg(
        pl.when(how == "count").then(pl.len().cast(pl.Float64))
        .when(how == "sum").then(zv.sum())
        .when(how == "gmean").then(zv.mean().exp())
        .otherwise(zv.mean()).alias("value")
    )
    return agg, zq.select("run", "query_id", "measure", "value")
