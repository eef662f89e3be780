"""The answer check (systems/answers.py) against a slow reference written from its rules:
hypothesis draws answers of every shape (ids of every type, scores with NaN, infinity,
None, bools, rising scores, duplicates, too many hits); the check must accept exactly the
answers the reference accepts, with the same ids and scores, through its fast path and
its slow path alike."""

from __future__ import annotations

import itertools
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from searcheval_frames.systems.answers import InvalidAnswer, parse_hits

IDS = st.one_of(st.sampled_from(["d1", "d2", "d3", "d4", ""]), st.integers(-3, 3),
                st.booleans(), st.none(), st.floats(allow_nan=True), st.just(np.int64(5)))
SCORES = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 5),
                   st.booleans(), st.none(), st.just(np.float64(0.5)))


def reference(hits: list, k: int) -> tuple[list[str], list[float]] | None:
    """The rules, one at a time; None means refused."""
    if len(hits) > k:
        return None
    ids, scores = [], []
    for doc, score in hits:
        if isinstance(doc, bool) or not isinstance(doc, str | int | np.integer):
            return None
        if isinstance(score, bool) or not isinstance(score, int | float | np.floating):
            return None
        if not math.isfinite(float(score)):
            return None
        ids.append(doc if isinstance(doc, str) else str(int(doc)))
        scores.append(float(score))
    if len(set(ids)) != len(ids):
        return None
    if any(b > a for a, b in itertools.pairwise(scores)):
        return None
    return ids, scores


@settings(max_examples=400, deadline=None)
@given(hits=st.lists(st.tuples(IDS, SCORES), max_size=6), k=st.integers(1, 6),
       as_dicts=st.booleans())
def test_the_check_accepts_exactly_what_the_rules_accept(hits, k, as_dicts):
    want = reference(hits, k)
    given_hits = [{"doc_id": d, "score": s} for d, s in hits] if as_dicts else list(hits)
    try:
        got = parse_hits(given_hits, k)
    except InvalidAnswer:
        got = None
    assert got == want


@settings(max_examples=200, deadline=None)
@given(scores=st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=20))
def test_falling_scores_of_distinct_ids_pass_the_fast_path_unchanged(scores):
    ordered = sorted(scores, reverse=True)
    hits = [(f"d{i}", s) for i, s in enumerate(ordered)]
    assert parse_hits(hits, 20) == ([h[0] for h in hits], ordered)
