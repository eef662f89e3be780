"""The measure registry: families grouped in modules, parsing separate from computing.

>>> from searcheval_frames.measures import parse_measure
>>> parse_measure("ndcg_cut_10").name
'nDCG@10'
"""

from __future__ import annotations

from . import (  # noqa: F401  (register families)
    bpref,
    compat,
    counts,
    cwl,
    dcg,
    diversity,
    err,
    gain,
    intent_aware,
    ndcg,
    precision,
    rank,
    rbp,
    sampled,
    setbased,
)
from ._parsing import parse_measure, parse_measures
from .base import (
    REGISTRY,
    Context,
    Family,
    Measure,
    list_measures,
)

__all__ = [
    "REGISTRY",
    "Context",
    "Family",
    "Measure",
    "list_measures",
    "parse_measure",
    "parse_measures",
]
