"""Any dataframe in, canonical polars frames out (layer 1: imports only ``errors``).

* ``kinds``: what the caller passed (pandas, polars, pyarrow, a path) and how to
  hand a result back as the same kind;
* ``canonical``: column aliases, ``run_frame`` / ``qrels_frame`` and their validation;
* ``checked``: runs already checked by the reader (not checked twice);
* ``blocks``: query blocks, key hashes and duplicate checks used by validation,
  the readers and the ranking.

``to_polars``, ``run_frame_blocks`` and ``resolve_columns`` are for the package's other
layers (the user's entry points are ``run_frame`` and ``qrels_frame``).
"""

from .blocks import (
    Blocks,
    has_repeats,
    key_hash,
    query_blocks,
    repeated_blocks,
    repeats_in_blocks,
    run_checks,
    score_increases,
)
from .canonical import (
    ALIASES,
    DEFAULT_RUN_NAME,
    QRELS_COLUMNS,
    RUN_COLUMNS,
    find_column,
    qrels_frame,
    resolve_columns,
    run_frame,
    run_frame_blocks,
)
from .checked import checked_blocks, mark_checked
from .kinds import Kind, input_kind, is_path, to_native, to_polars

__all__ = [
    "ALIASES",
    "DEFAULT_RUN_NAME",
    "QRELS_COLUMNS",
    "RUN_COLUMNS",
    "Blocks",
    "Kind",
    "checked_blocks",
    "find_column",
    "has_repeats",
    "input_kind",
    "is_path",
    "key_hash",
    "mark_checked",
    "qrels_frame",
    "query_blocks",
    "repeated_blocks",
    "repeats_in_blocks",
    "resolve_columns",
    "run_checks",
    "run_frame",
    "run_frame_blocks",
    "score_increases",
    "to_native",
    "to_polars",
]
