"""Fusion of several runs into one (layer 4: imports errors, options, frames, io, core).

* ``methods``: :func:`fuse` (RRF, CombSUM/MNZ/MAX/MIN/MED/ANZ, weighted sum,
  BordaFuse, ISR, LogISR) and the score normalisations, as polars group-bys;
* ``parts``: the cut of a large input into ranges of query ids that ``fuse`` fuses
  one at a time (same result, bounded memory);
* ``optimize``: :func:`optimize_fusion`, which picks weights or RRF's ``k`` on
  training queries with :func:`searcheval_frames.evaluate`'s engine.

The rules (formulas, documents missing from a run, ties, where ranx differs)
are written down in ``docs/fusion.md``.
"""

from .methods import METHODS, NORMS, fuse
from .optimize import FusionSearch, optimize_fusion

__all__ = ["METHODS", "NORMS", "FusionSearch", "fuse", "optimize_fusion"]
