"""Measure definitions, the registry and the name parser.

A measure is a small frozen value: a *family* (``P``, ``nDCG`` ...), an optional
cutoff and optional parameters. Its canonical name parses back to itself::

    P@5   R@100   RR@10   AP   nDCG@10   nDCG(gain=exp)@10   P(rel=2)@5   IPrec@0.5

Parsing (this module) is separate from computing (the family modules): each
family turns a measure into polars expressions over the ranked, judged frame
of one query (see :mod:`searcheval_frames.evaluate` for the frame layout).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import polars as pl

from ..errors import UnknownMeasureError

__all__ = ["Context", "Family", "Measure", "list_measures", "parse_measure", "parse_measures"]

Aggregate = Literal["mean", "sum", "gmean"]


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
            text += "(" + ",".join(f"{k}={_format_param(v)}" for k, v in self.params) + ")"
        if self.cutoff is not None:
            text += "@" + _format_cutoff(self.cutoff)
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


def _format_cutoff(c: int | float) -> str:
    return str(c) if isinstance(c, int) else repr(float(c))


def _format_param(v: Any) -> str:
    if isinstance(v, tuple):  # gain map: ((rel, gain), ...)
        inner = ",".join(f"{r}:{_num(g)}" for r, g in v)
        return "{" + inner + "}"
    return str(v)


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


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
        key = f"_idcg_{_format_param(gains) if isinstance(gains, tuple) else gains}_{cutoff}"
        self.ideal[key] = (gains, cutoff)
        return key


# --------------------------------------------------------------------------- families
class Family:
    """A measure family: naming rules plus the polars expressions that compute it.

    Subclasses set the class attributes and implement :meth:`agg` (expressions
    aggregated over one query's judged retrieved rows, ordered by rank) and
    :meth:`value` (the final per-query expression over the query table that holds
    the :meth:`agg` outputs and the per-query columns of the context).
    """

    name: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()
    #: trec_eval's measure name prefix, e.g. "P" -> "P_5"; None if trec_eval lacks it
    trec: ClassVar[str | None] = None
    cutoff: ClassVar[Literal["int", "float", None]] = None
    cutoff_required: ClassVar[bool] = False
    params: ClassVar[Mapping[str, Callable[[str], Any]]] = {}
    #: parameter values that are the default: dropped from the canonical name
    param_defaults: ClassVar[Mapping[str, Any]] = {}
    aggregate: ClassVar[Aggregate] = "mean"
    summary: ClassVar[str] = ""
    formula: ClassVar[str] = ""
    example: ClassVar[str] = ""

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
            raise UnknownMeasureError(
                f"measure {text!r}: {self.name} needs a cutoff, e.g. {self.example or self.name + '@10'}"
            )
        if m.cutoff is not None and self.cutoff is None:
            raise UnknownMeasureError(f"measure {text!r}: {self.name} takes no @cutoff")
        if isinstance(m.cutoff, int) and m.cutoff <= 0:
            raise UnknownMeasureError(f"measure {text!r}: the cutoff must be a positive integer")
        if isinstance(m.cutoff, float) and not 0.0 <= m.cutoff <= 1.0:
            raise UnknownMeasureError(f"measure {text!r}: the recall level must be in [0, 1]")

    def normalize(self, m: Measure) -> Measure:
        """The canonical form of a parsed measure (default: as parsed)."""
        return m

    def check_qrels(self, m: Measure, qrels: pl.DataFrame) -> None:
        """Raise a :class:`SearchEvalError` for labels this measure cannot use (default: none)."""

    def agg(self, m: Measure, ctx: Context, col: str) -> list[pl.Expr]:
        """Expressions over one query's judged rows (``rank``, ``relevance``)."""
        return []

    def value(self, m: Measure, ctx: Context, col: str) -> pl.Expr:
        """Final per-query value; ``col`` prefixes this measure's agg outputs."""
        raise NotImplementedError


REGISTRY: dict[str, Family] = {}
_ALIASES: dict[str, tuple[str, dict[str, Any]]] = {}


def register(cls: type[Family]) -> type[Family]:
    fam = cls()
    REGISTRY[cls.name] = fam
    _ALIASES[cls.name.lower()] = (cls.name, {})
    for a in cls.aliases:
        _ALIASES[a.lower()] = (cls.name, {})
    return cls


def family_of(name: str) -> str | None:
    """The family a name or alias (any case) registers, or None (used by ``custom``)."""
    hit = _ALIASES.get(name.lower())
    return hit[0] if hit else None


def unregister(family: str) -> None:
    """Remove a family and its aliases from the registry (used by ``custom``)."""
    REGISTRY.pop(family, None)
    for key in [k for k, (f, _) in _ALIASES.items() if f == family]:
        del _ALIASES[key]


def alias(name: str, family: str, **fixed: Any) -> None:
    """Register an alternative spelling; ``fixed`` may pin a cutoff."""
    _ALIASES[name.lower()] = (family, fixed)


# --------------------------------------------------------------------------- parsing
_NAME_RE = re.compile(
    r"^\s*(?P<fam>[A-Za-z][A-Za-z0-9_\-]*?)"
    r"(?:\((?P<params>.*)\))?"
    r"(?:\s*@\s*(?P<cut>[0-9]*\.?[0-9]+))?\s*$"
)
# trec_eval spellings with the cutoff after an underscore: P_5, ndcg_cut_10,
# iprec_at_recall_0.10, map_cut_100, success_1, unj_5, recall_1000
_TREC_RE = re.compile(r"^\s*(?P<fam>[A-Za-z][A-Za-z0-9_]*?)_(?P<cut>[0-9]*\.?[0-9]+)\s*$")
# trec_eval spellings with named parameters after an underscore: rbp_p=0.8, rbp_resid_p=0.95
_TREC_PARAMS_RE = re.compile(r"^\s*(?P<fam>[A-Za-z][A-Za-z0-9_]*)_(?P<params>[A-Za-z]+=[^_()@]*)$")


def _parse_gains(text: str) -> tuple[tuple[int, float], ...] | str:
    t = text.strip()
    if t.lower() in ("linear", "lin", "exp", "exponential"):
        return "exp" if t.lower().startswith("exp") else "linear"
    t = t.strip("{}")
    pairs = []
    for part in re.split(r"[,;]", t):
        if not part.strip():
            continue
        k, _, v = part.replace("=", ":").partition(":")
        pairs.append((int(k), float(v)))
    if not pairs:
        raise ValueError(text)
    return tuple(sorted(pairs))


PARAM_PARSERS: dict[str, Callable[[str], Any]] = {
    "rel": lambda s: int(s),
    "gain": _parse_gains,
    "gains": _parse_gains,
}


def split_outside(text: str, brackets: str = "{}") -> list[str]:
    """Split ``text`` on commas that are not inside ``brackets`` (e.g. ``"{}"`` or ``"()"``).

    >>> split_outside("gain={0:0,1:1},rel=2")
    ['gain={0:0,1:1}', 'rel=2']
    """
    opening, closing = brackets[0], brackets[1]
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == opening:
            depth += 1
        elif ch == closing:
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return [part for part in out if part.strip()]


def _known_names() -> list[str]:
    names = set()
    for fam in REGISTRY.values():
        names.add(fam.example or fam.name)
        names.add(fam.name)
    names.update(_ALIASES)
    return sorted(names)


def _unknown(text: str, why: str = "") -> UnknownMeasureError:
    base = re.split(r"[@(_]", text.strip())[0]
    candidates = {n.lower(): n for n in _known_names()}
    close = difflib.get_close_matches(text.strip().lower(), list(candidates), n=3, cutoff=0.5)
    close += [
        c for c in difflib.get_close_matches(base.lower(), list(candidates), n=3, cutoff=0.6)
        if c not in close
    ]
    hint = f" Did you mean {', '.join(repr(candidates[c]) for c in close[:3])}?" if close else ""
    if why:  # the family was recognised; suggesting other names would only distract
        hint = ""
    return UnknownMeasureError(
        f"unknown measure {text!r}{': ' + why if why else ''}.{hint} "
        "See searcheval_frames.list_measures() for every measure."
    )


def parse_measure(name: str | Measure) -> Measure:
    """Parse a measure name into a :class:`Measure`.

    Accepts canonical names (``nDCG@10``, ``P(rel=2)@5``, ``nDCG(gain=exp)@10``,
    ``IPrec@0.5``), trec_eval names (``P_5``, ``ndcg_cut_10``, ``recip_rank``,
    ``map``, ``iprec_at_recall_0.10``) and common spellings (``MRR@10``, ``MAP``,
    ``precision@5``, ``recall@10``, ``hit@5``), case-insensitively.

    Parameters
    ----------
    name
        The measure name (a :class:`Measure` is returned as is).

    Returns
    -------
    Measure

    Raises
    ------
    UnknownMeasureError
        For names that do not parse; the message suggests the closest names.

    Examples
    --------
    >>> parse_measure("MRR@10").name
    'RR@10'
    >>> parse_measure("P(rel=2)@5").param("rel")
    2
    """
    if isinstance(name, Measure):
        return name
    if not isinstance(name, str):
        raise UnknownMeasureError(f"a measure name must be a string, got {name!r}")
    text = name.strip()
    if not text:
        raise UnknownMeasureError("empty measure name")

    fam_name: str | None = None
    fixed: dict[str, Any] = {}
    params_text: str | None = None
    cut_text: str | None = None

    hit = _ALIASES.get(text.lower())
    if hit:
        fam_name, fixed = hit
    else:
        mo = _NAME_RE.match(text)
        if mo and mo.group("fam").lower() in _ALIASES:
            fam_name, fixed = _ALIASES[mo.group("fam").lower()]
            params_text, cut_text = mo.group("params"), mo.group("cut")
        else:
            mt = _TREC_RE.match(text)
            mp = _TREC_PARAMS_RE.match(text)
            if mt and mt.group("fam").lower() in _ALIASES:
                fam_name, fixed = _ALIASES[mt.group("fam").lower()]
                cut_text = mt.group("cut")
            elif mp and mp.group("fam").lower() in _ALIASES:
                fam_name, fixed = _ALIASES[mp.group("fam").lower()]
                params_text = mp.group("params")
    if fam_name is None:
        raise _unknown(text)
    fam = REGISTRY[fam_name]

    params: dict[str, Any] = {k: v for k, v in fixed.items() if k != "cutoff"}
    if params_text:
        for part in split_outside(params_text):
            key, eq, value = part.partition("=")
            key = key.strip().lower()
            if key == "gains":
                key = "gain"
            if not eq or key not in fam.params:
                allowed = ", ".join(sorted(fam.params)) or "none"
                raise _unknown(text, f"{fam.name} has no parameter {key!r} (allowed: {allowed})")
            try:
                params[key] = fam.params[key](value.strip())
                if key == "rel" and params[key] < 0:
                    raise ValueError(value)
            except ValueError:
                rule = " (a label >= 0, e.g. rel=2)" if key == "rel" else ""
                raise _unknown(text, f"bad value {value.strip()!r} for {key}{rule}") from None
    if fam.name == "nDCG" and params.get("gain") == "linear":
        params.pop("gain")  # the default, keep the name canonical
    for key, default in fam.param_defaults.items():
        if key in params and params[key] == default:
            params.pop(key)

    cutoff: int | float | None = fixed.get("cutoff")
    if cut_text is not None:
        if fam.cutoff is None:
            raise _unknown(text, f"{fam.name} takes no cutoff")
        try:
            cutoff = float(cut_text) if fam.cutoff == "float" else _int_cutoff(cut_text)
        except ValueError:
            raise _unknown(
                text,
                f"the cutoff {cut_text!r} is not a positive whole number of documents "
                f"(write e.g. {fam.name}@{max(1, int(float(cut_text)))})",
            ) from None
    m = fam.normalize(Measure(fam.name, cutoff, tuple(sorted(params.items()))))
    fam.validate(m, text)
    return m


def _int_cutoff(text: str) -> int:
    # A rank cutoff is a whole number of documents: "2.5" (or "2.0") is refused rather
    # than read as 2. (The CLI turns trec_eval's "-m ndcg_cut.23.4" into 23 itself,
    # as trec_eval's atol does, before a name reaches this parser.)
    if not text.isdigit():
        raise ValueError(text)
    return int(text)


def parse_measures(
    measures: str | Measure | Iterable[str | Measure],
    duplicates: Literal["error", "drop"] = "error",
) -> list[Measure]:
    """Parse one or many names.

    Two names of one measure (``["P@5", "P_5"]``, or the same name twice) raise
    :class:`UnknownMeasureError` naming both, unless ``duplicates="drop"`` (the first
    spelling wins), so a requested measure never vanishes silently.

    >>> [m.name for m in parse_measures(["P@5", "ndcg_cut_10"])]
    ['P@5', 'nDCG@10']
    """
    if isinstance(measures, str | Measure):
        measures = [measures]
    elif not isinstance(measures, Iterable) or isinstance(measures, bytes | Mapping):
        raise UnknownMeasureError(
            f"measures must be a name or a list of names, e.g. ['P@5', 'nDCG@10']; "
            f"got {measures!r}"
        )
    out: list[Measure] = []
    seen: dict[Measure, str | Measure] = {}
    for item in measures:
        m = parse_measure(item)
        if m in seen:
            if duplicates == "error":
                raise UnknownMeasureError(
                    f"measures {seen[m]!r} and {item!r} are the same measure {m.name}; "
                    "ask for it once, or pass names='as_given' to evaluate to get a row "
                    "under each spelling"
                )
            continue
        seen[m] = item
        out.append(m)
    if not out:
        raise UnknownMeasureError("no measures given; e.g. ['P@5', 'nDCG@10', 'AP']")
    return out


def list_measures() -> pl.DataFrame:
    """Every measure family with its example name, aliases and definition.

    Examples
    --------
    >>> "nDCG" in list_measures()["family"].to_list()
    True
    """
    rows = []
    for fam in REGISTRY.values():
        aliases = sorted(a for a, (f, _) in _ALIASES.items() if f == fam.name and a != fam.name.lower())
        rows.append(
            {
                "family": fam.name,
                "example": fam.example or fam.name,
                "cutoff": {"int": "rank k", "float": "recall level", None: "-"}[fam.cutoff],
                "parameters": ", ".join(sorted(fam.params)),
                "aggregate": fam.aggregate,
                "trec_eval": fam.trec or "",
                "aliases": ", ".join(aliases),
                "summary": fam.summary,
                "formula": fam.formula,
            }
        )
    return pl.DataFrame(rows)
