"""Any dataframe in, canonical polars frames out (layer 1: imports only ``errors``).

* ``kinds``: what the caller passed (pandas, polars, pyarrow, a path) and how to
  hand a result back as the same kind;
* ``canonical``: column aliases, ``run_frame`` / ``qrels_frame`` and their validation;
* ``checked``: runs already checked by the reader (not checked twice);
* ``blocks``: query blocks, key hashes and duplicate checks used by validation,
  the readers and the ranking.
"""

from .blocks import (
    Blocks,
    has_repeats,
    key_hash,
    query_blocks,
    repeats_in_blocks,
    run_checks,
    score_increases,
)
from .canonical import (
    ALIASES,
    DEFAULT_RUN_NAME,
    QRELS_COLUMNS,
    RUN_COLUMNS,
    _check_empty,
    _duplicates,
    _ids_to_str,
    _resolve_columns,
    _run_frame,
    _validate_run,
    find_column,
    qrels_frame,
    run_frame,
)
from .checked import checked_blocks, mark_checked
from .kinds import Kind, _to_polars, input_kind, is_path, to_native

__all__ = [
    "ALIASES",
    "DEFAULT_RUN_NAME",
    "QRELS_COLUMNS",
    "RUN_COLUMNS",
    "Blocks",
    "Kind",
    "_check_empty",
    "_duplicates",
    "_ids_to_str",
    "_resolve_columns",
    "_run_frame",
    "_to_polars",
    "_validate_run",
    "checked_blocks",
    "find_column",
    "has_repeats",
    "input_kind",
    "is_path",
    "key_hash",
    "mark_checked",
    "qrels_frame",
    "query_blocks",
    "repeats_in_blocks",
    "run_checks",
    "run_frame",
    "score_increases",
    "to_native",
]
