"""Compute everything a report shows (numbers, figures, examples, provenance), once.

:func:`build` is the work behind :func:`searcheval_frames.report`: it reads the
inputs once into canonical frames and hands them to the same public functions a
user would call — :func:`~searcheval_frames.evaluate`, :func:`~searcheval_frames.compare`,
:func:`~searcheval_frames.coverage`, :func:`~searcheval_frames.metric_bounds`, the
plot helpers — so every number in the report is the number those functions give.
"""

from __future__ import annotations

import math
import tempfile
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from ..analysis import stats as _st
from ..analysis._inputs import docs_table, qrels_pl, queries_table, runs_pl
from ..analysis.compare import Comparison, compare
from ..analysis.querydiff import diff_frame
from ..core.evaluate import evaluate
from ..core.results import summarize
from ..errors import InsufficientDataError, InvalidOptionError, SearchEvalError
from ..frames import input_kind, mark_checked, query_blocks
from ..frames.display import run_display_names
from ..options import (
    check_bool,
    check_choice,
    check_float,
    check_int,
    check_optional_int,
    check_str_list,
)
from ._warm import warm_up
from .baseline import check_columns, choose_baseline
from .examples import Example, examples
from .provenance import describe_input, provenance
from .verdict import overall, verdict, verdict_kind

__all__ = ["DEFAULT_MEASURES", "Figure", "ReportData", "build"]

#: Measures of a report when none are given.
DEFAULT_MEASURES: tuple[str, ...] = ("P@5", "P@10", "R@10", "RR", "nDCG@10", "AP")
_F = "report"


@dataclass
class Figure:
    """A rendered figure: PNG and SVG bytes, and what it shows."""

    name: str
    title: str
    caption: str
    png: bytes
    svg: bytes


@dataclass
class ReportData:
    """Everything a report shows, computed by :func:`build`."""

    title: str
    baseline: str
    run: str
    runs: list[str]
    measures: list[str]
    focus: str
    depth: int
    k: int
    comparison: Comparison
    summary: pl.DataFrame  # evaluate(): run, measure, value
    diffs: pl.DataFrame  # query_diff of run vs baseline on focus
    coverage: pl.DataFrame
    low_coverage: list[str]
    bounds: pl.DataFrame | None
    verdicts: list[tuple[str, str]]  # (kind, sentence)
    headline: str
    losses: list[Example]
    wins: list[Example]
    figures: list[Figure]
    notes: list[str]
    provenance: dict[str, Any]
    timings: dict[str, float] = field(default_factory=dict)
    n_queries: int = 0
    min_judged: float = 0.9
    digits: int = 3
    power: str = ""  # how large a change the queries can detect (sef.power)
    slices: Any = None  # reporting.slices.SliceSection when by= is given
    sections: list[Any] = field(default_factory=list)  # extra sections (reporting/judges.py)
    relevance_level: int = 1  # minimum label counted relevant by the binary measures
    labels: list[int] = field(default_factory=list)  # the distinct labels of the qrels
    check: list[str] = field(default_factory=list)  # sef.check's banner (issue #22)
    leaderboard: Any = None  # all runs on the focus measure as one family (> 2 runs; #26)


def _render(ax: Any, name: str, title: str, caption: str, tmp: Path) -> Figure:
    from ..figures import save_figure

    fig = ax.figure
    try:
        png, svg = save_figure(fig, tmp / name, formats=["png", "svg"], dpi=220)  # 2x
        return Figure(name, title, caption, png.read_bytes(), svg.read_bytes())
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)


