"""Small, obviously-correct readers for the test oracles (independent of sef.io)."""

from __future__ import annotations

from pathlib import Path

import polars as pl


def read_trec_run(path: Path | str) -> pl.DataFrame:
    rows = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip() or line.startswith("#"):
                continue
            f = line.split()
            rows.append((f[5], f[0], f[2], float(f[4])))
    return pl.DataFrame(rows, schema=["run", "query_id", "doc_id", "score"], orient="row")


def read_trec_qrels(path: Path | str) -> pl.DataFrame:
    rows = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip() or line.startswith("#"):
                continue
            f = line.split()
            rows.append((f[0], f[2], int(f[3])))
    return pl.DataFrame(rows, schema=["query_id", "doc_id", "relevance"], orient="row")


def read_expected(path: Path | str) -> list[tuple[str, str, str]]:
    """trec_eval output lines as (measure, query, value text)."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 3:
                out.append((parts[0].strip(), parts[1], parts[2]))
    return out
