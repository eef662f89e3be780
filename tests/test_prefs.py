"""Preference judgments (trec_eval -R prefs / qrels_prefs): readers, measures, CLI errors.

The byte-for-byte comparison with trec_eval's out.test.prefs / out.test.qrels_prefs is in
test_trec_eval_outputs.py; here: hand-computed small cases and bad input.
"""

from __future__ import annotations

import polars as pl
import pytest
from conftest import shared_path

from searcheval_frames.cli import main
from searcheval_frames.errors import (
    DuplicateRowsError,
    FileFormatError,
    InvalidOptionError,
    InvalidRelevanceError,
    MissingColumnError,
)
from searcheval_frames.io import read_run
from searcheval_frames.io.prefs import read_prefs, read_qrels_prefs
from searcheval_frames.measures.prefs import PREFS_MEASURES, evaluate_prefs


def _run(docs: list[str], qid: str = "q") -> pl.DataFrame:
    n = len(docs)
    return pl.DataFrame({"run": "r", "query_id": qid, "doc_id": docs,
                         "score": [float(n - i) for i in range(n)]})


def _prefs(rows: list[tuple[str, str, str, float]], qid: str = "q") -> pl.DataFrame:
    return pl.DataFrame([(qid, jg, jsg, d, lv) for jg, jsg, d, lv in rows],
                        schema=["query_id", "jg", "jsg", "doc_id", "rel_level"], orient="row")


def _values(run: pl.DataFrame, prefs: pl.DataFrame, **kw) -> dict[str, float]:
    v = evaluate_prefs(run, prefs, **kw)
    assert v.get_column("query_id").unique().to_list() == ["q"]
    return dict(v.select("measure", "value").iter_rows())


ABC = [("u", "0", "a", 2.0), ("u", "0", "b", 1.0), ("u", "0", "c", 0.0)]


def test_complete_group_counts_and_ratios():
    v = _values(_run(["a", "b"]), _prefs(ABC))  # c unretrieved: a>c, b>c implied, fulfilled
    assert list(v) == list(PREFS_MEASURES)
    assert (v["prefs_num_prefs_poss"], v["prefs_num_prefs_ful"],
            v["prefs_num_prefs_ful_ret"]) == (3, 3, 1)
    assert v["prefs_simp"] == v["prefs_simp_ret"] == v["prefs_pair"] == 1.0
    v = _values(_run(["b", "a"]), _prefs(ABC))  # a>b now violated
    assert (v["prefs_num_prefs_poss"], v["prefs_num_prefs_ful"]) == (3, 2)
    assert v["prefs_simp"] == pytest.approx(2 / 3) and v["prefs_simp_ret"] == 0.0
    assert v["prefs_simp_imp"] == pytest.approx(2 / 3)
    v = _values(_run(["x", "b"]), _prefs(ABC))  # a, c unretrieved: a>c occurs nowhere
    assert (v["prefs_num_prefs_poss"], v["prefs_num_prefs_ful"]) == (3, 1)  # b>c only
    assert v["prefs_simp_imp"] == 0.5  # a>b failed (b retrieved), b>c fulfilled; a>c ignored
    assert v["prefs_pair"] == pytest.approx(1 / 3)  # pair (a, c): neither retrieved, 0


def test_partial_group_is_closed_transitively():
    prefs = _prefs([("u", "s1", "a", 2.0), ("u", "s1", "b", 1.0),
                    ("u", "s2", "b", 2.0), ("u", "s2", "c", 1.0)])
    v = _values(_run(["c", "b", "a"]), prefs)
    assert v["prefs_num_prefs_poss"] == 3  # a>b, b>c and the implied a>c
    assert v["prefs_num_prefs_ful"] == 0
    assert _values(_run(["a", "b", "c"]), prefs)["prefs_num_prefs_ful_ret"] == 3


def test_pair_and_avgjg_weigh_differently_from_simp():
    prefs = _prefs([("u1", "0", "a", 1.0), ("u1", "0", "b", 0.0), ("u1", "0", "c", 0.0),
                    ("u2", "0", "b", 1.0), ("u2", "0", "a", 0.0)])
    v = _values(_run(["a", "b", "c"]), prefs)
    assert v["prefs_simp"] == pytest.approx(2 / 3)  # a>b, a>c kept; b>a not
    assert v["prefs_pair"] == pytest.approx((0.5 + 1.0) / 2)  # pairs {a,b}: 1 of 2; {a,c}
    assert v["prefs_avgjg"] == pytest.approx((1.0 + 0.0) / 2)


