"""trec_eval measure spellings and trec_eval-style output.

trec_eval names measures by *family* and parameters: ``-m P.5,10`` asks for
``P_5`` and ``P_10``; ``-m P`` for the default cut-offs; ``-m all_trec`` for
every measure; no ``-m`` for the ``official`` set. Its output is one line per
value, ``%-22s\\t%s\\t%.4f`` (counts as integers), per-query lines first (queries
in byte order), then the ``all`` lines, in the order of trec_eval's measure
table whatever the order of the ``-m`` options.

:func:`expand_measures` turns such specifications (and this package's own names,
``nDCG@10``) into :class:`~searcheval_frames.measures.Measure` objects in that
order; :func:`format_trec_eval` prints evaluation results exactly as trec_eval.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from ..errors import InvalidOptionError, UnknownMeasureError
from ..measures.base import split_outside

__all__ = [
    "OFFICIAL",
    "TREC_FAMILIES",
    "MeasureRequest",
    "expand_measures",
    "format_trec_eval",
    "format_value",
]

_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)

#: trec_eval's measure table, in its print order: family -> default parameters.
TREC_FAMILIES: dict[str, tuple[float, ...] | None] = {
    "runid": None,
    "num_q": None,
    "num_ret": None,
    "num_rel": None,
    "num_rel_ret": None,
    "map": None,
    "gm_map": None,
    "Rprec": None,
    "bpref": None,
    "recip_rank": None,
    "iprec_at_recall": tuple(i / 10 for i in range(11)),
    "P": _CUTS,
    "relstring": None,
    "recall": _CUTS,
    "infAP": None,
    "gm_bpref": None,
    "Rprec_mult": tuple(i / 5 for i in range(1, 11)),
    "utility": None,
    "11pt_avg": None,
    "binG": None,
    "G": None,
    "ndcg": None,
    "ndcg_rel": None,
    "Rndcg": None,
    "ndcg_cut": _CUTS,
    "map_cut": _CUTS,
    "relative_P": _CUTS,
    "success": (1, 5, 10),
    "set_P": None,
    "set_relative_P": None,
    "set_recall": None,
    "set_map": None,
    "set_F": None,
    "num_nonrel_judged_ret": None,
    "rbp": None,
    "rbp_resid": None,
    "unj": (5, 10, 20),
    # judgment groups (-R qrels_jg): the base measure per group, averaged over groups
    "map_avgjg": None,
    "P_avgjg": _CUTS,
    "Rprec_mult_avgjg": tuple(i / 5 for i in range(1, 11)),
}
#: judgment-group families -> the trec_eval measure computed for each group
JG_BASE = {"map_avgjg": "map", "P_avgjg": "P", "Rprec_mult_avgjg": "Rprec_mult"}
_ORDER = {f: i for i, f in enumerate(TREC_FAMILIES)}
#: trec_eval's default set (no -m).
OFFICIAL = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
            "bpref", "recip_rank", "iprec_at_recall", "P")
#: every family but the judgment-group ones (relstring prints a string, per query only: it
#: needs -q and --format trec_eval)
ALL_TREC = tuple(f for f in TREC_FAMILIES if f not in JG_BASE)
#: trec_eval's qrels_jg set (with -R qrels_jg)
QRELS_JG = ("runid", "num_q", *JG_BASE)
#: trec_eval 9's all_trec (rbp, rbp_resid and unj came with version 10).
ALL_TREC_9 = tuple(f for f in ALL_TREC if f not in ("rbp", "rbp_resid", "unj"))
_SETS = {"official": OFFICIAL, "all_trec": ALL_TREC, "qrels_jg": QRELS_JG}
#: printed only in the summary (``all``) block
SUMMARY_ONLY = frozenset({"runid", "num_q", "gm_map", "gm_bpref"})
INTEGER_MEASURES = frozenset({"num_q", "num_ret", "num_rel", "num_rel_ret",
                              "num_nonrel_judged_ret"})
_FLOAT_PARAM = frozenset({"iprec_at_recall", "Rprec_mult", "Rprec_mult_avgjg"})
#: families whose -m parameters make one measure, printed as ``family_<parameters as given>``
#: (trec_eval's "printable params"): parameters -> this package's measure name
_TEXT_PARAM = {
    "utility": lambda p: _utility(p),
    "11pt_avg": lambda p: "IPrecAvg(levels={" + ",".join(p) + "})",
    "set_F": lambda p: f"SetF(beta={_one(p, 'set_F')})",
    "ndcg": lambda p: f"nDCG(gain={_gains(p)})",
    "G": lambda p: f"G(gain={_gains(p)})",
    "ndcg_rel": lambda p: f"nDCGRel(gain={_gains(p)})",
    "Rndcg": lambda p: f"RnDCG(gain={_gains(p)})",
}
#: default length of relstring (trec_eval's relstring_len)
RELSTRING_LEN = 10


def _one(params: list[str], family: str) -> str:
    if len(params) != 1:
        raise UnknownMeasureError(f"trec_eval measure {family!r} takes one parameter, e.g. "
                                  f"-m {family}.0.5; got {','.join(params)!r}")
    return params[0]


def _utility(params: list[str]) -> str:
    if len(params) != 4:
        raise UnknownMeasureError(
            "trec_eval measure 'utility' takes 4 coefficients (relevant retrieved, non-relevant "
            f"retrieved, relevant missed, rest), e.g. -m utility.2,-1,0,0; got {','.join(params)!r}")
    return "Utility(" + ",".join(f"{k}={v}" for k, v in zip(("tp", "fp", "fn", "tn"), params,
                                                             strict=True)) + ")"


def _gains(params: list[str]) -> str:
    # trec_eval ignores pairs whose level is not an integer (gain_init.c)
    pairs = [p.split("=", 1) for p in params if "=" in p]
    kept = [f"{k.strip()}:{v.strip()}" for k, v in pairs if re.fullmatch(r"[+-]?\d+", k.strip())]
    if not kept:
        raise UnknownMeasureError(
            "gain parameters must be level=gain pairs, e.g. -m ndcg.1=3,2=9,4=4.5; got "
            f"{','.join(params)!r}")
    return "{" + ",".join(kept) + "}"


@dataclass
class MeasureRequest:
    """One output column: the measure, the label trec_eval prints and the sort key."""

    measure: Any  # Measure, or None for runid
    label: str
    order: tuple[int, float, int]
    family: str | None = None
    integer: bool = False
    seq: int = 0  # position in the user's -m order
    length: int = 0  # relstring only: number of documents shown

    @property
    def name(self) -> str:
        if self.measure is None:
            return self.label if self.family == "relstring" else "runid"
        return self.measure.name

    @property
    def summary_only(self) -> bool:
        return self.family in SUMMARY_ONLY


@dataclass
class Expansion:
    """Result of :func:`expand_measures`: the requests and what was skipped."""

    requests: list[MeasureRequest] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def _parse(name: str) -> Any:
    from ..measures import parse_measure

    return parse_measure(name)


def _param_text(family: str, value: float) -> str:
    if family in _FLOAT_PARAM:
        return f"{value:.2f}"
    return str(int(value))


def _split_top(text: str) -> list[str]:
    """Split on commas outside parentheses."""
    return [s.strip() for s in split_outside(text, "()")]


def _family_of(trec_name: str | None) -> str | None:
    if not trec_name:
        return None
    best = None
    for fam in TREC_FAMILIES:
        if (trec_name == fam or trec_name.startswith(fam + "_")) and (
            best is None or len(fam) > len(best)
        ):
            best = fam
    return best


def _param_key(trec_name: str, family: str) -> float:
    rest = trec_name[len(family) + 1:]
    try:
        return float(rest)
    except ValueError:
        return 0.0


def expand_measures(specs: Sequence[str] | None, compat: str = "trec_eval-10") -> Expansion:
    """Turn trec_eval ``-m`` specifications and our names into measure requests.

    Parameters
    ----------
    specs
        Strings such as ``"P.5,10"``, ``"ndcg_cut.10"``, ``"map"``, ``"all_trec"``,
        ``"official"``, ``"P_5"`` or ``"nDCG@10"``; several may be joined by commas
        (``"nDCG@10,RR"``). ``None`` or empty means trec_eval's default set.

    Returns
    -------
    Expansion
        ``requests`` in trec_eval's print order (families in table order,
        parameters ascending, then measures trec_eval does not know), and
        ``skipped``: trec_eval measures of a named set that this package does
        not implement.

    Raises
    ------
    UnknownMeasureError
        A measure that neither trec_eval nor this package knows, or a trec_eval
        measure asked for by name that is not implemented.

    Examples
    --------
    >>> [r.label for r in expand_measures(["P.10,5", "map"]).requests]
    ['map', 'P_5', 'P_10']
    """
    builder = _Expander(compat)
    for spec in list(specs or ["official"]):
        builder.spec(spec.strip())
    return builder.finish()


class _Expander:
    """The state of one :func:`expand_measures` call.

    trec_eval: parameters given for a family replace its default parameters, also when
    the family comes from a set (-m all_trec -m relstring.20 prints relstring_20 only).
    """

    def __init__(self, compat: str) -> None:
        self.compat = compat
        self.exp = Expansion()
        self.seen: set[str] = set()
        self.extra = 0
        self.defaults_of: set[str] = set()  # request keys that come from a family's defaults
        self.explicit: set[str] = set()  # families given with parameters
        self.touched: list[str] = []  # request keys of the current add_family call

    def add(self, m: Any, family: str | None, label: str, order: tuple[int, float, int],
            length: int = 0) -> None:
        key = label if m is None else m.name
        self.touched.append(key)
        if key in self.seen:
            return
        self.seen.add(key)
        self.exp.requests.append(MeasureRequest(m, label, order, family,
                                                integer=family in INTEGER_MEASURES,
                                                seq=len(self.exp.requests), length=length))

    def add_family(self, fam: str, params: Iterable[str] | None, from_set: bool) -> None:
        self.touched.clear()
        self._add_family(fam, params, from_set)
        if params is None:
            self.defaults_of.update(self.touched)
        else:
            self.explicit.add(fam)
            self.defaults_of.difference_update(self.touched)

    def _add_family(self, fam: str, params: Iterable[str] | None, from_set: bool) -> None:
        if fam == "runid":
            self.add(None, "runid", "runid", (_ORDER["runid"], 0.0, 0))
            return
        if fam == "relstring":
            plist = list(params or [])
            length = RELSTRING_LEN
            if plist:
                try:
                    length = int(float(_one(plist, "relstring")))
                except ValueError:
                    raise UnknownMeasureError(
                        f"relstring takes a number of documents, e.g. -m relstring.20; got "
                        f"{','.join(plist)!r}") from None
            label = "relstring" if not plist else f"relstring_{','.join(plist)}"
            self.add(None, "relstring", label, (_ORDER[fam], 0.0, 0), length=length)
            return
        if params is not None and fam in _TEXT_PARAM:
            plist = list(params)
            m = _parse(_TEXT_PARAM[fam](plist))
            self.add(m, fam, f"{fam}_{','.join(plist)}", (_ORDER[fam], 0.0, 0))
            return
        for trec, key in _family_names(fam, params):
            try:
                m = _parse(JG_BASE[fam] + trec[len(fam):] if fam in JG_BASE else trec)
            except UnknownMeasureError:
                if from_set:
                    if fam not in self.exp.skipped:
                        self.exp.skipped.append(fam)
                    continue
                raise UnknownMeasureError(
                    f"trec_eval measure {trec!r} is not implemented by searcheval_frames; "
                    "run `searcheval --list-measures` for the available ones"
                ) from None
            label = trec if fam in JG_BASE else (m.trec_name or trec)
            self.add(m, fam, label, (_ORDER[fam], key, 0))

    def spec(self, spec: str) -> None:
        """One ``-m`` specification: a set, ``family.params``, a family, or names."""
        if spec in _SETS:
            fams = ALL_TREC_9 if spec == "all_trec" and self.compat == "trec_eval-9" \
                else _SETS[spec]
            for fam in fams:
                self.add_family(fam, None, True)
            return
        if spec == "all_prefs" or spec.startswith(("all_", "qrels_")):
            hint = " (preference judgments: add -R prefs or -R qrels_prefs)" \
                if spec == "all_prefs" else ""
            raise UnknownMeasureError(
                f"measure set {spec!r} is not supported{hint}; use 'official', 'all_trec' "
                "or measure names")
        fam_m = re.match(r"^([A-Za-z0-9_]+)\.(.*)$", spec)
        if fam_m and fam_m.group(1) in TREC_FAMILIES:
            fam, rest = fam_m.group(1), fam_m.group(2)
            self.add_family(fam, [p for p in rest.split(",") if p != ""] or None, False)
            return
        if spec in TREC_FAMILIES:
            self.add_family(spec, None, False)
            return
        for part in _split_top(spec):
            if part in TREC_FAMILIES:
                self.add_family(part, None, False)
                continue
            rs = re.fullmatch(r"relstring_(\d+)", part)
            if rs:
                self.add_family("relstring", [rs.group(1)], False)
                continue
            m = _parse(part)
            family = _family_of(m.trec_name)
            if family is not None and m.trec_name is not None:
                self.add(m, family, m.trec_name,
                         (_ORDER[family], _param_key(m.trec_name, family), 0))
            else:
                self.extra += 1
                self.add(m, None, m.name, (len(_ORDER), 0.0, self.extra))

    def finish(self) -> Expansion:
        """The requests in print order, without defaults a family's parameters replaced."""
        exp = self.exp
        exp.requests = [r for r in exp.requests if not (
            r.family in self.explicit
            and (r.label if r.measure is None else r.measure.name) in self.defaults_of)]
        exp.requests.sort(key=lambda r: r.order)
        if not exp.requests:
            raise InvalidOptionError("no measure to compute; pass -m with a measure name")
        return exp


