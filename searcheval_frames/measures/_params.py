"""Measure parameters, declared once: a parser, a default and a description each.

In the spirit of ir_measures' ``ParamInfo``: a family lists its parameters as
:class:`Param` values (``params = params_of(REL, GAIN)``); the name parser calls
them to read ``key=value`` text, and :func:`~searcheval_frames.measures.list_measures`
and the generated docs print their descriptions. A parser raises ``ValueError`` for a
bad value; the parser of the measure name turns that into an
:class:`~searcheval_frames.errors.UnknownMeasureError` that shows :attr:`Param.hint`.

Gain maps are written ``{label:gain,...}``; the canonical text of a value is
:func:`format_param`, so ``nDCG(gain={0:0,1:1,2:3})@10`` parses back to itself.

>>> REL("2"), GAIN("{2:3,1:1}"), PERSISTENCE("0.8")
(2, ((1, 1.0), (2, 3.0)), 0.8)
>>> format_param(GAIN("{0:0,1:1,2:3}"))
'{0:0,1:1,2:3}'
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "GAIN",
    "PARAM_ALIASES",
    "PERSISTENCE",
    "REL",
    "Param",
    "format_cutoff",
    "format_number",
    "format_param",
    "params_of",
    "parse_gains",
    "split_outside",
]


@dataclass(frozen=True)
class Param:
    """One measure parameter: ``name=value`` in a measure name.

    Attributes
    ----------
    name
        The key in the measure name, e.g. ``"rel"``.
    parse
        Text -> value; raises ``ValueError`` for a bad value.
    description
        One line for :func:`~searcheval_frames.measures.list_measures` and the docs.
    default
        What an absent parameter means, as text for people (the computation holds the
        number; ``Family.param_defaults`` says which values drop from the name).
    hint
        Shown after a bad value, e.g. ``"a label >= 0, e.g. rel=2"``.
    low, high, open_low, open_high
        The valid range of a number (as the cutoffs have one): ``low <= value <= high``,
        strict where ``open_``; ``None``: unbounded. A value outside, NaN or infinite is
        refused with the range in the message (``SetF(beta=-1)`` is an error, not 0).

    >>> Param("p", float, "persistence", low=0, high=1, open_low=True, open_high=True).rule
    'must be in (0, 1)'
    """

    name: str
    parse: Callable[[str], Any]
    description: str
    default: str = ""
    hint: str = ""
    low: float | None = None
    high: float | None = None
    open_low: bool = False
    open_high: bool = False

    def __call__(self, text: str) -> Any:
        value = self.parse(text)
        if isinstance(value, int | float) and not isinstance(value, bool) and not (
                math.isfinite(value) and self.inside(value)):
            raise ValueError(f"{self.name}={text}: {self.rule}")
        return value

    @property
    def bounded(self) -> bool:
        """Whether the parameter declares a range."""
        return self.low is not None or self.high is not None

    def inside(self, value: float) -> bool:
        """``value`` within the declared range."""
        if self.low is not None and (value <= self.low if self.open_low else value < self.low):
            return False
        return self.high is None or (value < self.high if self.open_high else value <= self.high)

    @property
    def rule(self) -> str:
        """The valid values in words: ``"must be in (0, 1)"``, ``"must be >= 1"``; the
        hint when there is one."""
        if self.hint or not self.bounded:
            return self.hint
        if self.low is not None and self.high is not None:
            lo, hi = "(" if self.open_low else "[", ")" if self.open_high else "]"
            return f"must be in {lo}{format_number(self.low)}, {format_number(self.high)}{hi}"
        if self.low is not None:
            return f"must be {'>' if self.open_low else '>='} {format_number(self.low)}"
        return f"must be {'<' if self.open_high else '<='} {format_number(float(self.high or 0))}"


def params_of(*params: Param) -> dict[str, Param]:
    """A family's ``params`` mapping from its :class:`Param` values.

    >>> sorted(params_of(REL, GAIN))
    ['gain', 'rel']
    """
    return {p.name: p for p in params}


def non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise ValueError(text)
    return value


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def open_unit(text: str) -> float:
    """A number in (0, 1)."""
    value = float(text)
    if not 0.0 < value < 1.0:
        raise ValueError(text)
    return value


def closed_unit(text: str) -> float:
    """A number in [0, 1]."""
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise ValueError(text)
    return value


def parse_gains(text: str) -> tuple[tuple[int, float], ...] | str:
    """``linear``, ``exp`` or a gain map ``{label:gain,...}`` (sorted by label)."""
    t = text.strip()
    if t.lower() in ("linear", "lin", "exp", "exponential"):
        return "exp" if t.lower().startswith("exp") else "linear"
    t = t.strip("{}")
    pairs = []
    for part in re.split(r"[,;]", t):
        if not part.strip():
            continue
        k, _, v = part.replace("=", ":").partition(":")
        pairs.append((int(k), float(v)))
    if not pairs:
        raise ValueError(text)
    return tuple(sorted(pairs))


def format_number(x: float) -> str:
    """``3.0`` -> ``"3"``, ``0.8`` -> ``"0.8"``."""
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def format_param(v: Any) -> str:
    """The canonical text of a parameter value (gain maps as ``{label:gain,...}``)."""
    if isinstance(v, tuple):  # gain map: ((rel, gain), ...)
        inner = ",".join(f"{r}:{format_number(g)}" for r, g in v)
        return "{" + inner + "}"
    return str(v)


def format_cutoff(c: int | float) -> str:
    return str(c) if isinstance(c, int) else repr(float(c))


def split_outside(text: str, brackets: str = "{}") -> list[str]:
    """Split ``text`` on commas that are not inside ``brackets`` (e.g. ``"{}"`` or ``"()"``).

    >>> split_outside("gain={0:0,1:1},rel=2")
    ['gain={0:0,1:1}', 'rel=2']
    """
    opening, closing = brackets[0], brackets[1]
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == opening:
            depth += 1
        elif ch == closing:
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return [part for part in out if part.strip()]


#: other spellings of a parameter key
PARAM_ALIASES = {"gains": "gain"}

REL = Param("rel", non_negative_int,
            "relevance level: documents labelled >= rel count as relevant",
            default="the evaluation's relevance_level", hint="a label >= 0, e.g. rel=2", low=0)
GAIN = Param("gain", parse_gains,
             "gain of a label: linear (the label), exp (2^label-1) or a map {label:gain,...}",
             default="linear")
PERSISTENCE = Param("p", open_unit,
                    "persistence: the probability of reading on to the next document, in (0, 1)",
                    low=0, high=1, open_low=True, open_high=True)
