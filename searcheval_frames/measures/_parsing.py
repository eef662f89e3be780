"""Reading measure names: canonical, trec_eval and common spellings -> :class:`Measure`.

The grammar, case-insensitive::

    family[(key=value,...)][@cutoff]      nDCG@10, P(rel=2)@5, nDCG(gain=exp)@10, IPrec@0.5
    trec_family_cutoff                    P_5, ndcg_cut_10, iprec_at_recall_0.10
    trec_family_key=value                 rbp_p=0.8

A family is found through the registry's spellings (:data:`~searcheval_frames.measures.base.ALIASES`);
its parameters through its declared :class:`~searcheval_frames.measures._params.Param` values.
Defaults listed in ``Family.param_defaults`` drop from the name, ``Family.param_fill`` values
are added, so every spelling of one measure parses to one :class:`Measure` whose
``name`` parses back to it.

>>> parse_measure("ndcg_cut_10") == parse_measure("nDCG(gain=linear)@10")
True
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from ..errors import UnknownMeasureError
from ._params import PARAM_ALIASES, Param, split_outside
from .base import ALIASES, REGISTRY, Family, Measure, parameter_error

__all__ = ["parse_measure", "parse_measures"]

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


def _known_names() -> list[str]:
    names = set()
    for fam in REGISTRY.values():
        names.add(fam.example or fam.name)
        names.add(fam.name)
    names.update(ALIASES)
    return sorted(names)


def _unknown(text: str, why: str = "", example: str = "") -> UnknownMeasureError:
    """A name that does not parse; with ``why``, a known family's bad cutoff or parameter
    (a :class:`~searcheval_frames.errors.MeasureParameterError` showing ``example``)."""
    if why:  # the family was recognised; suggesting other names would only distract
        return parameter_error(text, why, example)
    base = re.split(r"[@(_]", text.strip())[0]
    candidates = {n.lower(): n for n in _known_names()}
    close = difflib.get_close_matches(text.strip().lower(), list(candidates), n=3, cutoff=0.5)
    close += [
        c for c in difflib.get_close_matches(base.lower(), list(candidates), n=3, cutoff=0.6)
        if c not in close
    ]
    hint = f" Did you mean {', '.join(repr(candidates[c]) for c in close[:3])}?" if close else ""
    return UnknownMeasureError(
        f"unknown measure {text!r}.{hint} "
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

    hit = ALIASES.get(text.lower())
    if hit:
        fam_name, fixed = hit
    else:
        mo = _NAME_RE.match(text)
        if mo and mo.group("fam").lower() in ALIASES:
            fam_name, fixed = ALIASES[mo.group("fam").lower()]
            params_text, cut_text = mo.group("params"), mo.group("cut")
        else:
            mt = _TREC_RE.match(text)
            mp = _TREC_PARAMS_RE.match(text)
            if mt and mt.group("fam").lower() in ALIASES:
                fam_name, fixed = ALIASES[mt.group("fam").lower()]
                cut_text = mt.group("cut")
            elif mp and mp.group("fam").lower() in ALIASES:
                fam_name, fixed = ALIASES[mp.group("fam").lower()]
                params_text = mp.group("params")
    if fam_name is None:
        raise _unknown(text)
    fam = REGISTRY[fam_name]

    params: dict[str, Any] = dict(fam.param_fill)
    params.update((k, v) for k, v in fixed.items() if k != "cutoff")
    if params_text:
        params.update(_read_params(fam, params_text, text))
    for key, default in fam.param_defaults.items():
        if key in params and params[key] == default:
            params.pop(key)  # the default: keep the name canonical

    cutoff: int | float | None = fixed.get("cutoff")
    if cut_text is not None:
        if fam.cutoff is None:
            raise _unknown(text, f"{fam.name} takes no cutoff", fam.name)
        try:
            cutoff = float(cut_text) if fam.cutoff == "float" else _int_cutoff(cut_text)
        except ValueError:
            raise _unknown(
                text, f"the cutoff {cut_text!r} is not a positive whole number of documents",
                f"{fam.name}@{max(1, int(float(cut_text)))}",
            ) from None
    m = fam.normalize(Measure(fam.name, cutoff, tuple(sorted(params.items()))))
    fam.validate(m, text)
    return m


def _read_params(fam: Family, params_text: str, text: str) -> dict[str, Any]:
    """``key=value,...`` -> values, read by the family's declared parameters."""
    out: dict[str, Any] = {}
    for part in split_outside(params_text):
        key, eq, value = part.partition("=")
        key = key.strip().lower()
        key = PARAM_ALIASES.get(key, key)
        if not eq or key not in fam.params:
            allowed = ", ".join(sorted(fam.params)) or "none"
            raise _unknown(text, f"{fam.name} has no parameter {key!r} (allowed: {allowed})",
                           fam.example or fam.name)
        param = fam.params[key]
        try:
            out[key] = param(value.strip())
        except ValueError:
            hint = f" ({param.rule})" if isinstance(param, Param) and param.rule else ""
            good = hint.partition("e.g. ")[2].rstrip(")")  # the hint's own example value
            raise _unknown(text, f"bad value {value.strip()!r} for {key}{hint}",
                           f"{fam.name}({good})" if good else fam.example or fam.name) from None
    return out


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


