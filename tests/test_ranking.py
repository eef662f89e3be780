"""The ranking strategies agree, and the layout checks behind "presorted" are exact."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from searcheval_frames.core import ranking
from searcheval_frames.core.evaluate import evaluate_frames
from searcheval_frames.frames import has_repeats, key_hash, query_blocks, score_increases
from searcheval_frames.measures import parse_measure

# ids chosen so that byte order differs from numeric and case-insensitive order
DOCS = ["d1", "d10", "d2", "D3", "a", "b", "9", "10", "é", "z", "Z", "d11"]


@st.composite
def laid_out_runs(draw):
    """Runs listed query by query, best score first, ties in any order (as files are)."""
    rows, qrows = [], []
    runs = draw(st.lists(st.sampled_from(["A", "B", "C"]), unique=True, min_size=1, max_size=3))
    queries = draw(st.lists(st.sampled_from(["q1", "q2", "10", "9"]), unique=True, min_size=1,
                            max_size=4))
    # blocks ordered by run then query, or by query then run: both are contiguous
    pairs = [(r, q) for r in runs for q in queries]
    if draw(st.booleans()):
        pairs = [(r, q) for q in queries for r in runs]
    for r, q in pairs:
        docs = draw(st.lists(st.sampled_from(DOCS), unique=True, min_size=1, max_size=12))
        scores = draw(st.lists(st.sampled_from([0.0, 1.0, 1.5, 2.0, 1e-9, -3.0, 2.000000001]),
                               min_size=len(docs), max_size=len(docs)))
        block = sorted(zip(docs, scores, strict=True), key=lambda t: -t[1])  # stable: ties as drawn
        rows += [(r, q, d, s) for d, s in block]
    for q in queries:
        judged = draw(st.lists(st.sampled_from(DOCS), unique=True, max_size=8))
        qrows += [(q, d, draw(st.integers(-1, 3))) for d in judged]
    run = pl.DataFrame(rows, schema=["run", "query_id", "doc_id", "score"], orient="row")
    qrels = pl.DataFrame(qrows, schema={"query_id": pl.String, "doc_id": pl.String,
                                        "relevance": pl.Int64}, orient="row")
    return run, qrels


def _same(a: ranking.RankedJudged, b: ranking.RankedJudged) -> None:
    assert a.judged.equals(b.judged)
    keys = ranking.KEYS
    assert a.num_ret.sort(keys).equals(b.num_ret.sort(keys))


@settings(max_examples=150, deadline=None)
@given(data=laid_out_runs(), compat=st.sampled_from(["trec_eval-10", "trec_eval-9"]),
       depth=st.sampled_from([None, 1, 3]), judged_only=st.booleans())
def test_presorted_equals_count_and_sort(data, compat, depth, judged_only):
    run, qrels = data
    assert ranking._rank_presorted(run, qrels, compat) is not None  # the fast path is taken
    kw = dict(compat=compat, depth=depth, judged_only=judged_only)
    counted = ranking.rank_judged(run, qrels, strategy="count", **kw)
    _same(counted, ranking.rank_judged(run, qrels, strategy="sort", **kw))
    # tie groups by binary search (few judged rows) and by the linear pass (many)
    default = ranking.LINEAR_SHARE
    try:
        for share in (10**9, 0):
            ranking.LINEAR_SHARE = share
            _same(ranking.rank_judged(run, qrels, strategy="presorted", **kw), counted)
    finally:
        ranking.LINEAR_SHARE = default


def test_presorted_with_many_and_few_labels_and_a_prefilter():
    """A run with 10,000 rows: the label pre-filter (few labels) and the plain join (many
    labels), with long tie groups, give the ranks of the count strategy."""
    rng = np.random.default_rng(5)
    n_q, depth = 50, 200
    run = pl.DataFrame({
        "run": "r", "query_id": np.repeat([f"q{i}" for i in range(n_q)], depth),
        "doc_id": [f"d{j}" for j in rng.permuted(np.tile(np.arange(depth), (n_q, 1)),
                                                  axis=1).ravel()],
        "score": np.sort(rng.integers(0, 15, (n_q, depth)), axis=1)[:, ::-1].ravel() * 1.0,
    })
    for n_labels in (300, 3_000):
        qrels = run.sample(n_labels, seed=n_labels).select(
            "query_id", "doc_id", relevance=pl.lit(1, pl.Int64))
        got = ranking.rank_judged(run, qrels, strategy="presorted")
        assert got.judged.height == n_labels
        _same(got, ranking.rank_judged(run, qrels, strategy="count"))


@settings(max_examples=60, deadline=None)
@given(data=laid_out_runs(), seed=st.integers(0, 10_000))
def test_shuffled_rows_fall_back_and_agree(data, seed):
    """Any row order gives the same ranks; a split or unsorted block is detected."""
    run, qrels = data
    shuffled = run.sample(fraction=1.0, shuffle=True, seed=seed)
    blocks = query_blocks(shuffled)
    pre = ranking._rank_presorted(shuffled, qrels, "trec_eval-10")
    if pre is not None:  # only when the shuffle kept every block together and sorted
        assert blocks is not None
    _same(ranking.rank_judged(shuffled, qrels), ranking.rank_judged(run, qrels, strategy="count"))


ALL = [parse_measure(n) for n in [
    "P@1", "P@5", "R@3", "RR", "AP", "nDCG", "nDCG@3", "Rprec", "Bpref", "IPrec@0.3",
    "NumRet", "NumRelRet", "Judged@5", "SetP"]]


@settings(max_examples=40, deadline=None)
@given(data=laid_out_runs())
@pytest.mark.filterwarnings("ignore::searcheval_frames.errors.SearchEvalWarning")
def test_evaluate_same_with_every_strategy(data):
    run, qrels = data
    assume(qrels.height > 0)  # else no query in common: an error, tested elsewhere
    out = [evaluate_frames(run, qrels, ALL, per_query=True, strategy=s)
           for s in ("presorted", "count", "sort")]
    assert out[0].equals(out[1]) and out[0].equals(out[2])


def test_tie_groups_use_doc_id_descending_byte_order():
    # scores tie across the whole block; trec_eval order: z, é, d2, d10, d1, D3, a... by bytes
    docs = ["d1", "d10", "d2", "é", "z", "D3"]
    run = pl.DataFrame({"run": "r", "query_id": "q", "doc_id": docs, "score": 1.0})
    qrels = pl.DataFrame({"query_id": ["q"] * 6, "doc_id": docs, "relevance": [1] * 6})
    got = ranking.rank_judged(run, qrels, strategy="presorted").judged
    expected = sorted(docs, key=lambda d: d.encode(), reverse=True)
    assert got["doc_id"].to_list() == expected
    assert got["rank"].to_list() == [1, 2, 3, 4, 5, 6]


def test_rank_within_block_counts_only_higher_scores_and_ties():
    run = pl.DataFrame({
        "run": "r", "query_id": ["1"] * 5 + ["2"] * 3,
        "doc_id": ["a", "b", "c", "d", "e", "a", "b", "c"],
        "score": [5.0, 4.0, 4.0, 4.0, 1.0, 3.0, 2.0, 2.0],
    })
    qrels = pl.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["c", "e", "b"],
                          "relevance": [1, 1, 1]})
    got = ranking.rank_judged(run, qrels, strategy="presorted")
    # query 1: a (5), then ties d > c > b by doc id, then e; query 2: a, then c > b
    assert got.judged.select("query_id", "doc_id", "rank").rows() == [
        ("1", "c", 3), ("1", "e", 5), ("2", "b", 3)]
    assert dict(got.num_ret.select("query_id", "num_ret").rows()) == {"1": 5, "2": 3}


def test_query_blocks_detects_split_and_interleaved_runs():
    df = pl.DataFrame({"run": ["A", "A", "B", "B", "A"], "query_id": ["1", "1", "1", "2", "2"],
                       "doc_id": list("abcde")})
    b = query_blocks(df)
    assert b is not None
    assert b.starts.tolist() == [0, 2, 3, 4] and b.lengths.tolist() == [2, 1, 1, 1]
    assert b.keys.rows() == [("A", "1"), ("B", "1"), ("B", "2"), ("A", "2")]
    split = pl.DataFrame({"run": "A", "query_id": ["1", "2", "1"], "doc_id": list("abc")})
    assert query_blocks(split) is None
    assert query_blocks(split.clear()) is None


def test_unsorted_block_is_not_presorted():
    run = pl.DataFrame({"run": "r", "query_id": ["1", "1", "2", "2"],
                        "doc_id": list("abcd"), "score": [1.0, 2.0, 9.0, 1.0]})
    qrels = pl.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]})
    assert ranking._rank_presorted(run, qrels, "trec_eval-10") is None
    # a score going up at a block boundary is fine
    ok = run.with_columns(pl.Series("score", [2.0, 1.0, 9.0, 1.0]))
    assert ranking._rank_presorted(ok, qrels, "trec_eval-10") is not None
    assert ranking.rank_judged(run, qrels).judged["rank"].to_list() == [2]


def test_increases_across_chunks():
    parts = [pl.Series("score", [3.0, 2.0]), pl.Series("score", [5.0, 1.0, 4.0])]
    s = pl.concat(parts, rechunk=False)
    assert s.n_chunks() == 2
    assert score_increases(s).tolist() == [2, 4]
    assert score_increases(s, prev=1.0).tolist() == [0, 2, 4]  # higher than the row before
    assert score_increases(s, prev=9.0).tolist() == [2, 4]


def test_unknown_strategy():
    run = pl.DataFrame({"run": "r", "query_id": ["1"], "doc_id": ["a"], "score": [1.0]})
    with pytest.raises(ValueError, match="strategy must be"):
        ranking.rank_judged(run, run.select("query_id", "doc_id", relevance=1), strategy="fast")


@settings(max_examples=15, deadline=None)
@given(n_blocks=st.integers(1, 30), dup_at=st.one_of(st.none(), st.integers(0, 10_000)),
       seed=st.integers(0, 1000))
def test_has_repeats_with_blocks(n_blocks, dup_at, seed):
    """The threaded, block-split check finds a repeat wherever it is (big input)."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 2_500_000 // n_blocks, n_blocks)
    n = int(lengths.sum())
    q = np.repeat(np.arange(n_blocks), lengths)
    d = np.arange(n)  # unique documents
    if dup_at is not None:
        i = dup_at % n
        j = i + 1 if i + 1 < n and q[i + 1] == q[i] else i - 1
        if j >= 0 and q[j] == q[i]:
            d[j] = d[i]
        else:
            dup_at = None  # a one-row block cannot hold a duplicate
    df = pl.DataFrame({"query_id": q, "doc_id": d}).select(
        pl.lit("r").alias("run"), pl.all().cast(pl.String))
    blocks = query_blocks(df)
    assert blocks is not None
    h = key_hash(df, ["query_id", "doc_id"])
    assert has_repeats(h, blocks) == (dup_at is not None)
    assert has_repeats(h) == (dup_at is not None)


