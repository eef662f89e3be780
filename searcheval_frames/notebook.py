"""One display setup for every notebook: tables that fit, numbers that read well.

``sef.notebook_setup()`` is the first line of each bundled notebook (and of yours): it
sets polars' and pandas' display options once, the same for all, and returns the
folder notebooks write their outputs to, so figures, reports and sheets land in one
place that git ignores instead of next to the notebook.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["DISPLAY", "notebook_setup"]

#: The polars settings :func:`notebook_setup` applies (``pl.Config`` method -> value).
DISPLAY: dict[str, object] = {
    "set_tbl_hide_dataframe_shape": True,  # no "shape: (12, 5)" line above each table
    "set_float_precision": 4,  # 0.8123, not 0.812345 (integers stay integers)
    "set_fmt_str_lengths": 120,  # query texts and measure summaries in full
    "set_tbl_width_chars": 160,
    "set_tbl_rows": 12,
    "set_tbl_cols": 16,
}


def notebook_setup(output: str | os.PathLike[str] = "output") -> Path:
    """Set the display options the notebooks share; return the output folder.

    Polars: no shape line, floats with 4 decimals, strings up to 120 characters, at most
    12 rows and 16 columns (see :data:`DISPLAY`). pandas (when installed): 4 decimals
    and the same column width. Nothing is printed; the call returns the output folder
    (created, relative to the working directory) so that ``OUT = sef.notebook_setup()``
    is the whole first cell.

    The float format is ``round(x, 4)`` for display only; every frame keeps full
    precision.

    Parameters
    ----------
    output
        The folder for files a notebook writes (figures, reports, sheets). Default
        ``output`` in the working directory (``notebooks/output/`` for the bundled
        notebooks, ignored by git).

    Returns
    -------
    pathlib.Path
        The output folder, absolute.

    Examples
    --------
    >>> import tempfile, os, polars as pl, searcheval_frames as sef
    >>> with pl.Config():  # a doctest keeps the global settings as they were
    ...     out = sef.notebook_setup(os.path.join(tempfile.mkdtemp(), "output"))
    ...     print(pl.DataFrame({"n": [3760], "x": [0.123456789]}))
    ┌──────┬────────┐
    │ n    ┆ x      │
    │ ---  ┆ ---    │
    │ i64  ┆ f64    │
    ╞══════╪════════╡
    │ 3760 ┆ 0.1235 │
    └──────┴────────┘
    >>> out.name, out.is_dir()
    ('output', True)
    """
    import polars as pl

    for method, value in DISPLAY.items():
        getattr(pl.Config, method)(value)
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is a dependency
        pd = None
    if pd is not None:
        pd.set_option("display.precision", 4)
        pd.set_option("display.max_colwidth", 120)
        pd.set_option("display.max_columns", 16)
    out = Path(output).resolve()
    out.mkdir(parents=True, exist_ok=True)
    return out
