"""What ``sef.retrieve`` returns: the run, its latency, a summary and the provenance.

A :class:`RetrieveResult` is accepted wherever a run is (``sef.evaluate``,
``sef.compare``, ``sef.leaderboard``, ``sef.report``, ``sef.pool``, ``sef.fuse``): the
frames layer recognises it by its ``__sef_run__()`` method. Several results become one
run frame with :func:`combine_runs` (or ``r1 + r2``), and their latencies one frame with
:func:`latency_of`.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from ..errors import InvalidOptionError
from ..frames.kinds import Kind, to_native

__all__ = ["LATENCY_SCHEMA", "RUN_SCHEMA", "RetrieveResult", "combine_runs", "latency_of"]

RUN_SCHEMA = {"query_id": pl.String, "doc_id": pl.String, "rank": pl.Int64,
              "score": pl.Float64, "run": pl.String}
LATENCY_SCHEMA = {"query_id": pl.String, "run": pl.String, "seconds": pl.Float64,
                  "server_seconds": pl.Float64, "attempts": pl.Int64, "status": pl.String,
                  "error": pl.String, "cached": pl.Boolean}


def _quantile(x: np.ndarray, q: float) -> float | None:
    return float(np.quantile(x, q)) if x.size else None


@dataclass
class RetrieveResult:
    """A run made by ``sef.retrieve``, with its latency and provenance.

    Attributes
    ----------
    run
        The run as a polars frame: ``query_id, doc_id, rank, score, run``.
    latency
        One row per query: ``query_id, run, seconds`` (the client's time of the answered
        attempt, ``time.perf_counter``), ``server_seconds`` (the engine's own, when it
        reports one), ``attempts``, ``status`` (``ok``, ``error``, ``timeout``,
        ``invalid``), ``error`` (the message), ``cached`` (answered from the cache; its
        ``seconds`` are those measured when it was asked).
    provenance
        Adapter kind, configuration (secrets redacted), fingerprint, start and end time,
        k, options, versions.
    name
        The run's name.
    """

    run: pl.DataFrame
    latency: pl.DataFrame
    provenance: dict[str, Any]
    name: str
    kind: Kind = field(default_factory=lambda: Kind("polars"))
    wall_seconds: float = 0.0

    @property
    def frame(self) -> Any:
        """The run in the queries' frame kind: ``query_id, doc_id, rank, score, run``."""
        return to_native(self.run, self.kind)

    @property
    def __sef_kind__(self) -> Kind:
        return self.kind

    def __sef_run__(self) -> pl.DataFrame:
        """The polars run frame, for every function that takes a run."""
        return self.run

    def summary(self) -> pl.DataFrame:
        """Per run: ``queries, errors, mean, p50, p95, p99`` (seconds of the answered
        queries, numpy's linear quantiles) and ``qps`` (queries over wall time).

        >>> import searcheval_frames as sef
        >>> r = sef.retrieve(lambda q, k: [("d1", 1.0)], {"q1": "a", "q2": "b"}, name="toy")
        >>> r.summary().select("run", "queries", "errors").rows()
        [('toy', 2, 0)]
        """
        return summarize(self.latency, {self.name: self.wall_seconds})

    def __add__(self, other: RetrieveResult) -> RetrieveResult:
        return combine_runs([self, other])

    def __repr__(self) -> str:
        s = self.summary().row(0, named=True)
        p50 = "-" if s["p50"] is None else f"{s['p50'] * 1000:.1f} ms"
        cached = int(self.latency["cached"].sum())
        return (f"<RetrieveResult run={self.name!r} queries={s['queries']} "
                f"errors={s['errors']} cached={cached} rows={self.run.height} p50={p50}>")

    def _repr_html_(self) -> str:
        s = self.summary()
        head = "".join(f"<th>{html.escape(c)}</th>" for c in s.columns)
        rows = "".join(
            "<tr>" + "".join(f"<td>{_cell(v)}</td>" for v in row) + "</tr>" for row in s.rows())
        fails = self.latency.filter(pl.col("status") != "ok").head(5)
        extra = "".join(f"<li>{html.escape(q)}: {html.escape(str(e))}</li>"
                        for q, e in zip(fails["query_id"], fails["error"], strict=True))
        return (f"<div><b>RetrieveResult</b> {html.escape(self.name)} "
                f"({html.escape(str(self.provenance.get('adapter')))}, k="
                f"{self.provenance.get('k')}, {self.run.height} rows, "
                f"{int(self.latency['cached'].sum())} queries from the cache)"
                f"<table><tr>{head}</tr>{rows}</table>"
                + (f"<p>failed queries:</p><ul>{extra}</ul>" if extra else "") + "</div>")


