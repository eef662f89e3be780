"""The query's terms highlighted in a document's text, as segments (never HTML).

The query and the text are tokenised alike: Unicode word characters (``\\w+``), NFKC
normalised and case-folded, so ``"Café"`` in a query marks ``"CAFÉ"`` and ``"café"``
in the text. A small list of English function words is left unmarked. The result is a
list of ``[text, is_term]`` segments that the widget renders as text nodes and
``<mark>`` elements (``textContent``, never ``innerHTML``), so a document holding
``<script>`` shows it as text.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["STOPWORDS", "query_terms", "segments"]

_WORD = re.compile(r"\w+")

#: function words never highlighted
STOPWORDS = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "how", "in", "is", "it", "of", "on", "or", "that", "the", "this", "to", "was", "what", "when", "where", "which", "who", "why", "with"])


def _norm(token: str) -> str:
    return unicodedata.normalize("NFKC", token).casefold()


def query_terms(query: str | None) -> frozenset[str]:
    """The normalised terms of a query (function words dropped).

    >>> sorted(query_terms("What is HNSW, and the Café index?"))
    ['café', 'hnsw', 'index']
    """
    if not query:
        return frozenset()
    return frozenset(t for t in (_norm(m) for m in _WORD.findall(query)) if t not in STOPWORDS)


def segments(text: str | None, terms: frozenset[str]) -> list[list[str | bool]]:
    """``text`` cut into ``[piece, is_term]`` segments (adjacent pieces merged).

    >>> segments("An HNSW <b>index</b>.", query_terms("hnsw index"))
    [['An ', False], ['HNSW', True], [' <b>', False], ['index', True], ['</b>.', False]]
    """
    if not text:
        return []
    out: list[list[str | bool]] = []
    last = 0

    def add(piece: str, hit: bool) -> None:
        if not piece:
            return
        if out and out[-1][1] == hit:
            out[-1][0] = str(out[-1][0]) + piece
        else:
            out.append([piece, hit])

    if terms:
        for m in _WORD.finditer(text):
            if _norm(m.group()) in terms:
                add(text[last:m.start()], False)
                add(m.group(), True)
                last = m.end()
    add(text[last:], False)
    return out
