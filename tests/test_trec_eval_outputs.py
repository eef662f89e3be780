"""`searcheval --format trec_eval` is byte-identical to trec_eval's expected outputs.

For each expected file of trec_eval's own test suite (../shared/data/trec_eval_tests,
README there gives the command lines) we run the same command line and compare the
whole output, byte for byte and in order: every line of every file must match.

Preference judgments (``out.test.prefs``, ``out.test.qrels_prefs``: ``-R prefs``,
``-R qrels_prefs``, ``-m all_prefs``) are compared the same way, every line.

Left out, on purpose:

* ``rbp``/``rbp_resid`` lines, only while the RBP family is not registered (it comes from
  another branch); once it is, they are compared like every other line.
"""

from __future__ import annotations

import pytest
from conftest import shared_path

from searcheval_frames.cli import main
from searcheval_frames.errors import UnknownMeasureError
from searcheval_frames.measures import parse_measure

ALL_TREC = ["-m", "all_trec"]
MEAS_PARAMS = ["-q", "-miprec_at_recall..10,.20,.25,.75,.50", "-m", "P.5,7,3", "-m",
               "recall.20,2000", "-m", "Rprec_mult.5.0,0.2,0.35", "-mutility.2,-1,0,0", "-m",
               "11pt_avg..25,.5,.75", "-mndcg.1=3,2=9,4=4.5", "-mndcg_cut.10,20,23.4",
               "-msuccess.2,5,20"]
CASES = [
    ("out.test", [], "qrels.test", "results.test"),
    ("out.test", [], "qrels.test.with-comments", "results.test"),
    ("out.comment.test", [], "qrels.comment.test", "results.comment.test"),
    ("out.test.a", ALL_TREC, "qrels.test", "results.test"),
    ("out.test.aq", [*ALL_TREC, "-q"], "qrels.test", "results.test"),
    ("out.test.aqc", [*ALL_TREC, "-q", "-c"], "qrels.test", "results.trunc"),
    ("out.test.aqcM", [*ALL_TREC, "-q", "-c", "-M100"], "qrels.test", "results.trunc"),
    ("out.test.aql", [*ALL_TREC, "-mrelstring.20", "-q", "-l2"], "qrels.rel_level",
     "results.test"),
    ("out.test.meas_params", MEAS_PARAMS, "qrels.test", "results.test"),
    # ZFILE: the zscores_file next to the expected output (v9.0.8 has its own)
    ("out.test.aqZ", ["-q", *ALL_TREC, "-Z", "ZFILE"], "qrels.test", "results.test"),
    ("out.test.qrels_jg", ["-m", "qrels_jg", "-q", "-R", "qrels_jg"], "qrels.123",
     "results.test"),
    ("out.test.qrels_jg", ["-m", "qrels_jg", "-q", "-R", "qrels_jg"], "qrels.comments.123",
     "results.test"),
    ("out.test.prefs", ["-m", "all_prefs", "-q", "-R", "prefs"], "prefs.test",
     "prefs.results.test"),
    ("out.test.prefs", ["-m", "all_prefs", "-q", "-R", "prefs"], "prefs.comment.test",
     "prefs.results.test"),
    ("out.test.qrels_prefs", ["-m", "all_prefs", "-q", "-R", "qrels_prefs"], "qrels.test",
     "results.test"),
]
V9 = [c for c in CASES if c[0] in ("out.test", "out.test.a", "out.test.aq", "out.test.aqc",
                                   "out.test.aqcM", "out.test.aql", "out.test.meas_params",
                                   "out.test.aqZ")
      and c[2] != "qrels.test.with-comments"]


def _registered(name: str) -> bool:
    try:
        parse_measure(name)
    except UnknownMeasureError:
        return False
    return True


#: trec_eval measures computed on another branch; compared as soon as they are registered
ELSEWHERE = tuple(n for n in ("rbp", "rbp_resid") if not _registered(n))


def _run(capsys, args):
    code = main(["--format", "trec_eval", *args])
    out = capsys.readouterr().out
    assert code == 0
    return out


