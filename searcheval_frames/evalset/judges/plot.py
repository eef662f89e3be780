"""Figures of a judge's calibration, drawn from a :class:`JudgeAgreement` (data first).

:func:`judge_confusion_plot` (human grade × judge grade, shares of each human grade,
counts written in the cells), :func:`judge_rank_plot` (each run's rank under human
qrels vs under the judge's, per measure) and :func:`judge_agreement_plot` (both, side
by side).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from ...errors import InvalidOptionError, UnknownMeasureError
from ...figures.style import LABEL_SIZE, NOTE_SIZE, OKABE_ITO, TICK_SIZE, TITLE_SIZE
from .calibrate import JudgeAgreement

__all__ = ["judge_agreement_plot", "judge_confusion_plot", "judge_rank_plot"]


def _pl(x: Any) -> pl.DataFrame:
    return x if isinstance(x, pl.DataFrame) else pl.from_pandas(x)


def _ax(ax: Any, size: tuple[float, float]) -> Any:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=size, layout="constrained")[1]


def judge_confusion_plot(ag: JudgeAgreement, *, ax: Any = None, title: str | None = None) -> Any:
    """Heatmap of the confusion matrix: row = human grade, column = judge grade.

    Colour: the share of that human grade's documents the judge put in each column (rows
    sum to 1); text: the count. The diagonal is agreement; right of it the judge
    over-rates, left of it under-rates.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import searcheval_frames as sef
    >>> from searcheval_frames.evalset.judges.plot import judge_confusion_plot
    >>> ag = sef.judge_agreement(None, {"q": {"a": 0, "b": 1, "c": 2}},
    ...                          {"q": {"a": 0, "b": 2, "c": 2}}, n_resamples=10)
    >>> judge_confusion_plot(ag).get_xlabel()
    'judge grade'
    """
    ax = _ax(ax, (4.2, 3.8))
    m = np.asarray(ag.counts, dtype=np.float64)
    share = m / np.where(m.sum(axis=1, keepdims=True) == 0, 1, m.sum(axis=1, keepdims=True))
    im = ax.imshow(share, cmap="Blues", vmin=0, vmax=1, origin="upper")
    cats = ag.categories
    for i in range(len(cats)):
        for j in range(len(cats)):
            ax.text(j, i, f"{int(m[i, j])}", ha="center", va="center", fontsize=NOTE_SIZE + 1,
                    color="white" if share[i, j] > 0.55 else "black")
    ax.set_xticks(range(len(cats)), [str(c) for c in cats], fontsize=TICK_SIZE)
    ax.set_yticks(range(len(cats)), [str(c) for c in cats], fontsize=TICK_SIZE)
    ax.set_xlabel("judge grade", fontsize=LABEL_SIZE)
    ax.set_ylabel("human grade", fontsize=LABEL_SIZE)
    f = _pl(ag.frame)
    vals = dict(zip(f["statistic"].to_list(), f["value"].to_list(), strict=True))
    ax.set_title(title or (f"Judge vs human labels (n={ag.n_items})\nκ={vals['cohen_kappa']:.2f}, "
                           f"quadratic κ={vals['weighted_kappa_quadratic']:.2f}, "
                           f"ordinal α={vals['krippendorff_alpha_ordinal']:.2f}"),
                 fontsize=TITLE_SIZE)
    ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="share of the human grade")
    return ax


def judge_rank_plot(ag: JudgeAgreement, measure: str | None = None, *, ax: Any = None,
                    title: str | None = None) -> Any:
    """Each run's rank under human qrels (x) vs under the judge's (y), for one measure.

    Points on the diagonal keep their place; the title gives Kendall's tau and tau_AP.
    Needs ``judge_agreement(runs, qrels, auto)`` with runs.
    """
    if ag.rankings is None or ag.systems is None:
        raise InvalidOptionError("judge_rank_plot: pass runs= to sef.judge_agreement first")
    ranks, systems = _pl(ag.rankings), _pl(ag.systems)
    measure = measure or str(systems["measure"][0])
    sub = ranks.filter(pl.col("measure") == measure)
    if sub.height == 0:
        raise UnknownMeasureError(f"measure={measure!r}: not in the agreement; it has "
                              f"{systems['measure'].to_list()}")
    row = systems.filter(pl.col("measure") == measure).row(0, named=True)
    ax = _ax(ax, (4.2, 3.8))
    n = sub.height
    ax.plot([0.5, n + 0.5], [0.5, n + 0.5], color="#999999", lw=1, ls="--", zorder=1)
    moved = sub["human_rank"] != sub["judge_rank"]
    colors = [OKABE_ITO["vermillion"] if m else OKABE_ITO["blue"] for m in moved]
    ax.scatter(sub["human_rank"], sub["judge_rank"], c=colors, s=40, zorder=2)
    for name, x, y in sub.select("run", "human_rank", "judge_rank").iter_rows():
        right = x > (n + 1) / 2  # labels of the right half go left of their point
        ax.annotate(name, (x, y), xytext=(-6 if right else 6, 3), textcoords="offset points",
                    fontsize=NOTE_SIZE, ha="right" if right else "left")
    ax.set_xlim(0.5, n + 0.5)
    ax.set_ylim(n + 0.5, 0.5)  # rank 1 at the top
    ax.set_xticks(range(1, n + 1))
    ax.set_yticks(range(1, n + 1))
    ax.set_xlabel(f"rank by {measure}, human qrels", fontsize=LABEL_SIZE)
    ax.set_ylabel(f"rank by {measure}, judge qrels", fontsize=LABEL_SIZE)
    ax.set_title(title or (f"System ranking: Kendall τ={row['kendall_tau']:.2f}, "
                           f"τ_AP={row['tau_ap']:.2f}\n{row['flips']} of {row['n_pairs']} "
                           "significance verdicts flip"), fontsize=TITLE_SIZE)
    ax.grid(True, color="#e5e5e5", lw=0.6)
    ax.set_axisbelow(True)
    return ax


def judge_agreement_plot(ag: JudgeAgreement, measure: str | None = None, *,
                         axes: Any = None) -> Any:
    """The confusion heatmap and (with runs) the rank-vs-rank scatter side by side.

    Returns the Axes (two, or one without runs).
    """
    two = ag.rankings is not None
    if axes is None:
        import matplotlib.pyplot as plt

        _, axes = plt.subplots(1, 2 if two else 1, figsize=(9.6 if two else 4.8, 4.2),
                               layout="constrained")
    axs = list(np.atleast_1d(axes))
    judge_confusion_plot(ag, ax=axs[0])
    if two:
        judge_rank_plot(ag, measure, ax=axs[1])
    return axs if two else axs[0]
