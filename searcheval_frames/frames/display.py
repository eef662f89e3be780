"""Display names: long ids and run names shortened for figures, HTML and Markdown.

The data always keep the original text; only what is drawn or printed is shortened:

* :func:`shorten` cuts a text to a width with an ellipsis ``…`` (the full text goes
  to a tooltip or a legend table);
* :func:`run_display_names` gives runs the shortest unique names: the prefix and
  suffix all names share (``run.dl19-passage.`` … ``.trec``) are removed, then each
  name is shortened in the middle, keeping it unique;
* :func:`resolve_name` accepts a unique part of a run name (``--baseline bm25``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..errors import InvalidOptionError

__all__ = ["ELLIPSIS", "resolve_name", "run_display_names", "shorten"]

ELLIPSIS = "…"
#: Characters at which a common prefix / suffix of run names may be cut.
_SEP = re.compile(r"[._\-/ :]")


def shorten(text: str, width: int = 24, *, where: str = "end") -> str:
    """``text`` cut to at most ``width`` characters with an ellipsis.

    ``where="end"`` keeps the start (questions); ``"middle"`` keeps both ends (run
    names whose tail tells them apart); ``"start"`` keeps the end (URLs, whose host is
    the same everywhere); ``"auto"``: ``"start"`` for URLs, else ``"middle"``. The result
    has ``min(len(text), width)`` characters.

    >>> shorten("what is the capital of france", 12)
    'what is the…'
    >>> shorten("run.dl19-passage.splade-pp-ed", 16, where="middle")
    'run.dl19…e-pp-ed'
    >>> shorten("https://help.example.app/docs/billing/change-your-plan#cancel", 24, where="auto")
    '…change-your-plan#cancel'
    """
    text = str(text)
    if width < 2 or len(text) <= width:
        return text if len(text) <= max(width, 1) else text[: max(width, 1)]
    if where == "auto":
        where = "start" if "://" in text else "middle"
    if where == "start":
        end = text[-(width - 1):]
        cut = end.find("/")  # start at a path segment when one is near
        return ELLIPSIS + (end[cut:] if 0 <= cut < width // 3 else end)
    if where == "middle":
        head = width // 2
        tail = width - 1 - head
        return text[:head] + ELLIPSIS + (text[-tail:] if tail else "")
    return text[: width - 1].rstrip() + ELLIPSIS


def _common_cut(names: Sequence[str], *, suffix: bool) -> int:
    """Length of the shared prefix (or suffix) of ``names``, ending at a separator."""
    seqs = [n[::-1] for n in names] if suffix else list(names)
    first = seqs[0]
    n = min(len(s) for s in seqs)
    i = 0
    while i < n and all(s[i] == first[i] for s in seqs):
        i += 1
    # cut only right after a separator, and leave every name non-empty
    while i > 0 and not (_SEP.match(first[i - 1]) and all(len(s) > i for s in seqs)):
        i -= 1
    return i


def run_display_names(names: Sequence[str], width: int = 24) -> dict[str, str]:
    """The shortest unique display name of each run: ``{name: display}``.

    Common prefix and suffix (cut at ``. _ - / : `` or space) are removed when two or
    more names share them; names longer than ``width`` are shortened in the middle;
    collisions after shortening fall back to a longer cut and, last, to ``#i``.

    >>> run_display_names(["run.dl19-passage.bm25.trec", "run.dl19-passage.splade-pp-ed.trec"])
    {'run.dl19-passage.bm25.trec': 'bm25', 'run.dl19-passage.splade-pp-ed.trec': 'splade-pp-ed'}
    >>> run_display_names(["bm25", "dense"])
    {'bm25': 'bm25', 'dense': 'dense'}
    """
    names = [str(n) for n in names]
    if not names:
        return {}
    core = list(names)
    if len(set(names)) > 1:
        pre = _common_cut(names, suffix=False)
        core = [n[pre:] for n in names]
        suf = _common_cut(core, suffix=True)
        if suf:
            core = [c[: len(c) - suf] for c in core]
    out: dict[str, str] = {}
    for w in (width, width + 8, width + 24):
        short = [shorten(c, w, where="middle") for c in core]
        if len(set(short)) == len(set(names)):
            return dict(zip(names, short, strict=True))
    seen: dict[str, int] = {}
    for n, c in zip(names, core, strict=True):
        s = shorten(c, width - 3, where="middle")
        seen[s] = seen.get(s, 0) + 1
        out[n] = s if seen[s] == 1 else f"{s}#{seen[s]}"
    return out


def resolve_name(given: str, names: Sequence[str], *, what: str = "baseline",
                 func: str = "report") -> str:
    """``given`` if it is one of ``names``, else the name whose display name (see
    :func:`run_display_names`) it is, else the one name containing it.

    >>> resolve_name("bm25", ["run.dl19.bm25", "run.dl19.bm25-rm3", "run.dl19.splade"])
    'run.dl19.bm25'
    >>> resolve_name("rm3", ["run.dl19.bm25", "run.dl19.bm25-rm3", "run.dl19.splade"])
    'run.dl19.bm25-rm3'
    """
    names = [str(n) for n in names]
    if given in names:
        return given
    shown = [n for n, s in run_display_names(names, width=1000).items() if s == given]
    if len(shown) == 1:
        return shown[0]
    hits = [n for n in names if given.lower() in n.lower()]
    if len(hits) == 1:
        return hits[0]
    rule = (f"matches {len(hits)} runs {hits}; pass more of the name" if hits else
            f"must be one of {', '.join(repr(n) for n in names)} or a unique part of one")
    example = hits[0] if hits else names[0]
    raise InvalidOptionError(
        f"{func}({what}={given!r}): {rule}; got {given!r}. Example: {what}={example!r}")
