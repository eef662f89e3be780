"""The report's sections on seeds and datasets (issue #35).

``sef.report(runs, qrels, replicate="seed")`` / ``dataset="collection"``:
:func:`prepare_structured` gives the main report runs and qrels it can read (the first
replicate of each run; queries keyed ``dataset:query_id``), and
:func:`add_structured_sections` adds

* "Seeds": :func:`~searcheval_frames.compare_replicates` on the focus measure (the
  structured verdict beside the flat one, seed noise beside Δ), the replicate strip,
  and the variance components with one sentence saying which variance dominates;
* "Datasets": :func:`~searcheval_frames.compare_datasets` per dataset and the macro
  mean, :func:`~searcheval_frames.leaderboard_datasets`, and the forest plot.
"""

from __future__ import annotations

import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from ..analysis.structured import (
    compare_datasets,
    compare_replicates,
    leaderboard_datasets,
    variance_components,
)
from ..analysis.structured.inputs import structured_values
from ..frames import to_polars
from .build import Figure, ReportData
from .html import frame_html
from .judges import Section
from .markdown import frame_markdown

__all__ = ["StructuredInput", "add_structured_sections", "prepare_structured"]


@dataclass
class StructuredInput:
    """The runs and qrels as given, and the declared columns."""

    runs: pl.DataFrame
    qrels: pl.DataFrame
    replicate: str | None
    dataset: str | None
    first: str | None  # the replicate the main report shows


def prepare_structured(runs: Any, qrels: Any, *, replicate: str | None,
                       dataset: str | None) -> tuple[Any, Any, StructuredInput | None]:
    """Runs and qrels for the main report, and what the structured sections need."""
    if replicate is None and dataset is None:
        return runs, qrels, None
    r, q = to_polars(runs, "runs"), to_polars(qrels, "qrels")
    main_r, main_q, first = r, q, None
    if replicate is not None and replicate in r.columns:
        first = str(r[replicate].cast(pl.String).unique(maintain_order=True)[0])
        main_r = r.filter(pl.col(replicate).cast(pl.String) == first).drop(replicate)
    if dataset is not None and dataset in r.columns and dataset in q.columns:
        key = pl.concat_str([pl.col(dataset).cast(pl.String), pl.col("query_id").cast(
            pl.String)], separator=":").alias("query_id")
        main_r = main_r.with_columns(key).drop(dataset)
        main_q = main_q.with_columns(key).drop(dataset)
    return main_r, main_q, StructuredInput(r, q, replicate, dataset, first)


def _section(sid: str, title: str, blocks: list[tuple[str, Any]], digits: int) -> Section:
    from html import escape

    html = [f'<section id="{sid}"><h2>{escape(title)}</h2>']
    md = [f"## {title}", ""]
    for kind, value in blocks:
        is_text = kind == "p"
        html.append(f"<p>{escape(value)}</p>" if is_text else frame_html(value, digits=digits))
        md += [value if is_text else frame_markdown(value, digits=digits), ""]
    return Section(sid, title, "".join(html) + "</section>", "\n".join(md))


def _figure(ax: Any, name: str, title: str, caption: str) -> Figure:
    import matplotlib.pyplot as plt

    from ..figures import save_figure

    fig = ax.figure
    try:
        with tempfile.TemporaryDirectory(prefix="sef-structured-") as d:
            png, svg = save_figure(fig, Path(d) / name, formats=["png", "svg"], dpi=110)
            return Figure(name, title, caption, png.read_bytes(), svg.read_bytes())
    finally:
        plt.close(fig)


def seed_sentence(row: dict[str, Any]) -> str:
    """"seed noise is 40% of the difference" for one comparison row."""
    share = row["seed_noise_share"]
    noise = "n/a" if share != share else f"{share:.0%}"
    return (f"{row['run']} vs {row['baseline']}: Δ {row['delta']:+.3f}; one seed's mean "
            f"moves by sd {row['replicate_sd']:.3f} (seed noise is {noise} of the "
            f"difference), a query's difference by sd {row['query_sd']:.3f}. Structured: "
            f"{row['verdict']}; averaging the seeds (flat paired t-test): "
            f"{row['flat_verdict']}.")