def test_rnonrel_pads_or_trims_the_nonrelevant():
    # R=2 >= N=1: R*(R-N) fulfilled preferences added for the retrieved relevant ones
    prefs = _prefs([("u", "0", "a", 1.0), ("u", "0", "b", 1.0), ("u", "0", "x", 0.0)])
    v = _values(_run(["a", "x", "b"]), prefs)
    assert v["prefs_avgjg"] == 0.5
    assert v["prefs_avgjg_Rnonrel"] == pytest.approx((1 + 2) / (2 + 2))
    # R=1 < N=3: only the first non-relevant doc (rank order) is kept, and (trec_eval's
    # counting) every doc of the group is compared with it: a>x kept, x, y, z vs x not
    prefs = _prefs([("u", "0", "a", 1.0), ("u", "0", "x", 0.0), ("u", "0", "y", 0.0),
                    ("u", "0", "z", 0.0)])
    v = _values(_run(["a", "x", "y", "z"]), prefs)
    assert v["prefs_avgjg"] == 1.0
    assert v["prefs_avgjg_Rnonrel"] == pytest.approx(1 / 4)


def test_depth_and_query_sets():
    prefs = pl.concat([_prefs(ABC), _prefs(ABC, qid="only_in_prefs")])
    v = _values(_run(["b", "a"]), prefs, depth=1)  # a cut off: a>b failed (b retrieved)
    assert v["prefs_num_prefs_ful"] == 1 and v["prefs_num_prefs_ful_ret"] == 0


def test_inconsistent_preferences_are_errors():
    run = _run(["a", "b"])
    with pytest.raises(InvalidRelevanceError, match="two different levels"):
        evaluate_prefs(run, _prefs([("u", "0", "a", 1.0), ("u", "0", "a", 0.0),
                                    ("u", "0", "b", 0.0)]))
    with pytest.raises(InvalidRelevanceError, match="contradict"):
        evaluate_prefs(run, _prefs([("u", "s1", "a", 2.0), ("u", "s1", "b", 1.0),
                                    ("u", "s2", "b", 2.0), ("u", "s2", "a", 1.0)]))
    with pytest.raises(InvalidRelevanceError, match="both level 0"):
        evaluate_prefs(run, _prefs([("u", "s1", "a", 0.0), ("u", "s1", "b", 1.0),
                                    ("u", "s2", "a", 2.0), ("u", "s2", "b", 3.0)]))
    dup = pl.concat([run, run.head(1)])
    with pytest.raises(DuplicateRowsError, match="same document twice"):
        evaluate_prefs(dup, _prefs(ABC))


def test_options_and_columns_are_checked():
    with pytest.raises(InvalidOptionError, match="depth"):
        evaluate_prefs(_run(["a"]), _prefs(ABC), depth=0)
    with pytest.raises(InvalidOptionError, match="depth"):
        evaluate_prefs(_run(["a"]), _prefs(ABC), depth=2.5)
    with pytest.raises(MissingColumnError, match=r"prefs lacks column.*jsg"):
        evaluate_prefs(_run(["a"]), _prefs(ABC).drop("jsg"))
    with pytest.raises(MissingColumnError, match="polars DataFrame"):
        evaluate_prefs(_run(["a"]).to_pandas(), _prefs(ABC))


def test_readers(tmp_path):
    f = tmp_path / "prefs"
    f.write_text("# comment\nq u s d#1 1.5\n\nq u s d2 0\n")
    assert read_prefs(f).rows() == [("q", "u", "s", "d#1", 1.5), ("q", "u", "s", "d2", 0.0)]
    g = tmp_path / "qrels"
    g.write_text("q 0 d1 1\n#x\nq 0 d2 0\n")
    assert read_qrels_prefs(g).get_column("jsg").to_list() == ["0", "0"]


