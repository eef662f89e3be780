"""Grades: the labels a label sheet, the widget or a store accepts.

* :func:`normalize_grades` / :func:`grade_names`: the accepted labels (integers or names).
* :data:`ASSESSOR_COLUMNS`: the recognised names of an assessor column.

Reading one label, a pool or the query / document texts is shared by the evalset
modules through :mod:`searcheval_frames.evalset._labels`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..errors import InvalidOptionError

Grades = Sequence[int] | Mapping[str, int] | None

ASSESSOR_COLUMNS = ("assessor", "annotator", "rater", "judge", "labeler", "labeller", "user")


# --------------------------------------------------------------------------- grades
def normalize_grades(grades: Grades, arg: str = "grades") -> dict[str, int] | None:
    """``grades`` as {accepted text: grade}; ``None`` accepts any integer.

    A sequence of integers ``[0, 1, 2, 3]`` accepts those numbers; a mapping
    ``{"not relevant": 0, "relevant": 1}`` accepts the names (case-insensitive) and the
    numbers.
    """
    if grades is None:
        return None
    out: dict[str, int] = {}
    if isinstance(grades, Mapping):
        items = list(grades.items())
    elif isinstance(grades, str | bytes):
        raise InvalidOptionError(f"{arg}={grades!r}: give a list of integers or a mapping name→int")
    else:
        items = [(str(g), g) for g in grades]
    if not items:
        raise InvalidOptionError(f"{arg}: at least one grade is needed, e.g. grades=[0, 1, 2, 3]")
    for name, value in items:
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise InvalidOptionError(
                f"{arg}: grade {name!r} has value {value!r}; grades must be integers "
                "(0 = not relevant, 1, 2, ... graded)"
            )
        out[str(name).strip().lower()] = int(value)
        out[str(int(value))] = int(value)
    return out


def grade_names(grades: Grades) -> list[tuple[int, str]]:
    """[(grade, display name)] in grade order, for sheets and the widget."""
    if grades is None:
        return [(0, "0"), (1, "1")]
    if isinstance(grades, Mapping):
        pairs = [(int(v), str(k)) for k, v in grades.items()]
    else:
        pairs = [(int(g), str(int(g))) for g in grades]
    seen: dict[int, str] = {}
    for v, n in pairs:
        seen.setdefault(v, n)
    return sorted(seen.items())