def _seeds(data: ReportData, inp: StructuredInput, figures: bool) -> Section:
    assert inp.replicate is not None
    m, rel = data.focus, data.relevance_level
    res = compare_replicates(inp.runs, inp.qrels, [m], baseline=data.baseline,
                             replicate=inp.replicate, dataset=inp.dataset, relevance_level=rel)
    frame = res.to_polars()
    pq = structured_values(inp.runs, inp.qrels, [m], replicate=inp.replicate,
                           dataset=inp.dataset, func="report", relevance_level=rel)
    if inp.dataset is not None:
        pq = pq.with_columns(pl.concat_str([inp.dataset, "query_id"], separator=":")
                             .alias("query_id")).drop(inp.dataset)
    vc = variance_components(per_query=pq, factors=["query", "system", inp.replicate])
    blocks: list[tuple[str, Any]] = [
        ("p", f"Each run has several replicates ({inp.replicate}); the sections above show "
              f"replicate {inp.first}. On {m}, each run against {data.baseline}:"),
        ("table", frame.select("run", "n_replicates", "delta", "ci_low", "ci_high",
                               "p_adjusted", "verdict", "flat_ci_low", "flat_ci_high",
                               "flat_verdict", "query_sd", "replicate_sd", "note")),
        *(("p", seed_sentence(r)) for r in frame.iter_rows(named=True)),
        ("p", vc.sentence()), ("table", vc.to_polars().select(
            "term", "df", "ss", "eta_sq", "variance", "share")),
        ("p", res.describe_method())]
    if figures:
        from ..figures.structured import replicate_strip, variance_plot

        data.figures += [
            _figure(replicate_strip(res), "replicate-strip", f"{m}: systems and their seeds",
                    "Each dot is one seed's mean; the line is the mean over seeds."),
            _figure(variance_plot(vc), "variance-components",
                    f"{m}: where the variance comes from", vc.sentence())]
    return _section("seeds", "Seeds: is the difference bigger than the seed noise?", blocks,
                    data.digits)


def _datasets(data: ReportData, inp: StructuredInput, figures: bool) -> Section:
    assert inp.dataset is not None
    m, rel = data.focus, data.relevance_level
    runs = inp.runs
    if inp.replicate is not None:
        runs = runs.filter(pl.col(inp.replicate).cast(pl.String) == inp.first).drop(
            inp.replicate)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = compare_datasets(runs, inp.qrels, [m], baseline=data.baseline,
                               dataset=inp.dataset, relevance_level=rel)
        lb = leaderboard_datasets(runs, inp.qrels, m, dataset=inp.dataset,
                                  relevance_level=rel)
    notes = sorted({str(w.message) for w in caught if "datasets" in str(w.message)})
    blocks: list[tuple[str, Any]] = [
        ("p", f"Per {inp.dataset} on {m} (Holm over every dataset test):"),
        ("table", res.to_polars().drop("baseline", "measure")),
        ("p", "The macro mean over datasets, two-stage bootstrap:"),
        ("table", res.to_polars("aggregate").select("run", "value", "value_low", "value_high",
                                                    "delta", "ci_low", "ci_high", "verdict")),
        ("p", "Across datasets (rank intervals, tied groups):"), ("table", lb.to_polars()),
        *(("p", n) for n in notes), ("p", res.describe_method())]
    if figures:
        from ..figures.structured import dataset_forest

        data.figures.append(_figure(dataset_forest(res), "dataset-forest",
                                    f"{m} per {inp.dataset}",
                                    "Δ per dataset; the aggregate at the bottom."))
    return _section("datasets", f"Datasets: per {inp.dataset} and over all of them", blocks,
                    data.digits)


def add_structured_sections(data: ReportData, inp: StructuredInput | None,
                            figures: bool = True) -> None:
    """Append the seed and dataset sections (and figures) that apply."""
    if inp is None:
        return
    if inp.replicate is not None:
        data.sections.append(_seeds(data, inp, figures))
    if inp.dataset is not None:
        data.sections.append(_datasets(data, inp, figures))
