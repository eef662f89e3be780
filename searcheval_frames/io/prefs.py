"""Read preference judgments: trec_eval's ``prefs`` and ``qrels_prefs`` formats.

``prefs`` (trec_eval ``-R prefs``, ``get_prefs.c``): five whitespace-separated fields a line,
``qid jg jsg docno rel_level``. ``jg`` names a *judgment group* (one consistent set of
preferences, e.g. one assessor), ``jsg`` a *judgment sub-group* inside it; within a
sub-group every document with a higher ``rel_level`` is preferred to every document with a
lower one (``rel_level`` is a number, not necessarily an integer).

``qrels_prefs`` (trec_eval ``-R qrels_prefs``, ``get_qrels_prefs.c``): an ordinary qrels file
``qid jg docno rel`` read as preferences: the second column is the judgment group, every
group has a single sub-group ``"0"``, so relevance levels become preferences.

In both, lines whose first character is ``#`` are comments (trec_eval 10); ``#`` anywhere
else is part of a field (docnos may contain it). Blank lines are skipped.

Both readers return ``query_id, jg, jsg, doc_id, rel_level`` (strings and Float64), in file
order.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from ..errors import FileFormatError

__all__ = ["read_prefs", "read_qrels_prefs"]

_NUMBER = r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$"


def _fields(path: str | Path, n: int, layout: str, hint: str) -> pl.DataFrame:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileFormatError("no such file", path=str(path),
                              hint="check the path of the preferences file") from None
    except UnicodeDecodeError as exc:
        raise FileFormatError(f"not UTF-8 text ({exc.reason})", path=str(path),
                              hint="give a text file of preference judgments") from None
    lines = pl.DataFrame({"line": text.splitlines()}, schema={"line": pl.String})
    lines = lines.with_row_index("no", offset=1).filter(
        ~pl.col("line").str.starts_with("#") & (pl.col("line").str.strip_chars() != ""))
    fields = lines.with_columns(pl.col("line").str.extract_all(r"\S+").alias("f"))
    bad = fields.filter((pl.col("f").list.len() != n)
                        | ~pl.col("f").list.get(n - 1, null_on_oob=True)
                        .str.contains(_NUMBER).fill_null(False))
    if bad.height:
        no, line = bad.select("no", "line").row(0)
        more = f" ({bad.height} such lines, first {min(bad.height, 3)}: lines " + ", ".join(
            str(x) for x in bad.get_column("no").head(3).to_list()) + ")" if bad.height > 1 else ""
        raise FileFormatError(
            f"a {layout} line has {n} fields, the last a number{more}", path=str(path),
            line_no=int(no), line=str(line), hint=hint)
    if fields.height == 0:
        raise FileFormatError(f"no {layout} lines", path=str(path), hint=hint)
    return fields


def read_prefs(path: str | Path) -> pl.DataFrame:
    """Read a trec_eval preferences file (``qid jg jsg docno rel_level`` lines).

    Parameters
    ----------
    path
        The file (``#`` in the first column starts a comment line).

    Returns
    -------
    polars.DataFrame
        ``query_id, jg, jsg, doc_id`` (String) and ``rel_level`` (Float64), in file order.

    Raises
    ------
    FileFormatError
        A line without exactly five fields or whose last field is not a number (the message
        names the file and line), or a file without any preference line.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", delete=False) as fh:
    ...     _ = fh.write("# comment\\nq1 user1 s1 d#1 2\\nq1 user1 s1 d2 0.5\\n")
    >>> read_prefs(fh.name).rows()
    [('q1', 'user1', 's1', 'd#1', 2.0), ('q1', 'user1', 's1', 'd2', 0.5)]
    >>> os.unlink(fh.name)
    """
    f = _fields(path, 5, "prefs 'qid jg jsg docno rel_level'",
                "each line is 'qid jg jsg docno rel_level' (5 fields); for an ordinary "
                "qrels file use -R qrels_prefs")
    return f.select(*(pl.col("f").list.get(i).alias(c) for i, c in
                      enumerate(("query_id", "jg", "jsg", "doc_id"))),
                    pl.col("f").list.get(4).cast(pl.Float64).alias("rel_level"))


def read_qrels_prefs(path: str | Path) -> pl.DataFrame:
    """Read an ordinary qrels file (``qid jg docno rel``) as preferences (one sub-group).

    Parameters
    ----------
    path
        The qrels file; its second column is the judgment group.

    Returns
    -------
    polars.DataFrame
        ``query_id, jg, jsg, doc_id, rel_level`` with ``jsg`` always ``"0"``.

    Raises
    ------
    FileFormatError
        A line without exactly four fields or a non-numeric relevance (file and line named).

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", delete=False) as fh:
    ...     _ = fh.write("q1 0 d1 1\\nq1 0 d2 0\\n")
    >>> read_qrels_prefs(fh.name).rows()
    [('q1', '0', '0', 'd1', 1.0), ('q1', '0', '0', 'd2', 0.0)]
    >>> os.unlink(fh.name)
    """
    f = _fields(path, 4, "qrels 'qid jg docno rel'",
                "each line is 'qid jg docno rel' (4 fields); for a preferences file "
                "('qid jg jsg docno rel_level') use -R prefs")
    return f.select(pl.col("f").list.get(0).alias("query_id"),
                    pl.col("f").list.get(1).alias("jg"), pl.lit("0").alias("jsg"),
                    pl.col("f").list.get(2).alias("doc_id"),
                    pl.col("f").list.get(3).cast(pl.Float64).alias("rel_level"))
