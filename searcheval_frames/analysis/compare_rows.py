"""The rows of a comparison before its tests: per (run, baseline, measure) the means,
deltas, wins / ties / losses and effect size, with the paired differences and their
random streams that :mod:`~searcheval_frames.analysis.inference` tests (the part of
:func:`~searcheval_frames.compare` that reads the paired per-query matrix)."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from . import leaderboard_stats as _ls
from . import stats as _st

__all__ = ["SCHEMA", "comparison_rows"]

_F, _I, _S = pl.Float64, pl.Int64, pl.String
#: The comparison frame's columns and types, in order.
SCHEMA: dict[str, Any] = {
    "run": _S, "baseline": _S, "measure": _S, "n_queries": _I, "mean": _F, "baseline_mean": _F,
    "delta": _F, "delta_pct": _F, "ci_low": _F, "ci_high": _F, "p_value": _F, "p_adjusted": _F,
    "significant": pl.Boolean, "wins": _I, "ties": _I, "losses": _I, "effect_size": _F,
    "reason": _S,
}


def comparison_rows(paired: pl.DataFrame, measure_list: list[str], order: list[str],
          pair_list: list[tuple[str, str]], *, seed: int | None, tukey: bool, alpha: float,
          ci: float, tie_tolerance: float) -> tuple[pl.DataFrame, list[Any], list[Any], pl.DataFrame]:
    """Per (run, baseline, measure): the row before the tests (means, deltas, wins), the
    paired differences with their random streams, Tukey's rows; and the run means."""
    rows: list[dict[str, Any]] = []
    items: list[tuple[np.ndarray, np.random.Generator, np.random.Generator]] = []
    tukey_rows: list[tuple[float, float, bool]] = []
    mean_rows: list[dict[str, Any]] = []
    nan = float("nan")
    for measure in measure_list:
        sub = paired.filter(pl.col("measure") == measure)
        if sub.height == 0:
            continue
        wide = sub.pivot(on="run", index="query_id", values="value").sort("query_id")
        mat = {r: wide.get_column(r).to_numpy().astype(np.float64) for r in order}
        n = wide.height
        mean_rows += [{"run": r, "measure": measure, "n_queries": n, "mean": float(mat[r].mean())}
                      for r in order]
        for run, base in pair_list:
            x, y = mat[run], mat[base]
            rng_test, rng_ci = _st.pair_rng(seed, run, base, measure).spawn(2)
            mx, my = float(x.mean()), float(y.mean())
            items.append((x - y, rng_test, rng_ci))
            if tukey:  # all runs are one family (sef.leaderboard's code)
                tukey_rows += _ls.tukey_for_pairs(np.column_stack([mat[r] for r in order]),
                                                  order, [(run, base)], alpha=alpha, ci=ci)
            w, t, lo_count = _st.wins_ties_losses(x, y, tie_tolerance)
            rows.append({
                "run": run, "baseline": base, "measure": measure, "n_queries": n, "mean": mx,
                "baseline_mean": my, "delta": mx - my,
                "delta_pct": (mx - my) / my * 100.0 if my != 0 else nan,
                "ci_low": nan, "ci_high": nan, "p_value": nan, "p_adjusted": nan,
                "significant": False, "wins": w, "ties": t, "losses": lo_count,
                "effect_size": _st.effect_size(x, y), "reason": None,
            })
    frame = pl.DataFrame(rows, schema=SCHEMA, orient="row") if rows else pl.DataFrame(
        schema=SCHEMA)
    means = pl.DataFrame(
        mean_rows,
        schema={"run": pl.String, "measure": pl.String, "n_queries": pl.Int64, "mean": pl.Float64},
        orient="row",
    )
    return frame, items, tukey_rows, means
