"""Prompt templates of automatic judges, and reading a grade out of an answer.

A template is a text file: the system message, a line ``---``, the user message (no
``---`` line: the whole file is the user message). ``{query}`` and ``{passage}`` are
replaced by the texts; other braces are left alone. ``"umbrela"`` is the shipped
UMBRELA prompt (Upadhyay et al., 2024, after Thomas et al., SIGIR 2024), asking for a
0-3 grade in the form ``##final score: 2``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ...errors import InvalidOptionError, SearchEvalError

__all__ = ["JudgeAnswerError", "PromptTemplate", "load_prompt", "parse_grade"]

SHIPPED = ("umbrela",)


class JudgeAnswerError(SearchEvalError):
    """A judge's answer carried no usable grade (after its retries); never read as 0."""

    def __init__(self, message: str, *, answer: str = "", status: int | None = None) -> None:
        super().__init__(message)
        self.answer = answer
        self.status = status


@dataclass(frozen=True)
class PromptTemplate:
    """A judge prompt: ``system`` and ``user`` text with ``{query}`` and ``{passage}``."""

    name: str
    system: str
    user: str

    @property
    def text(self) -> str:
        """The whole template (what the cache key and :attr:`sha256` cover)."""
        return f"{self.system}\n---\n{self.user}"

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def messages(self, query: str, passage: str) -> list[dict[str, str]]:
        """The chat messages for one (query, passage) pair."""
        user = self.user.replace("{query}", query).replace("{passage}", passage)
        out = [{"role": "system", "content": self.system}] if self.system else []
        return [*out, {"role": "user", "content": user}]


def load_prompt(prompt: str | Path | PromptTemplate = "umbrela") -> PromptTemplate:
    """A shipped template by name (``"umbrela"``), a template file, or template text.

    Examples
    --------
    >>> t = load_prompt("umbrela")
    >>> t.messages("what is bm25", "BM25 is a ranking function.")[1]["content"].count("BM25")
    1
    """
    if isinstance(prompt, PromptTemplate):
        return prompt
    if isinstance(prompt, str) and prompt in SHIPPED:
        text = resources.files(__package__).joinpath("prompts", f"{prompt}.txt").read_text(
            encoding="utf-8"
        )
        name = prompt
    elif isinstance(prompt, Path) or (isinstance(prompt, str) and "\n" not in prompt
                                      and prompt.endswith((".txt", ".md", ".prompt"))):
        path = Path(prompt)
        if not path.is_file():
            raise InvalidOptionError(
                f"prompt={str(prompt)!r}: no such template file; pass 'umbrela', a file with "
                "{query} and {passage}, or the template text itself"
            )
        text, name = path.read_text(encoding="utf-8"), path.stem
    elif isinstance(prompt, str):
        text, name = prompt, "custom"
    else:
        raise InvalidOptionError(f"prompt={prompt!r}: pass 'umbrela', a template file or its text")
    system, sep, user = text.partition("\n---\n")
    if not sep:
        system, user = "", text
    if "{passage}" not in user or "{query}" not in user:
        raise InvalidOptionError(
            f"prompt {name!r}: the template needs both {{query}} and {{passage}} in its user "
            "message (after the '---' line); e.g. 'Query: {query}\\nPassage: {passage}\\n"
            "Answer ##final score: <0-3>'"
        )
    return PromptTemplate(name, system.strip(), user.strip())


_FINAL = re.compile(r"final\s*score\s*[:=]\s*\**\s*(-?\d+(?:\.0+)?)\b", re.IGNORECASE | re.ASCII)
_ALONE = re.compile(r"^\s*[\"'*#(\[]*\s*(-?\d+)\s*[\"'*)\].]*\s*$", re.ASCII)


def parse_grade(answer: str, grades: tuple[int, ...] = (0, 1, 2, 3)) -> int:
    """The grade in an answer: the last ``final score: N``, or an answer that is only a number.

    Anything else raises :class:`JudgeAnswerError` (an unparseable answer is never 0).

    >>> parse_grade("M: 2, T: 3\\n##final score: 2")
    2
    >>> parse_grade("3")
    3
    >>> parse_grade("The passage is relevant.")
    Traceback (most recent call last):
    ...
    searcheval_frames.evalset.judges.prompt.JudgeAnswerError: no grade in the answer 'The passage is relevant.'; expected '##final score: N' with N in (0, 1, 2, 3)
    """
    found = _FINAL.findall(answer or "")
    raw = found[-1] if found else None
    if raw is None:
        m = _ALONE.match(answer or "")
        raw = m.group(1) if m else None
    if raw is None:
        raise JudgeAnswerError(
            f"no grade in the answer {str(answer)[:120]!r}; expected '##final score: N' with "
            f"N in {tuple(grades)}",
            answer=str(answer),
        )
    grade = int(float(raw))
    if grade not in grades:
        raise JudgeAnswerError(
            f"grade {grade} in the answer {str(answer)[:120]!r} is outside {tuple(grades)}",
            answer=str(answer),
        )
    return grade
