"""Custom measures for the command line: ``--plugin path.py`` and an entry point group.

A plugin is a Python file (or an installed package's module) that registers
measures with :func:`searcheval_frames.measure` when it is imported. ``searcheval``
and ``searcheval report`` load every ``--plugin FILE`` given on the command line and
every module named in the ``searcheval_frames.measures`` entry point group of the
installed packages, e.g. in a package's ``pyproject.toml``::

    [project.entry-points."searcheval_frames.measures"]
    my_measures = "my_package.measures"
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Sequence
from importlib.metadata import entry_points
from pathlib import Path

from ..errors import (
    FileAccessError,
    FileFormatError,
    InvalidOptionError,
    PluginError,
    SearchEvalError,
)

__all__ = ["ENTRY_POINT_GROUP", "load_plugins"]

ENTRY_POINT_GROUP = "searcheval_frames.measures"


def _load_file(path: str) -> None:
    file = Path(path)
    if not file.is_file():
        raise FileAccessError(f"--plugin {path}: no such file; give the path of a Python "
                              "file that registers measures with @sef.measure(...)")
    spec = importlib.util.spec_from_file_location(f"searcheval_plugin_{file.stem}", file)
    if spec is None or spec.loader is None:
        raise FileFormatError(f"--plugin {path}: not a Python file (expected a .py file)")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except SearchEvalError:
        raise
    except Exception as exc:
        raise PluginError(f"--plugin {path}: importing it failed: "
                              f"{type(exc).__name__}: {exc}") from exc


def load_plugins(argv: Sequence[str]) -> list[str]:
    """Load the entry point plugins and every ``--plugin FILE``; return argv without them.

    >>> load_plugins(["qrels.txt", "a.run"])
    ['qrels.txt', 'a.run']
    """
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            ep.load()
        except Exception as exc:
            raise PluginError(f"the measure plugin {ep.name!r} ({ep.value}) of entry point "
                                  f"group {ENTRY_POINT_GROUP} failed to load: "
                                  f"{type(exc).__name__}: {exc}") from exc
    rest: list[str] = []
    items = list(argv)
    i = 0
    while i < len(items):
        arg = items[i]
        if arg == "--plugin":
            if i + 1 >= len(items):
                raise InvalidOptionError("--plugin needs a file, e.g. --plugin my_measures.py")
            _load_file(items[i + 1])
            i += 2
            continue
        if arg.startswith("--plugin="):
            _load_file(arg.split("=", 1)[1])
        else:
            rest.append(arg)
        i += 1
    return rest