def _ranked_by_sorting(run: pl.DataFrame, depth: int | None) -> pl.DataFrame:
    """The definition: sort by (run, query, score desc, doc_id desc) and number the rows."""
    out = run.sort(["run", "query_id", "score", "doc_id"],
                   descending=[False, False, True, True]).with_columns(
        pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over(["run", "query_id"]).alias("rank"))
    return out if depth is None else out.filter(pl.col("rank") <= depth)


@settings(max_examples=150, deadline=None)
@given(data=laid_out_runs(), seed=st.integers(0, 10_000),
       layout=st.sampled_from(["as drawn", "shuffled in blocks", "shuffled"]),
       depth=st.sampled_from([None, 1, 2, 5]))
def test_ranked_rows_is_sorting_and_numbering(data, seed, layout, depth):
    """Presorted, unsorted within queries, or interleaved: the ranks (ties by doc_id
    descending) and the row order are those of the four-key sort."""
    run, _ = data
    if layout == "shuffled":
        run = run.sample(fraction=1.0, shuffle=True, seed=seed)
    elif layout == "shuffled in blocks":
        rng = np.random.default_rng(seed)
        run = run.with_columns(pl.Series("_r", rng.random(run.height))).sort(
            "run", "query_id", "_r", maintain_order=True).drop("_r")
    run = run.with_columns(pl.lit(7, pl.Int64).alias("rank"))  # (replaced)
    got = ranking.ranked_rows(run, depth)
    assert got.equals(_ranked_by_sorting(run.drop("rank"), depth))


