"""Optional dependencies: one friendly message naming the extra to install.

``import searcheval_frames`` needs polars, narwhals, numpy, pandas and pyarrow only.
Statistics need scipy (extra ``stats``), figures matplotlib (``plots``), the label
widget anywidget (``labeling``), and the scale drivers pyspark (``spark``) or dask
(``dask``); ``pip install 'searcheval_frames[all]'`` brings all of them. Every place
that imports one of these goes through :func:`require`, so a missing package gives the
same one-line :class:`MissingDependencyError` (an :class:`ImportError`) naming the
extra — never a raw ``ModuleNotFoundError`` from deep inside.

Notebooks ask :func:`extra_available` first and print :func:`extra_note` instead of a
traceback when an optional engine is absent.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = [
    "EXTRAS",
    "MissingDependencyError",
    "extra_available",
    "extra_note",
    "require",
]

#: Each extra of pyproject.toml and the top-level modules it brings.
EXTRAS: dict[str, tuple[str, ...]] = {
    "stats": ("scipy",),
    "plots": ("matplotlib",),
    "labeling": ("anywidget", "ipywidgets", "traitlets"),
    "spark": ("pyspark",),
    "dask": ("dask", "distributed"),
    "judges": ("httpx",),
    "fast": ("numba",),
    # sef.systems' client adapters (opensearchpy, whose package is opensearch-py, too)
    "systems": ("elasticsearch", "psycopg"),
    "postgres": ("psycopg",),
}
_EXTRA_OF = {mod: extra for extra, mods in EXTRAS.items() for mod in mods}
_EXTRA_OF["opensearchpy"] = "systems"


class MissingDependencyError(ImportError):
    """An optional package is not installed; the message names the extra to install."""


def _message(module: str, feature: str, extra: str) -> str:
    top = module.split(".")[0]
    return (
        f"{feature} needs {top}, which is not installed. Install the {extra!r} extra: "
        f"pip install 'searcheval_frames[{extra}]' (or pip install {top}; every extra: "
        "pip install 'searcheval_frames[all]')"
    )


def require(module: str, feature: str) -> ModuleType:
    """Import an optional ``module`` for ``feature``, or raise one friendly error.

    Parameters
    ----------
    module
        The module to import, e.g. ``"scipy.stats"`` or ``"matplotlib.pyplot"``; its
        top-level package must be one of :data:`EXTRAS`.
    feature
        What needs it, for the message (``"sef.compare"``, ``"figures"``, ...).

    Returns
    -------
    module
        The imported module.

    Raises
    ------
    MissingDependencyError
        When the package is missing: ``<feature> needs <package> ... pip install
        'searcheval_frames[<extra>]'``. Only a missing *top-level* package is
        translated; an import error inside an installed package propagates as it is.

    Examples
    --------
    >>> from searcheval_frames.optional import require
    >>> require("json", "a doctest").__name__
    'json'
    >>> require("surely_not_installed_pkg", "a doctest")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    searcheval_frames.optional.MissingDependencyError: a doctest needs surely_not_installed_pkg, which is not installed...
    """
    top = module.split(".")[0]
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        missing = (exc.name or "").split(".")[0]
        if missing and missing != top and missing not in _EXTRA_OF:
            raise  # a broken dependency of an installed package: show it as it is
        extra = _EXTRA_OF.get(missing or top, _EXTRA_OF.get(top, "all"))
        raise MissingDependencyError(
            _message(missing or top, feature, extra), name=missing or top
        ) from None


def extra_available(extra: str) -> bool:
    """Whether every package of an extra (``"stats"``, ``"plots"``, ...) can be imported.

    The check finds the packages without importing them (``importlib.util.find_spec``),
    so asking is cheap.

    Examples
    --------
    >>> from searcheval_frames.optional import extra_available
    >>> isinstance(extra_available("plots"), bool)
    True
    """
    import importlib.util

    if extra not in EXTRAS:
        raise ValueError(f"extra={extra!r}: use one of {sorted(EXTRAS)}")
    def found(mod: str) -> bool:
        try:
            return importlib.util.find_spec(mod) is not None
        except (ImportError, ValueError):  # an import hook refused it, or a broken install
            return False

    return all(found(mod) for mod in EXTRAS[extra])


def extra_note(extra: str, what: str) -> str:
    """The note a notebook prints instead of a traceback when ``extra`` is missing.

    Examples
    --------
    >>> from searcheval_frames.optional import extra_note
    >>> extra_note("dask", "This section")
    "This section needs the 'dask' extra (dask, distributed), not installed here: pip install 'searcheval_frames[dask]'. Skipped."
    """
    if extra not in EXTRAS:
        raise ValueError(f"extra={extra!r}: use one of {sorted(EXTRAS)}")
    return (
        f"{what} needs the {extra!r} extra ({', '.join(EXTRAS[extra])}), not installed here: "
        f"pip install 'searcheval_frames[{extra}]'. Skipped."
    )
