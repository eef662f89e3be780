"""Your own measures, registered beside the built-ins: ``@sef.measure``.

A custom measure is a :class:`~searcheval_frames.measures.base.Family` made from a
function over one query's ranked, judged rows, so it goes wherever a built-in goes
(``evaluate``, ``compare``, ``report``, fusion tuning, the CLI, out-of-core runs,
Spark and Dask): they all parse measure names through the one registry.

Two ways to write it:

* **polars expressions (fast).** The function receives a :class:`Rows` whose
  attributes are expressions over the query's judged retrieved rows and returns one
  aggregating expression (one value per query). It runs inside the same grouped
  pass as the built-ins.
* **a Python function (slow).** With ``python=True`` the function receives a
  :class:`Rows` whose attributes are numpy arrays of one query and returns a float.
  It is called once per (run, query): fine for thousands of queries, slow for
  millions (measured: about 0.1 ms per call on top of the function itself; 50,000
  queries took 6.3 s against 1.7 s for the same measure as expressions).

Rows a measure sees: the judged documents the run retrieved (unjudged ones are
non-relevant for every built-in and are not passed), with ``rank`` their 1-based
position in the whole ranked list (trec_eval order). A (run, query) with no judged
document retrieved scores 0, as every built-in does.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import polars as pl

from ..errors import MeasureDefinitionError, UnknownMeasureError
from ..options import option_error
from ._params import REL
from .base import REGISTRY, Context, Family, Measure, family_of, register, unregister

__all__ = ["Rows", "install_definitions", "measure", "ship_definitions", "unregister_measure"]

F = TypeVar("F", bound=Callable[..., Any])
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9\-]*$")
#: the definitions made by :func:`measure`, by family name (shipped to Spark workers)
CUSTOM: dict[str, CustomDefinition] = {}


@dataclass(frozen=True)
class CustomDefinition:
    """What :func:`measure` was given: enough to register the family again elsewhere."""

    name: str
    function: Callable[[Rows], Any]
    cutoff: bool | Literal["optional"]
    params: tuple[tuple[str, Any], ...]
    python: bool
    aggregate: str
    summary: str
    formula: str


class Rows:
    """One query's judged retrieved rows, as a custom measure sees them.

    In the polars form each attribute is an expression (``rank``, ``label``,
    ``relevant`` are per row; ``num_rel`` is the query's number of relevant labels
    as a scalar expression); in the ``python=True`` form they are numpy arrays of one
    query and ``num_rel`` is an int. ``k`` is the cutoff (None without ``@k``);
    parameters are attributes too (``rows.p``) and in :attr:`params`.

    Attributes
    ----------
    rank
        1-based rank of each judged retrieved document in the whole list.
    label
        Its relevance label.
    relevant
        ``label >= rel`` (the measure's ``rel=`` or evaluate's ``relevance_level``).
    num_rel
        Number of documents of the query labelled relevant in the qrels.
    k
        The cutoff, or None.
    params
        The measure's parameters, defaults filled in.
    """

    def __init__(self, rank: Any, label: Any, relevant: Any, num_rel: Any,
                 k: int | None, params: Mapping[str, Any]) -> None:
        self.rank, self.label, self.relevant, self.num_rel = rank, label, relevant, num_rel
        self.k = k
        self.params = dict(params)

    def __getattr__(self, key: str) -> Any:
        params = self.__dict__.get("params", {})
        if key in params:
            return params[key]
        raise AttributeError(f"this measure has no parameter {key!r} (it has: "
                             f"{', '.join(sorted(params)) or 'none'})")


def _parser(default: Any) -> Callable[[str], Any]:
    if isinstance(default, bool):
        return lambda s: {"true": True, "false": False, "1": True, "0": False}[s.lower()]
    if isinstance(default, int):
        return int
    if isinstance(default, float):
        return float
    return str


def _family(d: CustomDefinition) -> type[Family]:
    """A Family subclass computing ``d`` with the evaluator's grouped pass."""
    defaults = dict(d.params)

    def rows(m: Measure, ctx: Context) -> tuple[dict[str, Any], int, str]:
        params = {**defaults, **dict(m.params)}
        return params, ctx.level(m), ctx.num_rel(m).meta.output_name()

    def agg(self: Family, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        params, level, num_rel = rows(m, ctx)
        k = m.cutoff if isinstance(m.cutoff, int) else None
        if not d.python:
            q = Rows(pl.col("rank"), pl.col("relevance"), pl.col("relevance") >= level,
                     pl.col(num_rel).first(), k, params)
            out = d.function(q)
            expr = out if isinstance(out, pl.Expr) else pl.lit(out)
            return [expr.cast(pl.Float64).alias(col)]

        def one(series: Sequence[pl.Series]) -> float:
            rank, label = series[0].to_numpy(), series[1].to_numpy()
            n_rel = int(series[2][0]) if len(series[2]) else 0
            return float(d.function(Rows(rank, label, label >= level, n_rel, k, params)))

        return [pl.map_groups(["rank", "relevance", num_rel], one, return_dtype=pl.Float64,
                              returns_scalar=True).alias(col)]

    def value(self: Family, m: Measure, ctx: Context, col: str) -> pl.Expr:
        ctx.num_rel(m)
        return pl.col(col)

    params = {**{key: _parser(v) for key, v in d.params}, "rel": REL}
    attrs = {
        "name": d.name, "cutoff": "int" if d.cutoff else None,
        "cutoff_required": d.cutoff is True, "params": params,
        "param_defaults": defaults, "aggregate": d.aggregate,
        "summary": d.summary or f"custom measure ({'python' if d.python else 'polars'})",
        "formula": d.formula, "example": d.name + ("@10" if d.cutoff else ""),
        "custom": True, "agg": agg, "value": value,
    }
    return type(f"Custom_{d.name}", (Family,), attrs)


def _install(d: CustomDefinition) -> None:
    register(_family(d))
    CUSTOM[d.name] = d


def measure(
    name: str,
    *,
    cutoff: bool | Literal["optional"] = False,
    params: Mapping[str, Any] | None = None,
    python: bool = False,
    aggregate: Literal["mean", "sum", "gmean"] = "mean",
    summary: str = "",
    formula: str = "",
) -> Callable[[F], F]:
    """Register a function as a measure usable everywhere a built-in is.

    Parameters
    ----------
    name
        Family name: a letter then letters, digits or ``-`` (``MyGain``); it must not
        be a built-in's name. Measure names then parse as ``MyGain@10`` and
        ``MyGain(p=0.5)@10``; a parameter at its default is dropped from the name.
    cutoff
        ``True``: ``@k`` is required (``rows.k`` is an int); ``"optional"``: ``@k``
        may be left out (``rows.k`` is then None); ``False``: no cutoff.
    params
        Parameter names and their defaults, e.g. ``{"p": 0.5}``; the default's type
        (int, float, bool, str) parses the value in a name. ``rel`` (the relevance
        level) is always available.
    python
        False: the function returns a polars expression over :class:`Rows` of
        expressions (fast, one grouped pass). True: it returns a float from
        :class:`Rows` of numpy arrays, called once per (run, query) (slow).
    aggregate
        How per-query values are combined: ``"mean"`` (default), ``"sum"``, ``"gmean"``.
    summary, formula
        Shown by :func:`searcheval_frames.list_measures`.

    Returns
    -------
    The decorator; it returns the function unchanged.

    Notes
    -----
    Dividing by a constant: polars computes ``expr / k`` as ``expr * (1/k)``, which can
    be an ulp off the quotient trec_eval prints (``3 * (1/5)`` is 0.6000000000000001).
    Write ``sef.true_divide(expr, rows.k)`` for the exact quotient, as the built-in
    measures do. Re-running the decorator with the same name (a notebook cell run twice) replaces
    the earlier custom definition. For Spark the definition travels to the workers
    with cloudpickle; a function that closes over large objects ships them too.

    Formula of the example below: :math:`\\mathrm{Hits@k} = |\\{d \\in
    \\text{top-}k : \\ell(d) \\ge \\text{rel}\\}|`, the numerator of P@k
    (Manning, Raghavan & Schütze, *Introduction to Information Retrieval*, 2008, §8.4).

    Examples
    --------
    >>> import polars as pl
    >>> import searcheval_frames as sef
    >>> @sef.measure("MyHits", cutoff=True, aggregate="sum")
    ... def my_hits(rows):
    ...     return rows.relevant.filter(rows.rank <= rows.k).sum()
    >>> run = pl.DataFrame({"query_id": "q1", "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q1", "doc_id": ["a", "c"], "relevance": [1, 1]})
    >>> sef.evaluate(run, qrels, ["MyHits@2", "P@2"])["value"].to_list()
    [1.0, 0.5]
    >>> sef.unregister_measure("MyHits")
    """
    if not isinstance(name, str) or not _NAME.match(name):
        raise _refuse("name", name, "a custom measure's name is a letter followed by "
                      "letters, digits or '-' (no '_', '@' or brackets: they are name syntax)",
                      "name='MyGain'")
    taken = family_of(name)
    if taken and not REGISTRY[taken].custom:
        raise _refuse("name", name, f"is already the built-in measure {taken!r}; choose "
                      "another name", f"name='My{name}'")
    if cutoff not in (True, False, "optional"):
        raise _refuse("cutoff", cutoff, "must be True (@k required), 'optional' or False",
                      "cutoff=True")
    params = dict(params or {})
    if "rel" in params:
        raise _refuse("params", params, "must leave out 'rel': it is always a parameter "
                      "(the relevance level)", "params={'p': float}")

    def decorate(fn: F) -> F:
        if not callable(fn):
            raise MeasureDefinitionError(
                f"measure({name!r}) decorates a function, got {fn!r}. Example: "
                f"@sef.measure({name!r}) above a def")
        if taken:
            unregister_measure(name)
        _install(CustomDefinition(name, fn, cutoff, tuple(sorted(params.items())), python,
                                  aggregate, summary, formula))
        return fn

    return decorate


def _refuse(param: str, value: Any, rule: str, example: str) -> MeasureDefinitionError:
    """A bad argument of :func:`measure`, in the house form of option errors."""
    return MeasureDefinitionError(str(option_error("measure", param, value, rule, example)))


def unregister_measure(name: str) -> None:
    """Remove a custom measure (built-ins cannot be removed).

    >>> unregister_measure("NoSuchMeasure")
    Traceback (most recent call last):
    ...
    searcheval_frames.errors.UnknownMeasureError: 'NoSuchMeasure' is not a custom measure
    """
    fam = REGISTRY.get(name)
    if fam is None or not fam.custom:
        raise UnknownMeasureError(f"{name!r} is not a custom measure")
    unregister(name)
    CUSTOM.pop(name, None)


def ship_definitions(measures: list[Measure]) -> bytes | None:
    """The custom definitions among ``measures``, cloudpickled for other processes.

    The functions travel by value (their module need not be importable on a Spark
    worker, e.g. a notebook or a test file); None when no measure is custom.
    """
    defs = [CUSTOM[m.family] for m in measures if m.family in CUSTOM]
    if not defs:
        return None
    import cloudpickle

    by_value = []
    for mod_name in {d.function.__module__ for d in defs}:
        mod = sys.modules.get(mod_name)
        if mod is not None and mod_name != "__main__" and \
                mod_name not in cloudpickle.list_registry_pickle_by_value():
            cloudpickle.register_pickle_by_value(mod)
            by_value.append(mod)
    try:
        return bytes(cloudpickle.dumps(defs))
    finally:
        for mod in by_value:
            cloudpickle.unregister_pickle_by_value(mod)


def install_definitions(blob: bytes | None) -> None:
    """Register definitions from :func:`ship_definitions` in this process (a worker)."""
    if blob is None:
        return
    import cloudpickle

    for d in cloudpickle.loads(blob):
        if CUSTOM.get(d.name) is not d:
            unregister(d.name)
            _install(d)
