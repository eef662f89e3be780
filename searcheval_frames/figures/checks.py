"""Option checks shared by the figure helpers (through :mod:`searcheval_frames.options`)."""

from __future__ import annotations

from typing import Any

from ..options import EvalOptions, check_bool, check_choice, check_int, check_optional_int


def check_curve_options(func: str, *, relevance_level: Any, missing: Any, depth: Any,
                        judged_only: Any, compat: Any, legend: Any = True) -> None:
    """The evaluation options a curve passes on, checked under the figure's own name."""
    EvalOptions(func=func, relevance_level=relevance_level, missing=missing, depth=depth,
                compat=compat, judged_only=judged_only)
    check_bool(func, "legend", legend)


def check_bool_or_none(func: str, name: str, value: Any) -> None:
    if value is not None:
        check_bool(func, name, value)


__all__ = ["check_bool", "check_bool_or_none", "check_choice", "check_curve_options",
           "check_int", "check_optional_int"]
