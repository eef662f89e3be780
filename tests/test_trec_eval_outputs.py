"""`searcheval --format trec_eval` is byte-identical to trec_eval's expected outputs.

For each expected file of trec_eval's own test suite (../shared/data/trec_eval_tests,
README there gives the command lines) we run the same command line and compare
the lines of every measure we implement, byte for byte and in order. Measures we
do not implement (infAP, rbp, utility ...) are left out of both sides; the test
also checks that what we leave out is only those.
"""

from __future__ import annotations

import pytest
from conftest import shared_path

from searcheval_frames.cli import main

ALL_TREC = ["-m", "all_trec"]
MEAS_PARAMS = ["-q", "-miprec_at_recall..10,.20,.25,.75,.50", "-m", "P.5,7,3", "-m",
               "recall.20,2000", "-m", "ndcg_cut.10,20,23.4", "-msuccess.2,5,20"]
CASES = [
    ("out.test", [], "qrels.test", "results.test"),
    ("out.test", [], "qrels.test.with-comments", "results.test"),
    ("out.comment.test", [], "qrels.comment.test", "results.comment.test"),
    ("out.test.a", ALL_TREC, "qrels.test", "results.test"),
    ("out.test.aq", [*ALL_TREC, "-q"], "qrels.test", "results.test"),
    ("out.test.aqc", [*ALL_TREC, "-q", "-c"], "qrels.test", "results.trunc"),
    ("out.test.aqcM", [*ALL_TREC, "-q", "-c", "-M100"], "qrels.test", "results.trunc"),
    ("out.test.aql", [*ALL_TREC, "-q", "-l2"], "qrels.rel_level", "results.test"),
    ("out.test.meas_params", MEAS_PARAMS, "qrels.test", "results.test"),
]
V9 = [c for c in CASES if c[0] in ("out.test", "out.test.a", "out.test.aq", "out.test.aqc",
                                   "out.test.aqcM", "out.test.aql", "out.test.meas_params")
      and c[2] != "qrels.test.with-comments"]
#: trec_eval measures we do not compute (anything else missing is a failure)
NOT_IMPLEMENTED_PREFIXES = ("infAP", "gm_bpref", "Rprec_mult", "utility", "binG", "G ",
                            "ndcg_rel", "Rndcg", "relative_P", "set_relative_P", "set_map",
                            "set_F", "num_nonrel_judged_ret", "rbp", "relstring",
                            "11pt_avg_.25", "ndcg_1=3")


def _run(capsys, args):
    code = main(["--format", "trec_eval", *args])
    out = capsys.readouterr().out
    assert code == 0
    return out


def _check(capsys, expected_path, flags, qrels, run):
    folder = expected_path.parent if expected_path.parent.name != "v9.0.8_expected" \
        else expected_path.parent.parent
    got = _run(capsys, [*flags, str(folder / qrels), str(folder / run)])
    expected = expected_path.read_text().splitlines(keepends=True)
    got_lines = got.splitlines(keepends=True)
    labels = {ln.split("\t", 1)[0] for ln in got_lines}
    kept = [ln for ln in expected if ln.split("\t", 1)[0] in labels]
    assert "".join(kept) == got  # byte-identical, same order
    left_out = {ln.split("\t", 1)[0].rstrip() for ln in expected} - {
        lab.rstrip() for lab in labels}
    unexpected = sorted(m for m in left_out
                        if not (m + " ").startswith(NOT_IMPLEMENTED_PREFIXES))
    assert not unexpected, f"measures left out that should be implemented: {unexpected}"
    assert len(kept) >= len(expected) * 0.6


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
