"""A system's answer checked before it becomes rows of a run: no silent wrong run.

:func:`parse_hits` turns the raw hits of one answer (``[(doc_id, score), ...]``,
``[{"doc_id": ..., "score": ...}, ...]`` or a frame) into two lists, and refuses with
:class:`InvalidAnswer` (naming the problem and showing the offending hits):

* an id that is not text: integers are converted with ``str()`` (``7`` -> ``"7"``, as
  run files are read); ``True``/``False``, ``None``, floats and anything else are refused;
* a missing, non-numeric, NaN or infinite score;
* the same document twice in one answer;
* more than ``k`` hits;
* a score higher than the one before it: the order of the hits is the system's ranking
  (rank 1 first), and evaluation ranks by score (as trec_eval), so the two must agree
  (a system ranking by something else returns e.g. ``1 / rank`` as the score).

>>> parse_hits([("d1", 2.0), (7, 1)], 10)
(['d1', '7'], [2.0, 1.0])
>>> parse_hits([("d1", 2.0), ("d1", 1.0)], 10)
Traceback (most recent call last):
...
searcheval_frames.systems.answers.InvalidAnswer: document 'd1' appears 2 times in one answer (each document may be ranked once)
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from numbers import Integral, Real
from typing import Any

__all__ = ["InvalidAnswer", "parse_hits"]


class InvalidAnswer(Exception):
    """An answer that cannot become rows of a run (the message says why)."""


def _id(value: Any, i: int) -> str:
    if type(value) is str:
        return value
    if isinstance(value, Integral) and not isinstance(value, bool):
        return str(int(value))
    if isinstance(value, str):
        return str(value)
    raise InvalidAnswer(
        f"hit {i + 1} has doc_id {value!r} ({type(value).__name__}); ids must be text "
        "(integers are converted with str(); bools, None and floats are refused)")


def _score(value: Any, i: int) -> float:
    if isinstance(value, Real) and not isinstance(value, bool):
        out = float(value)
        if math.isfinite(out):
            return out
    raise InvalidAnswer(
        f"hit {i + 1} has score {value!r}; scores must be finite numbers (no NaN, None or "
        "infinity)")


def _pair(hit: Any, i: int) -> tuple[Any, Any]:
    if isinstance(hit, tuple | list) and len(hit) == 2:
        return hit[0], hit[1]
    if isinstance(hit, Mapping):
        if "doc_id" not in hit:
            raise InvalidAnswer(f"hit {i + 1} has no 'doc_id' key: {dict(hit)!r:.200}")
        if "score" not in hit:
            raise InvalidAnswer(f"hit {i + 1} has no 'score' key: {dict(hit)!r:.200}")
        return hit["doc_id"], hit["score"]
    raise InvalidAnswer(
        f"hit {i + 1} is {hit!r:.100}; a hit is (doc_id, score) or {{'doc_id': ..., "
        "'score': ...}")


def _frame_hits(hits: Any) -> list[tuple[Any, Any]]:
    import polars as pl

    from ..frames.kinds import to_polars

    df = to_polars(hits, "answer")
    missing = [c for c in ("doc_id", "score") if c not in df.columns]
    if missing:
        raise InvalidAnswer(f"the answer frame has no {missing} column; its columns are "
                            f"{df.columns}")
    if df.schema["doc_id"] in (pl.String, pl.Int64, pl.Int32, pl.UInt32, pl.UInt64):
        return list(zip(df["doc_id"].to_list(), df["score"].to_list(), strict=True))
    raise InvalidAnswer(f"the answer frame's doc_id column is {df.schema['doc_id']}; ids "
                        "must be text or integers")


def _fast(hits: list[Any], k: int) -> tuple[list[str], list[float]] | None:
    """The common answer (``(str, float)`` pairs, scores falling, ids distinct) checked with
    C-level builtins; None sends any other answer to the slow path and its messages."""
    if not hits:
        return [], []
    if len(hits) > k or set(map(type, hits)) != {tuple} or set(map(len, hits)) != {2}:
        return None
    ids, raw = zip(*hits, strict=True)
    if set(map(type, ids)) != {str} or not set(map(type, raw)) <= {float, int}:
        return None
    scores = list(map(float, raw))
    if (not all(map(math.isfinite, scores)) or scores != sorted(scores, reverse=True)
            or len(set(ids)) != len(ids)):
        return None
    return list(ids), scores


def parse_hits(hits: Any, k: int) -> tuple[list[str], list[float]]:
    """The doc ids and scores of one answer, checked (see the module docstring)."""
    if type(hits) is list:
        fast = _fast(hits, k)
        if fast is not None:
            return fast
    if hits is None:
        raise InvalidAnswer("the system returned None instead of a list of hits")
    if isinstance(hits, str | bytes | Mapping):
        raise InvalidAnswer(f"the system returned {type(hits).__name__} {hits!r:.100} "
                            "instead of a list of hits")
    if not isinstance(hits, list | tuple):
        hits = _frame_hits(hits) if hasattr(hits, "columns") else list(hits)
    if len(hits) > k:
        raise InvalidAnswer(f"{len(hits)} hits for k={k}; a system must return at most k")
    ids: list[str] = []
    scores: list[float] = []
    for i, hit in enumerate(hits):
        d, s = _pair(hit, i)
        ids.append(_id(d, i))
        scores.append(_score(s, i))
    for i in range(1, len(scores)):
        if scores[i] > scores[i - 1]:
            raise InvalidAnswer(
                f"hit {i + 1} has score {scores[i]!r}, higher than hit {i}'s {scores[i - 1]!r}: "
                "the answer's order and its scores disagree (evaluation ranks by score, as "
                "trec_eval); return scores that decrease down the list, e.g. 1 / rank")
    if len(set(ids)) != len(ids):
        doc, n = Counter(ids).most_common(1)[0]
        raise InvalidAnswer(f"document {doc!r} appears {n} times in one answer (each "
                            "document may be ranked once)")
    return ids, scores