def _check(capsys, expected_path, flags, qrels, run):
    folder = expected_path.parent if expected_path.parent.name != "v9.0.8_expected" \
        else expected_path.parent.parent
    flags = [str(expected_path.parent / "zscores_file") if f == "ZFILE" else f for f in flags]
    got = _run(capsys, [*flags, str(folder / qrels), str(folder / run)])
    expected = expected_path.read_text().splitlines(keepends=True)
    kept = [ln for ln in expected if _name(ln) not in ELSEWHERE]
    got_lines = got.splitlines(keepends=True)
    same = sum(a == b for a, b in zip(kept, got_lines, strict=False))
    assert got == "".join(kept), (
        f"{same} of {len(kept)} lines identical; first difference: "
        f"{next(((a, b) for a, b in zip(kept, got_lines, strict=False) if a != b), None)}")
    assert same == len(kept) == len(got_lines)
    # nothing but the other branch's measures is left out of the comparison
    assert len(expected) - len(kept) == sum(
        _name(ln) in ("rbp", "rbp_resid") for ln in expected
    ) * bool(ELSEWHERE)


def _name(line: str) -> str:
    """Measure name of an output line, without -Z's 'Z' prefix."""
    name = line.split("\t", 1)[0].rstrip()
    return name[1:] if name.startswith("Z") else name


@pytest.mark.shared
@pytest.mark.parametrize(("expected", "flags", "qrels", "run"), CASES,
                         ids=[f"{c[0]}-{c[2]}" for c in CASES])
def test_byte_identical_v10(capsys, expected, flags, qrels, run):
    _check(capsys, shared_path("trec_eval_tests", expected), flags, qrels, run)


@pytest.mark.shared
@pytest.mark.parametrize(("expected", "flags", "qrels", "run"), V9, ids=[c[0] for c in V9])
def test_byte_identical_v9(capsys, expected, flags, qrels, run):
    path = shared_path("trec_eval_tests", "v9.0.8_expected", expected)
    _check(capsys, path, ["--compat", "trec_eval-9", *flags], qrels, run)


@pytest.mark.shared
def test_default_output_is_complete_official_set(capsys):
    folder = shared_path("trec_eval_tests")
    got = _run(capsys, [str(folder / "qrels.test"), str(folder / "results.test")])
    expected = (folder / "out.test").read_text()
    assert got == expected  # every line of the official set, not only a subset


NEW_FAMILIES = ["infAP", "gm_bpref", "Rprec_mult", "utility", "11pt_avg", "binG", "G", "ndcg_rel",
                "Rndcg", "relative_P", "success", "set_relative_P", "set_map", "set_F",
                "num_nonrel_judged_ret"]


@pytest.mark.shared
@pytest.mark.parametrize("family", NEW_FAMILIES)
def test_each_family_by_trec_name(capsys, family):
    """`-m <family>` prints exactly that family's lines of out.test.a (defaults included)."""
    folder = shared_path("trec_eval_tests")
    got = _run(capsys, ["-m", family, str(folder / "qrels.test"), str(folder / "results.test")])
    lines = (folder / "out.test.a").read_text().splitlines(keepends=True)
    mine = [ln for ln in lines
            if ln.split("\t", 1)[0].rstrip() == family
            or ln.split("\t", 1)[0].rstrip().startswith(family + "_")]
    if family == "set_F":
        mine = [ln for ln in mine if ln.startswith("set_F ")]
    assert mine and got == "".join(mine)


@pytest.mark.shared
def test_our_names_print_trec_labels(capsys):
    folder = shared_path("trec_eval_tests")
    got = _run(capsys, ["-m", "infAP,RprecMult@0.2,SetF,RelP@5,Utility", "-m", "relstring_5",
                        "-q", str(folder / "qrels.test"), str(folder / "results.test")])
    assert "relstring_5           \t301\t'00000'\n" in got
    assert "Rprec_mult_0.20       \tall\t0.3445\n" in got and "infAP                 \tall\t0.1785\n" in got
    assert "relative_P_5          \tall\t0.2667\n" in got and "utility               \tall\t-412.6667\n" in got
    assert "set_F                 \tall\t0.1194\n" in got


