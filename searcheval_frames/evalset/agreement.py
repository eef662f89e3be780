"""Agreement between assessors: raw agreement, Cohen's kappa (plain, linear and
quadratic weighted) per pair, Fleiss' kappa over all, confusion matrices.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import polars as pl

from ..errors import InsufficientDataError, InvalidOptionError, InvalidRelevanceError, format_rows
from ..frames import to_native
from ._assessors import long_labels

__all__ = ["Agreement", "agreement", "cohen_kappa", "confusion_matrix", "fleiss_kappa"]


def confusion_matrix(
    a: Sequence[int] | np.ndarray,
    b: Sequence[int] | np.ndarray,
    categories: Sequence[int] | np.ndarray,
) -> np.ndarray:
    """Counts ``m[i, j]``: items labelled ``categories[i]`` by a and ``categories[j]`` by b."""
    cats = np.asarray(categories)
    ia = np.searchsorted(cats, np.asarray(a))
    ib = np.searchsorted(cats, np.asarray(b))
    m = np.zeros((len(cats), len(cats)), dtype=np.int64)
    np.add.at(m, (ia, ib), 1)
    return m


def cohen_kappa(
    a: Sequence[int] | np.ndarray,
    b: Sequence[int] | np.ndarray,
    *,
    weights: Literal["linear", "quadratic"] | None = None,
    categories: Sequence[int] | None = None,
) -> float:
    """Cohen's kappa of two assessors' labels on the same items (optionally weighted).

    Weighted kappa uses disagreement weights ``|i - j|`` (linear) or ``(i - j)**2``
    (quadratic) over the grade values; ``categories`` defaults to every integer between
    the smallest and the largest label, so that 0 vs 3 weighs three times 0 vs 1. Returns
    NaN when chance agreement is 1 (both give one and the same label throughout).

    >>> cohen_kappa([0, 1, 1, 0], [0, 1, 0, 0])
    0.5
    """
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    if a.shape != b.shape or a.ndim != 1:
        raise InvalidOptionError("cohen_kappa: a and b must be 1-d sequences of the same length")
    if a.size == 0:
        return float("nan")
    if categories is None:
        lo, hi = int(min(a.min(), b.min())), int(max(a.max(), b.max()))
        cats = np.arange(lo, hi + 1)
    else:
        cats = np.unique(np.asarray(categories, dtype=np.int64))
        if not np.isin(a, cats).all() or not np.isin(b, cats).all():
            raise InvalidRelevanceError("cohen_kappa: a label is not among categories")
    m = confusion_matrix(a, b, cats).astype(np.float64)
    n = m.sum()
    expected = np.outer(m.sum(axis=1), m.sum(axis=0)) / n
    if weights is None:
        w = 1.0 - np.eye(len(cats))
    elif weights in ("linear", "quadratic"):
        diff = np.abs(cats[:, None] - cats[None, :]).astype(np.float64)
        w = diff if weights == "linear" else diff**2
    else:
        raise InvalidOptionError(f"weights={weights!r}: use None, 'linear' or 'quadratic'")
    denom = float((w * expected).sum())
    if denom == 0.0:
        return float("nan")
    return float(1.0 - (w * m).sum() / denom)


def fleiss_kappa(counts: np.ndarray | Sequence[Sequence[int]]) -> float:
    """Fleiss' kappa from an items × categories table of counts (same raters per item).

    >>> round(fleiss_kappa([[2, 0], [0, 2], [1, 1]]), 6)  # 3 items, 2 raters each
    0.333333
    """
    t = np.asarray(counts, dtype=np.float64)
    if t.ndim != 2 or t.shape[0] == 0:
        raise InvalidOptionError("fleiss_kappa: counts must be a non-empty items × categories table")
    raters = t.sum(axis=1)
    if not np.all(raters == raters[0]) or raters[0] < 2:
        raise InvalidOptionError(
            "fleiss_kappa: every item needs the same number (>= 2) of ratings; keep only the "
            "items all assessors labelled"
        )
    m = raters[0]
    n_items = t.shape[0]
    p_item = ((t * t).sum(axis=1) - m) / (m * (m - 1))
    p_bar = p_item.mean()
    p_cat = t.sum(axis=0) / (n_items * m)
    p_e = float((p_cat**2).sum())
    if p_e == 1.0:
        return float("nan")
    return float((p_bar - p_e) / (1.0 - p_e))


@dataclass
class Agreement:
    """Agreement between assessors, from :func:`agreement`.

    Attributes
    ----------
    pairs
        One row per pair of assessors: ``assessor_a, assessor_b, n_items`` (documents
        both labelled), ``raw_agreement``, ``cohen_kappa``, ``weighted_kappa_linear``,
        ``weighted_kappa_quadratic``.
    fleiss_kappa
        Fleiss' kappa over the documents every assessor labelled (NaN if none).
    fleiss_items
        How many documents that is.
    assessors, categories
        The assessors (sorted) and the grade values used.
    frame
        :attr:`pairs` (the result convention: ``.frame`` in the caller's frame kind).
    """

    pairs: Any
    fleiss_kappa: float
    fleiss_items: int
    assessors: list[str]
    categories: list[int]
    _long: pl.DataFrame = field(repr=False)
    _kind: Any = field(repr=False)

    @property
    def frame(self) -> Any:
        """The per-pair agreement frame (:attr:`pairs`), in the caller's frame kind."""
        return self.pairs

    def confusion(self, a: str | None = None, b: str | None = None) -> Any:
        """Confusion matrix of two assessors (default: the first pair) as a frame.

        Rows: ``a``'s label (column named after ``a``); columns ``"<b>=<grade>"``: counts
        of documents both labelled.
        """
        if a is None and b is None:
            if len(self.assessors) < 2:
                raise InsufficientDataError("confusion: needs two assessors")
            a, b = self.assessors[0], self.assessors[1]
        for name, who in (("a", a), ("b", b)):
            if who not in self.assessors:
                raise InvalidOptionError(f"{name}={who!r}: not an assessor; they are {self.assessors}")
        xa, xb = _paired(self._long, str(a), str(b))
        m = confusion_matrix(xa, xb, self.categories)
        out = pl.DataFrame({str(a): self.categories}).with_columns(
            pl.Series(f"{b}={c}", m[:, j]) for j, c in enumerate(self.categories)
        )
        return to_native(out, self._kind)

    def __repr__(self) -> str:
        return (
            f"Agreement({len(self.assessors)} assessors, fleiss_kappa={self.fleiss_kappa:.4f} "
            f"on {self.fleiss_items} documents)\n{self.pairs!r}"
        )


def _paired(df: pl.DataFrame, a: str, b: str) -> tuple[np.ndarray, np.ndarray]:
    key = ["query_id", "doc_id"]
    la = df.filter(pl.col("assessor") == a).select(*key, pl.col("label").alias("a"))
    lb = df.filter(pl.col("assessor") == b).select(*key, pl.col("label").alias("b"))
    both = la.join(lb, on=key, how="inner").sort(key)
    return both["a"].to_numpy(), both["b"].to_numpy()


def agreement(labels: Any, *, grades: Sequence[int] | None = None) -> Agreement:
    """Inter-assessor agreement: raw agreement, Cohen's and weighted kappa, Fleiss' kappa.

    Parameters
    ----------
    labels
        Several assessors' labels, as for :func:`merge_labels` (dict ``{assessor:
        qrels}``, stores, journal paths or a frame with an ``assessor`` column).
    grades
        The grade scale (e.g. ``[0, 1, 2, 3]``); default: every integer from the lowest
        to the highest label seen. Weighted kappas weigh disagreements by grade distance.

    Returns
    -------
    Agreement
        ``.pairs`` (a frame, one row per pair of assessors), ``.fleiss_kappa`` (over the
        documents all assessors labelled), ``.confusion(a, b)`` (a frame).

    Examples
    --------
    >>> import searcheval_frames as sef
    >>> labels = {"a": {"q1": {"d1": 1, "d2": 0, "d3": 1, "d4": 0}},
    ...           "b": {"q1": {"d1": 1, "d2": 0, "d3": 0, "d4": 0}}}
    >>> ag = sef.agreement(labels)
    >>> ag.pairs.select("raw_agreement", "cohen_kappa").row(0)
    (0.75, 0.5)
    """
    df, kind = long_labels(labels)
    assessors = sorted(df["assessor"].unique().to_list())
    if len(assessors) < 2:
        raise InsufficientDataError(f"labels: agreement needs at least two assessors; found {assessors}")
    if grades is not None:
        cats = sorted({int(g) for g in grades})
        outside = df.filter(~pl.col("label").is_in(cats))
        if outside.height:
            raise InvalidRelevanceError(
                f"labels: {outside.height} label(s) are not in grades={list(grades)}:\n"
                f"{format_rows(outside)}"
            )
    else:
        lo, hi = df["label"].min(), df["label"].max()
        cats = list(range(int(lo), int(hi) + 1))  # type: ignore[arg-type]
    rows = []
    for i, a in enumerate(assessors):
        for b in assessors[i + 1 :]:
            xa, xb = _paired(df, a, b)
            n = int(xa.size)
            if n == 0:
                raw = ck = kl = kq = float("nan")
            else:
                raw = float((xa == xb).mean())
                ck = cohen_kappa(xa, xb, categories=cats)
                kl = cohen_kappa(xa, xb, weights="linear", categories=cats)
                kq = cohen_kappa(xa, xb, weights="quadratic", categories=cats)
            rows.append((a, b, n, raw, ck, kl, kq))
    pairs = pl.DataFrame(
        rows,
        schema={
            "assessor_a": pl.String,
            "assessor_b": pl.String,
            "n_items": pl.Int64,
            "raw_agreement": pl.Float64,
            "cohen_kappa": pl.Float64,
            "weighted_kappa_linear": pl.Float64,
            "weighted_kappa_quadratic": pl.Float64,
        },
        orient="row",
    )
    key = ["query_id", "doc_id"]
    full = df.filter(pl.len().over(key) == len(assessors))
    if full.height:
        counts = (
            full.group_by([*key, "label"])
            .agg(pl.len().alias("c"))
            .pivot(on="label", index=key, values="c")
            .fill_null(0)
        )
        label_cols = [c for c in counts.columns if c not in key]
        fk = fleiss_kappa(counts.select(label_cols).to_numpy())
        n_full = counts.height
    else:
        fk, n_full = float("nan"), 0
    return Agreement(
        pairs=to_native(pairs, kind),
        fleiss_kappa=fk,
        fleiss_items=n_full,
        assessors=assessors,
        categories=cats,
        _long=df,
        _kind=kind,
    )