def _figures(data: dict[str, Any], run_df: pl.DataFrame, qrels_df: pl.DataFrame,
             cmp: Comparison) -> list[Figure]:
    from ..figures import benchmark_bars, per_query_delta, tradeoff_curve

    base, run, focus, depth = data["baseline"], data["run"], data["focus"], data["depth"]
    pair = [base, run]
    short = run_display_names(list(cmp.runs), width=28)  # as the page's tables name them
    sb, sr = short[base], short[run]
    out = []
    with tempfile.TemporaryDirectory(prefix="sef-report-") as d:
        tmp = Path(d)
        rows = mark_checked(run_df.filter(pl.col("run").is_in(pair)))  # (checked rows)
        ax = tradeoff_curve(rows, qrels_df, show_runs=pair, k=depth, mark_k=min(10, depth),
                            title=f"Precision and recall as k grows: {sr} vs {sb}")
        out.append(_render(ax, "tradeoff", "Trade-off curve",
                           f"Mean P@k (solid) and R@k (dashed) for k = 1..{depth}.", tmp))
        ax = benchmark_bars(cmp, show_runs=pair, baseline=base,
                            title=f"Before ({sb}) and after ({sr})")
        out.append(_render(ax, "before_after", "Before / after",
                           "Means per measure; beside each 'after' bar the change against the "
                           f"baseline, * significant; error bars: {cmp.ci:.0%} CI of Δ.", tmp))
        pq = cmp.per_query.filter(pl.col("measure") == focus, pl.col("run").is_in(pair))
        ax = per_query_delta(per_query=pq, baseline=base, run=run, measure=focus)
        out.append(_render(ax, "per_query_delta", f"Per-query Δ {focus}",
                           f"{focus} of {sr} minus {sb}, one bar per query, sorted; "
                           "blue = better, red = worse.", tmp))
    return out


def _check(opts: dict[str, Any]) -> dict[str, Any]:
    o = dict(opts)
    if o["measures"] is None:
        o["measures"] = list(DEFAULT_MEASURES)
    o["measures"] = check_str_list(_F, "measures", o["measures"], example="measures=['nDCG@10', 'AP']")
    o["depth"] = check_int(_F, "depth", o["depth"], minimum=1, what="Judged@k and curve depth",
                           example="depth=20")
    o["k"] = check_int(_F, "k", o["k"], minimum=1, what="ranks in the side-by-side lists",
                       example="k=10")
    o["n_examples"] = check_int(_F, "n_examples", o["n_examples"], minimum=0, example="n_examples=5")
    o["alpha"] = check_float(_F, "alpha", o["alpha"], minimum=0, maximum=1, open_min=True,
                             open_max=True, example="alpha=0.05")
    o["ci"] = check_float(_F, "ci", o["ci"], minimum=0, maximum=1, open_min=True, open_max=True,
                          example="ci=0.95")
    o["min_judged"] = check_float(_F, "min_judged", o["min_judged"], minimum=0, maximum=1,
                                  example="min_judged=0.9")
    o["n_resamples"] = check_int(_F, "n_resamples", o["n_resamples"], minimum=1,
                                 example="n_resamples=10000")
    o["seed"] = check_optional_int(_F, "seed", o["seed"], minimum=0, example="seed=0")
    o["digits"] = check_int(_F, "digits", o["digits"], minimum=1, maximum=6, example="digits=3")
    o["level_chosen"] = o["relevance_level"] is not None  # (else the default, 1)
    o["relevance_level"] = check_int(_F, "relevance_level", 1 if o["relevance_level"] is None
                                     else o["relevance_level"], example="relevance_level=1")
    o["test"] = check_choice(_F, "test", o["test"], tuple(_st.TESTS))
    o["ci_method"] = check_choice(_F, "ci_method", o["ci_method"],
                                  ("auto", *_st.CI_METHODS), example="ci_method='bca'")
    o["correction"] = check_choice(_F, "correction", o["correction"] or "none",
                                   tuple(_st.CORRECTIONS))
    o["figures"] = check_bool(_F, "figures", o["figures"])
    o["columns"] = check_columns(_F, o.get("columns"))
    if o["progress"] is not None:
        o["progress"] = check_bool(_F, "progress", o["progress"])
    for name in ("baseline", "run", "focus", "title"):
        if o[name] is not None and not isinstance(o[name], str):
            raise InvalidOptionError(
                f"{_F}({name}={o[name]!r}): must be a string or None; got {o[name]!r}. "
                f"Example: {name}='bm25'" if name != "focus" else
                f"{_F}({name}={o[name]!r}): must be a measure name or None; got {o[name]!r}. "
                "Example: focus='nDCG@10'"
            )
    return o


