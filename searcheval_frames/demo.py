"""The quick start's main job: evaluate the bundled examples and write a report.

Run it with ``python -m searcheval_frames.demo [DATA_DIR] [-o REPORT_DIR]``
(``make demo``). It evaluates the worked examples of the seed text (data/seed)
and the example evaluation set (data/example: 38 queries, four real runs), then runs
the process for real: the 38 queries through two live systems on the bundled
documents (SQLite FTS5 BM25 before, the same reranked after, ``sef.retrieve``), pools
their top 20 and checks it against the bundled labels, and writes the report with
latency to ``report/index.html``.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any

import polars as pl

from .core.evaluate import evaluate
from .core.results import pivot
from .io import read_qrels, read_run, write_run

MEASURES = ["P@5", "R@10", "RR", "nDCG@10", "AP", "Judged@10"]


def _table(df: pl.DataFrame) -> str:
    with pl.Config(tbl_hide_dataframe_shape=True, tbl_hide_column_data_types=True,
                   float_precision=4, tbl_rows=50, tbl_cols=20, tbl_width_chars=120):
        return str(df)


def _retrieve(example: Path) -> list[Any]:
    """The bundled queries through two live systems: BM25 before, reranked after."""
    from .systems import rerank, retrieve, sqlite_fts

    docs, queries = example / "docs.jsonl", example / "queries.tsv"
    fts = sqlite_fts(docs, name="bm25")
    print("\nThe process, for real: the 38 queries through two live systems on the 112 "
          "bundled documents (sef.retrieve, k=20)")
    print("  before: bm25        = sef.systems.sqlite_fts(docs): SQLite FTS5 bm25() over "
          "title + text")
    print("  after:  bm25-rerank = sef.systems.rerank(bm25, docs): its top 30 re-scored "
          "(coverage, title, proximity)")
    return [retrieve(system, queries, k=20, cache=False, progress=False)
            for system in (fts, rerank(fts, docs, depth=30))]


def _pool(results: list[Any], qrels: pl.DataFrame) -> None:
    """Pool the live runs' top 20 and check it against the bundled labels."""
    from .evalset.pooling import coverage, pool

    both = results[0] + results[1]
    todo = pool(both, qrels, depth=20)
    cov = coverage(both, qrels, 20)
    print(f"\nPool of the two runs' top 20: {todo.height} (query, document) pairs have no "
          "label yet (sef.pool(runs, qrels) lists them for labelling); coverage of the "
          "bundled labels (sef.coverage):")
    print(_table(cov.select("run", "retrieved", "judged", "holes", "judged_at_k")))


def _report(example: Path, results: list[Any], out: str) -> int:
    """The report of the live runs (BM25 before, reranked after), with their latency."""
    from .cli.report import headline
    from .figures.latency import latency_table
    from .reporting import report

    (Path(out) / "runs").mkdir(parents=True, exist_ok=True)
    for res in results:  # the runs as files too: searcheval report takes them
        write_run(res.run, Path(out) / "runs" / f"{res.name}.run")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the data banner shows the notes in the report
        rep = report(results[0] + results[1], example / "qrels.txt", baseline="bm25",
                     relevance_level=1,  # the level the demo means (label >= 1): a choice
                     queries=example / "queries.tsv", docs=example / "docs.jsonl",
                     title="Example: does reranking BM25 help? (live systems)",
                     command="make demo")
    index = rep.save(out)
    print(f"\ndemo: report written to {index}")
    lat = latency_table(results[0].latency.vstack(results[1].latency))
    print("\nLatency per query (client time of sef.retrieve, ms):")
    print(_table(lat.select("run", "queries", "errors",
                            *[(pl.col(c) * 1000).round(3).alias(c) for c in ("p50", "p95",
                                                                             "p99")])))
    print()
    print(headline(rep))
    return 0


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    out = "report"
    if "-o" in args:
        i = args.index("-o")
        if i + 1 >= len(args):
            print("demo: -o needs a folder, e.g. -o report", file=sys.stderr)
            return 2
        out = args[i + 1]
        del args[i : i + 2]
    data = Path(args[0]) if args else Path(__file__).resolve().parents[1] / "data"
    seed, example = data / "seed", data / "example"
    if not seed.exists() or not example.exists():
        print(f"bundled data not found under {data}; pass the data folder as argument",
              file=sys.stderr)
        return 2

    print("The seed's worked examples (data/seed)")
    rows = []
    for stem, measures in [("precision_recall", ["P@5", "R@5", "R@3"]), ("mrr", ["RR"]),
                           ("ndcg", ["nDCG@3"])]:
        res = evaluate(read_run(seed / f"{stem}.run"), read_qrels(seed / f"{stem}.qrels"), measures)
        rows.append(res.with_columns(pl.lit(stem).alias("example")))
    print(_table(pl.concat(rows).select("example", "measure", "value")))

    print("\nExample evaluation set (data/example): mean over queries, relevant = label >= 1")
    runs = read_run(sorted((example / "runs").glob("*.run")))
    qrels = read_qrels(example / "qrels.txt")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # bm25-prf has holes by design; Judged@10 shows them
        summary = evaluate(runs, qrels, MEASURES)
    print(_table(pivot(summary)))
    results = _retrieve(example)
    _pool(results, qrels)
    code = _report(example, results, out)
    if code != 0:
        return code
    index = (Path(out) / "index.html").resolve()
    print(f"\nOpen the report: {index.as_uri()}")
    print("Next: .venv/bin/searcheval report --help, or open notebooks/06_report.ipynb")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
