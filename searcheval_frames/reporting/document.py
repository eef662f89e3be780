"""The :class:`Report` object: shows in JupyterLab, saves as a folder atomically."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from ..errors import FileAccessError
from ..frames import Kind, to_native
from .build import ReportData
from .html import fragment, page
from .markdown import markdown

__all__ = ["Report"]


class Report:
    """A search-quality report (see :func:`searcheval_frames.report`).

    Attributes
    ----------
    data
        Everything computed (:class:`~searcheval_frames.reporting.build.ReportData`).
    comparison
        The :class:`~searcheval_frames.Comparison` behind the tables and verdicts.
    verdicts
        One sentence per (run, baseline, measure).
    provenance
        Input files with sizes and sha256, versions, options, creation time.
    """

    def __init__(self, data: ReportData, kind: Kind) -> None:
        self.data = data
        self.kind = kind

    # -- numbers
    @property
    def frame(self) -> Any:
        """The before/after numbers: :attr:`Comparison.frame` (caller's frame kind)."""
        return to_native(self.data.comparison.to_polars(), self.kind)

    @property
    def summary(self) -> Any:
        """Runs x measures means (``evaluate`` pivoted), caller's frame kind."""
        wide = self.data.summary.pivot(on="measure", index="run", values="value")
        return to_native(wide, self.kind)

    @property
    def comparison(self) -> Any:
        return self.data.comparison

    @property
    def query_diff(self) -> Any:
        """Per-query Δ of the run against the baseline on the focus measure."""
        return to_native(self.data.diffs, self.kind)

    @property
    def coverage(self) -> Any:
        return to_native(self.data.coverage, self.kind)

    @property
    def bounds(self) -> Any:
        return None if self.data.bounds is None else to_native(self.data.bounds, self.kind)

    @property
    def verdicts(self) -> list[str]:
        return [s for _, s in self.data.verdicts]

    @property
    def provenance(self) -> dict[str, Any]:
        return self.data.provenance

    @property
    def examples(self) -> dict[str, list[Any]]:
        """``{"losses": [...], "wins": [...]}`` with side-by-side lists."""
        return {"losses": self.data.losses, "wins": self.data.wins}

    # -- rendering
    def to_html(self, *, full: bool = True) -> str:
        """A self-contained HTML page (``full=False``: a fragment for embedding)."""
        return page(self.data) if full else fragment(self.data)

    def to_markdown(self, figures_dir: str = "figures") -> str:
        """Markdown; figures linked as ``figures_dir/<name>.png`` (written by :meth:`save`)."""
        return markdown(self.data, figures_dir)

    def _repr_html_(self) -> str:
        return fragment(self.data)

    def __repr__(self) -> str:
        d = self.data
        return (f"Report({d.title!r}: {d.run} vs {d.baseline}, {len(d.measures)} measures, "
                f"{d.n_queries} queries)\n" + d.headline + "\n" + "\n".join(self.verdicts))

    # -- files
    def save(self, path: str | os.PathLike[str] = "report") -> Path:
        """Write ``index.html``, ``report.md``, ``provenance.json`` and ``figures/`` into a folder.

        Every file is first written to a temporary folder next to ``path`` and then
        moved into place with :func:`os.replace` (figures first, ``index.html``
        last), so a reader never sees a half-written file, and a failed save leaves
        the previous report as it was. A new folder is moved into place in one
        step. Returns the path of ``index.html``.
        """
        target = Path(path)
        if target.exists() and not target.is_dir():
            raise FileAccessError(
                f"report.save: {str(target)!r} is a file; give a folder name such as 'report/'"
            )
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o777 & ~umask)  # mkdtemp makes it private; a report is for sharing
        try:
            figs = tmp / "figures"
            figs.mkdir()
            for f in self.data.figures:
                (figs / f"{f.name}.png").write_bytes(f.png)
                (figs / f"{f.name}.svg").write_bytes(f.svg)
            (tmp / "report.md").write_text(self.to_markdown("figures"), encoding="utf-8")
            (tmp / "provenance.json").write_text(
                json.dumps(self.data.provenance, indent=1, default=str) + "\n", encoding="utf-8")
            (tmp / "index.html").write_text(self.to_html(), encoding="utf-8")
            for p in tmp.rglob("*"):
                if p.is_file():
                    with open(p, "rb") as fh:
                        os.fsync(fh.fileno())
            if not target.exists():
                os.replace(tmp, target)
                return target / "index.html"
            (target / "figures").mkdir(exist_ok=True)
            order = sorted((p for p in tmp.rglob("*") if p.is_file()),
                           key=lambda p: (p.name == "index.html", p.parent == tmp, str(p)))
            for p in order:
                os.replace(p, target / p.relative_to(tmp))
            return target / "index.html"
        finally:
            with contextlib.suppress(FileNotFoundError):
                shutil.rmtree(tmp)