def _cell(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, float) else html.escape(str(v))


def summarize(latency: pl.DataFrame, walls: dict[str, float]) -> pl.DataFrame:
    """The summary table of a latency frame (one row per run, in first-seen order)."""
    rows = []
    for (run,), part in latency.group_by("run", maintain_order=True):
        ok = part.filter(pl.col("status") == "ok")["seconds"].to_numpy()
        wall = walls.get(str(run), 0.0)
        rows.append({"run": run, "queries": part.height,
                     "errors": part.height - ok.size,
                     "mean": float(ok.mean()) if ok.size else None,
                     "p50": _quantile(ok, 0.5), "p95": _quantile(ok, 0.95),
                     "p99": _quantile(ok, 0.99),
                     "qps": part.height / wall if wall > 0 else None})
    return pl.DataFrame(rows, schema={"run": pl.String, "queries": pl.Int64,
                                      "errors": pl.Int64, "mean": pl.Float64,
                                      "p50": pl.Float64, "p95": pl.Float64,
                                      "p99": pl.Float64, "qps": pl.Float64})


def _results(results: Iterable[RetrieveResult], func: str) -> list[RetrieveResult]:
    out = list(results)
    bad = [type(r).__name__ for r in out if not isinstance(r, RetrieveResult)]
    if bad or not out:
        raise InvalidOptionError(
            f"{func}(results=...): must be a non-empty list of RetrieveResult (what "
            f"sef.retrieve returns); got {bad or 'an empty list'}. Example: "
            f"{func}([bm25, rerank])")
    names = [r.name for r in out]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise InvalidOptionError(
            f"{func}(results=...): two results share the run name {twice}; give each "
            "retrieve() call its own name=. Example: sef.retrieve(system, queries, name='bm25')")
    return out


def combine_runs(results: Sequence[RetrieveResult]) -> RetrieveResult:
    """Several results as one: one run frame of all runs (for ``sef.compare``), their
    latencies, and their provenances keyed by run name. ``r1 + r2`` is the same.

    Examples
    --------
    >>> import searcheval_frames as sef
    >>> q = {"q1": "a"}
    >>> a = sef.retrieve(lambda q, k: [("d1", 1.0)], q, name="a")
    >>> b = sef.retrieve(lambda q, k: [("d2", 1.0)], q, name="b")
    >>> (a + b).run["run"].to_list()
    ['a', 'b']
    """
    rs = _results(results, "combine_runs")
    prov = {r.name: r.provenance for r in rs}
    return RetrieveResult(
        run=pl.concat([r.run for r in rs]), latency=latency_of(rs),
        provenance={"adapter": "combined", "runs": prov,
                    "k": max(int(r.provenance.get("k", 0)) for r in rs)},
        name="+".join(r.name for r in rs), kind=rs[0].kind,
        wall_seconds=sum(r.wall_seconds for r in rs))


def latency_of(results: Sequence[RetrieveResult]) -> pl.DataFrame:
    """The latency frames of several results as one (polars).

    >>> import searcheval_frames as sef
    >>> a = sef.retrieve(lambda q, k: [], {"q1": "a"}, name="a")
    >>> sef.systems.latency_of([a]).columns
    ['query_id', 'run', 'seconds', 'server_seconds', 'attempts', 'status', 'error', 'cached']
    """
    rs = list(results)
    if any(not isinstance(r, RetrieveResult) for r in rs):
        rs = _results(rs, "latency_of")
    return pl.concat([r.latency for r in rs]) if rs else pl.DataFrame(schema=LATENCY_SCHEMA)
