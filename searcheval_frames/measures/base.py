"""Measure definitions, the registry and the name parser.

A measure is a small frozen value: a *family* (``P``, ``nDCG`` ...), an optional
cutoff and optional parameters. Its canonical name parses back to itself::

    P@5   R@100   RR@10   AP   nDCG@10   nDCG(gain=exp)@10   P(rel=2)@5   IPrec@0.5

This module holds the :class:`Measure` value, the :class:`Family` base class with
its extension points, and the registry (families and their spellings). Parameters
are declared in :mod:`searcheval_frames.measures._params`, names are read by
:mod:`searcheval_frames.measures._parsing`. Computing lives in the family modules:
each family turns a measure into polars expressions over the ranked, judged frame
of one query (see :mod:`searcheval_frames.core.evaluate` for the frame layout).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import polars as pl

from ..errors import MeasureParameterError
from ._params import Param, format_cutoff, format_param, split_outside

__all__ = [
    "ALIASES",
    "REGISTRY",
    "Context",
    "Family",
    "Measure",
    "describe_params",
    "family_of",
    "list_measures",
    "register",
    "split_outside",
    "unregister",
]

Aggregate = Literal["mean", "sum", "gmean"]



def parameter_error(text: str, problem: str, example: str) -> MeasureParameterError:
    """The house form of a known measure's bad cutoff or parameters:
    ``measure 'X': problem. Example: Y``.

    >>> str(parameter_error("RBP(rel=2,gain=exp)", "give rel= or gain=, not both", "RBP(rel=2)"))
    "measure 'RBP(rel=2,gain=exp)': give rel= or gain=, not both. Example: RBP(rel=2)"
    """
    return MeasureParameterError(f"measure {text!r}: {problem}. Example: {example}")

@dataclass(frozen=True)
class Measure:
    """One measure: family, cutoff and parameters.

    Attributes
    ----------
    family
        Canonical family name, e.g. ``"nDCG"``.
    cutoff
        Rank cutoff (int) or recall level (float, for ``IPrec``), or None.
    params
        Sorted ``(key, value)`` pairs, e.g. ``(("rel", 2),)``.

    Examples
    --------
    >>> from searcheval_frames.measures import parse_measure
    >>> m = parse_measure("ndcg_cut_10")
    >>> m.name, m.trec_name
    ('nDCG@10', 'ndcg_cut_10')
    """

    family: str
    cutoff: int | float | None = None
    params: tuple[tuple[str, Any], ...] = ()

    @property
    def definition(self) -> Family:
        return REGISTRY[self.family]

    def param(self, key: str, default: Any = None) -> Any:
        for k, v in self.params:
            if k == key:
                return v
        return default

    @property
    def name(self) -> str:
        """Canonical name, e.g. ``P(rel=2)@5``; parses back to the same measure."""
        text = self.family
        if self.params:
            text += "(" + ",".join(f"{k}={format_param(v)}" for k, v in self.params) + ")"
        if self.cutoff is not None:
            text += "@" + format_cutoff(self.cutoff)
        return text

    @property
    def trec_name(self) -> str | None:
        """Name trec_eval prints for this measure (None when trec_eval has none)."""
        return self.definition.trec_name(self)

    @property
    def aggregate(self) -> Aggregate:
        return self.definition.aggregate

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Measure({self.name!r})"


# --------------------------------------------------------------------------- context
@dataclass
class Context:
    """Evaluation settings and the per-query columns families may ask for.

    Families call :meth:`num_rel`, :meth:`num_nonrel` and :meth:`ideal_dcg` to get
    column names; the evaluator then computes exactly those columns once.
    """

    relevance_level: int = 1
    compat: str = "trec_eval-10"
    rel_levels: set[int] = field(default_factory=set)
    nonrel_levels: set[int] = field(default_factory=set)
    ideal: dict[str, tuple[tuple[tuple[int, float], ...] | str, int | None]] = field(
        default_factory=dict
    )

    def level(self, m: Measure) -> int:
        """Effective relevance level of a measure (labels below 0 are never relevant)."""
        lvl = m.param("rel", self.relevance_level)
        return max(int(lvl), 0)

    def is_rel(self, m: Measure) -> pl.Expr:
        return pl.col("relevance") >= self.level(m)

    def num_rel(self, m: Measure) -> pl.Expr:
        lvl = self.level(m)
        self.rel_levels.add(lvl)
        return pl.col(f"_num_rel_{lvl}")

    def num_nonrel(self, m: Measure) -> pl.Expr:
        lvl = self.level(m)
        self.nonrel_levels.add(lvl)
        return pl.col(f"_num_nonrel_{lvl}")

    def ideal_dcg(self, gains: tuple[tuple[int, float], ...] | str, cutoff: int | None) -> str:
        key = f"_idcg_{format_param(gains) if isinstance(gains, tuple) else gains}_{cutoff}"
        self.ideal[key] = (gains, cutoff)
        return key


# --------------------------------------------------------------------------- families
class Family:
    """A measure family: naming rules plus the polars expressions that compute it.

    Subclasses set the class attributes and implement :meth:`agg` (expressions
    aggregated over one query's judged retrieved rows, ordered by rank) and
    :meth:`value` (the final per-query expression over the query table that holds
    the :meth:`agg` outputs and the per-query columns of the context).

    Extension points, each with a default, that the evaluator calls:

    * :meth:`normalize` -- the canonical form of a parsed measure;
    * :meth:`validate` -- refuse a measure that parsed but makes no sense;
    * :meth:`check_qrels` -- refuse labels the measure cannot use;
    * :meth:`per_query` -- compute from whole frames instead of :meth:`agg` /
      :meth:`value` (:attr:`whole_frames` says whether a family overrides it);
    * :attr:`subtopics` -- the family needs the qrels' subtopic column.
    """

    name: ClassVar[str]
    #: other spellings of the family (any case); ``pinned`` adds spellings that fix
    #: parameters, e.g. ``{"ndcg_burges": {"gain": "exp"}}``
    aliases: ClassVar[tuple[str, ...]] = ()
    pinned: ClassVar[Mapping[str, Mapping[str, Any]]] = {}
    #: trec_eval's measure name prefix, e.g. "P" -> "P_5"; None if trec_eval lacks it
    trec: ClassVar[str | None] = None
    cutoff: ClassVar[Literal["int", "float", None]] = None
    cutoff_required: ClassVar[bool] = False
    #: the parameters ``key=value`` the name may carry (:class:`Param` values, or
    #: plain parsers text -> value)
    params: ClassVar[Mapping[str, Param | Callable[[str], Any]]] = {}
    #: parameter values that are the default: dropped from the canonical name
    param_defaults: ClassVar[Mapping[str, Any]] = {}
    #: parameter values every spelling without them gets: shown in the canonical name
    #: (``RBP`` means ``RBP(p=0.9)``)
    param_fill: ClassVar[Mapping[str, Any]] = {}
    aggregate: ClassVar[Aggregate] = "mean"
    summary: ClassVar[str] = ""
    formula: ClassVar[str] = ""
    example: ClassVar[str] = ""
    #: the family reads the qrels' subtopic column (alpha-nDCG, intent-aware measures):
    #: evaluate keeps it and hands those qrels to :meth:`per_query`
    subtopics: ClassVar[bool] = False
    #: set for each subclass: True when it overrides :meth:`per_query`
    whole_frames: ClassVar[bool] = False
    #: made by ``@sef.measure`` (:mod:`searcheval_frames.measures.custom`)
    custom: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.whole_frames = cls.per_query is not Family.per_query

    def trec_name(self, m: Measure) -> str | None:
        if self.trec is None or m.params:
            return None
        if m.cutoff is None:
            return self.trec
        if isinstance(m.cutoff, float):
            return f"{self.trec}_{m.cutoff:.2f}"
        return f"{self.trec}_{m.cutoff}"

    def validate(self, m: Measure, text: str) -> None:
        if m.cutoff is None and self.cutoff_required:
            raise parameter_error(text, f"{self.name} needs a cutoff",
                                  self.example or self.name + "@10")
        if m.cutoff is not None and self.cutoff is None:
            raise parameter_error(text, f"{self.name} takes no @cutoff", self.name)
        if isinstance(m.cutoff, int) and m.cutoff <= 0:
            raise parameter_error(text, "the cutoff must be a positive integer",
                                  f"{self.name}@10")
        if isinstance(m.cutoff, float) and not 0.0 <= m.cutoff <= 1.0:
            raise parameter_error(text, "the recall level must be in [0, 1]",
                                  f"{self.name}@0.5")

    def normalize(self, m: Measure) -> Measure:
        """The canonical form of a parsed measure (default: as parsed)."""
        return m

    def check_qrels(self, m: Measure, qrels: pl.DataFrame) -> None:
        """Raise a :class:`~searcheval_frames.errors.SearchEvalError` for labels this
        measure cannot use (default: none)."""

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        """Expressions over one query's judged rows (``rank``, ``relevance``)."""
        return []

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        """Final per-query value; ``col`` prefixes this measure's agg outputs."""
        raise NotImplementedError

    def per_query(
        self, m: Measure, ctx: Context, col: str, ranked: Any, qrels: pl.DataFrame
    ) -> pl.DataFrame:
        """``run, query_id, col`` computed from the ranked frames and the qrels (with
        their subtopic column when :attr:`subtopics`); used instead of :meth:`agg` /
        :meth:`value` by families that override it."""
        raise NotImplementedError


REGISTRY: dict[str, Family] = {}
#: every spelling (lower case) -> (family, the parameters it pins)
ALIASES: dict[str, tuple[str, dict[str, Any]]] = {}


def register(cls: type[Family]) -> type[Family]:
    """Class decorator: add a family and its spellings to the registry.

    A spelling another family already has is refused: nothing is overwritten silently.
    """
    spellings: dict[str, dict[str, Any]] = {cls.name.lower(): {}}
    spellings.update({a.lower(): {} for a in cls.aliases})
    spellings.update({a.lower(): dict(fixed) for a, fixed in cls.pinned.items()})
    taken = {a: ALIASES[a][0] for a in spellings if a in ALIASES and ALIASES[a][0] != cls.name}
    if taken:
        raise ValueError(f"family {cls.name}: spellings already registered: {taken}")
    REGISTRY[cls.name] = cls()
    ALIASES.update((a, (cls.name, fixed)) for a, fixed in spellings.items())
    return cls


def family_of(name: str) -> str | None:
    """The family a name or alias (any case) registers, or None (used by ``custom``)."""
    hit = ALIASES.get(name.lower())
    return hit[0] if hit else None


def unregister(family: str) -> None:
    """Remove a family and its aliases from the registry (used by ``custom``)."""
    REGISTRY.pop(family, None)
    for key in [k for k, (f, _) in ALIASES.items() if f == family]:
        del ALIASES[key]


def describe_params(fam: Family) -> str:
    """``key: description`` of each parameter of a family, ``; ``-separated."""
    parts = []
    for key in sorted(fam.params):
        p = fam.params[key]
        text = p.description if isinstance(p, Param) else ""
        if isinstance(p, Param) and p.default:
            text += f" (default: {p.default})"
        parts.append(f"{key}: {text}" if text else key)
    return "; ".join(parts)


def list_measures() -> pl.DataFrame:
    """Every measure family with its example name, aliases and definition.

    Examples
    --------
    >>> "nDCG" in list_measures()["family"].to_list()
    True
    """
    rows = []
    for fam in REGISTRY.values():
        aliases = sorted(a for a, (f, _) in ALIASES.items() if f == fam.name and a != fam.name.lower())
        rows.append(
            {
                "family": fam.name,
                "example": fam.example or fam.name,
                "cutoff": {"int": "rank k", "float": "recall level", None: "-"}[fam.cutoff],
                "parameters": ", ".join(sorted(fam.params)),
                "parameter_help": describe_params(fam),
                "aggregate": fam.aggregate,
                "trec_eval": fam.trec or "",
                "aliases": ", ".join(aliases),
                "summary": fam.summary,
                "formula": fam.formula,
            }
        )
    return pl.DataFrame(rows)