@settings(max_examples=80, deadline=None)
@given(data=laid_out_runs(), seed=st.integers(0, 10_000),
       compat=st.sampled_from(["trec_eval-10", "trec_eval-9"]),
       depth=st.sampled_from([None, 1, 3]), padded=st.booleans())
def test_unsorted_blocks_rank_as_laid_out(data, seed, compat, depth, padded):
    """Queries together but scores in any order (issue #25): "auto" ranks through the
    layout permutation (blocks sorted one by one in a padded 2-D array, or by polars when
    the blocks differ much in length) and gives the ranks of the count strategy."""
    run, qrels = data
    rng = np.random.default_rng(seed)
    run = run.with_columns(pl.Series("_r", rng.random(run.height))).sort(
        "run", "query_id", "_r", maintain_order=True).drop("_r")
    kw = dict(compat=compat, depth=depth)
    own = ranking._padded_layout
    try:
        if not padded:
            ranking._padded_layout = lambda block, score: None
        got = ranking.rank_judged(run, qrels, **kw)
    finally:
        ranking._padded_layout = own
    _same(got, ranking.rank_judged(run, qrels, strategy="count", **kw))


def test_padded_layout_sorts_each_block_and_drops_the_padding():
    block = np.repeat(np.arange(3), [3, 1, 2])
    score = np.array([1.0, np.inf, -np.inf, 5.0, 2.0, 3.0])  # (padding cells hold +inf)
    perm = ranking._padded_layout(block, score)
    assert perm is not None and perm.tolist() == [1, 0, 2, 3, 5, 4]
    assert ranking._padded_layout(np.repeat([0, 1], [1, 5000]), np.zeros(5001)) is None
    same = ranking._padded_layout(np.repeat([0, 1], 3), np.array([1.0, 3.0, 2.0, 0.0, 0.5, 9.0]))
    assert same is not None and same.tolist() == [1, 2, 0, 5, 4, 3]  # (one length: no padding)


