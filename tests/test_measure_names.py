"""Every spelling the registry knows parses, and every parsed measure's name parses back.

The registry (families, their aliases and pinned spellings) is the one source of names;
these tests walk it rather than a hand-written list, so a new family is covered the day
it registers.
"""

from __future__ import annotations

import doctest
import importlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searcheval_frames.errors import UnknownMeasureError
from searcheval_frames.measures import REGISTRY, Family, parse_measure
from searcheval_frames.measures._params import Param
from searcheval_frames.measures.base import ALIASES, register

SPELLINGS = sorted(ALIASES)


def _examples() -> list[str]:
    return sorted({f.example for f in REGISTRY.values() if f.example} | set(REGISTRY))


def _parse_or_none(text: str):
    try:
        return parse_measure(text)
    except UnknownMeasureError:
        return None


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_every_alias_parses_to_its_family_and_round_trips(spelling):
    family, pinned = ALIASES[spelling]
    fam = REGISTRY[family]
    # a family that needs a cutoff is asked with one; an alias may itself pin one
    texts = [spelling, spelling.upper()]
    if fam.cutoff == "int":
        texts.append(f"{spelling}@10")
    elif fam.cutoff == "float":
        texts.append(f"{spelling}@0.5")
    parsed = [m for m in map(_parse_or_none, texts) if m is not None]
    assert parsed, f"no spelling of {spelling!r} parses"
    for m in parsed:
        assert m.family == family
        for key, value in pinned.items():
            if key != "cutoff" and fam.param_defaults.get(key) != value:
                assert m.param(key) == value
        assert parse_measure(m.name) == m
        assert parse_measure(m.name.lower()) == m
        if m.trec_name is not None:
            assert parse_measure(m.trec_name) == m


@pytest.mark.parametrize("name", _examples())
def test_every_family_name_and_example_round_trips(name):
    fam = REGISTRY.get(name, Family)
    if fam.cutoff_required:
        name += "@0.5" if fam.cutoff == "float" else "@10"
    m = parse_measure(name)
    assert parse_measure(m.name) == m
    assert m.name == parse_measure(m.name).name


def test_case_of_a_name_does_not_matter():
    for name in _examples():
        m = _parse_or_none(name)
        if m is not None:
            assert _parse_or_none(name.swapcase()) == m


def test_every_parameter_is_declared_with_a_description():
    # parameters are declared once (Param), so list_measures and the docs can describe them
    missing = [(f.name, k) for f in REGISTRY.values() if not getattr(f, "custom", False)
               for k, p in f.params.items() if not (isinstance(p, Param) and p.description)]
    assert missing == []
    for f in REGISTRY.values():
        for k, p in f.params.items():
            assert not isinstance(p, Param) or p.name == k


@settings(max_examples=60, deadline=None)
@given(family=st.sampled_from(sorted(REGISTRY)), k=st.integers(1, 2000),
       rel=st.integers(0, 4), with_rel=st.booleans())
def test_random_names_round_trip(family, k, rel, with_rel):
    fam = REGISTRY[family]
    text = family
    if with_rel and "rel" in fam.params:
        text += f"(rel={rel})"
    if fam.cutoff == "int":
        text += f"@{k}"
    m = _parse_or_none(text)
    if m is None:  # e.g. rel= together with an option the family refuses
        return
    assert m.family == family and parse_measure(m.name) == m
    if fam.cutoff == "int" and fam.normalize is Family.normalize:
        assert m.cutoff == k


def test_documented_spellings_mean_what_the_other_tools_mean():
    # trec_eval / ir_measures / ranx names (from their documentation), not our own output
    expect = {
        "ndcg_cut_10": ("nDCG", 10, ()),
        "ndcg_burges@10": ("nDCG", 10, (("gain", "exp"),)),
        "dcg_burges@5": ("DCG", 5, (("gain", "exp"),)),
        "recip_rank": ("RR", None, ()),
        "mrr@10": ("RR", 10, ()),
        "hit_rate@5": ("Success", 5, ()),
        "rbp": ("RBP", None, (("p", 0.9),)),           # trec_eval 10's default persistence
        "rbp_p=0.8": ("RBP", None, (("p", 0.8),)),
        "rbp_resid": ("RBPResidual", None, (("p", 0.9),)),
        "rank_biased_precision": ("RBP", None, (("p", 0.9),)),
        "map": ("AP", None, ()),
        "P_5": ("P", 5, ()),
    }
    for text, (family, cutoff, params) in expect.items():
        m = parse_measure(text)
        assert (m.family, m.cutoff, m.params) == (family, cutoff, params), text


def test_a_spelling_cannot_be_taken_twice():
    class Clash(Family):
        name = "ClashTest"
        aliases = ("mrr",)

    with pytest.raises(ValueError, match="mrr"):
        register(Clash)
    assert "ClashTest" not in REGISTRY


def test_extension_points_are_declared_on_family():
    whole = sorted(f.name for f in REGISTRY.values() if f.whole_frames)
    assert "Compat" in whole and "alpha-nDCG" in whole
    assert all(type(f).per_query is not Family.per_query for f in REGISTRY.values() if f.whole_frames)
    assert all(f.whole_frames for f in REGISTRY.values() if f.subtopics)


@pytest.mark.parametrize("name", ["searcheval_frames.measures._params",
                                  "searcheval_frames.measures._parsing"])
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
