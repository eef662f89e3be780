"""Read and write runs, qrels and query sets.

The readers return the canonical long frames of :mod:`searcheval_frames.frames`
(polars by default, pandas with ``backend="pandas"``):

* :func:`read_run` → ``run, query_id, doc_id, score, rank``
* :func:`read_qrels` → ``query_id, doc_id, relevance``
* :func:`read_queries` → ``query_id, query`` (+ metadata columns)

Formats (detected from the extension and the content, or forced with
``format=``):

``"trec"``
    TREC run ``qid iter docno rank score tag`` / qrels ``qid iter docno rel``;
    fields separated by any mix of spaces and tabs, ``Q0`` or ``0`` in the
    iter column, ``#`` comment lines (trec_eval 10), anything after the tag
    ignored (trec_eval does the same), runs without the tag column (the run
    name is then the file name). For query sets: TREC topic files
    (``<top><num>..</num><title>..</title></top>`` and the older
    ``<num> Number: 301`` layout).
``"csv"``, ``"tsv"``
    A header row naming the columns (``qid``, ``docno``, ``score``, ``label`` ...
    are recognised, see :data:`searcheval_frames.frames.ALIASES`). For query
    sets a ``.tsv`` file may also be headerless ``qid<TAB>text`` (TREC DL topics).
``"parquet"``, ``"jsonl"``
    Columns as for CSV.

Any of the text formats may be gzip-compressed (``.gz``, or detected from the
content). ``"irds:<dataset-id>"`` instead of a path reads qrels or queries
through the optional ``ir_datasets`` package.

Reading never drops a line silently: every malformed line is reported with
the file name, the line number (comment lines counted), the text of the line
and a hint. Writers are atomic: they write a temporary file in the target
folder, flush it to disk and rename it over the target.
"""

# ``read_runs`` (runs with their query blocks) and ``atomic_write`` are for the package's
# other layers (core, fusion, cli); ``BATCH_ROWS`` lives on :mod:`.trec_fast`
from ._common import detect_format
from .api import read_qrels, read_run, read_runs  # noqa: F401
from .queries import read_queries
from .write import atomic_write, write_qrels, write_queries, write_run  # noqa: F401

__all__ = [
    "detect_format",
    "read_qrels",
    "read_queries",
    "read_run",
    "write_qrels",
    "write_queries",
    "write_run",
]
