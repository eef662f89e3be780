"""``sef.generate_queries``: test queries written by an LLM from the documents, each
keeping its source document as synthetic ground truth (issue #34).

The calls go through the automatic judges' engine (:func:`~searcheval_frames.judge`), so
generation has the same label journal and content-addressed cache (a re-run, or a run
killed and restarted, asks nothing twice; a changed prompt or model is a new key), the
same retries with backoff (429 / 5xx, timeouts, answers with too few queries), budget,
error log and dry-run token / cost estimate. Each document is one call asking for
``per_doc`` queries, one a line; its answer is journaled as a label of the pair
``(generate:<doc_id>, doc_id)`` with the answer text.

The default prompt (``DEFAULT_PROMPT``; ``prompt=`` takes other text or a file with
``{document}`` and ``{n}``, a system part before a ``---`` line) asks for queries a user
would type, not sentences copied from the document: :func:`~searcheval_frames.audit_queries`
checks that (``copies_document``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from ...errors import InvalidOptionError
from ...frames import Kind, input_kind, to_native
from ...options import check_bool, check_int, check_optional_int, option_error
from ..judges.engine import DryRun, FunctionJudge, judge
from ..judges.prompt import JudgeAnswerError, PromptTemplate
from ..judges.texts import docs_texts
from .sampling import FramedResult

__all__ = ["DEFAULT_PROMPT", "GeneratedQueries", "QueryPrompt", "generate_queries",
           "parse_queries"]

_F = "generate_queries"
DEFAULT_PROMPT = """You write the search queries real users type into a search box.
---
Document:
{document}

Write {n} different search queries that this document answers, one per line, without
numbers or quotes. Write them as a user would type them: short, in their own words, not
sentences copied from the document."""
_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)]|q\d*[:.])\s*", re.IGNORECASE)


@dataclass(frozen=True)
class QueryPrompt(PromptTemplate):
    """A generation prompt: ``system`` and ``user`` text with ``{document}`` and ``{n}``
    (a judge's :class:`~searcheval_frames.judges.PromptTemplate` asking for other things:
    the same ``text`` and ``sha256``)."""

    @classmethod
    def load(cls, prompt: str | os.PathLike[str] | None) -> QueryPrompt:
        if prompt is None:
            text = DEFAULT_PROMPT
        elif isinstance(prompt, os.PathLike) or (isinstance(prompt, str) and "\n" not in prompt
                                                 and prompt.endswith((".txt", ".md", ".prompt"))):
            path = Path(prompt)
            if not path.is_file():
                raise option_error(_F, "prompt", str(prompt), "no such template file",
                                   "prompt='Write {n} queries for:\\n{document}'")
            text = path.read_text(encoding="utf-8")
        elif isinstance(prompt, str):
            text = prompt
        else:
            raise option_error(_F, "prompt", prompt, "must be template text or a file",
                               "prompt='Write {n} queries for:\\n{document}'")
        system, sep, user = text.partition("\n---\n")
        if not sep:
            system, user = "", text
        if "{document}" not in user:
            raise option_error(_F, "prompt", text[:60], "the template needs {document} (and "
                               "may use {n}) in its user part",
                               "prompt='Write {n} queries for:\\n{document}'")
        return cls("generate", system.strip(), user.strip())

    def messages(self, n: Any, document: str) -> list[dict[str, str]]:
        """The chat messages asking for ``n`` queries about ``document``."""
        user = self.user.replace("{n}", str(n)).replace("{document}", document)
        out = [{"role": "system", "content": self.system}] if self.system else []
        return [*out, {"role": "user", "content": user}]

    def render(self, n: Any, document: str) -> str:
        """The prompt as one text (for a plain function ``llm(prompt) -> str``)."""
        return "\n\n".join(m["content"] for m in self.messages(n, document))


def parse_queries(answer: str, n: int) -> list[str]:
    """The first ``n`` queries of an answer, one a line (bullets, numbers and quotes
    removed); fewer raise :class:`JudgeAnswerError` (retried by the adapter).

    >>> parse_queries('1. "bm25 tuning"\\n- what is k1\\n\\n', 2)
    ['bm25 tuning', 'what is k1']
    """
    lines = [_BULLET.sub("", line).strip().strip("\"'`").strip() for line in answer.splitlines()]
    got = list(dict.fromkeys(q for q in lines if q))
    if len(got) < n:
        raise JudgeAnswerError(f"asked for {n} queries, the answer has {len(got)}: "
                               f"{answer[:120]!r}", answer=answer)
    return got[:n]


class QueryWriter:
    """What the judges' engine sees: ``ask(n, document) -> (relevance, answer)``."""

    def __init__(self, llm: Any, template: QueryPrompt, per_doc: int, relevance: int) -> None:
        self.llm, self.template, self.per_doc, self.relevance = llm, template, per_doc, relevance
        self.is_chat = hasattr(llm, "chat") and hasattr(llm, "identity")
        inner = llm if self.is_chat else FunctionJudge(llm)
        self.inner_identity = inner.identity()
        self.model = str(getattr(inner, "model", getattr(inner, "name", "llm")))
        self.name = f"querygen-{self.model}"
        self.params = dict(getattr(inner, "params", {}) or {})
        self.max_concurrency = int(getattr(llm, "max_concurrency", 1)) if self.is_chat else 1
        self.output_tokens = 16 * per_doc  # for the dry run's estimate

    def identity(self) -> dict[str, Any]:
        return {"task": "generate_queries", "template": self.template.text,
                "per_doc": self.per_doc, "relevance": self.relevance, "llm": self.inner_identity}

    def ask(self, n: str, document: str) -> tuple[int, str]:
        if self.is_chat:
            qs = self.llm.chat(self.template.messages(self.per_doc, document),
                               lambda a: parse_queries(a, self.per_doc))
        else:
            try:
                answer = self.llm(self.template.render(self.per_doc, document))
            except Exception as exc:  # the user's function failed: an error for this doc
                raise JudgeAnswerError(f"llm raised {type(exc).__name__}: {exc}") from exc
            qs = parse_queries(str(answer), self.per_doc)
        return self.relevance, "\n".join(qs)


