"""``judge_agreement``: how far an automatic judge can be trusted, against human labels.

Label level: Cohen's kappa (plain, linear, quadratic weighted), Krippendorff's alpha
(ordinal), raw agreement, the confusion matrix, per-grade over/under-rating, bootstrap
intervals (queries resampled), and bias against document length. System level (with
``runs``): Kendall's tau and tau_AP between the system rankings under human and judge
qrels, per measure, and the share of pairwise significance verdicts that flip.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
import polars as pl

from ..._deprecation import old_spelling
from ...analysis import stats as _st
from ...analysis._inputs import qrels_pl, runs_pl
from ...core.evaluate import evaluate
from ...errors import IdMismatchError, InvalidOptionError
from ...frames import input_kind, to_native
from ...optional import require
from ...options import check_float, check_int
from ..old_calls import OLD_JUDGE_AGREEMENT
from .stats import alpha_from_confusion, kappa_from_confusion, tau_ap
from .texts import docs_texts

__all__ = ["JudgeAgreement", "judge_agreement"]

_F = "judge_agreement"
_STATS = ("raw_agreement", "cohen_kappa", "weighted_kappa_linear", "weighted_kappa_quadratic",
          "krippendorff_alpha_ordinal")


def _label_stats(m: np.ndarray, cats: np.ndarray) -> list[float]:
    n = m.sum()
    return [float(np.trace(m) / n) if n else float("nan"),
            kappa_from_confusion(m, cats), kappa_from_confusion(m, cats, "linear"),
            kappa_from_confusion(m, cats, "quadratic"), alpha_from_confusion(m, cats)]


@dataclass
class JudgeAgreement:
    """From :func:`judge_agreement`. Frames are in the caller's kind.

    Attributes
    ----------
    frame
        ``statistic, value, ci_low, ci_high`` (label level).
    confusion
        ``human`` grade rows, ``judge=<g>`` count columns.
    per_grade
        Per human grade: ``n, mean_judge, over, equal, under`` (shares).
    length_bias
        Per document-length quartile (with ``docs=``): ``bin, min_chars, max_chars, n,
        mean_human, mean_judge, mean_diff, cohen_kappa``; ``None`` without docs.
    systems
        Per measure (with ``runs=``): ``n_systems, kendall_tau, kendall_p, tau_ap,
        n_pairs, flips, flip_share``.
    rankings
        Per measure and run: ``human, judge`` mean values and ranks (1 = best).
    flips
        The pairs of runs whose significance verdict differs: ``measure, run_a, run_b,
        human, judge`` (verdicts ``">"``, ``"<"``, ``"="``).
    n_items, human_only, judge_only
        Pairs labelled by both, by the humans only, by the judge only.
    """

    frame: Any
    confusion: Any
    per_grade: Any
    length_bias: Any
    systems: Any
    rankings: Any
    flips: Any
    n_items: int
    human_only: int
    judge_only: int
    categories: list[int]
    _m: np.ndarray

    @property
    def counts(self) -> np.ndarray:
        """The human grade x judge grade counts (rows and columns in ``categories`` order)."""
        return self._m

    def __repr__(self) -> str:
        f = self.frame if isinstance(self.frame, pl.DataFrame) else pl.from_pandas(self.frame)
        vals = dict(zip(f["statistic"].to_list(), f["value"].to_list(), strict=True))
        return (f"JudgeAgreement({self.n_items} pairs: kappa={vals['cohen_kappa']:.3f}, "
                f"quadratic kappa={vals['weighted_kappa_quadratic']:.3f}, ordinal alpha="
                f"{vals['krippendorff_alpha_ordinal']:.3f})")


def _paired(human: Any, auto: Any) -> tuple[pl.DataFrame, int, int, Any]:
    kind = input_kind(human)
    h = qrels_pl(human).rename({"relevance": "human"})
    a = qrels_pl(auto if not hasattr(auto, "qrels") else auto.qrels).rename({"relevance": "judge"})
    both = h.join(a, on=["query_id", "doc_id"], how="inner").sort("query_id", "doc_id")
    if both.height == 0:
        raise IdMismatchError(
            f"{_F}: no (query, document) pair is labelled by both the humans and the judge; "
            "judge the pairs of the human sample (e.g. sef.judge(human_qrels, judge, ...))"
        )
    return both, h.height - both.height, a.height - both.height, kind


def _confusions(both: pl.DataFrame, cats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-query confusion matrices (Q × C × C) and the query index."""
    qids, qi = np.unique(both["query_id"].to_numpy(), return_inverse=True)
    hi = np.searchsorted(cats, both["human"].to_numpy())
    ji = np.searchsorted(cats, both["judge"].to_numpy())
    per_q = np.zeros((len(qids), len(cats), len(cats)))
    np.add.at(per_q, (qi, hi, ji), 1)
    return per_q, qids


