"""The report's latency section (issue 32): when the runs carry their latency.

Runs made by :func:`~searcheval_frames.retrieve` (``RetrieveResult``, alone, added
``r1 + r2``, or in a list or dict) carry one row per query of client time; so does a
``latency=`` frame given to :func:`~searcheval_frames.report`. The section shows per
run: queries, failed queries, p50/p95/p99 of the client time (and the engine's own
median when it reports one), and a figure of the focus measure against latency. The
verdicts are about quality only; this section does not change them.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from ..figures.latency import latency_plot, latency_table
from ..figures.style import display_names
from .build import Figure, ReportData
from .judges import Section, make_section

__all__ = ["add_latency_sections", "collect_latency", "collect_systems", "latency_frame",
           "read_latency"]


def _items(runs: Any) -> list[Any]:
    if isinstance(runs, Mapping):
        return list(runs.values())
    if isinstance(runs, list | tuple):
        return list(runs)
    return [runs]


def collect_latency(runs: Any) -> pl.DataFrame | None:
    """The latency the runs carry (a ``.latency`` frame per run result), or None."""
    frames = [it.latency for it in _items(runs)
              if isinstance(getattr(it, "latency", None), pl.DataFrame)]
    return pl.concat(frames, how="diagonal_relaxed") if frames else None


def collect_systems(runs: Any) -> dict[str, Any]:
    """Each run result's provenance (adapter, configuration with secrets redacted,
    fingerprint, time, k), by run name; results added together give theirs."""
    out: dict[str, Any] = {}
    for it in _items(runs):
        prov = getattr(it, "provenance", None)
        if not isinstance(prov, Mapping) or not hasattr(it, "latency"):
            continue
        if prov.get("adapter") == "combined" and isinstance(prov.get("runs"), Mapping):
            out.update(prov["runs"])
        else:
            out[str(getattr(it, "name", len(out)))] = dict(prov)
    return out


def read_latency(latency: Any) -> pl.DataFrame:
    """``latency=`` as a polars frame: a frame of any kind, or a file (the
    ``run.latency.tsv`` that ``searcheval retrieve`` writes; CSV, Parquet, JSON Lines),
    or a list of either."""
    from ..frames.kinds import is_path, to_polars

    if isinstance(latency, list | tuple):
        return pl.concat([read_latency(x) for x in latency], how="diagonal_relaxed")
    if not is_path(latency):
        return to_polars(latency, "latency")
    path = Path(latency)
    if not path.is_file():
        from ..errors import FileAccessError

        raise FileAccessError(f"report(latency={str(path)!r}): no such file; pass the "
                              "run.latency.tsv that searcheval retrieve wrote, or a frame")
    name = path.name.lower()
    if name.endswith(".parquet"):
        return pl.read_parquet(path)
    if name.endswith((".jsonl", ".ndjson")):
        return pl.read_ndjson(path)
    return pl.read_csv(path, separator="," if name.endswith(".csv") else "\t",
                       schema_overrides={"query_id": pl.String, "run": pl.String,
                                         "seconds": pl.Float64, "server_seconds": pl.Float64})


def latency_frame(latency: pl.DataFrame, runs: list[str]) -> pl.DataFrame:
    """The section's table: per run (in the report's order), times in milliseconds."""
    table = latency_table(latency.filter(pl.col("run").is_in(runs)))
    ms = [(pl.col(c) * 1000).alias(f"{c} ms") for c in ("p50", "p95", "p99", "server_p50")]
    out = table.select("run", "queries", "errors", *ms)
    if out["server_p50 ms"].null_count() == out.height:
        out = out.drop("server_p50 ms")
    else:
        out = out.rename({"server_p50 ms": "server p50 ms"})
    order = {r: i for i, r in enumerate(runs)}
    return out.sort(pl.col("run").replace_strict(order, default=len(runs)))


def _figure(latency: pl.DataFrame, data: ReportData) -> Figure:
    from ..figures import save_figure

    short = display_names(data.runs)
    lat = latency.with_columns(pl.col("run").replace(short))
    summ = data.summary.with_columns(pl.col("run").replace(short))
    ax = latency_plot(lat, summ, measure=data.focus,
                      title=f"{data.focus} against client time per query")
    fig = ax.figure
    try:
        with tempfile.TemporaryDirectory(prefix="sef-latency-") as d:
            png, svg = save_figure(fig, Path(d) / "latency", formats=["png", "svg"], dpi=220)
            return Figure("latency", "Quality against latency",
                          f"Each run's mean {data.focus} against its median client time per "
                          "query (the line reaches the 95th percentile).",
                          png.read_bytes(), svg.read_bytes())
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)


def latency_section(data: ReportData, latency: pl.DataFrame) -> Section | None:
    shown = [r for r in data.runs if r in set(latency["run"].unique().to_list())]
    if not shown:
        return None
    table = latency_frame(latency, shown)
    errors = int(table["errors"].sum())
    fails = (f" {errors} queries failed (they have no rows in the run, so every measure "
             "counts them as 0)." if errors else " No query failed.")
    cached = latency.filter(pl.col("run").is_in(shown))
    n_cached = int(cached["cached"].fill_null(False).sum()) if "cached" in cached.columns else 0
    from_cache = (f" {n_cached} answers came from the cache: their times are those measured "
                  "when they were first asked." if n_cached else "")
    lead = (f"Client time per query, measured by sef.retrieve, of {len(shown)} of the "
            f"{len(data.runs)} runs (p50/p95/p99: percentiles over the answered queries)."
            f"{fails}{from_cache} The verdicts above are about quality only; these times do "
            "not change them.")
    return make_section("latency", "Latency", [("p", lead), ("table", table)], data.digits)


def add_latency_sections(data: ReportData, runs: Any, latency: Any = None,
                         figures: bool = True) -> None:
    """Append the latency section (and figure) when the runs or ``latency=`` carry it,
    and the systems' provenance (``provenance.json``'s ``systems``) when they have one."""
    systems = collect_systems(runs)
    if systems:
        data.provenance["systems"] = systems
    if latency is not None:
        lat: pl.DataFrame | None = read_latency(latency)
    else:
        lat = collect_latency(runs)
    if lat is None or lat.height == 0:
        return
    section = latency_section(data, lat)
    if section is None:
        return
    data.sections.append(section)
    if figures:
        data.figures.append(_figure(lat.filter(pl.col("run").is_in(data.runs)), data))
