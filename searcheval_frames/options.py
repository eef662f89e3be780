"""One place where public functions check their options before any work (layer 0).

Every check raises :class:`~searcheval_frames.errors.InvalidOptionError` (a
``SearchEvalError``, so a ``ValueError``) in the project's form: which function and
option, what was given, what is allowed, and an example::

    pool(depth=0): must be an integer >= 1 (how many top documents per query to look
    at); got 0. Example: depth=20

>>> from searcheval_frames.options import check_int, check_choice
>>> check_int("pool", "depth", 20, minimum=1)
20
>>> check_choice("evaluate", "missing", "skip", ("zero", "skip"))
'skip'
>>> check_int("pool", "depth", 0, minimum=1, example="depth=20")
Traceback (most recent call last):
...
searcheval_frames.errors.InvalidOptionError: pool(depth=0): must be an integer >= 1; got 0. Example: depth=20
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

from .errors import InvalidOptionError

T = TypeVar("T")

__all__ = [
    "check_bool",
    "check_choice",
    "check_float",
    "check_int",
    "check_known",
    "check_optional_int",
    "check_str_list",
]


def _fail(func: str, name: str, value: Any, rule: str, example: str | None) -> InvalidOptionError:
    msg = f"{func}({name}={value!r}): {rule}; got {value!r}."
    if example:
        msg += f" Example: {example}"
    return InvalidOptionError(msg)


def check_int(
    func: str,
    name: str,
    value: Any,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    what: str = "",
    example: str | None = None,
) -> int:
    """``value`` as an int within [minimum, maximum]; bools and floats are refused."""
    rule = "must be an integer"
    if minimum is not None and maximum is not None:
        rule += f" between {minimum} and {maximum}"
    elif minimum is not None:
        rule += f" >= {minimum}"
    elif maximum is not None:
        rule += f" <= {maximum}"
    if what:
        rule += f" ({what})"
    ok = isinstance(value, int) and not isinstance(value, bool)
    if ok and minimum is not None and value < minimum:
        ok = False
    if ok and maximum is not None and value > maximum:
        ok = False
    if not ok:
        raise _fail(func, name, value, rule, example)
    return int(value)


def check_optional_int(func: str, name: str, value: Any, **kwargs: Any) -> int | None:
    """Like :func:`check_int`, but ``None`` passes through."""
    if value is None:
        return None
    try:
        return check_int(func, name, value, **kwargs)
    except InvalidOptionError as exc:
        raise InvalidOptionError(str(exc).replace("; got", ", or None; got", 1)) from None


def check_float(
    func: str,
    name: str,
    value: Any,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    open_min: bool = False,
    open_max: bool = False,
    what: str = "",
    example: str | None = None,
) -> float:
    """``value`` as a finite float in the given (closed or open) range; bools refused."""
    lo = "(" if open_min else "["
    hi = ")" if open_max else "]"
    rule = "must be a finite number"
    if minimum is not None or maximum is not None:
        a = "-inf" if minimum is None else f"{minimum:g}"
        b = "inf" if maximum is None else f"{maximum:g}"
        rule += f" in {lo}{a}, {b}{hi}"
    if what:
        rule += f" ({what})"
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if ok:
        v = float(value)
        ok = math.isfinite(v)
        if ok and minimum is not None:
            ok = v > minimum if open_min else v >= minimum
        if ok and maximum is not None:
            ok = v < maximum if open_max else v <= maximum
    if not ok:
        raise _fail(func, name, value, rule, example)
    return float(value)


def check_bool(func: str, name: str, value: Any) -> bool:
    """``value`` must be ``True`` or ``False`` (not 0/1, not a string)."""
    if not isinstance(value, bool):
        raise _fail(func, name, value, "must be True or False", f"{name}=True")
    return value


def check_choice(
    func: str, name: str, value: Any, allowed: Sequence[T], *, example: str | None = None
) -> T:
    """``value`` must be one of ``allowed`` (compared with ``==``)."""
    for a in allowed:
        if value == a and type(value) is type(a):
            return a
    shown = ", ".join(repr(a) for a in allowed)
    raise _fail(func, name, value, f"must be one of {shown}",
                example or f"{name}={allowed[0]!r}")


def check_str_list(
    func: str, name: str, value: Any, *, allow_empty: bool = False, example: str | None = None
) -> list[str]:
    """A string or an iterable of strings, as a list (a lone string is one item)."""
    if isinstance(value, str):
        items = [value]
    elif isinstance(value, Iterable) and not isinstance(value, bytes | dict):
        items = list(value)
    else:
        raise _fail(func, name, value, "must be a string or a list of strings", example)
    bad = [v for v in items if not isinstance(v, str)]
    if bad:
        raise _fail(func, name, value, f"must hold only strings (not {bad[0]!r})", example)
    if not items and not allow_empty:
        raise _fail(func, name, value, "must not be empty", example)
    return items


def check_known(func: str, given: Mapping[str, Any], allowed: Iterable[str], *,
                where: str = "") -> None:
    """Refuse keyword arguments that no function of the call accepts.

    Raises :class:`~searcheval_frames.errors.UnknownOptionError` (also a ``TypeError``)
    that names ``func`` (the function the caller called, not an inner one), the closest
    allowed name and where the allowed names come from.

    >>> check_known("compare", {"relevance_level": 2}, ["relevance_level", "depth"])
    >>> check_known("compare", {"relevence_level": 2}, ["relevance_level", "depth"])
    Traceback (most recent call last):
    ...
    searcheval_frames.errors.UnknownOptionError: compare(relevence_level=2): unknown option; did you mean relevance_level? The options are: depth, relevance_level.
    """
    import difflib

    from .errors import UnknownOptionError

    names = sorted(set(allowed))
    for key, value in given.items():
        if key in names:
            continue
        close = difflib.get_close_matches(key, names, n=1)
        hint = f" did you mean {close[0]}?" if close else ""
        raise UnknownOptionError(
            f"{func}({key}={value!r}): unknown option;{hint} The options are"
            f"{' ' + where if where else ''}: {', '.join(names)}."
        )
