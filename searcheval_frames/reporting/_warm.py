"""What the report's later phases load, loaded early in a background thread.

The tests import scipy, the figures matplotlib, and the leaderboard compiles its
randomised-HSD kernel (or loads it from numba's cache): about a second of
single-threaded work in all. Started once the runs are read, it runs while the main
thread evaluates (polars and numpy release the GIL there), and it is joined before the
first phase that needs it, so the phases find everything loaded and nothing runs two
numba kernels at once.
"""

from __future__ import annotations

import importlib
import threading

__all__ = ["warm_up"]


def warm_up(*, figures: bool, leaderboard: bool) -> threading.Thread:
    """Start loading scipy's tests, matplotlib (``figures``) and the HSD kernel
    (``leaderboard``) in a daemon thread; the caller joins it before they are needed.

    A failure is left to the phase that needs the module: it imports it again and
    reports the error in its own words (``sef.optional.require``).
    """

    def work() -> None:
        try:
            importlib.import_module("scipy.stats")
            if figures:
                importlib.import_module("matplotlib.pyplot")
            if leaderboard:
                from ..analysis.leaderboard_stats import warm_kernel

                warm_kernel()
        except Exception:  # (reported where the module is used)
            return

    thread = threading.Thread(target=work, name="searcheval-report-warm-up", daemon=True)
    thread.start()
    return thread