#: Kept for callers of the former ``ci_method="auto"`` rule; "auto" is now the test's own
#: interval (issue #26) whatever the number of queries.
AUTO_BCA_QUERIES = 2_000


def build(runs: Any, qrels: Any, **options: Any) -> ReportData:
    """Compute a report's content; the options are those of :func:`searcheval_frames.report`.

    One phase after the other, each timed in ``ReportData.timings``: read, evaluate and
    compare, the leaderboard, examples, coverage and bounds, figures, slices, the notes
    (ties, the check banner) and provenance.
    """
    o = _check(options)
    times: dict[str, float] = {}
    t = time.perf_counter()
    kind = input_kind(runs)
    # validated by runs_pl (run_frame): evaluate, coverage, the bounds and the check
    # banner then do not validate its 14M rows again, each on its own
    run_df = runs_pl(runs, columns=o["columns"])
    # with its (run, query) blocks, found once: evaluate, coverage and the check use them
    run_df = mark_checked(run_df, query_blocks(run_df))
    qrels_df = qrels_pl(qrels, columns=o["columns"])
    queries = queries_table(o["queries"])
    docs = docs_table(o["docs"], o["columns"])
    times["read"] = time.perf_counter() - t

    names = run_df.get_column("run").unique(maintain_order=True).to_list()
    if len(names) < 2:
        raise InsufficientDataError(
            f"report: need at least two runs (a baseline and a run to compare); got {names}. "
            "Pass several run files or a frame with a run column."
        )
    base = choose_baseline(o["baseline"], names, _F)
    warm = warm_up(figures=o["figures"], leaderboard=len(names) > 2)  # (while evaluating)
    per_query, summary, cmp, notes = _evaluate_and_compare(run_df, qrels_df, names, base, o,
                                                           times, warm)
    focus, run = _focus_and_run(cmp, base, o)
    display = run_display_names(list(cmp.runs), width=28)  # the names the tables show
    verdicts = _verdicts(cmp, display)
    power_note = _power_note(cmp.per_query, base, run, focus, cmp.alpha)
    from . import leaderboard_section as _lbs

    show = o["progress"] if o["progress"] is not None else True
    t = time.perf_counter()
    board = _lbs.compute(  # under the names the page shows (display names are unique)
        cmp.per_query.with_columns(pl.col("run").replace(display)),
        [display[r] for r in cmp.runs], focus, o, progress=show)
    times["leaderboard"] = time.perf_counter() - t

    t = time.perf_counter()
    pq_focus = cmp.per_query.filter(pl.col("measure") == focus)
    diffs = diff_frame(pq_focus, baseline=base, run=run, measure=focus, missing="zero",
                       tie_tolerance=1e-9, queries=queries, func="report")
    losses, wins = examples(diffs, run_df, qrels_df, baseline=base, run=run, n=o["n_examples"],
                            k=o["k"], docs=docs, relevance_level=max(o["relevance_level"], 1),
                            kind=kind, names=run_display_names(list(cmp.runs), width=28))
    times["examples"] = time.perf_counter() - t

    t = time.perf_counter()
    cov, low, bounds = _coverage_and_bounds(run_df, qrels_df, per_query, cmp, (base, run), o,
                                            notes)
    times["coverage"] = time.perf_counter() - t
    # the inputs' content digests (polars, numpy's sort and hashlib release the GIL) are
    # computed in a thread while matplotlib draws and the notes are written
    pool = ThreadPoolExecutor(1, thread_name_prefix="searcheval-report-digests")
    digests = pool.submit(_inputs, (runs, run_df), (qrels, qrels_df), (o["queries"], queries),
                          (o["docs"], docs))
    pool.shutdown(wait=False)
    figures = _draw(run_df, qrels_df, cmp, board, (base, run, focus), o, times)
    slices = None
    if o.get("by") is not None:  # the "By slice" section (reporting/slices.py)
        slices = _slices(cmp, base, run, focus, o)
        figures += [slices.figure] if slices.figure is not None else []
    check_lines = _notes_and_banner(run_df, qrels_df, per_query, (base, run, focus), o, notes,
                                    times)
    long_first = sorted((n for n in display if display[n] != n), key=len, reverse=True)
    for full in long_first:  # the banner and notes name runs as the tables do
        check_lines = [line.replace(full, display[full]) for line in check_lines]
        notes[:] = [n.replace(full, display[full]) for n in notes]
        power_note = power_note.replace(full, display[full])
    t = time.perf_counter()
    inputs = digests.result()
    times["provenance"] = time.perf_counter() - t  # (what was left of it after the figures)
    return ReportData(
        title=o["title"] or f"Search quality: {display[run]} vs {display[base]}",
        baseline=base, run=run, runs=cmp.runs, measures=cmp.measures, focus=focus,
        depth=o["depth"], k=o["k"], comparison=cmp, summary=summary, diffs=diffs,
        coverage=cov, low_coverage=low, bounds=bounds, verdicts=verdicts,
        headline=_lbs.headline(board, display[base], overall([v[0] for v in verdicts])),
        leaderboard=board, losses=losses, wins=wins, figures=figures, notes=notes,
        provenance=provenance(inputs, _shown_options(o, base, run, focus), o.get("command")),
        timings=times,
        n_queries=int(cmp.means.get_column("n_queries").max() or 0),  # type: ignore[arg-type]
        min_judged=o["min_judged"], digits=o["digits"], power=power_note, slices=slices,
        relevance_level=o["relevance_level"], check=check_lines,
        labels=sorted(int(v) for v in qrels_df.get_column("relevance").unique().to_list()),
    )


