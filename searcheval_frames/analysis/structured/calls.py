"""How ``sef.compare`` and ``sef.leaderboard`` reach the structured comparisons (issue #35).

``compare(..., replicate="seed")`` / ``compare(..., dataset="collection")`` and the same on
``leaderboard`` pass their arguments here (``args``: the caller's ``locals()``), as
``compare(by=)`` passes itself to :mod:`~searcheval_frames.analysis.slices`; the options
of the structured functions (``method=``, ``aggregate=``, ``engine=``, ``mixed=``) come
through the caller's ``**evaluate_options``.
"""

from __future__ import annotations

from typing import Any

from .datasets import compare_datasets
from .ranking import leaderboard_datasets, leaderboard_replicates
from .replicates import compare_replicates

__all__ = ["structured_compare", "structured_leaderboard"]

#: compare's / leaderboard's own options the structured functions take as well
_SHARED = ("per_query", "alpha", "ci", "n_resamples", "seed", "missing")


def _shared(args: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    out = {k: args[k] for k in names if k in args}
    out.update(args.get("evaluate_options") or {})
    return out


def structured_compare(args: dict[str, Any]) -> Any:
    """``compare`` with ``replicate=`` (seeds: :func:`compare_replicates`, which also
    takes ``dataset=``) or ``dataset=`` alone (:func:`compare_datasets`)."""
    opts = _shared(args, (*_SHARED, "correction"))
    if args.get("columns"):
        opts["columns"] = args["columns"]
    if args["replicate"] is not None:
        return compare_replicates(args["runs"], args["qrels"], args["measures"],
                                  baseline=args["baseline"], replicate=args["replicate"],
                                  dataset=args["dataset"], pairs=args["pairs"], **opts)
    return compare_datasets(args["runs"], args["qrels"], args["measures"],
                            baseline=args["baseline"], dataset=args["dataset"], **opts)


def structured_leaderboard(args: dict[str, Any]) -> Any:
    """``leaderboard`` with ``replicate=`` (:func:`leaderboard_replicates`) or ``dataset=``
    (:func:`leaderboard_datasets`)."""
    opts = _shared(args, _SHARED)
    if args["replicate"] is not None:
        return leaderboard_replicates(args["runs"], args["qrels"], args["measure"],
                                      replicate=args["replicate"], **opts)
    return leaderboard_datasets(args["runs"], args["qrels"], args["measure"],
                                dataset=args["dataset"], **opts)
