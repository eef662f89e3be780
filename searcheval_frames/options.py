"""One place where public functions check their options before any work (layer 0).

Every check raises :class:`~searcheval_frames.errors.InvalidOptionError` (a
``SearchEvalError``, so a ``ValueError``) in the project's form: which function and
option, what was given, what is allowed, and an example::

    pool(depth=0): must be an integer >= 1 (how many top documents per query to look
    at); got 0. Example: depth=20

>>> from searcheval_frames.options import check_int, check_choice
>>> check_int("pool", "depth", 20, minimum=1)
20
>>> check_choice("evaluate", "missing", "skip", ("zero", "skip"))
'skip'
>>> check_int("pool", "depth", 0, minimum=1, example="depth=20")
Traceback (most recent call last):
...
searcheval_frames.errors.InvalidOptionError: pool(depth=0): must be an integer >= 1; got 0. Example: depth=20
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar, cast

from .errors import InvalidOptionError

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

__all__ = [
    "COMPATS",
    "EVAL_RULES",
    "MISSING",
    "NAMES",
    "STRATEGIES",
    "TIES",
    "Bool",
    "Choice",
    "EvalOptions",
    "Instance",
    "Int",
    "Rule",
    "check_bool",
    "check_choice",
    "check_float",
    "check_int",
    "check_known",
    "check_optional_int",
    "check_str_list",
    "keywords_checked",
    "option_error",
    "validate",
    "validate_params",
]


def option_error(func: str, name: str, value: Any, rule: str,
                 example: str | None) -> InvalidOptionError:
    """The house form of an option error: ``func(name=value): rule; got value. Example: ...``.

    Every check here raises through it; a function with a rule of its own (one the checks
    do not express) raises ``option_error(...)`` too, so all messages read alike.

    >>> str(option_error("pool", "depth", 0, "must be >= 1", "depth=20"))
    'pool(depth=0): must be >= 1; got 0. Example: depth=20'
    """
    msg = f"{func}({name}={value!r}): {rule}; got {value!r}."
    if example:
        msg += f" Example: {example}"
    return InvalidOptionError(msg)


def check_int(
    func: str,
    name: str,
    value: Any,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    what: str = "",
    example: str | None = None,
) -> int:
    """``value`` as an int within [minimum, maximum]; bools and floats are refused."""
    rule = "must be an integer"
    if minimum is not None and maximum is not None:
        rule += f" between {minimum} and {maximum}"
    elif minimum is not None:
        rule += f" >= {minimum}"
    elif maximum is not None:
        rule += f" <= {maximum}"
    if what:
        rule += f" ({what})"
    ok = isinstance(value, int) and not isinstance(value, bool)
    if ok and minimum is not None and value < minimum:
        ok = False
    if ok and maximum is not None and value > maximum:
        ok = False
    if not ok:
        good = minimum if minimum is not None else maximum if maximum is not None else 1
        raise option_error(func, name, value, rule, example or f"{name}={good}")
    return int(value)


def check_optional_int(func: str, name: str, value: Any, **kwargs: Any) -> int | None:
    """Like :func:`check_int`, but ``None`` passes through."""
    if value is None:
        return None
    try:
        return check_int(func, name, value, **kwargs)
    except InvalidOptionError as exc:
        raise InvalidOptionError(str(exc).replace("; got", ", or None; got", 1)) from None


def check_float(
    func: str,
    name: str,
    value: Any,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    open_min: bool = False,
    open_max: bool = False,
    what: str = "",
    example: str | None = None,
) -> float:
    """``value`` as a finite float in the given (closed or open) range; bools refused."""
    lo = "(" if open_min else "["
    hi = ")" if open_max else "]"
    rule = "must be a finite number"
    if minimum is not None or maximum is not None:
        a = "-inf" if minimum is None else f"{minimum:g}"
        b = "inf" if maximum is None else f"{maximum:g}"
        rule += f" in {lo}{a}, {b}{hi}"
    if what:
        rule += f" ({what})"
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if ok:
        v = float(value)
        ok = math.isfinite(v)
        if ok and minimum is not None:
            ok = v > minimum if open_min else v >= minimum
        if ok and maximum is not None:
            ok = v < maximum if open_max else v <= maximum
    if not ok:
        raise option_error(func, name, value, rule, example or f"{name}={_good_float(minimum, maximum)}")
    return float(value)


def _good_float(minimum: float | None, maximum: float | None) -> str:
    """A value inside [minimum, maximum] to show as the example."""
    if minimum is not None and maximum is not None:
        return f"{(minimum + maximum) / 2:g}"
    if minimum is not None:
        return f"{minimum + 1:g}"
    return f"{maximum - 1:g}" if maximum is not None else "1.0"


def check_bool(func: str, name: str, value: Any) -> bool:
    """``value`` must be ``True`` or ``False`` (not 0/1, not a string)."""
    if not isinstance(value, bool):
        raise option_error(func, name, value, "must be True or False", f"{name}=True")
    return value


def check_choice(
    func: str, name: str, value: Any, allowed: Sequence[T], *, example: str | None = None
) -> T:
    """``value`` must be one of ``allowed`` (compared with ``==``)."""
    for a in allowed:
        if value == a and type(value) is type(a):
            return a
    shown = ", ".join(repr(a) for a in allowed)
    raise option_error(func, name, value, f"must be one of {shown}",
                example or f"{name}={allowed[0]!r}")


def check_str_list(
    func: str, name: str, value: Any, *, allow_empty: bool = False, example: str | None = None
) -> list[str]:
    """A string or an iterable of strings, as a list (a lone string is one item)."""
    example = example or f"{name}=['a', 'b']"
    if isinstance(value, str):
        items = [value]
    elif isinstance(value, Iterable) and not isinstance(value, bytes | dict):
        items = list(value)
    else:
        raise option_error(func, name, value, "must be a string or a list of strings", example)
    bad = [v for v in items if not isinstance(v, str)]
    if bad:
        raise option_error(func, name, value, f"must hold only strings (not {bad[0]!r})", example)
    if not items and not allow_empty:
        raise option_error(func, name, value, "must not be empty", example)
    return items


def check_known(func: str, given: Mapping[str, Any], allowed: Iterable[str], *,
                where: str = "") -> None:
    """Refuse keyword arguments that no function of the call accepts.

    Raises :class:`~searcheval_frames.errors.UnknownOptionError` (also a ``TypeError``)
    that names ``func`` (the function the caller called, not an inner one), the closest
    allowed name and where the allowed names come from.

    >>> check_known("compare", {"relevance_level": 2}, ["relevance_level", "depth"])
    >>> check_known("compare", {"relevence_level": 2}, ["relevance_level", "depth"])
    Traceback (most recent call last):
    ...
    searcheval_frames.errors.UnknownOptionError: compare(relevence_level=2): unknown option; did you mean relevance_level? The options are: depth, relevance_level.
    """
    import difflib

    from .errors import UnknownOptionError

    names = sorted(set(allowed))
    for key, value in given.items():
        if key in names:
            continue
        close = difflib.get_close_matches(key, names, n=1)
        hint = f" did you mean {close[0]}?" if close else ""
        raise UnknownOptionError(
            f"{func}({key}={value!r}): unknown option;{hint} The options are"
            f"{' ' + where if where else ''}: {', '.join(names)}."
        )


def keywords_checked(fn: F, *, name: str | None = None,
                     also: Callable[[], Iterable[str]] | None = None) -> F:
    """``fn`` refusing unknown keyword arguments in the house form, with the closest name.

    The one mechanism behind every public function (``searcheval_frames/__init__.py``
    applies it to each as it is exported): a keyword that is no parameter of ``fn`` (nor
    of its old spelling, see :func:`searcheval_frames._deprecation.old_spelling`) raises
    :class:`~searcheval_frames.errors.UnknownOptionError`, an ``InvalidOptionError``
    saying "did you mean ...?", before any work. ``fn`` taking ``**options`` that it
    passes on: ``also()`` lists the names those accept (without it ``fn`` checks them
    itself). Applying it twice checks once.

    >>> def evaluate(run, qrels, measures, *, relevance_level=1): ...
    >>> checked = keywords_checked(evaluate)
    >>> checked(None, None, "P@5", relevence_level=2)
    Traceback (most recent call last):
    ...
    searcheval_frames.errors.UnknownOptionError: evaluate(relevence_level=2): unknown option; did you mean relevance_level? The options are: measures, qrels, relevance_level, run.
    """
    if getattr(fn, "__keywords_checked__", False):
        return fn
    params = inspect.signature(fn).parameters.values()
    accepted = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    accepted |= set(getattr(fn, "__old_parameters__", ()))
    open_ended = any(p.kind is p.VAR_KEYWORD for p in params)
    if open_ended and also is None:
        return fn
    label = name or fn.__name__

    @functools.wraps(fn)
    def checked(*args: Any, **kwargs: Any) -> Any:
        if kwargs and not accepted.issuperset(kwargs):
            allowed = accepted | set(also()) if also is not None else accepted
            check_known(label, {k: v for k, v in kwargs.items() if k not in accepted},
                        allowed)
        return fn(*args, **kwargs)

    checked.__keywords_checked__ = True  # type: ignore[attr-defined]
    return cast(F, checked)


# --------------------------------------------------------------------------- declarative
# Options are declared once, as rules (in the spirit of scikit-learn's parameter
# constraints): ``{"depth": Int(minimum=1, optional=True, example="depth=100")}``. One path,
# :func:`validate`, checks a call's values against them through the checks above, so every
# function raises the same :class:`InvalidOptionError` in the house form.


@dataclass(frozen=True)
class Int:
    """An integer in ``[minimum, maximum]`` (``optional``: ``None`` is allowed too)."""

    minimum: int | None = None
    maximum: int | None = None
    optional: bool = False
    what: str = ""
    example: str | None = None

    def check(self, func: str, name: str, value: Any) -> Any:
        if self.optional:
            return check_optional_int(func, name, value, minimum=self.minimum,
                                      maximum=self.maximum, what=self.what,
                                      example=self.example)
        return check_int(func, name, value, minimum=self.minimum, maximum=self.maximum,
                         what=self.what, example=self.example)


@dataclass(frozen=True)
class Choice:
    """One of ``allowed`` (same type and value)."""

    allowed: tuple[Any, ...]
    example: str | None = None

    def check(self, func: str, name: str, value: Any) -> Any:
        return check_choice(func, name, value, self.allowed, example=self.example)


@dataclass(frozen=True)
class Bool:
    """``True`` or ``False``."""

    def check(self, func: str, name: str, value: Any) -> Any:
        return check_bool(func, name, value)


@dataclass(frozen=True)
class Instance:
    """An instance of ``types`` (``optional``: or ``None``); ``rule`` says it in words."""

    types: tuple[type, ...]
    rule: str
    example: str
    optional: bool = True

    def check(self, func: str, name: str, value: Any) -> Any:
        if (value is None and self.optional) or isinstance(value, self.types):
            return value
        raise option_error(func, name, value, self.rule, self.example)


Rule = Int | Choice | Bool | Instance


def validate(func: str, rules: Mapping[str, Rule], values: Mapping[str, Any]) -> None:
    """Check each of ``values`` that ``rules`` names, in the order of ``rules``.

    >>> validate("pool", {"depth": Int(minimum=1)}, {"depth": 0})
    Traceback (most recent call last):
    ...
    searcheval_frames.errors.InvalidOptionError: pool(depth=0): must be an integer >= 1; got 0. Example: depth=1
    """
    for name, rule in rules.items():
        if name in values:
            rule.check(func, name, values[name])


def validate_params(func: str, rules: Mapping[str, Rule]) -> Callable[[F], F]:
    """Decorate a public function so that its arguments named in ``rules`` are checked
    (:func:`validate`) before its body runs; errors name ``func``.

    >>> @validate_params("head", {"n": Int(minimum=1, example="n=5")})
    ... def head(rows, *, n=10):
    ...     return rows[:n]
    >>> head([1, 2, 3], n=2)
    [1, 2]
    >>> head([1, 2, 3], n=0)
    Traceback (most recent call last):
    ...
    searcheval_frames.errors.InvalidOptionError: head(n=0): must be an integer >= 1; got 0. Example: n=5
    """
    def decorate(fn: F) -> F:
        signature = inspect.signature(fn)
        unknown = set(rules) - set(signature.parameters)
        if unknown:  # a rule for no parameter is a typo in the declaration
            raise TypeError(f"validate_params: {fn.__name__} has no parameter {sorted(unknown)}")

        @functools.wraps(fn)
        def checked(*args: Any, **kwargs: Any) -> Any:
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError:
                return fn(*args, **kwargs)  # Python's own message for a wrong call
            validate(func, rules, bound.arguments)
            return fn(*args, **kwargs)

        return cast(F, checked)

    return decorate


# --------------------------------------------------------------------------- evaluation
MISSING = ("zero", "skip")
COMPATS = ("trec_eval-10", "trec_eval-9")
NAMES = ("canonical", "as_given")
STRATEGIES = ("auto", "presorted", "count", "sort")
TIES = ("trec_eval", "given_order", "bounds")

#: The options of an evaluation, declared once: :func:`searcheval_frames.evaluate`, the
#: curves (``pr_curve_data``, ``precision_recall_at_k`` and their figures),
#: ``sef.spark.evaluate``, ``sef.dask.evaluate`` and the ``searcheval`` command.
EVAL_RULES: dict[str, Rule] = {
    "relevance_level": Int(minimum=0, what="the smallest label that counts as relevant, "
                           "trec_eval -l", example="relevance_level=2 for TREC DL passage qrels"),
    "missing": Choice(MISSING,
                      example="missing='skip' to evaluate only queries present in both"),
    "depth": Int(minimum=1, optional=True, what="documents kept per query, trec_eval -M",
                 example="depth=100"),
    "compat": Choice(COMPATS, example="compat='trec_eval-9' for pytrec_eval's numbers"),
    "names": Choice(NAMES, example="names='as_given' to keep your spelling of each measure"),
    "judged_only": Bool(),
    "per_query": Bool(),
    "strategy": Choice(STRATEGIES, example="strategy='auto'"),
    "ties": Choice(TIES, example="ties='bounds' to see how much ties could move each value"),
}


@dataclass(frozen=True)
class EvalOptions:
    """The checked options of one evaluation, shared by every way to evaluate.

    Built with keyword arguments, checked as it is built (:data:`EVAL_RULES`), so an
    ``EvalOptions`` that exists is valid. ``func`` names the public function the caller
    called, for the messages; it is not an option and is left out of comparisons.

    >>> EvalOptions(relevance_level=2).ranking
    {'depth': None, 'judged_only': False, 'compat': 'trec_eval-10', 'strategy': 'auto'}
    >>> EvalOptions(depth=0, func="pr_curve_data")
    Traceback (most recent call last):
    ...
    searcheval_frames.errors.InvalidOptionError: pr_curve_data(depth=0): must be an integer >= 1 (documents kept per query, trec_eval -M), or None; got 0. Example: depth=100
    """

    relevance_level: int = 1
    missing: str = "zero"
    depth: int | None = None
    compat: str = "trec_eval-10"
    names: str = "canonical"
    judged_only: bool = False
    per_query: bool = False
    strategy: str = "auto"
    ties: str = "trec_eval"
    func: str = field(default="evaluate", compare=False, repr=False)

    def __post_init__(self) -> None:
        validate(self.func, EVAL_RULES, self.values())

    def values(self) -> dict[str, Any]:
        """Every option (not ``func``) by name."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "func"}

    @property
    def ranking(self) -> dict[str, Any]:
        """The options of the ranking step (``rank_judged``)."""
        return {"depth": self.depth, "judged_only": self.judged_only, "compat": self.compat,
                "strategy": self.strategy}

    @property
    def measuring(self) -> dict[str, Any]:
        """The options ``evaluate_frames`` and ``per_query_values`` take besides ``missing``
        and ``per_query``."""
        return {"relevance_level": self.relevance_level, **self.ranking}
