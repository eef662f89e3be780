"""The main job (layer 6): runs and qrels in, a report a team can read out.

:func:`report` computes (``build``), phrases (``verdict``), and renders (``html``,
``markdown``) a before/after report with provenance (``provenance``); the returned
:class:`Report` shows in JupyterLab and saves as a folder (``document``).

The package is named ``reporting`` so that ``searcheval_frames.report`` is only ever the
function (a package of that name was bound over it on import). ``sef.Report`` is the
:class:`Report` class that ``sef.report()`` returns; the comparison table once called
``Report`` is :class:`~searcheval_frames.analysis.tables.Table` (the old name warns until
0.3 removes it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..frames import input_kind
from .build import DEFAULT_MEASURES, ReportData, build
from .document import Report
from .judges import add_judge_sections

__all__ = ["DEFAULT_MEASURES", "Report", "ReportData", "report"]


def report(
    runs: Any,
    qrels: Any,
    *,
    baseline: str | None = None,
    run: str | None = None,
    measures: Sequence[str] | None = None,
    focus: str | None = None,
    queries: Any = None,
    docs: Any = None,
    depth: int = 20,
    k: int = 10,
    n_examples: int = 5,
    title: str | None = None,
    test: str = "t",
    correction: str | None = "holm",
    alpha: float = 0.05,
    ci: float = 0.95,
    ci_method: str = "auto",
    n_resamples: int = 10_000,
    seed: int | None = 0,
    relevance_level: int | None = None,
    min_judged: float = 0.9,
    figures: bool = True,
    digits: int = 3,
    progress: bool | None = None,
    command: str | None = None,
    by: Any = None,
    judge_agreement: Any = None,
    columns: Mapping[str, str] | None = None,
) -> Report:
    """Turn runs and qrels into a before/after report a team can read.

    The report holds: a verdict sentence per measure computed from the numbers
    (never "better" when the confidence interval of Δ contains 0 or the corrected
    test is not significant); the runs x measures table (best bold); the before →
    after table with Δ abs (rel), CI, adjusted p-values and wins/ties/losses (from
    :func:`~searcheval_frames.compare`); a trade-off curve, before/after bars and
    per-query Δ bars; judged coverage (Judged@``depth``, holes, and metric bounds
    with a warning when less than ``min_judged`` of a run's top-``depth`` is
    judged); the ``n_examples`` biggest losses and wins with the two ranked lists
    side by side and a sentence on what changed; and provenance (input files with
    sizes and sha256, versions, options, time).

    Parameters
    ----------
    runs
        Two or more runs: file path(s) (read with :func:`~searcheval_frames.read_run`),
        a long frame with a ``run`` column, or a dict of frames.
    qrels
        Relevance labels: a path (:func:`~searcheval_frames.read_qrels`) or a frame.
    baseline
        The "before" run: its name or a unique part of it (``"bm25"`` for
        ``run.dl19-passage.bm25``). Default: the first run in the input's order,
        with a warning naming it (``pd.concat([after, before])`` would otherwise
        silently invert the comparison).
    run
        The "after" run shown in the figures and examples (default: the only other
        run, or the best one on ``focus``). The tables compare every run.
    measures
        Default ``P@5, P@10, R@10, RR, nDCG@10, AP``.
    focus
        The measure of the per-query analysis (default ``nDCG@10`` when measured,
        else the first measure).
    queries, docs
        Query texts and document titles (paths, frames or dicts) for the examples.
    depth
        k of Judged@k and the deepest cutoff of the trade-off curve (default 20).
    k, n_examples
        Ranks in the side-by-side lists, and how many losses and wins to show.
    title
        Page title (default ``"Search quality: <run> vs <baseline>"``).
    test, correction, alpha, ci, ci_method, n_resamples, seed
        As for :func:`~searcheval_frames.compare` (paired t-test, Holm, 0.05, 95%
        interval, 10,000 resamples, seed 0). ``ci_method="auto"`` (default): the
        interval that inverts the test (Student t for the t-test, Hodges–Lehmann for
        Wilcoxon, ...) at the level matched to the correction, so interval and p-value
        agree; pass ``"bca"`` for a separate bootstrap interval.
    relevance_level
        Minimum label that counts as relevant (trec_eval ``-l``) in the binary
        measures (P, R, RR, AP); graded measures (nDCG) use the label as gain. The
        page states both beside the headline. TREC DL's passage qrels (0-3) use 2.
        Default 1; a level you pass (1 too) is your choice, so a level below the middle
        of graded labels is a note of ``sef.check``, not a warning on the page (see
        docs/semantics.md).
    min_judged
        Judged share of the top-``depth`` below which coverage is flagged and
        metric bounds are computed.
    figures
        Draw the figures (needs matplotlib).
    digits
        Decimals in the tables.
    progress
        Progress bar (tqdm, when installed) for tests and intervals that take more
        than ~2 s; ``None``: on (it only appears after 2 s).
    command
        The command line that made the report (recorded in the provenance).
    by
        Slices: a column of ``queries`` (query metadata with ``query_id``) or a polars
        expression over it; adds a "By slice" section (``compare(by=)``: per-slice Δ,
        intervals, p-values corrected over every slice test, minimum detectable Δ)
        and its forest plot (:func:`~searcheval_frames.slice_forest`).
    judge_agreement
        A :func:`~searcheval_frames.judge_agreement` result: adds a calibration section
        and figure. Qrels with a ``source`` column of judge labels (``sef.fill_holes``)
        add a section on which verdicts depend on the holes.
    columns
        Canonical name → your column, for the run frames and the qrels frame, e.g.
        ``{"query_id": "question", "doc_id": "url", "relevance": "grade"}``.

    Returns
    -------
    Report
        Shows in JupyterLab; ``.save("report/")`` writes ``index.html`` (one
        self-contained file), ``report.md``, ``figures/*.png|svg`` and
        ``provenance.json``; ``.frame`` (the comparison), ``.summary``,
        ``.query_diff``, ``.coverage``, ``.verdicts``, ``.provenance``.

    Examples
    --------
    >>> import searcheval_frames as sef
    >>> rep = sef.report(["data/example/runs/bm25.run", "data/example/runs/bm25-rerank.run"],
    ...                  "data/example/qrels.txt", baseline="bm25",
    ...                  figures=False)  # doctest: +SKIP
    >>> rep.verdicts[0]  # doctest: +SKIP
    'P@5: +0.005 (+1.1%), 95% CI [−0.016, +0.026], p=1.00 after Holm — not a reliable change'
    >>> rep.save("report/")  # doctest: +SKIP
    """
    data = build(
        runs, qrels, baseline=baseline, run=run, measures=measures, focus=focus,
        queries=queries, docs=docs, depth=depth, k=k, n_examples=n_examples, title=title,
        test=test, correction=correction, alpha=alpha, ci=ci, ci_method=ci_method,
        n_resamples=n_resamples,
        seed=seed, relevance_level=relevance_level, min_judged=min_judged, figures=figures,
        digits=digits, progress=progress, command=command, by=by, columns=columns,
    )
    add_judge_sections(data, runs, qrels, judge_agreement, data.relevance_level, figures)
    return Report(data, input_kind(runs))