@dataclass
class GeneratedQueries(FramedResult):
    """Queries written from documents by :func:`generate_queries`.

    Attributes
    ----------
    frame
        ``query_id, query, doc_id, model, prompt_sha256`` (caller's frame kind):
        ``doc_id`` is the source document.
    qrels
        ``query_id, doc_id, relevance, source``: the source document relevant,
        ``source = "synthetic"``.
    calls, cached, errors, journal
        New calls, answers from the journal, documents without queries, the journal.
    """

    _frame: pl.DataFrame
    relevance: int
    calls: int
    cached: int
    errors: pl.DataFrame
    journal: Path
    kind: Kind = field(default_factory=lambda: Kind("polars"))

    @property
    def qrels(self) -> Any:
        out = self._frame.select("query_id", "doc_id",
                                 pl.lit(self.relevance, pl.Int64).alias("relevance"),
                                 pl.lit("synthetic").alias("source"))
        return to_native(out, self.kind)

    @property
    def queries(self) -> Any:
        """``query_id, query`` (for ``queries=`` arguments)."""
        return to_native(self._frame.select("query_id", "query"), self.kind)

    def __repr__(self) -> str:
        return (f"GeneratedQueries({self._frame.height} queries from "
                f"{self._frame['doc_id'].n_unique()} documents; {self.calls} new calls, "
                f"{self.cached} from the journal, {self.errors.height} errors; journal "
                f"{str(self.journal)!r})")


def _documents(docs: Any, n_docs: int | None, seed: int | None, max_chars: int) -> pl.DataFrame:
    d = docs_texts(docs).filter(pl.col("text").str.len_chars() > 0).sort("doc_id")
    if n_docs is not None:
        if n_docs > d.height:
            raise InvalidOptionError(f"{_F}(n_docs={n_docs}): docs has only {d.height} "
                                     "documents with text; ask for at most that many")
        pick = np.sort(np.random.default_rng(seed).choice(d.height, size=n_docs, replace=False))
        d = d[pick]
    return d.with_columns(pl.col("text").str.slice(0, max_chars))


