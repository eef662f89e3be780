"""Deprecated names (layer 0): a module ``__getattr__`` that warns and names the new name.

A module keeps an old name working for a while by assigning, at its end::

    __getattr__ = deprecated_aliases(__name__, globals(), {"Old": ("New", "0.3", "")})

``module.Old`` (and ``from module import Old``) then gives ``New`` with a
``DeprecationWarning`` that names ``New`` and the version that removes ``Old``; the old
name is left out of ``__all__`` so ``import *`` does not warn. Any other missing name
raises the usual ``AttributeError``.

>>> import warnings
>>> getattr_ = deprecated_aliases("m", {"New": int}, {"Old": ("New", "0.3", "")})
>>> with warnings.catch_warnings(record=True) as seen:
...     warnings.simplefilter("always")
...     getattr_("Old") is int, str(seen[0].message)
(True, 'm.Old is deprecated and will be removed in 0.3; use m.New')
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
import warnings
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast

F = TypeVar("F", bound=Callable[..., Any])

__all__ = ["PACKAGE_DIR", "REMOVAL", "deprecated_aliases", "old_spelling", "outside_stacklevel"]


def deprecated_aliases(module: str, namespace: Mapping[str, Any],
                       aliases: Mapping[str, tuple[str, str, str]]) -> Callable[[str], Any]:
    """A module ``__getattr__`` serving ``aliases`` (old name -> (new name, the version
    that removes the old one, a note added to the warning)) from ``namespace`` (the
    module's ``globals()``, read at access time)."""

    def __getattr__(name: str) -> Any:
        if name not in aliases:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        new, removal, note = aliases[name]
        message = f"{module}.{name} is deprecated and will be removed in {removal}; use {module}.{new}"
        warnings.warn(message + (f" ({note})" if note else ""), DeprecationWarning, stacklevel=2)
        return namespace[new]

    return __getattr__


#: The package's folder: warnings name the caller's line, not a line of the package
#: (``warnings.warn(..., stacklevel=outside_stacklevel())``).
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
def outside_stacklevel() -> int:
    """The ``stacklevel`` for ``warnings.warn`` that names the first line outside the
    package (the user's call), however many of the package's wrappers lie between."""
    frame = sys._getframe(1)  # the function that warns
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(PACKAGE_DIR):
        frame, level = frame.f_back, level + 1  # type: ignore[assignment]
    return level


#: The version that removes the calling conventions deprecated by issue #31.
REMOVAL = "0.3"
#: How a data argument (a frame, a dict of runs) is written in a warning's example call.
_PLACEHOLDERS = {"per_query": "pq", "runs": "runs", "run": "run", "qrels": "qrels"}


def old_spelling(name: str, old: Callable[..., Any], is_old: Callable[[tuple, dict], bool],
                 translate: Callable[[dict[str, Any]], dict[str, Any]],
                 removal: str = REMOVAL) -> Callable[[F], F]:
    """Keep a function's old calling convention working for a while, with a warning.

    ``old`` is a stub with the old signature; ``is_old(args, kwargs)`` tells an old call
    from a new one (only calls the new signature cannot mean are old); ``translate``
    turns the old call's arguments (by old name) into the new function's keyword
    arguments. An old call warns once per call site (``DeprecationWarning``) showing
    the call to write instead, then runs the new function.

    >>> def _old(data, baseline=None): ...
    >>> @old_spelling("f", _old, lambda a, k: bool(a) and isinstance(a[-1], str),
    ...               lambda o: {"per_query": o["data"], "baseline": o.get("baseline")})
    ... def f(runs=None, qrels=None, *, per_query=None, baseline=None):
    ...     return per_query, baseline
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     f({"q1": 0.5}, "a"), str(seen[0].message)
    (({'q1': 0.5}, 'a'), "f(pq, 'a') is deprecated and will be removed in 0.3: call f(per_query=pq, baseline='a')")
    """
    old_sig = inspect.signature(old)

    def decorate(fn: F) -> F:
        new_sig = inspect.signature(fn)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if not is_old(args, kwargs):
                return fn(*args, **kwargs)
            given = {k: v for k, v in kwargs.items() if k in old_sig.parameters}
            rest = {k: v for k, v in kwargs.items() if k not in old_sig.parameters}
            bound = old_sig.bind_partial(*args, **given)
            new_kwargs = {k: v for k, v in translate(dict(bound.arguments)).items()
                          if v is not None}
            new_kwargs.update(rest)
            shown = {id(v): _PLACEHOLDERS.get(k, k) for k, v in new_kwargs.items()}
            old_text = _call_text(name, list(args), {**given, **rest}, old_sig, shown)
            new_text = _call_text(name, [], new_kwargs, new_sig, shown)
            warnings.warn(f"{old_text} is deprecated and will be removed in {removal}: "
                          f"call {new_text}", DeprecationWarning, stacklevel=outside_stacklevel())
            return fn(**new_kwargs)

        wrapper.__old_parameters__ = tuple(  # type: ignore[attr-defined]
            p.name for p in old_sig.parameters.values()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
        return cast(F, wrapper)

    return decorate


def _call_text(name: str, args: list[Any], kwargs: Mapping[str, Any],
               sig: inspect.Signature, shown: Mapping[int, str]) -> str:
    """``name(a, b, key=value)`` as the user would write it: data arguments by their
    placeholder, leading positional-or-keyword parameters of ``sig`` positionally."""
    kwargs = dict(kwargs)
    parts = [_value_text(a, shown) for a in args]
    if not args:
        for p in sig.parameters.values():
            if p.kind is not p.POSITIONAL_OR_KEYWORD or p.name not in kwargs:
                break
            parts.append(_value_text(kwargs.pop(p.name), shown))
        order = ["per_query", *sig.parameters]  # the data first, then the signature's order
        kwargs = dict(sorted(kwargs.items(), key=lambda kv: order.index(kv[0])
                             if kv[0] in order else len(order)))
    parts += [f"{k}={_value_text(v, shown)}" for k, v in kwargs.items()]
    return f"{name}({', '.join(parts)})"


def _value_text(value: Any, shown: Mapping[int, str]) -> str:
    plain = (str, int, float, bool, type(None))
    if isinstance(value, plain) or (isinstance(value, list | tuple) and len(value) <= 6
                                    and all(isinstance(v, plain) for v in value)):
        return repr(value)
    return shown.get(id(value), "...")
