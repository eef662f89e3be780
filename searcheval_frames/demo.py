"""The quick start's main job: evaluate the bundled examples and write a report.

Run it with ``python -m searcheval_frames.demo [DATA_DIR] [-o REPORT_DIR]``
(``make demo``). It evaluates the worked examples of the seed text (data/seed)
and the example evaluation set (data/example: 38 queries, four real runs), then
runs ``searcheval report`` on it — BM25 before, the reranked run after — and
writes ``report/index.html``.
"""

from __future__ import annotations

import shlex
import sys
import warnings
from pathlib import Path

import polars as pl

from .core.evaluate import evaluate
from .core.results import pivot
from .io import read_qrels, read_run

MEASURES = ["P@5", "R@10", "RR", "nDCG@10", "AP", "Judged@10"]


def _table(df: pl.DataFrame) -> str:
    with pl.Config(tbl_hide_dataframe_shape=True, tbl_hide_column_data_types=True,
                   float_precision=4, tbl_rows=50, tbl_cols=20, tbl_width_chars=120):
        return str(df)


def _report(example: Path, out: str) -> int:
    """``searcheval report`` on the example set: bm25 before, bm25-rerank after."""
    from .cli.report import main as report_main

    argv = [str(example / "qrels.txt"), str(example / "runs" / "bm25.run"),
            str(example / "runs" / "bm25-rerank.run"), "--baseline", "bm25",
            "--queries", str(example / "queries.tsv"), "--docs", str(example / "docs.jsonl"),
            "--title", "Example: does reranking BM25 help?",
            "--level", "1",  # the level the demo means (relevant = label >= 1): a choice
            "-o", out]
    print("\n$ searcheval report " + shlex.join(argv))  # quoted: it pastes into a shell
    return report_main(argv)


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
    code = _report(example, out)
    if code != 0:
        return code
    index = (Path(out) / "index.html").resolve()
    print(f"\nOpen the report: {index.as_uri()}")
    print("Next: .venv/bin/searcheval report --help, or open notebooks/06_report.ipynb")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
