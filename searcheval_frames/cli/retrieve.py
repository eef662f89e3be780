"""``searcheval retrieve SYSTEM.toml QUERIES -k 20 -o run.tsv``: run a system from a file.

SYSTEM.toml names an adapter of ``sef.systems`` and its options, the same keys as the
Python call; an optional ``[retrieve]`` table holds ``sef.retrieve``'s options (the
command line overrides them)::

    adapter = "http"
    url = "http://localhost:9200/docs/_search"
    method = "POST"
    json = { query = { match = { text = "{query}" } }, size = "{k}" }
    hits = "hits.hits"
    doc_id = "_id"
    score = "_score"
    auth_env = "SEARCH_TOKEN"

    [retrieve]
    max_concurrency = 8
    timeout = 10

Writes the run (``-o``; its format follows the extension, TREC by default), its latency
beside it (``run.latency.tsv``) and its provenance (``run.provenance.json``). Exit codes:
0 every query answered, 1 a bad input or failed queries (the answered ones are written
and cached: run again to ask the others), 2 a bad command line.

>>> build_parser().parse_args(["sys.toml", "queries.tsv", "-k", "10", "-o", "r.tsv"]).k
10
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
import tomllib
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import InvalidOptionError, RetrievalError, SearchEvalError, SearchEvalWarning
from ._common import EXIT_INPUT, EXIT_OK, one_line, os_error_line

__all__ = ["build_parser", "load_system", "main", "side_paths"]

#: names of sef.systems that are no adapters
NOT_ADAPTERS = {"retrieve", "as_system", "combine_runs", "latency_of", "function"}
RETRIEVE_KEYS = ("k", "name", "max_concurrency", "rate", "timeout", "retries", "on_error",
                 "cache", "backoff")


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``searcheval retrieve``."""
    p = argparse.ArgumentParser(
        prog="searcheval retrieve",
        description="Run a query set through a search system described by a TOML file "
                    "(adapter = \"http\" and its options) and write the run, its latency "
                    "and its provenance. Exit codes: 0 all answered, 1 bad input or failed "
                    "queries, 2 bad command line.")
    p.add_argument("system", help="the system's TOML file (adapter = \"...\" and its options)")
    p.add_argument("queries", help="the query set (TSV query_id<TAB>query, CSV, JSONL, ...)")
    p.add_argument("-k", type=int, default=None, help="hits per query (default 20)")
    p.add_argument("-o", "--output", required=True,
                   help="the run file (.tsv/.csv/.jsonl/.parquet, anything else TREC)")
    p.add_argument("--name", help="the run's name (default: the system's)")
    p.add_argument("--max-concurrency", type=int, default=None, help="queries in flight")
    p.add_argument("--rate", type=float, default=None, help="at most this many requests/s")
    p.add_argument("--timeout", type=float, default=None, help="seconds per request")
    p.add_argument("--retries", type=int, default=None, help="retries of transient errors")
    p.add_argument("--cache", default=None,
                   help="the answer cache (default .searcheval/retrieve-cache.db)")
    p.add_argument("--no-cache", action="store_true", help="ask every query")
    return p