@pytest.mark.parametrize(("text", "line_no"), [
    ("q u s d 1\nq u d 1\n", 2),        # four fields
    ("q u s d 1\nq u s d one\n", 2),    # level not a number
    ("# c\nq u s d 1 extra\n", 2),      # six fields (comment lines are counted)
])
def test_malformed_prefs_file(tmp_path, text, line_no):
    f = tmp_path / "prefs"
    f.write_text(text)
    with pytest.raises(FileFormatError) as exc:
        read_prefs(f)
    assert f"{f}:{line_no}" in str(exc.value) and "qid jg jsg docno rel_level" in str(exc.value)


def test_malformed_or_empty_qrels_prefs(tmp_path):
    f = tmp_path / "qrels"
    f.write_text("q 0 d1 1\nq 0 d2 0 extra\n")
    with pytest.raises(FileFormatError, match=":2"):
        read_qrels_prefs(f)
    f.write_text("# only a comment\n")
    with pytest.raises(FileFormatError, match="no qrels"):
        read_qrels_prefs(f)
    with pytest.raises(FileFormatError, match="no such file"):
        read_prefs(tmp_path / "missing")


@pytest.fixture()
def files(tmp_path):
    prefs = tmp_path / "prefs"
    prefs.write_text("q u 0 a 2\nq u 0 b 1\nq u 0 c 0\n")
    run = tmp_path / "run"
    run.write_text("q Q0 a 1 2.0 r\nq Q0 b 2 1.0 r\n")
    return str(prefs), str(run)


def test_cli_prefs_sets_and_errors(capsys, files):
    prefs, run = files
    assert main(["--format", "trec_eval", "-R", "prefs", "-m", "prefs", prefs, run]) == 0
    out = capsys.readouterr().out
    assert [ln.split("\t")[0].rstrip() for ln in out.splitlines()] == [
        "runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful",
        "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair", "prefs_avgjg"]
    assert main(["--format", "trec_eval", "-R", "prefs", "-m", "prefs_simp", "-q",
                 prefs, run]) == 0
    assert capsys.readouterr().out == ("prefs_simp            \tq\t1.0000\n"
                                       "prefs_simp            \tall\t1.0000\n")
    assert main(["--format", "trec_eval", "-R", "prefs", "-m", "map", prefs, run]) == 1
    assert "only the preference measures" in capsys.readouterr().err
    assert main(["-R", "prefs", prefs, run]) == 1
    assert "--format trec_eval" in capsys.readouterr().err
    assert main(["--format", "trec_eval", "-R", "prefs", "-c", prefs, run]) == 1
    assert "-c is not supported" in capsys.readouterr().err
    assert main(["--format", "trec_eval", "-R", "qrels_prefs", prefs, run]) == 1
    err = capsys.readouterr().err
    assert f"{prefs}:1" in err and "-R prefs" in err
    assert main(["--format", "trec_eval", "-m", "all_prefs", prefs, run]) == 1
    assert "-R prefs" in capsys.readouterr().err


@pytest.mark.shared
@pytest.mark.parametrize(("expected", "judgments", "run_file", "reader"), [
    ("out.test.prefs", "prefs.test", "prefs.results.test", read_prefs),
    ("out.test.prefs", "prefs.comment.test", "prefs.results.test", read_prefs),
    ("out.test.qrels_prefs", "qrels.test", "results.test", read_qrels_prefs),
])
def test_api_values_match_trec_eval(expected, judgments, run_file, reader):
    """evaluate_prefs itself (not the CLI printer): every value line of the expected file."""
    folder = shared_path("trec_eval_tests")
    v = evaluate_prefs(read_run(folder / run_file), reader(folder / judgments))
    counts = set(PREFS_MEASURES[:3])

    def fmt(m: str, x: float) -> str:
        return str(round(x)) if m in counts else f"{x:.4f}"

    got = {(q, m): fmt(m, x) for q, m, x in v.select("query_id", "measure", "value").iter_rows()}
    summary = v.group_by("measure").agg(pl.col("value").sum().alias("s"),
                                        pl.col("value").mean().alias("m"))
    for m, s, mean in summary.iter_rows():
        got[("all", m)] = fmt(m, s if m in counts else mean)
    exp = {}
    for line in (folder / expected).read_text().splitlines():
        m, q, x = (p.strip() for p in line.split("\t"))
        if m not in ("runid", "num_q"):
            exp[(q, m)] = x
    assert len(exp) == len(got) and len(exp) in (14 * 25, 14 * 4)
    assert got == exp