def _inputs(*given: tuple[Any, pl.DataFrame | None]) -> list[dict[str, Any]]:
    """Provenance records of the runs, qrels, queries and docs (as given, as read)."""
    roles = ("run", "qrels", "queries", "docs")
    return [rec for (obj, frame), role in zip(given, roles, strict=True)
            for rec in describe_input(obj, frame, role)]


def _evaluate_and_compare(
    run_df: pl.DataFrame, qrels_df: pl.DataFrame, names: list[str], base: str,
    o: dict[str, Any], times: dict[str, float], warm: threading.Thread,
) -> tuple[pl.DataFrame, pl.DataFrame, Comparison, list[str]]:
    """One evaluation per query (the summary is aggregated from it, the comparison pairs
    it: evaluating the runs twice doubled this stage), then the tests; their warnings
    become the report's first notes."""
    t = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        per_query = pl.DataFrame(evaluate(run_df, qrels_df, o["measures"], per_query=True,
                                          relevance_level=o["relevance_level"]))
        summary = summarize(per_query)
        times["evaluate"] = time.perf_counter() - t
        t = time.perf_counter()
        warm.join()  # scipy, matplotlib and the HSD kernel loaded meanwhile (_warm.py)
        n_pairs = (len(names) - 1) * len(o["measures"])
        if o["ci_method"] == "auto":
            # the interval that inverts the test, at the level matched to the correction, so
            # the interval and the p-value cannot disagree (issue #26)
            o["ci_method"] = "test"
        show = o["progress"] if o["progress"] is not None else True
        with _st.progress(2 * n_pairs, desc="report: tests and CIs", enabled=show):
            cmp = compare(per_query=per_query, baseline=base, test=o["test"],
                          correction=o["correction"], alpha=o["alpha"], ci=o["ci"],
                          ci_method=o["ci_method"], n_resamples=o["n_resamples"], seed=o["seed"])
        times["compare"] = time.perf_counter() - t
    notes = list(dict.fromkeys(" ".join(str(w.message).split()) for w in caught))
    return per_query, summary, cmp, notes