def test_relstring_characters(capsys, tmp_path):
    """Labels 0-9 as digits, > above 9, . for a negative label, - for a document not in the
    qrels; the string stops at the end of the list; -M cuts it; -J drops the unjudged."""
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 a 12\nq1 0 b -1\nq1 0 c 0\nq1 0 d 3\nq2 0 a 1\n")
    run = tmp_path / "run"
    run.write_text("".join(f"q1 Q0 {d} {i} {10 - i} r\n" for i, d in enumerate("axbcd")))
    got = _run(capsys, ["-q", "-c", "-m", "relstring.20", "-m", "P.5", str(qrels), str(run)])
    assert got.splitlines()[:2] == ["P_5                   \tq1\t0.4000",  # trec_eval's order
                                    "relstring_20          \tq1\t'>-.03'"]
    assert "relstring_20          \tq2\t''" in got and "\tall\t" in got
    assert "relstring" not in "".join(ln for ln in got.splitlines() if "\tall\t" in ln)
    got = _run(capsys, ["-q", "-M", "3", "-m", "relstring", str(qrels), str(run)])
    assert got == "relstring             \tq1\t'>-.'\n"
    got = _run(capsys, ["-q", "-J", "-m", "relstring", str(qrels), str(run)])
    assert got == "relstring             \tq1\t'>03'\n"
    assert _run(capsys, ["-m", "relstring", "-m", "P.5", str(qrels), str(run)]).startswith("P_5")


def test_zscore_file_errors_and_missing_entries(capsys, tmp_path):
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 a 1\nq1 0 b 0\nq2 0 a 1\n")
    run = tmp_path / "run"
    run.write_text("q1 Q0 a 1 2.0 r\nq1 Q0 b 2 1.0 r\nq2 Q0 b 1 1.0 r\n")
    bad = tmp_path / "z"
    bad.write_text("q1 map 0.5 0.1\nq1 P_5 high 0.1\n")
    assert main(["--format", "trec_eval", "-Z", str(bad), str(qrels), str(run)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:2" in err and "qid measure mean stddev" in err
    good = tmp_path / "z2"
    good.write_text("q1 map 0.5 0.25\nq2 map 0.0 0.0\nq1 num_ret 1 0.5\n")
    got = _run(capsys, ["-q", "-m", "map", "-m", "num_ret", "-m", "num_q", "-Z", str(good),
                        str(qrels), str(run)])
    # q1: (1 - 0.5) / 0.25; q2: sd 0 and value 0 == mean -> 0; absent entries -> -1000000
    assert got == ("Znum_ret               \tq1\t2.0000\n"
                   "Zmap                   \tq1\t2.0000\n"
                   "Znum_ret               \tq2\t-1000000.0000\n"
                   "Zmap                   \tq2\t0.0000\n"
                   "Znum_q                 \tall\t2.0000\n"
                   "Znum_ret               \tall\t-999998.0000\n"
                   "Zmap                   \tall\t1.0000\n")


def test_qrels_jg_file_errors(capsys, tmp_path):
    bad = tmp_path / "qrels_jg"
    bad.write_text("q1 0 a 1\nq1 1 a\n")
    run = tmp_path / "run"
    run.write_text("q1 Q0 a 1 2.0 r\n")
    assert main(["--format", "trec_eval", "-R", "qrels_jg", "-m", "qrels_jg", str(bad),
                 str(run)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:2" in err and "qid jg docno label" in err
    bad.write_text("q1 0 a 1\nq1 1 a 0\n")
    assert main(["--format", "trec_eval", "-R", "qrels_jg", "-m", "map", str(bad),
                 str(run)]) == 1
    assert "only map_avgjg, P_avgjg, Rprec_mult_avgjg" in capsys.readouterr().err


def test_qrels_jg_averages_over_groups(capsys, tmp_path):
    qrels = tmp_path / "qrels_jg"  # group 1 finds a relevant, group 2 does not
    qrels.write_text("q1 1 a 1\nq1 1 b 0\nq1 2 a 0\nq1 2 b 1\nq2 1 a 1\n")
    run = tmp_path / "run"
    run.write_text("q1 Q0 a 1 2.0 r\nq1 Q0 x 2 1.0 r\nq2 Q0 a 1 1.0 r\n")
    got = _run(capsys, ["-R", "qrels_jg", "-m", "map_avgjg", "-m", "P_avgjg.1", "-q",
                        str(qrels), str(run)])
    assert got == ("map_avgjg             \tq1\t0.5000\n"   # (1 + 0) / 2 groups
                   "P_avgjg_1             \tq1\t0.5000\n"
                   "map_avgjg             \tq2\t1.0000\n"
                   "P_avgjg_1             \tq2\t1.0000\n"
                   "map_avgjg             \tall\t0.7500\n"
                   "P_avgjg_1             \tall\t0.7500\n")