def _family_names(fam: str, params: Iterable[str] | None) -> list[tuple[str, float]]:
    """trec_eval names of ``fam`` with ``params`` (or its defaults) and their sort keys."""
    defaults = TREC_FAMILIES[fam]
    if params is None:
        if defaults is None:
            return [(fam, 0.0)]
        return [(f"{fam}_{_param_text(fam, v)}", float(v)) for v in defaults]
    plist = list(params)
    try:
        nums = sorted({float(p) for p in plist})
        names = [(f"{fam}_{_param_text(fam, v)}", v) for v in nums]
        if fam not in _FLOAT_PARAM:
            names = list(dict.fromkeys(names))
        return names
    except ValueError:
        return [(f"{fam}_{','.join(plist)}", 0.0)]


def format_value(value: float, integer: bool) -> str:
    """Format a value as trec_eval does (``%ld`` for counts, ``%6.4f`` otherwise)."""
    if integer:
        return str(round(value))
    return f"{value:6.4f}"  # C printf: nan prints as "   nan"


def _line(label: str, qid: str, value: str, prefix: str = "") -> str:
    return f"{prefix}{label:<22}\t{qid}\t{value}\n"


def format_trec_eval(
    aggregate: pl.DataFrame,
    requests: Sequence[MeasureRequest],
    per_query: pl.DataFrame | None = None,
    strings: pl.DataFrame | None = None,
    zscore: bool = False,
) -> str:
    """Print results exactly as trec_eval does, one block per run.

    Parameters
    ----------
    aggregate
        ``run, measure, value`` (polars), as returned by ``evaluate``.
    requests
        From :func:`expand_measures` (gives order, labels and integer formats).
    per_query
        ``run, query_id, measure, value`` for ``-q`` output, or None.
    strings
        ``run, query_id, measure, text`` for the per-query ``relstring`` lines
        (from :func:`searcheval_frames.cli.relstring.relstrings`), or None.
    zscore
        Values are z-scores (``-Z``): labels get trec_eval's ``Z`` prefix and every value
        four decimals.

    Returns
    -------
    str
        The text, ``measure<TAB>query<TAB>value`` lines.

    Examples
    --------
    >>> import polars as pl
    >>> reqs = expand_measures(["P.5"]).requests
    >>> agg = pl.DataFrame({"run": ["r"], "measure": ["P@5"], "value": [0.4]})
    >>> format_trec_eval(agg, reqs)
    'P_5                   \\tall\\t0.4000\\n'
    """
    out: list[str] = []
    z = "Z" if zscore else ""
    runs = aggregate.get_column("run").unique(maintain_order=True).to_list()
    if not runs and per_query is not None:
        runs = per_query.get_column("run").unique(maintain_order=True).to_list()
    for run in runs:
        if per_query is not None:
            pq = per_query.filter(pl.col("run") == run)
            table = {(q, m): v for q, m, v in pq.select("query_id", "measure", "value")
                     .iter_rows()}
            texts: dict[tuple[str, str], str] = {}
            if strings is not None:
                texts = {(q, m): t for q, m, t in strings.filter(pl.col("run") == run)
                         .select("query_id", "measure", "text").iter_rows()}
            qids = sorted(pq.get_column("query_id").unique().to_list(),
                          key=lambda s: s.encode())
            for q in qids:
                for r in requests:
                    if r.summary_only:
                        continue
                    if r.family == "relstring":
                        text = texts.get((q, r.name))
                        if text is not None:
                            out.append(_line(r.label, q, text))
                        continue
                    v = table.get((q, r.name))
                    if v is not None:
                        out.append(_line(r.label, q, format_value(v, r.integer and not z), z))
        agg = dict(aggregate.filter(pl.col("run") == run).select("measure", "value").iter_rows())
        for r in requests:
            if r.family == "relstring":
                continue  # per query only, as trec_eval
            if r.measure is None:
                out.append(_line("runid", "all", str(run)))
                continue
            v = agg.get(r.name)
            if v is not None:
                out.append(_line(r.label, "all", format_value(v, r.integer and not z), z))
    return "".join(out)

