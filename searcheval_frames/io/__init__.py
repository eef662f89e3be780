"""Files ↔ canonical frames (layer 2: imports ``errors`` and ``frames``)."""

from .readers import (  # noqa: F401  (private names used by core, cli and tests)
    _BATCH_ROWS,
    _atomic_write,
    _exact_trec_run,
    _read_runs,
    _split_fields,
    detect_format,
    read_qrels,
    read_queries,
    read_run,
    write_qrels,
    write_queries,
    write_run,
)

__all__ = [
    "detect_format",
    "read_qrels",
    "read_queries",
    "read_run",
    "write_qrels",
    "write_queries",
    "write_run",
]