def _summary(per_q: np.ndarray, cats: np.ndarray, n_resamples: int, ci: float,
             seed: int | None) -> pl.DataFrame:
    m = per_q.sum(axis=0)
    point = _label_stats(m, cats)
    rng = np.random.default_rng(seed)
    q = per_q.shape[0]
    boot = np.empty((n_resamples, len(_STATS)))
    for r in range(n_resamples):  # cluster bootstrap: resample whole queries
        w = np.bincount(rng.integers(0, q, q), minlength=q).astype(np.float64)
        boot[r] = _label_stats(np.tensordot(w, per_q, axes=1), cats)
    with warnings.catch_warnings():  # a statistic undefined in every resample stays NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = np.nanpercentile(boot, [(1 - ci) / 2 * 100, (1 + ci) / 2 * 100], axis=0)
    return pl.DataFrame({"statistic": list(_STATS), "value": point, "ci_low": lo.tolist(),
                         "ci_high": hi.tolist()})


def _per_grade(both: pl.DataFrame) -> pl.DataFrame:
    return both.group_by("human").agg(
        pl.len().cast(pl.Int64).alias("n"),
        pl.col("judge").mean().alias("mean_judge"),
        (pl.col("judge") > pl.col("human")).mean().alias("over"),
        (pl.col("judge") == pl.col("human")).mean().alias("equal"),
        (pl.col("judge") < pl.col("human")).mean().alias("under"),
    ).sort("human")


def _length_bias(both: pl.DataFrame, docs: Any, cats: np.ndarray) -> pl.DataFrame:
    d = docs_texts(docs).select("doc_id", pl.col("text").str.len_chars().alias("chars"))
    x = both.join(d, on="doc_id", how="inner")
    edges = np.unique(np.quantile(x["chars"].to_numpy(), [0.25, 0.5, 0.75]))
    x = x.with_columns(pl.Series("bin", np.searchsorted(edges, x["chars"].to_numpy(),
                                                        side="right") + 1, dtype=pl.Int64))
    rows = []
    for b, g in x.sort("bin").group_by("bin", maintain_order=True):
        m = np.zeros((len(cats), len(cats)))
        np.add.at(m, (np.searchsorted(cats, g["human"].to_numpy()),
                      np.searchsorted(cats, g["judge"].to_numpy())), 1)
        rows.append({"bin": int(b[0]), "min_chars": int(g["chars"].min()),  # type: ignore[arg-type]
                     "max_chars": int(g["chars"].max()), "n": g.height,  # type: ignore[arg-type]
                     "mean_human": float(g["human"].mean()),  # type: ignore[arg-type]
                     "mean_judge": float(g["judge"].mean()),  # type: ignore[arg-type]
                     "mean_diff": float((g["judge"] - g["human"]).mean()),  # type: ignore[arg-type]
                     "cohen_kappa": kappa_from_confusion(m, cats)})
    return pl.DataFrame(rows)


def _verdict(x: np.ndarray, y: np.ndarray, alpha: float, test: str) -> str:
    p = _st.paired_test(x, y, test, rng=0)
    if not np.isfinite(p) or p > alpha or float(np.mean(x - y)) == 0:
        return "="
    return ">" if float(np.mean(x - y)) > 0 else "<"


def _systems(runs: Any, human: pl.DataFrame, auto: pl.DataFrame, measures: Sequence[str],
             alpha: float, test: str) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    kendalltau = require("scipy.stats", "sef.judge_agreement").kendalltau

    r = runs_pl(runs)
    pq = {who: evaluate(r, q, list(measures), per_query=True)
          for who, q in (("human", human), ("judge", auto))}
    sys_rows, rank_rows, flip_rows = [], [], []
    for measure in measures:
        wide = {who: df.filter(pl.col("measure") == measure).pivot(
            on="run", index="query_id", values="value").sort("query_id").fill_null(0.0)
            for who, df in pq.items()}
        names = [c for c in wide["human"].columns if c != "query_id"]
        mh = np.array([wide["human"][n].mean() for n in names], dtype=np.float64)
        mj = np.array([wide["judge"][n].mean() for n in names], dtype=np.float64)
        tau, p = kendalltau(mh, mj)
        rh = (-mh).argsort(kind="stable").argsort() + 1
        rj = (-mj).argsort(kind="stable").argsort() + 1
        rank_rows += [{"measure": measure, "run": n, "human": float(mh[i]),
                       "judge": float(mj[i]), "human_rank": int(rh[i]),
                       "judge_rank": int(rj[i])} for i, n in enumerate(names)]
        flips = 0
        pairs = list(combinations(names, 2))
        for a, b in pairs:
            v = {who: _verdict(wide[who][a].to_numpy(), wide[who][b].to_numpy(), alpha, test)
                 for who in wide}
            if v["human"] != v["judge"]:
                flips += 1
                flip_rows.append({"measure": measure, "run_a": a, "run_b": b, **v})
        sys_rows.append({"measure": measure, "n_systems": len(names), "kendall_tau": float(tau),
                         "kendall_p": float(p), "tau_ap": tau_ap(mh, mj), "n_pairs": len(pairs),
                         "flips": flips, "flip_share": flips / len(pairs) if pairs else np.nan})
    flip_schema = {c: pl.String for c in ("measure", "run_a", "run_b", "human", "judge")}
    return (pl.DataFrame(sys_rows), pl.DataFrame(rank_rows),
            pl.DataFrame(flip_rows, schema=flip_schema))


