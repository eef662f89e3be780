"""Every measure parameter with a range refuses a value outside it, naming the parameter
and the range (issue #31: ``SetF(beta=-1)`` returned 0 for every query)."""

from __future__ import annotations

import re

import pytest

import searcheval_frames as sef
from searcheval_frames.errors import UnknownMeasureError
from searcheval_frames.measures._params import Param
from searcheval_frames.measures.base import REGISTRY


def _outside(p: Param) -> list[str]:
    """Values just outside ``p``'s range (and NaN / infinity)."""
    out = ["nan", "inf"]
    if p.low is not None:
        out.append(f"{p.low:g}" if p.open_low else f"{p.low - 1:g}")
    if p.high is not None:
        out.append(f"{p.high:g}" if p.open_high else f"{p.high + 1:g}")
    return out


def _cases() -> list[tuple[str, str, str]]:
    cases = []
    for fam in {id(f): f for f in REGISTRY.values()}.values():
        for key, p in fam.params.items():
            if isinstance(p, Param) and p.bounded:
                cases += [(fam.name, key, bad) for bad in _outside(p)]
    return sorted(set(cases))


CASES = _cases()


def test_the_families_of_the_issue_declare_ranges():
    bounded = {(f, k) for f, k, _ in CASES}
    for family, key in [("SetF", "beta"), ("RBP", "p"), ("ERR", "max_rel"), ("INST", "t"),
                        ("alpha_nDCG", "alpha"), ("Compat", "p"), ("P", "rel")]:
        assert any(f.lower().replace("-", "_") == family.lower() and k == key
                   for f, k in bounded), (family, key)


@pytest.mark.parametrize(("family", "key", "bad"), CASES)
def test_out_of_range_parameter_is_refused(family, key, bad):
    p = next(f for f in REGISTRY.values() if f.name == family).params[key]
    names = [f"{family}({key}={bad})", f"{family}({key}={bad})@10"]
    errors = []
    for name in names:
        with pytest.raises(UnknownMeasureError) as info:
            sef.parse_measure(name)
        errors.append(str(info.value))
    msg = next((e for e in errors if f"for {key}" in e), errors[-1])
    assert f"bad value {bad!r} for {key}" in msg, msg
    assert p.rule and p.rule in msg, msg


def test_setf_beta_minus_one_is_an_error_and_beta_zero_is_precision():
    run = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
    qrels = {"q1": {"d1": 1, "d4": 1}}
    with pytest.raises(UnknownMeasureError, match=re.escape("for beta (must be >= 0)")):
        sef.evaluate(run, qrels, ["SetF(beta=-1)"])
    out = sef.evaluate(run, qrels, ["SetF(beta=0)", "SetP"])["value"].to_list()
    assert out[0] == pytest.approx(out[1]) == pytest.approx(1 / 3)  # F_0 = P


def test_values_inside_the_ranges_parse():
    for name in ["RBP(p=0.5)", "ERR(max_rel=1)@10", "INST(t=0.5)", "SetF(beta=0)",
                 "alpha_nDCG(alpha=0)@10", "alpha_nDCG(alpha=1)@10", "Utility(tp=-2)"]:
        sef.parse_measure(name)
