"""One calling convention and one answer to a misspelt keyword, for every public function
(issue #31).

Every public callable (``sef.__all__`` and ``sef.judges.__all__``) is walked with
``inspect.signature``: a function that reads runs and qrels takes the runs first and the
qrels second, positionally, and precomputed per-query values only through the keyword
``per_query=``. Every one of them answers a misspelt keyword with an
``InvalidOptionError`` that names the closest valid name.
"""

from __future__ import annotations

import inspect

import pytest

import searcheval_frames as sef
from searcheval_frames.errors import InvalidOptionError, UnknownOptionError

#: Functions whose first argument is some other frame, with their reason.
OTHER_FIRST = {
    # the frame to collapse is a run or qrels; qrels= is the optional qrels of a run
    "collapse": "the frame to collapse (a run or qrels)",
}
#: What a third positional parameter after (runs, qrels) may be, besides the measure(s).
THIRD = {"measures", "measure", "query_id", "depth", "auto", "judge_fn", "queries"}
DATA = {"runs", "run", "qrels", "per_query"}


def _public() -> list[tuple[str, object]]:
    out = []
    for name in sorted(set(sef.__all__)):
        value = getattr(sef, name)
        if inspect.isfunction(value):
            out.append((name, value))
    for name in sorted(sef.judges.__all__):
        value = getattr(sef.judges, name)
        if inspect.isfunction(value):
            out.append((f"judges.{name}", value))
    return out


PUBLIC = _public()


def test_the_walk_sees_the_functions_of_the_issue():
    names = {n for n, _ in PUBLIC}
    for expected in ("compare", "leaderboard", "power", "discriminative_power", "stability",
                     "query_diff", "side_by_side", "metric_bounds", "coverage", "holes", "pool",
                     "benchmark_bars", "per_query_delta", "metric_distribution", "tradeoff_curve",
                     "pr_curve", "precision_recall_at_k", "leaderboard_plot", "power_curve",
                     "stability_curve", "slice_forest", "label_widget", "judges.fill_holes",
                     "judges.judge_agreement", "judges.holes_verdicts", "evaluate", "report"):
        assert expected in names
    assert len(PUBLIC) > 50


@pytest.mark.parametrize(("name", "fn"), PUBLIC, ids=[n for n, _ in PUBLIC])
def test_runs_first_qrels_second_per_query_keyword_only(name, fn):
    params = list(inspect.signature(fn).parameters.values())
    names = [p.name for p in params]
    if not DATA & set(names) or name in OTHER_FIRST:
        return
    first = params[0]
    if not {"runs", "run"} & set(names) and "per_query" not in names:
        assert first.name == "qrels", f"{name}: reads qrels only, so they come first"
        return
    assert first.name in ("runs", "run"), f"{name}: the runs come first, not {first.name!r}"
    if "runs" in names:
        assert names.index("runs") == 0, f"{name}: runs= must be the first parameter"
    if "qrels" in names:
        qrels = params[1]
        assert qrels.name == "qrels" and qrels.kind is qrels.POSITIONAL_OR_KEYWORD, (
            f"{name}: qrels must be the second parameter, positional")
    for p in params[1:]:
        if p.name in ("run", "per_query"):  # a run's name (report(run=)) or values given
            assert p.kind is p.KEYWORD_ONLY, f"{name}: {p.name}= must be keyword-only"
    positional = [p for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
    if len(positional) >= 3 and "qrels" in names:
        assert positional[2].name in THIRD, f"{name}: third positional {positional[2].name!r}"
    assert not {"data", "results"} & {p.name for p in positional[1:]}, (
        f"{name}: a positional parameter whose meaning depends on another")


def _misspelt(fn) -> tuple[str, str]:
    """The longest keyword parameter of ``fn``, and it without its last letter."""
    params = [p.name for p in inspect.signature(fn).parameters.values()
              if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    if not params:
        return "", ""
    name = max(params, key=lambda n: (len(n), n))
    return name, name[:-1] if len(name) > 3 else name + "x"


@pytest.mark.parametrize(("name", "fn"), PUBLIC, ids=[n for n, _ in PUBLIC])
def test_a_misspelt_keyword_names_the_closest_valid_one(name, fn):
    right, wrong = _misspelt(fn)
    if not right:
        pytest.skip(f"{name} takes no keyword")
    with pytest.raises(InvalidOptionError, match=f"did you mean {right}\\?") as info:
        fn(**{wrong: 1})
    assert isinstance(info.value, UnknownOptionError | InvalidOptionError)
    assert str(info.value).startswith(f"{name.split('.')[-1]}({wrong}=1): unknown option")


@pytest.mark.parametrize("name", ["compare", "leaderboard", "query_diff", "power", "stability",
                                  "discriminative_power", "per_query_delta",
                                  "metric_distribution", "power_curve", "stability_curve"])
def test_options_passed_on_to_evaluate_are_checked_too(name):
    fn = getattr(sef, name)
    with pytest.raises(InvalidOptionError, match="did you mean relevance_level\\?"):
        fn(relevence_level=2)
    fn_checked = getattr(fn, "__keywords_checked__", False)
    assert fn_checked


def test_the_issue_example():
    run = {"q1": {"d1": 1.0}}
    with pytest.raises(InvalidOptionError, match="did you mean relevance_level"):
        sef.evaluate(run, {"q1": {"d1": 1}}, ["P@5"], relevence_level=2)
    # still a TypeError, as Python's own error for an unexpected keyword
    with pytest.raises(TypeError):
        sef.evaluate(run, {"q1": {"d1": 1}}, ["P@5"], relevence_level=2)


def test_right_keywords_pass_and_old_names_are_known():
    run = {"q1": {"d1": 1.0}}
    assert sef.evaluate(run, {"q1": {"d1": 1}}, ["P@1"], relevance_level=1)["value"][0] == 1.0
    # an old spelling's parameter name is not "unknown" (it warns instead, see
    # tests/test_old_spellings.py)
    with pytest.raises(InvalidOptionError, match="did you mean per_query"):
        sef.compare(per_quer=1)
