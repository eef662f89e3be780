"""write_run keeps each query's rows together, in the order runs and queries first appear.

Oracle: a pure-Python reference order (first appearance of the run, then of the query,
then rank, or score descending with ties by doc id descending, as trec_eval ranks).
"""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import searcheval_frames as sef


def reference(rows: list[tuple[str, str, str, int, float]], keep_rank: bool) -> list[tuple]:
    runs = list(dict.fromkeys(r[0] for r in rows))
    out = []
    for run in runs:
        mine = [r for r in rows if r[0] == run]
        for q in dict.fromkeys(r[1] for r in mine):
            hits = [r for r in mine if r[1] == q]
            if keep_rank:
                hits.sort(key=lambda r: r[3])
                out += [(run, q, d) for _, _, d, _, _ in hits]
            else:
                hits.sort(key=lambda r: (r[4], r[2]), reverse=True)
                out += [(run, q, d) for _, _, d, _, _ in hits]
    return out


rows_st = st.lists(st.tuples(st.sampled_from(["a", "b"]), st.sampled_from(["q3", "q1", "q2"]),
                             st.sampled_from([f"d{i}" for i in range(6)]),
                             st.integers(0, 3)), min_size=1, max_size=30)


@settings(max_examples=60, deadline=None)
@given(raw=rows_st, keep_rank=st.booleans())
def test_rows_are_grouped_by_run_and_query_in_first_appearance_order(raw, keep_rank, tmp_path_factory):
    seen: dict[tuple[str, str, str], tuple] = {}
    for run, q, d, s in raw:  # one row per (run, query, doc)
        seen.setdefault((run, q, d), (run, q, d, 0, float(s)))
    rows = list(seen.values())
    ranked = []  # a rank per (run, query) in trec_eval's order, to keep
    for run, q, d, _, s in rows:
        same = sorted((r for r in rows if r[0] == run and r[1] == q),
                      key=lambda r: (r[4], r[2]), reverse=True)
        ranked.append((run, q, d, [r[2] for r in same].index(d) + 1, s))
    frame = pl.DataFrame(ranked, schema=["run", "query_id", "doc_id", "rank", "score"],
                         orient="row")
    path = tmp_path_factory.mktemp("w") / "out.tsv"
    sef.write_run(frame, path, keep_rank=keep_rank)
    got = pl.read_csv(path, separator="\t", schema_overrides={"query_id": pl.String})
    assert list(got.select("run", "query_id", "doc_id").iter_rows()) == reference(ranked, keep_rank)


def test_kept_ranks_are_written_query_by_query(tmp_path):
    run = pl.DataFrame({"query_id": ["q2", "q1", "q2", "q1"], "doc_id": ["a", "b", "c", "d"],
                        "score": [2.0, 2.0, 1.0, 1.0], "rank": [1, 1, 2, 2], "run": ["x"] * 4})
    path = sef.write_run(run, tmp_path / "x.run", keep_rank=True)
    assert [line.split()[0] for line in path.read_text().splitlines()] == ["q2", "q2", "q1", "q1"]
