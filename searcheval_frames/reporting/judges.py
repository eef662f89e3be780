"""The report's sections on automatic judges (issue 23).

* "Automatic judge: calibration" when ``report(..., judge_agreement=sef.judge_agreement(...))``:
  the label statistics with intervals, the confusion matrix, per-grade over/under-rating
  and (with runs) the system-ranking agreement, plus the figure
  (:func:`~searcheval_frames.evalset.judges.plot.judge_agreement_plot`).
* "Holes: which verdicts depend on them" when the qrels carry a ``source`` column with
  judge labels (from :func:`~searcheval_frames.fill_holes`): labels per source and every
  comparison's verdict with holes as non-relevant, relevant, or judged.
"""

from __future__ import annotations

import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from ..analysis.holes import split_sources
from ..evalset.judges import JudgeAgreement, holes_verdicts, judge_agreement_plot
from .build import Figure, ReportData
from .html import frame_html
from .markdown import frame_markdown

__all__ = ["Section", "add_judge_sections"]


@dataclass
class Section:
    """A report section rendered both ways."""

    id: str
    title: str
    html: str
    markdown: str


def _pl(x: Any) -> pl.DataFrame:
    return x if isinstance(x, pl.DataFrame) else pl.from_pandas(x)


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _section(sid: str, title: str, blocks: list[tuple[str, Any]], digits: int) -> Section:
    """``blocks``: ("p", text) paragraphs and ("table", frame) tables, in order."""
    html = [f'<section id="{sid}"><h2>{_esc(title)}</h2>']
    md = [f"## {title}", ""]
    for kind, value in blocks:
        if kind == "p":
            html.append(f"<p>{_esc(value)}</p>")
            md += [value, ""]
        else:
            html.append(frame_html(value, digits=digits))
            md += [frame_markdown(value, digits=digits), ""]
    html.append("</section>")
    return Section(sid, title, "".join(html), "\n".join(md))


def _figure(ag: JudgeAgreement) -> Figure:
    from ..figures import save_figure

    axs = judge_agreement_plot(ag)
    fig = (axs[0] if isinstance(axs, list) else axs).figure
    try:
        with tempfile.TemporaryDirectory(prefix="sef-judge-") as d:
            png, svg = save_figure(fig, Path(d) / "judge", formats=["png", "svg"], dpi=110)
            return Figure("judge-calibration", "Automatic judge vs human labels",
                          "Left: confusion matrix (share of each human grade; counts in the "
                          "cells). Right: each run's rank under human vs judge qrels.",
                          png.read_bytes(), svg.read_bytes())
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)


def calibration_section(ag: JudgeAgreement, digits: int) -> Section:
    stats = _pl(ag.frame)
    vals = dict(zip(stats["statistic"].to_list(), stats["value"].to_list(), strict=True))
    lead = (f"The judge and the humans both labelled {ag.n_items} pairs: Cohen's κ "
            f"{vals['cohen_kappa']:.2f}, quadratic weighted κ "
            f"{vals['weighted_kappa_quadratic']:.2f}, Krippendorff's α (ordinal) "
            f"{vals['krippendorff_alpha_ordinal']:.2f}. Intervals: queries resampled.")
    blocks: list[tuple[str, Any]] = [("p", lead), ("table", stats),
                                     ("p", "Confusion matrix (rows: human grade):"),
                                     ("table", _pl(ag.confusion)),
                                     ("p", "Per human grade: how often the judge rates higher "
                                           "(over), the same, or lower (under):"),
                                     ("table", _pl(ag.per_grade))]
    if ag.systems is not None:
        sys_df = _pl(ag.systems)
        worst = sys_df.sort("kendall_tau").row(0, named=True)
        blocks += [("p", f"System rankings under human vs judge qrels (lowest Kendall τ: "
                         f"{worst['kendall_tau']:.2f} on {worst['measure']}; "
                         f"{int(sys_df['flips'].sum())} pairwise significance verdicts flip "
                         "in all):"), ("table", sys_df)]
    if ag.length_bias is not None:
        blocks += [("p", "Bias vs document length (quartiles of characters):"),
                   ("table", _pl(ag.length_bias))]
    return _section("judge-calibration", "Automatic judge: calibration", blocks, digits)


def holes_section(data: ReportData, runs: Any, qrels: Any, relevance_level: int) -> Section | None:
    obj = getattr(qrels, "frame", qrels)
    if isinstance(obj, (str, Path, dict)) or not hasattr(obj, "columns") or \
            "source" not in obj.columns:
        return None
    human, auto = split_sources(obj)
    if auto.height == 0:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        v = _pl(holes_verdicts(runs, obj, data.measures, baseline=data.baseline,
                               relevance_level=relevance_level, ci_method="t"))
    v = v.filter(pl.col("baseline") == data.baseline)
    n_changed = int(v["changed"].sum())
    sources = _pl(obj).group_by("source").agg(pl.len().alias("labels")).sort("source")
    lead = (f"{human.height} human labels and {auto.height} judge labels of holes. "
            f"{n_changed} of {v.height} verdicts change with how holes are counted "
            "(non-relevant: trec_eval's default; relevant: the optimistic bound; judge: the "
            "automatic labels; changed verdicts first). The tables above count the qrels as "
            "given.")
    table = v.sort("changed", descending=True, maintain_order=True).select("run", "measure", "delta_nonrelevant", "nonrelevant", "delta_relevant",
                     "relevant", "delta_judge", "judge", "changed")
    return _section("holes", "Holes: which verdicts depend on them",
                    [("p", lead), ("table", sources), ("table", table)], data.digits)


def add_judge_sections(data: ReportData, runs: Any, qrels: Any, agreement: Any,
                       relevance_level: int = 1, figures: bool = True) -> None:
    """Append the judge sections (and figure) that apply to ``data``."""
    if agreement is not None:
        if not isinstance(agreement, JudgeAgreement):
            from ..errors import InvalidOptionError

            raise InvalidOptionError(
                f"report(judge_agreement={type(agreement).__name__}): must be the result of "
                "sef.judge_agreement(runs, qrels, auto); got "
                f"{type(agreement).__name__}. Example: judge_agreement=sef.judge_agreement("
                "runs, human_qrels, auto)")
        data.sections.append(calibration_section(agreement, data.digits))
        if figures:
            data.figures.append(_figure(agreement))
    section = holes_section(data, runs, qrels, relevance_level)
    if section is not None:
        data.sections.append(section)