def _focus_and_run(cmp: Comparison, base: str, o: dict[str, Any]) -> tuple[str, str]:
    """The headline measure (``focus=``, else nDCG@10 when shown, else the first) and the
    run the report is about (``run=``, a unique part of a name, else the best on focus)."""
    measure_names = cmp.measures
    focus = o["focus"]
    if focus is None:
        focus = "nDCG@10" if "nDCG@10" in measure_names else measure_names[0]
    elif focus not in measure_names:
        from ..measures import parse_measure

        try:
            canon = parse_measure(focus).name
        except SearchEvalError:
            canon = focus
        focus = check_choice(_F, "focus", canon, tuple(measure_names))
    run = o["run"]
    others = [r for r in cmp.runs if r != base]
    if run is not None and run not in cmp.runs:  # a unique part of a name
        run = choose_baseline(run, cmp.runs, _F, what="run")
    if run is None:
        means = cmp.means.filter(pl.col("measure") == focus, pl.col("run") != base)
        run = means.sort(["mean", "run"], descending=[True, False]).item(0, "run") \
            if len(others) > 1 else others[0]
    else:
        run = check_choice(_F, "run", run, tuple(others))
    return focus, run


def _verdicts(cmp: Comparison, display: dict[str, str]) -> list[tuple[str, str]]:
    """(kind, sentence) for every compared pair, named as the tables name the runs."""
    multi = len(cmp.runs) > 2
    out = []
    for r in cmp.to_polars().iter_rows(named=True):
        prefix = f"{display[r['run']]} vs {display[r['baseline']]}" if multi else None
        out.append((verdict_kind(r, cmp.alpha),
                    verdict(r, ci=cmp.ci, correction=cmp.correction, alpha=cmp.alpha,
                            prefix=prefix)))
    return out


def _coverage_and_bounds(
    run_df: pl.DataFrame, qrels_df: pl.DataFrame, per_query: pl.DataFrame, cmp: Comparison,
    pair: tuple[str, str], o: dict[str, Any], notes: list[str],
) -> tuple[pl.DataFrame, list[str], pl.DataFrame | None]:
    """Judged share of each run's top ``depth``; metric bounds for the report's pair when
    its coverage is low (a note says so)."""
    from ..evalset import coverage, metric_bounds

    cov = pl.DataFrame(coverage(run_df, qrels_df, depth=o["depth"])).with_columns(
        (pl.col("judged") / pl.col("retrieved")).fill_nan(0.0).alias("judged_share")
    )
    order = {r: i for i, r in enumerate(cmp.runs)}
    cov = cov.sort(pl.col("run").replace_strict(order, default=len(order)))
    low = cov.filter(pl.col("judged_share") < o["min_judged"]).get_column("run").to_list()
    shown_low = [r for r in pair if r in low]  # bounds for the pair the report is about
    if low:
        notes.append(
            f"Judged coverage is low: in the top {o['depth']} of {', '.join(low)} less than "
            f"{o['min_judged']:.0%} of the documents are judged. Unjudged documents count as "
            "non-relevant, so these numbers may be too low"
            + ("; see the metric bounds below" if shown_low else "")
            + ". Label the holes (sef.pool, sef.label_widget)."
        )
    if not shown_low:
        return cov, low, None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        level = max(o["relevance_level"], 1)
        bounds = pl.DataFrame(metric_bounds(  # (rows of the checked run: checked)
            mark_checked(run_df.filter(pl.col("run").is_in(shown_low))), qrels_df,
            o["measures"], relevance_level=level,
            # the non-relevant scenario is the report's own evaluation, at that level
            values=per_query if level == o["relevance_level"] else None))
    return cov, low, bounds


