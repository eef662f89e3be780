"""The measure registry: one module per family, parsing separate from computing.

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
alias("ndcg_burges", "nDCG", gain="exp")  # ranx: 2^label - 1 gains

__all__ = [
    "REGISTRY",
    "Context",
    "Family",
    "Measure",
    "list_measures",
    "parse_measure",
    "parse_measures",
]