@pytest.mark.parametrize("depth", [1, 2, 4])
def test_ranked_rows_depth_cut_with_blocks_of_one_length(depth):
    """The candidates of a depth cut, found by a partition per block when every block has
    one length (issue #25), keep every row that can rank within ``depth`` (ties too)."""
    rng = np.random.default_rng(depth)
    n_q, per = 40, 6
    run = pl.DataFrame({
        "run": np.repeat(["A", "B"], n_q * per // 2),
        "query_id": np.repeat([f"q{i % (n_q // 2)}" for i in range(n_q)], per),
        "doc_id": [f"d{j}" for j in rng.integers(0, 10**6, n_q * per)],
        "score": rng.integers(0, 3, n_q * per).astype(float),  # many ties
    }).unique(["run", "query_id", "doc_id"], maintain_order=True)
    run = run.filter(pl.len().over("run", "query_id") == per)  # (one length)
    assert run.height > 0
    assert ranking.ranked_rows(run, depth).equals(_ranked_by_sorting(run, depth))


@settings(max_examples=40, deadline=None)
@given(n_q=st.integers(1, 6), depth=st.integers(1, 6), same_docs=st.booleans(),
       dup=st.one_of(st.none(), st.tuples(st.integers(0, 100), st.integers(0, 100))),
       uneven=st.booleans())
def test_run_checks_hash_finds_repeats_inside_a_query_only(n_q, depth, same_docs, dup, uneven):
    """Blocks of one length hash the documents only; a document in several queries is not
    a repeat, one listed twice in a query is (checked against the exact definition)."""
    from searcheval_frames.frames import run_checks
    q = np.repeat(np.arange(n_q), depth)
    d = np.tile(np.arange(depth), n_q) if same_docs else np.arange(n_q * depth)
    if uneven and q.size > 1:
        q, d = q[1:], d[1:]
    if dup is not None:
        i, j = dup[0] % q.size, dup[1] % q.size
        d = d.copy()
        d[j] = d[i]
    df = pl.DataFrame({"query_id": q, "doc_id": d}).select(
        pl.lit("r").alias("run"), pl.all().cast(pl.String), score=pl.lit(1.0))
    bad, blocks, h = run_checks(df)
    assert not bad and blocks is not None
    expected = df.select(pl.struct("query_id", "doc_id").is_duplicated().any()).item()
    assert has_repeats(h, blocks) == expected


@settings(max_examples=40, deadline=None)
@given(n_q=st.integers(1, 5), depth=st.integers(8, 30), n_labels=st.integers(1, 4),
       ties=st.booleans(), shuffle=st.booleans(), seed=st.integers(0, 10_000))
def test_judged_rows_found_by_validation_hashes(n_q, depth, n_labels, ties, shuffle, seed):
    """Few labels: the judged rows are found by the document hashes validation keeps in the
    blocks (not by the id strings); the ranks are those the count strategy gives."""
    from searcheval_frames.frames import run_frame_blocks
    rng = np.random.default_rng(seed)
    q = np.repeat(np.arange(n_q), depth).astype(str)
    d = np.concatenate([rng.permutation(50)[:depth] for _ in range(n_q)]).astype(str)
    score = (rng.integers(0, 3, q.size) if ties else rng.random(q.size)).astype(float)
    run = pl.DataFrame({"query_id": q, "doc_id": d, "score": score})
    if not shuffle:  # best first inside each query (the presorted path without a layout)
        run = run.sort(["query_id", "score"], descending=[False, True], maintain_order=True)
    run, blocks = run_frame_blocks(run)
    assert blocks is not None and blocks.doc_hash is not None
    qrels = run.sample(min(n_labels, run.height // 8), seed=seed).select(
        "query_id", "doc_id", relevance=pl.lit(1, pl.Int64))
    qrels = pl.concat([qrels, pl.DataFrame({"query_id": ["0"], "doc_id": ["x"],
                                            "relevance": [1]})]).unique()
    assume(qrels.height * 8 < run.height)  # (more labels: no pre-filter at all)
    _same(ranking.rank_judged(run, qrels, blocks=blocks),
          ranking.rank_judged(run, qrels, strategy="count"))
