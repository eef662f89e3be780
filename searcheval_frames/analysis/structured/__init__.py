"""Comparisons with structure: replicates (seeds), datasets, variance components (issue #35).

* :mod:`.replicates`: :func:`compare_replicates` (mixed model or hierarchical bootstrap;
  never "reliably better" when one seed reverses it; the flat verdict beside it);
* :mod:`.datasets`: :func:`compare_datasets`, :func:`leaderboard_datasets` (per-dataset
  verdicts, Holm over datasets; macro mean, mean rank, Borda with two-stage bootstrap
  intervals, rank intervals and tied groups; the dataset mixed model);
* :mod:`.variance`: :func:`variance_components` (ANOVA and REML shares per factor);
* :mod:`.inputs` (:func:`evaluate_datasets`), :mod:`.mixed` (statsmodels REML),
  :mod:`.bootstrap`, :mod:`.aggregate`, :mod:`.result`.
"""

from .datasets import compare_datasets
from .inputs import evaluate_datasets
from .ranking import leaderboard_datasets, leaderboard_replicates
from .replicates import compare_replicates
from .result import (
    DatasetComparison,
    DatasetLeaderboard,
    StructuredComparison,
    VarianceComponents,
)
from .variance import variance_components

__all__ = ["DatasetComparison", "DatasetLeaderboard", "StructuredComparison",
           "VarianceComponents", "compare_datasets", "compare_replicates", "evaluate_datasets",
           "leaderboard_datasets", "leaderboard_replicates", "variance_components"]
