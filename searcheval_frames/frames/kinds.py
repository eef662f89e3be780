"""What kind of object the caller passed, and how to give a frame back as that kind.

``input_kind`` remembers whether the caller gave pandas, polars (eager or lazy),
pyarrow or a path; ``to_native`` converts a polars result back; ``to_polars``
turns any dataframe-like object into an eager polars frame.

Run-like objects (``sef.retrieve``'s ``RetrieveResult``, from a layer above) are
recognised by duck typing: ``__sef_run__()`` returns their polars run frame and
``__sef_kind__`` the :class:`Kind` to give results back as.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import polars as pl

from ..errors import AmbiguousColumnError, UnsupportedInputError
from .hazards import collect, pandas_frame


# --------------------------------------------------------------------------- kinds
@dataclass(frozen=True)
class Kind:
    """What the caller gave us, so results can be handed back the same way."""

    name: Literal["polars", "polars-lazy", "pandas", "pyarrow", "narwhals", "dict"]
    implementation: Any = None


def is_path(obj: Any) -> bool:
    """Whether ``obj`` names a file, or is a non-empty list of file names."""
    if isinstance(obj, str | os.PathLike):
        return True
    return isinstance(obj, list | tuple) and bool(obj) and all(
        isinstance(o, str | os.PathLike) for o in obj
    )


def run_likes(obj: Any) -> bool:
    """Whether ``obj`` is a non-empty list or tuple of run-like results (objects with a
    ``__sef_run__()`` method, as :func:`~searcheval_frames.retrieve` returns)."""
    return isinstance(obj, list | tuple) and bool(obj) and all(
        callable(getattr(type(o), "__sef_run__", None)) for o in obj
    )


def input_kind(obj: Any) -> Kind:
    """Return the :class:`Kind` of a user input (a dict of frames takes its values' kind)."""
    if isinstance(obj, pl.LazyFrame):
        return Kind("polars-lazy")
    if isinstance(obj, pl.DataFrame) or is_path(obj):  # file paths are read with polars
        return Kind("polars")
    if run_likes(obj):  # a list of run-like results: the first one's kind
        return input_kind(obj[0])
    run_kind = getattr(obj, "__sef_kind__", None)  # a run-like result (sef.retrieve's)
    if isinstance(run_kind, Kind):
        return run_kind
    mod = type(obj).__module__.split(".")[0]
    if mod == "pandas":
        return Kind("pandas")
    if mod == "pyarrow":
        return Kind("pyarrow")
    if isinstance(obj, Mapping):
        values = list(obj.values())
        if values and not isinstance(values[0], Mapping):
            return input_kind(values[0])
        return Kind("dict")
    try:
        import narwhals as nw

        impl = nw.from_native(obj).implementation
        return Kind("narwhals", impl)
    except Exception:
        return Kind("polars")


def to_native(frame: pl.DataFrame, kind: Kind) -> Any:
    """Convert a polars result to the caller's kind of frame."""
    if kind.name in ("polars", "dict"):
        return frame
    if kind.name == "polars-lazy":
        return frame.lazy()
    if kind.name == "pandas":
        return frame.to_pandas()
    if kind.name == "pyarrow":
        return frame.to_arrow()
    import narwhals as nw

    try:
        return nw.from_arrow(frame.to_arrow(), backend=kind.implementation).to_native()
    except Exception:
        return frame


# --------------------------------------------------------------------------- input
def to_polars(obj: Any, arg: str) -> pl.DataFrame:
    """Any frame the package accepts (pandas, polars eager or lazy, pyarrow, narwhals-
    supported) as an eager polars frame; ``arg`` names the argument in errors."""
    if isinstance(obj, pl.DataFrame):
        return obj
    if isinstance(obj, pl.LazyFrame):
        return collect(obj, arg)
    if callable(getattr(type(obj), "__sef_run__", None)):
        return obj.__sef_run__()  # a run-like result (sef.retrieve's RetrieveResult)
    if run_likes(obj):  # several results of sef.retrieve: one long run frame
        return pl.concat([o.__sef_run__() for o in obj], how="vertical_relaxed")
    mod = type(obj).__module__.split(".")[0]
    if mod == "pandas":
        import pandas as pd

        df = pandas_frame(obj, arg)
        if not isinstance(df.index, pd.RangeIndex) and any(
            name is not None for name in df.index.names
        ):
            df = df.reset_index()
        # object columns with mixed python types (int and str ids) do not convert
        # to arrow; make them strings first, keeping missing values missing.
        fixed = {}
        for col in df.columns:
            if df[col].dtype == object:
                fixed[col] = df[col].map(lambda v: v if v is None or v != v else str(v))
        if fixed:
            df = df.assign(**fixed)
        return pl.from_pandas(df)
    if mod == "pyarrow":
        names = list(getattr(obj, "column_names", []))
        if len(names) != len(set(names)):
            raise AmbiguousColumnError(
                f"{arg}: the pyarrow table has duplicate column names "
                f"{sorted({n for n in names if names.count(n) > 1})}; rename or drop the "
                "copies, e.g. table.rename_columns([...]) or table.drop_columns([...]).")
        out = pl.from_arrow(obj)
        if isinstance(out, pl.Series):
            raise UnsupportedInputError(f"{arg}: expected a table, got a pyarrow array")
        return out
    try:
        import narwhals as nw

        nw_obj = nw.from_native(obj)
        if isinstance(nw_obj, nw.LazyFrame):
            nw_obj = nw_obj.collect()
        return nw_obj.to_polars()
    except TypeError as exc:
        raise UnsupportedInputError(
            f"{arg}: cannot read an object of type {type(obj).__name__}. Pass a pandas or "
            "polars DataFrame, a pyarrow Table, a dict {run_name: frame} or a "
            "pytrec_eval-style dict {query_id: {doc_id: value}}."
        ) from exc
