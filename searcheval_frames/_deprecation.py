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

import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["deprecated_aliases"]


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
