"""Query sets: headerless ``qid<TAB>text``, tables, TREC topic files and ir_datasets."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import polars as pl

from ..errors import DatasetError, EmptyInputError, FileFormatError, MissingColumnError
from ._common import (
    QUERY_ID_ALIASES,
    QUERY_TEXT_ALIASES,
    Backend,
    PathLike,
    as_backend,
    as_str,
    check_backend,
    check_format,
    detect_format,
    find_alias,
    first_data_line,
    head_text,
    read_bytes,
)
from ._lines import Problems, check_utf8, data_lines, line_table
from .tables import read_table, row_lines


def _irds(dataset_id: str) -> Any:
    try:
        import ir_datasets
    except ImportError:
        raise DatasetError(
            f"'irds:{dataset_id}' needs the optional package ir_datasets; install it with "
            "`pip install ir_datasets`"
        ) from None
    try:
        return ir_datasets.load(dataset_id)
    except KeyError:
        raise DatasetError(
            f"ir_datasets has no dataset {dataset_id!r}; see https://ir-datasets.com for ids "
            "such as 'msmarco-passage/trec-dl-2019/judged'"
        ) from None


def irds_qrels(dataset_id: str) -> pl.DataFrame:
    ds = _irds(dataset_id)
    if not ds.has_qrels():
        raise DatasetError(f"ir_datasets dataset {dataset_id!r} has no qrels")
    q, d, r = [], [], []
    for row in ds.qrels_iter():
        q.append(str(row.query_id))
        d.append(str(row.doc_id))
        r.append(int(row.relevance))
    return pl.DataFrame({"query_id": q, "doc_id": d, "relevance": r},
                        schema={"query_id": pl.String, "doc_id": pl.String,
                                "relevance": pl.Int64})


def _irds_queries(dataset_id: str) -> pl.DataFrame:
    ds = _irds(dataset_id)
    if not ds.has_queries():
        raise DatasetError(f"ir_datasets dataset {dataset_id!r} has no queries")
    rows = []
    for row in ds.queries_iter():
        rec = row._asdict()
        qid = str(rec.pop("query_id"))
        text = rec.pop("text", None)
        if text is None:
            text = rec.pop("title", "")
        rows.append({"query_id": qid, "query": str(text),
                     **{k: (v if isinstance(v, str | int | float) else str(v))
                        for k, v in rec.items()}})
    return pl.DataFrame(rows, infer_schema_length=None)


_TOPIC_RE = re.compile(r"<top>(.*?)</top>", re.S | re.I)
_TOPIC_XML_RE = re.compile(r"<topic\b([^>]*)>(.*?)</topic>", re.S | re.I)
_TAG_RE = re.compile(r"<(\w+)>", re.S)
_PREFIXES = {"num": r"number\s*:", "title": r"topic\s*:", "desc": r"description\s*:",
             "narr": r"narrative\s*:"}
_TOPIC_COLUMNS = {"num": "query_id", "title": "query", "desc": "description",
                  "narr": "narrative", "query": "query", "description": "description",
                  "narrative": "narrative"}


def _topic_fields(body: str) -> dict[str, str]:
    out: dict[str, str] = {}
    marks = list(_TAG_RE.finditer(body))
    for i, m in enumerate(marks):
        tag = m.group(1).lower()
        end = marks[i + 1].start() if i + 1 < len(marks) else len(body)
        text = re.sub(r"</\w+>", " ", body[m.end():end])
        if tag in _PREFIXES:
            text = re.sub(r"^\s*" + _PREFIXES[tag], "", text, flags=re.I)
        out[tag] = " ".join(text.split())
    return out


def _read_topics(path: Path) -> pl.DataFrame:
    data = read_bytes(path)
    check_utf8(data, path)
    text = data.decode("utf-8")
    rows: list[dict[str, str]] = []
    starts: list[int] = []  # where each topic starts in the text
    for m in _TOPIC_XML_RE.finditer(text):
        starts.append(m.start())
        attrs = dict(re.findall(r'(\w+)\s*=\s*"([^"]*)"', m.group(1)))
        fields = _topic_fields(m.group(2))
        if "number" in attrs:
            fields.setdefault("num", attrs.pop("number"))
        rows.append({**{k: v for k, v in attrs.items()}, **fields})
    if not rows:
        for m in _TOPIC_RE.finditer(text):
            starts.append(m.start())
            rows.append(_topic_fields(m.group(1)))
    if not rows:
        raise FileFormatError("no <top>...</top> topics found", path=str(path),
                              hint="a TREC topic file has blocks <top><num>1</num>"
                                   "<title>query</title></top>; for qid<TAB>text pass "
                                   "format='tsv'")
    renamed = [{_TOPIC_COLUMNS.get(k, k): v for k, v in r.items()} for r in rows]
    lines = text.split("\n")
    first: dict[str, int] = {}
    for i, r in enumerate(renamed, start=1):
        no = text.count("\n", 0, starts[i - 1]) + 1
        if not r.get("query_id"):
            raise FileFormatError(f"topic number {i} has no <num>", path=str(path),
                                  line_no=no, line=lines[no - 1],
                                  hint="give every topic a <num>")
        if len(r["query_id"].split()) > 1:
            raise FileFormatError(
                f"the <num> of topic number {i} is {r['query_id']!r}: a query id is one word "
                "(is the tag after <num> missing?)", path=str(path), line_no=no,
                line=lines[no - 1], hint="put the text after the number in its own tag, "
                "e.g. <title>")
        if r["query_id"] in first:
            raise FileFormatError(
                f"duplicate query id {r['query_id']!r}: topic number {i} has the number of "
                f"the topic on line {first[r['query_id']]}", path=str(path), line_no=no,
                line=lines[no - 1], hint="give every topic its own <num>")
        first[r["query_id"]] = no
    df = pl.DataFrame(renamed, infer_schema_length=None)
    if "query" not in df.columns:
        df = df.with_columns(pl.lit("").alias("query"))
    df = df.with_columns(pl.col("query").fill_null(""))  # (a topic without a title)
    return df.select("query_id", "query", pl.exclude("query_id", "query"))


def _read_headerless_tsv(path: Path) -> pl.DataFrame:
    lines = data_lines(line_table(read_bytes(path), path))
    parts = pl.col("text").str.splitn("\t", 2)
    df = lines.with_columns(parts.struct.field("field_0").alias("query_id"),
                            parts.struct.field("field_1").alias("query"))
    probs = Problems(path, "queries")
    probs.add(df.filter(pl.col("query").is_null()),
              "wrong number of fields: no TAB between the query id and the text")
    probs.add(df.filter(pl.col("query_id").str.strip_chars() == ""), "the query id is empty")
    if not probs.parts:  # (on the ids returned: stripped)
        d = df.with_columns(pl.col("line_no").min().over(pl.col("query_id").str.strip_chars())
                            .alias("_first"))
        probs.add(d.filter(pl.col("line_no") != pl.col("_first")),
                  pl.format("duplicate query id {} (first on line {})", pl.col("query_id"),
                            pl.col("_first")))
    probs.raise_if_any()
    if df.height == 0:
        raise EmptyInputError(f"{path}: the query file has no queries (only comments or "
                              "blank lines)")
    return df.select(pl.col("query_id").str.strip_chars(), pl.col("query"))


def _query_tsv_header(line: str) -> bool:
    """Whether the first line of a TSV query file is a header row: it has two fields or
    more, and its first field names an id column, or its fields name both an id and a
    text column. (Whole fields: a query text holding the word 'number' or 'id' does not
    make a header.)"""
    fields = [f.strip().strip('"').strip("'").lower() for f in line.split("\t")]
    return len(fields) >= 2 and (fields[0] in QUERY_ID_ALIASES or (
        any(f in QUERY_ID_ALIASES for f in fields)
        and any(f in QUERY_TEXT_ALIASES for f in fields)))


def read_queries(
    path: PathLike,
    *,
    format: Literal["trec", "csv", "tsv", "parquet", "jsonl"] | None = None,
    columns: Mapping[str, str] | None = None,
    backend: Backend = "polars",
) -> Any:
    """Read a query set: ``query_id, query`` plus any metadata columns.

    Parameters
    ----------
    path
        ``qid<TAB>text`` lines without a header (TREC DL topics), CSV/TSV with a
        header, JSON Lines, Parquet, a TREC topic file (``<top>`` blocks; the
        title becomes ``query``, ``<desc>``/``<narr>`` become ``description`` and
        ``narrative``), or ``"irds:<dataset-id>"`` (needs ``ir_datasets``).
    format
        Force a format (``"trec"`` means a TREC topic file here).
    columns
        For tables: ``{"query_id": ..., "query": ...}`` naming your columns.
    backend
        ``"polars"`` (default) or ``"pandas"``.

    Returns
    -------
    DataFrame
        ``query_id`` (str), ``query`` (str), then the other columns.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "queries.tsv"
    >>> _ = p.write_text("1\\twhat is bm25\\n2\\tndcg formula\\n")
    >>> read_queries(p).rows()
    [('1', 'what is bm25'), ('2', 'ndcg formula')]
    """
    check_format(format, "read_queries")
    check_backend(backend, "read_queries")
    if isinstance(path, str) and path.startswith("irds:"):
        return as_backend(_irds_queries(path[5:]), backend, "read_queries")
    p = Path(path)
    fmt = format or detect_format(p, "queries")
    if fmt == "trec":
        df = _read_topics(p)
    elif fmt == "tsv" and not _query_tsv_header(first_data_line(head_text(p)) or ""):
        df = _read_headerless_tsv(p)
    else:
        table, first, label = read_table(p, fmt)
        if table.height == 0:
            raise EmptyInputError(f"{p}: the query file has no rows")
        taken: set[str] = set()
        qcol = find_alias(table, "query_id", QUERY_ID_ALIASES, columns, taken)
        if qcol:
            taken.add(qcol)
        tcol = find_alias(table, "query", QUERY_TEXT_ALIASES, columns, taken)
        if qcol is None or tcol is None:
            miss = "query_id" if qcol is None else "query"
            al = QUERY_ID_ALIASES if qcol is None else QUERY_TEXT_ALIASES
            raise MissingColumnError(
                f"{p}: no column for {miss!r}; the columns are {table.columns}. Recognised "
                f"names: {', '.join(al)}. Pass columns={{{miss!r}: 'your_column'}}"
            )
        df = table.select(as_str(table, qcol).alias("query_id"),
                          as_str(table, tcol).alias("query"),
                          pl.exclude(qcol, tcol))
        probs = Problems(p, "queries")
        raw = df.with_columns(row_lines(first),
                              pl.col("query_id").fill_null("").alias("text"))
        probs.add(raw.filter(pl.col("query_id").is_null()), "the query id is missing")
        if not probs.parts:
            d = raw.with_columns(pl.col("line_no").min().over("query_id").alias("_first"))
            probs.add(d.filter(pl.col("line_no") != pl.col("_first")),
                      pl.format("duplicate query id {} (first on {} {})", pl.col("query_id"),
                                pl.lit(label), pl.col("_first")))
        probs.raise_if_any(label)
    return as_backend(df, backend, "read_queries")