def _draw(run_df: pl.DataFrame, qrels_df: pl.DataFrame, cmp: Comparison, board: Any,
          who: tuple[str, str, str], o: dict[str, Any], times: dict[str, float]) -> list[Figure]:
    """The report's figures (none with ``figures=False``), the leaderboard's last."""
    if not o["figures"]:
        return []
    base, run, focus = who
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        figures = _figures({"baseline": base, "run": run, "focus": focus,
                            "depth": o["depth"]}, run_df, qrels_df, cmp)
        if board is not None:
            from ..figures.leaderboard import leaderboard_plot

            with tempfile.TemporaryDirectory() as tmp:
                figures.append(_render(
                    leaderboard_plot(board), "leaderboard", f"Leaderboard on {focus}",
                    f"{board.describe_method()}. Bars: comparison intervals (no overlap = "
                    "significant); right: rank interval and group letters.", Path(tmp)))
    times["figures"] = time.perf_counter() - t
    return figures


def _slices(cmp: Comparison, base: str, run: str, focus: str, o: dict[str, Any]) -> Any:
    """The "By slice" section (:mod:`searcheval_frames.reporting.slices`)."""
    from .slices import slice_section

    return slice_section(cmp.per_query, queries=o["queries"], by=o["by"], baseline=base,
                         run=run, focus=focus, figures=o["figures"], render=_render,
                         digits=o["digits"], options=dict(
                             test=o["test"], correction=o["correction"], alpha=o["alpha"],
                             ci=o["ci"], ci_method=o["ci_method"],
                             n_resamples=o["n_resamples"], seed=o["seed"]))


def _notes_and_banner(run_df: pl.DataFrame, qrels_df: pl.DataFrame, per_query: pl.DataFrame,
                      who: tuple[str, str, str], o: dict[str, Any], notes: list[str],
                      times: dict[str, float]) -> list[str]:
    """A note when ties move the headline mean (appended to ``notes``) and sef.check's
    banner lines."""
    from .checks import banner, tie_note

    base, run, focus = who
    t = time.perf_counter()
    note = tie_note(run_df, qrels_df, focus, [base, run], relevance_level=o["relevance_level"],
                    per_query=per_query)
    notes += [note] if note else []
    times["ties"] = time.perf_counter() - t
    t = time.perf_counter()
    lines = banner(run_df, qrels_df, o["measures"], o["relevance_level"],
                   chosen=o["level_chosen"])
    times["check"] = time.perf_counter() - t
    return lines


def _shown_options(o: dict[str, Any], base: str, run: str, focus: str) -> dict[str, Any]:
    """The options provenance records (the tables given as queries/docs are described
    as inputs instead; ``by`` as text)."""
    shown = {k: v for k, v in o.items()
             if k not in ("queries", "docs", "command", "by", "level_chosen")}
    if o.get("by") is not None:
        shown["by"] = [str(b) for b in (o["by"] if isinstance(o["by"], list) else [o["by"]])]
    shown.update(baseline=base, run=run, focus=focus)
    return shown


def _power_note(per_query: pl.DataFrame, base: str, run: str, focus: str, alpha: float) -> str:
    """How large a change these queries can detect, and how many a smaller one needs."""
    from ..analysis.power import power

    pq = per_query.filter(pl.col("measure") == focus, pl.col("run").is_in([base, run]))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            row = pl.DataFrame(power(per_query=pq, baseline=base, measure=focus, alpha=alpha)).row(
                0, named=True)
    except SearchEvalError:  # too few queries, or no variation: nothing to say
        return ""
    detect = row["detectable_delta"]
    if math.isnan(detect) or detect <= 0:  # no variation: nothing to detect
        return ""
    from ..analysis.power import power_sentence  # the one definition (README, docs: #26)

    return "Power: " + power_sentence(row) + " (sef.power)"
