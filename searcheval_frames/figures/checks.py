"""Option checks shared by the figure helpers (through :mod:`searcheval_frames.options`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..core.evaluate import _check_options
from ..errors import InvalidOptionError
from ..options import check_bool, check_choice, check_int, check_optional_int


def check_curve_options(func: str, *, relevance_level: Any, missing: Any, depth: Any,
                        judged_only: Any, compat: Any, legend: Any = True) -> None:
    """The evaluation options a curve passes on, checked under the figure's own name."""
    _check_options(relevance_level, missing, depth, compat, "canonical", func=func,
                   judged_only=judged_only)
    check_bool(func, "legend", legend)


def check_levels(func: str, levels: Any) -> None:
    """``"11pt"``, ``"all"``, a number of levels >= 2, or recall levels in [0, 1]."""
    if isinstance(levels, str):
        check_choice(func, "levels", levels, ("11pt", "all"), example="levels='11pt'")
        return
    if isinstance(levels, int) and not isinstance(levels, bool):
        check_int(func, "levels", levels, minimum=2, what="evenly spaced recall levels",
                  example="levels=21")
        return
    ok = isinstance(levels, Sequence) and len(levels) > 0 and all(
        isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
        and 0.0 <= v <= 1.0 for v in levels)
    if not ok:
        raise InvalidOptionError(
            f"{func}(levels={levels!r}): must be '11pt', 'all', a number of levels >= 2 or a "
            f"list of recall levels in [0, 1]; got {levels!r}. Example: levels=[0.0, 0.5, 1.0]")


def check_bool_or_none(func: str, name: str, value: Any) -> None:
    if value is not None:
        check_bool(func, name, value)


__all__ = ["check_bool", "check_bool_or_none", "check_choice", "check_curve_options",
           "check_int", "check_levels", "check_optional_int"]