def generate_queries(
    docs: Any,
    llm: Any,
    per_doc: int = 1,
    *,
    prompt: str | os.PathLike[str] | None = None,
    n_docs: int | None = None,
    seed: int | None = 0,
    relevance: int = 1,
    max_chars: int = 2000,
    id_prefix: str = "gen-",
    journal: str | os.PathLike[str] = "labels/generated.jsonl",
    budget: int | None = None,
    dry_run: bool = False,
    progress: bool = True,
    prices: dict[str, Any] | None = None,
) -> GeneratedQueries | DryRun:
    """Write test queries from documents with an LLM; each keeps its source document.

    Parameters
    ----------
    docs
        Documents: a frame with ``doc_id`` and ``text`` (and/or ``title``), a dict
        ``{doc_id: text}`` or a document file.
    llm
        A function ``llm(prompt: str) -> str`` or
        :class:`~searcheval_frames.judges.OpenAICompatible` (its ``chat``: retries,
        concurrency).
    per_doc
        Queries per document (one call per document asks for all of them).
    prompt
        Template text or file with ``{document}`` and ``{n}`` (default
        :data:`DEFAULT_PROMPT`).
    n_docs, seed
        Draw this many documents at random (numpy, ``seed``) instead of all of them
        (documents are taken in ``doc_id`` order).
    relevance
        The grade of the source document in ``.qrels``.
    max_chars
        The document text is cut to this many characters in the prompt.
    id_prefix
        Query ids are ``<id_prefix><doc_id>-<k>``.
    journal, budget, dry_run, progress, prices
        As for :func:`~searcheval_frames.judge` (the engine that makes the calls).

    Returns
    -------
    GeneratedQueries or DryRun
        ``.frame`` (``query_id, query, doc_id, model, prompt_sha256``), ``.qrels``
        (``source="synthetic"``), ``.queries``, ``.errors``; a
        :class:`~searcheval_frames.judges.DryRun` with ``dry_run=True``.

    Examples
    --------
    >>> import os, tempfile, searcheval_frames as sef
    >>> def llm(prompt):  # a deterministic stand-in: the document's first three words
    ...     return " ".join(prompt.split("Document:")[1].split()[:3]).lower()
    >>> docs = {"d1": "HNSW graphs make vector search fast.", "d2": "BM25 weighs terms."}
    >>> path = os.path.join(tempfile.mkdtemp(), "gen.jsonl")
    >>> g = sef.generate_queries(docs, llm, journal=path, progress=False)
    >>> g.frame.select("query_id", "query", "doc_id").rows()
    [('gen-d1-1', 'hnsw graphs make', 'd1'), ('gen-d2-1', 'bm25 weighs terms.', 'd2')]
    >>> g.qrels["source"].to_list()
    ['synthetic', 'synthetic']
    """
    check_int(_F, "per_doc", per_doc, minimum=1, maximum=50, example="per_doc=2")
    check_optional_int(_F, "n_docs", n_docs, minimum=1, example="n_docs=20")
    check_optional_int(_F, "seed", seed, minimum=0, example="seed=0")
    check_int(_F, "relevance", relevance, minimum=1, example="relevance=1")
    check_int(_F, "max_chars", max_chars, minimum=100, example="max_chars=2000")
    check_bool(_F, "dry_run", dry_run)
    if not callable(llm):
        raise option_error(_F, "llm", llm, "must be a function llm(prompt) -> str or "
                           "sef.judges.OpenAICompatible(...)", "llm=my_llm")
    writer = QueryWriter(llm, QueryPrompt.load(prompt), per_doc, relevance)
    d = _documents(docs, n_docs, seed, max_chars)
    pairs = d.select((pl.lit("generate:") + pl.col("doc_id")).alias("query_id"), "doc_id",
                     pl.lit(str(per_doc)).alias("query"), "text")
    res = judge(pairs, writer, journal=journal, budget=budget, dry_run=dry_run,
                progress=progress, prices=prices)
    if isinstance(res, DryRun):
        return res
    got = res.to_polars()
    order = d.select("doc_id").with_row_index("_o")
    frame = (got.select("doc_id", "model", "prompt_sha256",
                        pl.col("rationale").str.split("\n").alias("query"))
             .explode("query").filter(pl.col("query").str.strip_chars() != "")
             .join(order, on="doc_id").sort("_o", maintain_order=True)
             .with_columns(pl.int_range(1, pl.len() + 1).over("doc_id").alias("_k"))
             .select((pl.lit(id_prefix) + pl.col("doc_id") + pl.lit("-")
                      + pl.col("_k").cast(pl.String)).alias("query_id"),
                     "query", "doc_id", "model", "prompt_sha256"))
    errors = res.errors.with_columns(pl.col("doc_id")).select("doc_id", "error")
    return GeneratedQueries(frame, relevance, res.calls, res.cached, errors, res.journal,
                            input_kind(docs) if not isinstance(docs, dict | str | os.PathLike)
                            else Kind("polars"))
