"""Where a report's numbers come from: input files (size, sha256), versions, options, time."""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import platform
import sys
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

__all__ = ["describe_input", "file_record", "provenance"]

_PACKAGES = ("searcheval_frames", "polars", "numpy", "scipy", "matplotlib")


def file_record(path: str | os.PathLike[str], role: str) -> dict[str, Any]:
    """``role, name, path, bytes, sha256`` of one input file (read in 1 MiB chunks)."""
    p = Path(path)
    h = hashlib.sha256()
    with open(p, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return {"role": role, "name": p.name, "path": str(p.resolve()), "bytes": p.stat().st_size,
            "sha256": h.hexdigest()}


def _frame_digest(df: pl.DataFrame) -> str:
    """sha256 over the frame's row hashes (polars' hash; stable within a polars version)."""
    h = hashlib.sha256()
    h.update(",".join(df.columns).encode())
    if df.height:  # (numpy's sort of the 64-bit hashes: a third less CPU than polars')
        h.update(np.sort(df.hash_rows(seed=0).to_numpy()).data)
    return h.hexdigest()


def describe_input(obj: Any, frame: pl.DataFrame | None, role: str) -> list[dict[str, Any]]:
    """Records for an input: one per file for paths, one for an in-memory frame."""
    if obj is None:
        return []
    if isinstance(obj, str | os.PathLike):
        return [file_record(obj, role)]
    if isinstance(obj, list | tuple) and obj and all(isinstance(o, str | os.PathLike) for o in obj):
        return [file_record(o, role) for o in obj]
    rec: dict[str, Any] = {"role": role, "name": f"in-memory {type(obj).__module__.split('.')[0]} "
                           f"{type(obj).__name__}", "path": None, "bytes": None, "sha256": None}
    if frame is not None:
        rec["rows"] = frame.height
        rec["content_sha256"] = _frame_digest(frame)
    return [rec]


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def provenance(inputs: list[dict[str, Any]], options: Mapping[str, Any],
               command: str | None = None) -> dict[str, Any]:
    """The provenance block of a report (JSON-serialisable)."""
    versions = {n: _version(n) for n in _PACKAGES}
    # the package is imported (this module is part of it); no import statement upward
    versions["searcheval_frames"] = sys.modules[__name__.split(".")[0]].__version__
    versions["python"] = platform.python_version()
    return {
        "created": _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat(),
        "inputs": inputs,
        "options": {k: (list(v) if isinstance(v, tuple) else v) for k, v in options.items()},
        "versions": versions,
        "command": command,
        "platform": platform.platform(),
    }
