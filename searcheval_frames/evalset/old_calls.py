"""The evaluation set's calling conventions before issue #31, kept for a while with a warning.

``pool(runs, qrels=None, depth=20)`` (qrels second, as everywhere; it was
``pool(runs, depth, *, qrels=)``), ``label_widget(pool, *, store=)`` (its first parameter
was the store although the pool is what one labels) and
``judge_agreement(runs, qrels, auto)`` (it was ``judge_agreement(human, auto, *, runs=)``).
Each ``OLD_...`` is ``(old signature, is_old, translate)`` for
:func:`searcheval_frames._deprecation.old_spelling`.
"""

from __future__ import annotations

import os
from typing import Any

from ..analysis.calling import renamed

__all__ = ["OLD_JUDGE_AGREEMENT", "OLD_LABEL_WIDGET", "OLD_POOL"]


def _old_pool(runs: Any, depth: Any = 20, *, qrels: Any = None) -> None:
    """``pool(runs, depth=20, *, qrels=None, ...)``."""


def _pool_is_old(args: tuple, kwargs: dict) -> bool:
    """``pool(runs, 20)``: a depth where qrels go now."""
    return len(args) >= 2 and isinstance(args[1], int) and not isinstance(args[1], bool)


def _old_label_widget(store: Any = None, pool: Any = None) -> None:
    """``label_widget(store=None, pool=None, *, ...)``."""


def _label_widget_is_old(args: tuple, kwargs: dict) -> bool:
    """``label_widget(path, pool)``, ``label_widget(path, pool=pool)``: a store first."""
    if len(args) >= 2:
        return True
    return (len(args) == 1 and isinstance(args[0], str | os.PathLike)) or (
        len(args) == 1 and type(args[0]).__name__ == "LabelStore")


def _old_judge_agreement(human: Any, auto: Any, *, runs: Any = None) -> None:
    """``judge_agreement(human, auto, *, runs=None, ...)``."""


def _judge_agreement_is_old(args: tuple, kwargs: dict) -> bool:
    """``judge_agreement(human, auto)``, ``judge_agreement(human=..., ...)``."""
    if "human" in kwargs:
        return True
    if "auto" in kwargs:
        return len(args) == 1 and "qrels" not in kwargs
    return len(args) == 2


OLD_POOL = (_old_pool, _pool_is_old, renamed({}))
OLD_LABEL_WIDGET = (_old_label_widget, _label_widget_is_old, renamed({}))
OLD_JUDGE_AGREEMENT = (_old_judge_agreement, _judge_agreement_is_old,
                       renamed({"human": "qrels"}))