@old_spelling("judge_agreement", *OLD_JUDGE_AGREEMENT)
def judge_agreement(
    runs: Any = None,
    qrels: Any = None,
    auto: Any = None,
    *,
    measures: Sequence[str] = ("nDCG@10", "P@10", "AP"),
    docs: Any = None,
    grades: Sequence[int] | None = None,
    n_resamples: int = 1000,
    ci: float = 0.95,
    alpha: float = 0.05,
    test: str = "t",
    seed: int | None = 0,
) -> JudgeAgreement:
    """Agreement of an automatic judge with human labels, per label and per system ranking.

    Parameters
    ----------
    runs, measures
        The runs (``None``: the label statistics only), evaluated under each qrels on
        ``measures``, to compare the system rankings (Kendall's tau-b, tau_AP) and the
        paired-test verdicts (``test`` at level ``alpha``, uncorrected) of every pair.
    qrels, auto
        The human labels and the judge's (frames, files or a
        :class:`~searcheval_frames.judges.JudgeResult`); the label statistics use the
        pairs both labelled.
    docs
        Document texts (as for :func:`~searcheval_frames.judge`): bias vs length by
        quartiles of characters.
    grades
        The grade scale (default: every integer between the lowest and highest label);
        weighted kappas weigh disagreements by grade distance.
    n_resamples, ci, seed
        Bootstrap intervals: queries are resampled (labels within a query are not
        independent), ``ci`` percentile interval.

    Notes
    -----
    ``kappa = (p_o - p_e) / (1 - p_e)``; weighted: ``1 - sum(w m) / sum(w e)`` with
    ``w = |i-j|`` or ``(i-j)^2``. Krippendorff's alpha (ordinal) ``= 1 - D_o / D_e``
    (Krippendorff 2011). tau_AP: Yilmaz et al., SIGIR 2008. Faggioli et al., "Perspectives
    on LLMs for relevance judgment" (ICTIR 2023) argue for exactly this two-level check.

    Examples
    --------
    >>> import searcheval_frames as sef
    >>> human = {"q1": {"d1": 2, "d2": 0, "d3": 1, "d4": 0}, "q2": {"d1": 1, "d5": 2}}
    >>> auto = {"q1": {"d1": 2, "d2": 0, "d3": 0, "d4": 0}, "q2": {"d1": 1, "d5": 2}}
    >>> ag = sef.judge_agreement(None, human, auto, n_resamples=50)
    >>> round(ag.frame.filter(statistic="cohen_kappa")["value"][0], 4)
    0.75
    """
    if qrels is None or auto is None:
        raise InvalidOptionError(
            f"{_F}: pass the human qrels and the judge's labels, e.g. "
            f"{_F}(runs, qrels, auto) or, for the label statistics only, "
            f"{_F}(None, qrels, auto)")
    check_int(_F, "n_resamples", n_resamples, minimum=1, example="n_resamples=1000")
    check_float(_F, "ci", ci, minimum=0, maximum=1, open_min=True, open_max=True,
                example="ci=0.95")
    check_float(_F, "alpha", alpha, minimum=0, maximum=1, open_min=True, open_max=True,
                example="alpha=0.05")
    both, human_only, judge_only, kind = _paired(qrels, auto)
    seen = np.concatenate([both["human"].to_numpy(), both["judge"].to_numpy()])
    cats = np.unique(np.asarray(grades, dtype=np.int64)) if grades is not None else \
        np.arange(int(seen.min()), int(seen.max()) + 1)
    per_q, _ = _confusions(both, cats)
    m = per_q.sum(axis=0).astype(np.int64)
    confusion = pl.DataFrame({"human": cats.tolist()}).with_columns(
        pl.Series(f"judge={c}", m[:, j]) for j, c in enumerate(cats.tolist()))
    length = _length_bias(both, docs, cats) if docs is not None else None
    systems = rankings = flips = None
    if runs is not None:
        systems, rankings, flips = _systems(
            runs, qrels_pl(qrels), qrels_pl(auto if not hasattr(auto, "qrels") else auto.qrels),
            list(measures), alpha, test)

    def nat(x: pl.DataFrame | None) -> Any:
        return None if x is None else to_native(x, kind)

    return JudgeAgreement(
        frame=nat(_summary(per_q, cats, n_resamples, ci, seed)), confusion=nat(confusion),
        per_grade=nat(_per_grade(both)), length_bias=nat(length), systems=nat(systems),
        rankings=nat(rankings), flips=nat(flips), n_items=both.height, human_only=human_only,
        judge_only=judge_only, categories=cats.tolist(), _m=m)
