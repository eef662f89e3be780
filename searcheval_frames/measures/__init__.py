"""The measure registry: one module per family, parsing separate from computing.

>>> from searcheval_frames.measures import parse_measure
>>> parse_measure("ndcg_cut_10").name
'nDCG@10'
"""

from __future__ import annotations

from . import (  # noqa: F401  (register families)
    bpref,
    counts,
    gain,
    ndcg,
    precision,
    rank,
    sampled,
    setbased,
)
from .base import (
    REGISTRY,
    Context,
    Family,
    Measure,
    alias,
    list_measures,
    parse_measure,
    parse_measures,
)

# common spellings that pin something
alias("mrr", "RR")
alias("hit_rate", "Success")

__all__ = [
    "REGISTRY",
    "Context",
    "Family",
    "Measure",
    "list_measures",
    "parse_measure",
    "parse_measures",
]