def load_system(path: str | Path) -> tuple[Any, dict[str, Any]]:
    """The System a TOML file describes, and its ``[retrieve]`` options."""
    from .. import systems

    p = Path(path)
    try:
        conf = tomllib.loads(p.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise RetrievalError(f"{p}: not valid TOML: {exc}") from None
    options = dict(conf.pop("retrieve", {}) or {})
    unknown = sorted(set(options) - set(RETRIEVE_KEYS))
    if unknown:
        raise RetrievalError(f"{p}: [retrieve] has unknown keys {unknown}; use {RETRIEVE_KEYS}")
    adapter = conf.pop("adapter", None)
    names = sorted(n for n in getattr(systems, "__all__", ())
                   if n.islower() and n not in NOT_ADAPTERS)
    factory = getattr(systems, adapter, None) if isinstance(adapter, str) else None
    if factory is None or adapter in NOT_ADAPTERS or not callable(factory):
        raise RetrievalError(f"{p}: adapter = {adapter!r} is not an adapter of sef.systems; "
                             f"use one of {names}, e.g. adapter = \"http\"")
    params = inspect.signature(factory).parameters
    takes_any = any(v.kind is v.VAR_KEYWORD for v in params.values())
    bad = sorted(set(conf) - set(params)) if not takes_any else []
    if bad:
        raise RetrievalError(f"{p}: adapter {adapter!r} does not take {bad}; it takes "
                             f"{[n for n in params if n != 'self']}")
    return factory(**conf), options


def side_paths(output: str | Path) -> tuple[Path, Path]:
    """Where the latency and the provenance go: ``run.tsv`` -> ``run.latency.tsv``,
    ``run.provenance.json``.

    >>> [p.name for p in side_paths("out/bm25.run")]
    ['bm25.latency.tsv', 'bm25.provenance.json']
    """
    out = Path(output)
    stem = out.name[: -len(".gz")] if out.name.endswith(".gz") else out.name
    stem = stem.rsplit(".", 1)[0] if "." in stem else stem
    return out.with_name(f"{stem}.latency.tsv"), out.with_name(f"{stem}.provenance.json")


def _options(args: argparse.Namespace, options: dict[str, Any]) -> dict[str, Any]:
    given = {"k": args.k, "name": args.name, "max_concurrency": args.max_concurrency,
             "rate": args.rate, "timeout": args.timeout, "retries": args.retries,
             "cache": args.cache}
    merged = {**options, **{k: v for k, v in given.items() if v is not None}}
    if args.no_cache:
        merged["cache"] = False
    return merged


def _run(args: argparse.Namespace) -> int:
    from ..io import write_run
    from ..systems import retrieve

    system, options = load_system(args.system)
    opts = _options(args, options)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SearchEvalWarning)
        result = retrieve(system, args.queries, **{"progress": None, **opts})
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    if result.run.height:
        write_run(result.run, out, keep_rank=True)
    latency_path, provenance_path = side_paths(out)
    result.latency.write_csv(latency_path, separator="\t")
    provenance_path.write_text(json.dumps(result.provenance, indent=2, default=str) + "\n",
                               encoding="utf-8")
    bad = result.latency.filter(result.latency["status"] != "ok")
    if bad.height:  # one line: how many, the first few, where the rest is
        first = "; ".join(f"{q} ({st}: {str(e)[:60]})" for q, st, e in
                          bad.head(3).select("query_id", "status", "error").iter_rows())
        kept = ("the answered ones are written and cached, run again to ask the others"
                if result.run.height else f"no query was answered, so {out} was not written")
        print(f"searcheval retrieve: error: {bad.height} of {result.latency.height} queries "
              f"failed, e.g. {first} (all in {latency_path}); {kept}", file=sys.stderr)
        return EXIT_INPUT
    for w in caught:
        print(f"searcheval retrieve: warning: {one_line(Exception(str(w.message)))}",
              file=sys.stderr)
    s = result.summary().row(0, named=True)
    print(f"{result.name}: {s['queries']} queries, {result.run.height} rows -> {out} "
          f"(p50 {s['p50'] * 1000:.1f} ms, p95 {s['p95'] * 1000:.1f} ms)"
          if s["p50"] is not None else f"{result.name}: {s['queries']} queries -> {out}")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``searcheval retrieve``; returns the exit code."""
    try:
        args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        return _run(args)
    except InvalidOptionError as exc:
        print(f"searcheval retrieve: error: {one_line(exc)}", file=sys.stderr)
        return EXIT_INPUT
    except SearchEvalError as exc:
        print(f"searcheval retrieve: error: {one_line(exc)}", file=sys.stderr)
        return EXIT_INPUT
    except OSError as exc:
        print(f"searcheval retrieve: error: {os_error_line(exc)}", file=sys.stderr)
        return EXIT_INPUT
    except ImportError as exc:  # an adapter's client library is missing
        print(f"searcheval retrieve: error: {one_line(exc)}", file=sys.stderr)
        return EXIT_INPUT

