"""Each error is raised as the subclass that names its cause (issue #19).

The lower layers (frames, io, measures, core, scale) raise no bare ``SearchEvalError``:
a known measure with bad or conflicting parameters is a ``MeasureParameterError`` (still
an ``UnknownMeasureError``), ids that cannot be ids an ``InvalidIdError``, and so on;
an option error is an ``InvalidOptionError`` in the house form
``func(param=value): rule; got value. Example: ...``.
"""

from __future__ import annotations

import re

import polars as pl
import pytest

import searcheval_frames as sef
from searcheval_frames import errors as E

RUN = pl.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [2.0, 1.0]})
QRELS = pl.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]})
HOUSE = re.compile(r"^(?P<func>[\w.]+)\((?P<param>\w+)=.+\): .+; got .+\. Example: \S")


@pytest.mark.parametrize("name", [
    "RBP(rel=2,gain=exp)", "INST(min_rel=2,max_rel=2)", "P@2.5", "P(rel=-1)@5",
    "nDCG(colour=red)@10", "RprecMult@0.0", "RR@0", "NumQ@5", "BPM(T=1,K=10)@20",
])
def test_a_known_measure_with_bad_parameters_is_a_measure_parameter_error(name):
    with pytest.raises(E.MeasureParameterError) as info:
        sef.evaluate(RUN, QRELS, [name])
    assert isinstance(info.value, E.UnknownMeasureError)  # `except` clauses keep working
    assert re.match(r"^measure '.+': .+\. Example: \S", str(info.value)), str(info.value)


def test_an_unknown_name_stays_an_unknown_measure_error_with_suggestions():
    with pytest.raises(E.UnknownMeasureError) as info:
        sef.evaluate(RUN, QRELS, ["nDGC@10"])
    assert not isinstance(info.value, E.MeasureParameterError)
    assert "Did you mean" in str(info.value)


@pytest.mark.parametrize(("run", "cls"), [
    (RUN.with_columns(pl.lit(None, pl.String).alias("query_id")), E.InvalidIdError),
    (RUN.with_columns(pl.col("score").alias("query_id")).with_columns(
        pl.col("query_id") + 0.5), E.InvalidIdError),
    (RUN.with_columns(pl.lit([1]).alias("doc_id")), E.InvalidIdError),
    (object(), E.UnsupportedInputError),
    ({"1": [("a", 1.0)]}, E.UnsupportedInputError),
])
def test_bad_inputs_name_their_cause(run, cls):
    with pytest.raises(cls):
        sef.evaluate(run, QRELS, ["P@1"])


def test_files_and_writers_name_their_cause(tmp_path):
    with pytest.raises(E.FileAccessError, match="no such file"):
        sef.read_run(tmp_path / "missing.run")
    with pytest.raises(E.FileAccessError, match="is a folder"):
        sef.read_qrels(tmp_path)
    with pytest.raises(E.FileAccessError, match="does not exist"):
        sef.write_run(RUN, tmp_path / "no" / "such" / "dir.run")
    with pytest.raises(E.UnwritableValueError, match="whitespace"):
        sef.write_run(RUN.with_columns(pl.Series("doc_id", ["a b", "c d"])), tmp_path / "r.run")


@pytest.mark.parametrize(("func", "param", "call"), [
    ("read_run", "name_from", lambda p: sef.read_run(p, name_from="tag2")),
    ("read_run", "format", lambda p: sef.read_run(p, format="xml")),
    ("read_run", "path", lambda p: sef.read_run([])),
    ("read_run", "name", lambda p: sef.read_run([p, p], name="one")),
    ("read_run", "backend", lambda p: sef.read_run(p, backend="arrow")),
    ("read_qrels", "backend", lambda p: sef.read_qrels(p, backend="arrow")),
    ("read_queries", "backend", lambda p: sef.read_queries(p, backend="arrow")),
    ("write_run", "iteration", lambda p: sef.write_run(RUN, p.with_suffix(".out"),
                                                       iteration="Q 0")),
    ("collapse", "doc_of", lambda p: sef.collapse(RUN, doc_of="")),
    ("collapse", "doc_of", lambda p: sef.collapse(RUN, doc_of=3)),
    ("evaluate", "by", lambda p: sef.evaluate(RUN, QRELS, "P@1", queries=QRELS)),
])
def test_option_errors_of_the_lower_layers_are_in_the_house_form(tmp_path, func, param, call):
    path = tmp_path / "a.run"
    sef.write_run(RUN, path)
    with pytest.raises(E.InvalidOptionError) as info:
        call(path)
    found = HOUSE.match(str(info.value))
    assert found and (found["func"], found["param"]) == (func, param), str(info.value)


@pytest.mark.parametrize(("kwargs", "param"), [
    ({"name": "P", "cutoff": True}, "name"), ({"name": "my_gain"}, "name"),
    ({"name": "MyGain", "cutoff": "yes"}, "cutoff"),
    ({"name": "MyGain", "params": {"rel": int}}, "params"),
])
def test_a_custom_measure_declared_wrongly_is_an_option_and_measure_error(kwargs, param):
    with pytest.raises(E.MeasureDefinitionError) as info:
        sef.measure(**kwargs)
    assert isinstance(info.value, E.UnknownMeasureError)  # as before
    assert isinstance(info.value, E.InvalidOptionError)  # what it is
    found = HOUSE.match(str(info.value))
    assert found and (found["func"], found["param"]) == ("measure", param), str(info.value)
