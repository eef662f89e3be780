"""Writing figures to files: PNG / SVG / PDF at a chosen DPI, reproducibly (no
timestamps in the files).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InvalidOptionError
from ..io.write import atomic_write
from ..options import check_bool, check_choice, check_float

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = ["save_figure"]


_FORMATS = ("png", "svg", "pdf")
_METADATA: dict[str, dict[str, Any]] = {
    "png": {"Software": None},
    "svg": {"Date": None},
    "pdf": {"CreationDate": None, "ModDate": None},
}


def _figure_of(obj: Any) -> Figure:
    for attr in ("savefig",):
        if hasattr(obj, attr):
            return obj
    for attr in ("figure", "fig"):
        fig = getattr(obj, attr, None)
        if fig is not None and hasattr(fig, "savefig"):
            return fig
    if isinstance(obj, np.ndarray) and obj.size and hasattr(obj.flat[0], "figure"):
        return obj.flat[0].figure
    raise InvalidOptionError(
        f"save_figure: expected a matplotlib Figure or Axes, got {type(obj).__name__}"
    )


def save_figure(
    fig: Any,
    path: str | Path,
    *,
    formats: Sequence[str] | None = None,
    dpi: int = 200,
    transparent: bool = False,
    tight: bool = True,
) -> list[Path]:
    """Write a figure as PNG, SVG and/or PDF, ready for a report.

    Parameters
    ----------
    fig
        A Figure, or an Axes returned by the plotting helpers.
    path
        File name; its suffix (``.png``, ``.svg``, ``.pdf``) is the format.
        Parent folders are created.
    formats
        Write several formats: ``path`` with each suffix, e.g.
        ``save_figure(ax, "figs/pr", formats=["png", "pdf"])``.
    dpi
        Resolution of PNGs (vector formats embed no pixels).
    transparent
        Transparent background.
    tight
        Crop to the drawn content (``bbox_inches="tight"``).

    Returns
    -------
    list of Path
        The files written. They contain no creation date, so the same figure
        gives the same bytes (PNG, SVG) every time.

    Examples
    --------
    >>> import tempfile, polars as pl, searcheval_frames as sef
    >>> res = pl.DataFrame({"run": ["a", "b"], "measure": "P@5", "value": [0.6, 0.7]})
    >>> out = sef.save_figure(sef.benchmark_bars(res), tempfile.mkdtemp() + "/bars.svg")
    >>> out[0].suffix
    '.svg'
    """
    check_bool("save_figure", "transparent", transparent)
    check_bool("save_figure", "tight", tight)
    check_float("save_figure", "dpi", dpi, minimum=0, open_min=True, example="dpi=300")
    if formats is not None:
        fmts = [formats] if isinstance(formats, str) else list(formats)
        for f in fmts:
            check_choice("save_figure", "formats", str(f).lower().lstrip("."),
                         ("png", "svg", "pdf"), example="formats=['png', 'svg']")
    from ..optional import require

    mpl = require("matplotlib", "save_figure")

    figure = _figure_of(fig)
    path = Path(path)
    if formats is None:
        fmt = path.suffix.lower().lstrip(".")
        if fmt not in _FORMATS:
            raise InvalidOptionError(
                f"save_figure: cannot tell the format of {str(path)!r}; end the name in "
                f".png, .svg or .pdf, or pass formats=['png', 'pdf']"
            )
        targets = [(path, fmt)]
    else:
        fmts = [formats] if isinstance(formats, str) else list(formats)
        if not fmts:  # each one was checked above
            raise InvalidOptionError(f"save_figure(formats={formats!r}): must name a format; "
                                     f"got {formats!r}. Example: formats=['png', 'svg']")
        stem = path.with_suffix("") if path.suffix.lower().lstrip(".") in _FORMATS else path
        targets = [
            (stem.with_name(stem.name + "." + f.lower().lstrip(".")), f.lower().lstrip("."))
            for f in fmts
        ]
    written = []
    with mpl.rc_context({"svg.hashsalt": "searcheval_frames", "pdf.fonttype": 42}):
        for target, fmt in targets:
            target.parent.mkdir(parents=True, exist_ok=True)
            def draw(fh: Any, fmt: str = fmt) -> None:
                figure.savefig(fh, format=fmt, dpi=dpi, transparent=transparent,
                               bbox_inches="tight" if tight else None, pad_inches=0.05,
                               metadata=_METADATA[fmt])

            atomic_write(target, draw)
            written.append(target)
    return written
