"""One options type for every way to evaluate (issue #19).

``sef.evaluate``, the curves (``pr_curve_data``, ``precision_recall_at_k``),
``sef.spark.evaluate`` and ``sef.dask.evaluate`` check their shared options through
:class:`searcheval_frames.options.EvalOptions`, so a bad value gets one message, in the
house form ``func(param=value): rule; got value. Example: ...``, whichever function it
was given to; only the function's name differs. The scale drivers check their options
before looking for pyspark or dask, so these run without either.
"""

from __future__ import annotations

import dataclasses
import re

import polars as pl
import pytest

import searcheval_frames as sef
from searcheval_frames.errors import InvalidOptionError, SearchEvalError
from searcheval_frames.options import (
    EVAL_RULES,
    EvalOptions,
    Int,
    validate,
    validate_params,
)

RUN = pl.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [2.0, 1.0]})
QRELS = pl.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]})

FUNCS = {
    "evaluate": lambda **kw: sef.evaluate(RUN, QRELS, ["P@1"], **kw),
    "pr_curve_data": lambda **kw: sef.pr_curve_data(RUN, QRELS, **kw),
    "precision_recall_at_k": lambda **kw: sef.precision_recall_at_k(RUN, QRELS, **kw),
    # the options are checked before the run is looked at: no Spark or Dask frame needed
    "spark.evaluate": lambda **kw: sef.spark.evaluate(None, None, ["P@1"], **kw),
    "dask.evaluate": lambda **kw: sef.dask.evaluate(None, None, ["P@1"], **kw),
}
BAD = [("relevance_level", -1), ("relevance_level", 1.5), ("missing", "drop"), ("depth", 0),
       ("depth", True), ("judged_only", "yes"), ("compat", "trec_eval-8")]
HOUSE = re.compile(r"^(?P<func>[\w.]+)\((?P<param>\w+)=(?P<value>.+?)\): (?P<rule>.+); "
                   r"got (?P=value)\. Example: \S")


def _message(func: str, option: str, bad: object) -> str:
    with pytest.raises(InvalidOptionError) as info:
        FUNCS[func](**{option: bad})
    return str(info.value)


@pytest.mark.parametrize(("option", "bad"), BAD, ids=[f"{o}={b!r}" for o, b in BAD])
def test_every_way_to_evaluate_refuses_a_bad_option_in_one_house_form(option, bad):
    rules = set()
    for func in FUNCS:
        msg = _message(func, option, bad)
        found = HOUSE.match(msg)
        assert found, msg
        assert (found["func"], found["param"], found["value"]) == (func, option, repr(bad)), msg
        rules.add(msg[len(func):])  # the same rule and example, whoever was called
    assert len(rules) == 1, rules


@pytest.mark.parametrize(("func", "option", "bad"), [
    ("spark.evaluate", "partitions", 0), ("dask.evaluate", "partitions", 1.5),
    ("spark.evaluate", "columns", ["query_id"]), ("dask.evaluate", "names", "given"),
    ("evaluate", "ties", "random"), ("evaluate", "strategy", "fast"),
    ("evaluate", "names", "given"),
])
def test_the_options_of_one_function_are_in_the_house_form_too(func, option, bad):
    msg = _message(func, option, bad)
    found = HOUSE.match(msg)
    assert found and found["func"] == func and found["param"] == option, msg


def test_eval_options_is_checked_as_it_is_built_and_frozen():
    opts = EvalOptions(relevance_level=2, depth=10)
    assert opts.measuring == {"relevance_level": 2, "depth": 10, "judged_only": False,
                              "compat": "trec_eval-10", "strategy": "auto"}
    assert opts == EvalOptions(relevance_level=2, depth=10, func="pr_curve_data")
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.depth = 0  # type: ignore[misc]
    with pytest.raises(InvalidOptionError, match=r"^pool\(depth=0\)"):
        dataclasses.replace(opts, depth=0, func="pool")  # a copy is checked too
    assert set(opts.values()) == set(EVAL_RULES)  # one rule per option, no option unruled


def test_validate_params_checks_before_the_body_and_keeps_pythons_own_errors():
    calls = []

    @validate_params("head", {"n": Int(minimum=1, example="n=5")})
    def head(rows, *, n=10):
        calls.append(n)
        return rows[:n]

    assert head([1, 2, 3], n=2) == [1, 2]
    with pytest.raises(InvalidOptionError, match=r"^head\(n=0\): .*Example: n=5$"):
        head([1, 2, 3], n=0)
    assert calls == [2]  # the body never ran for the bad call
    with pytest.raises(TypeError, match="unexpected keyword argument 'm'"):
        head([1], m=2)
    with pytest.raises(TypeError, match="no parameter"):
        validate_params("f", {"typo": Int()})(lambda x: x)


def test_validate_checks_in_declaration_order():
    with pytest.raises(InvalidOptionError, match=r"^f\(relevance_level="):
        validate("f", EVAL_RULES, {"depth": 0, "relevance_level": -1})


def test_option_errors_are_still_search_eval_and_value_errors():
    with pytest.raises(SearchEvalError):
        EvalOptions(missing="x")
    with pytest.raises(ValueError):
        EvalOptions(missing="x")
