"""Automatic relevance judges: any function or an OpenAI-compatible LLM, journaled,
cached and resumable (:func:`judge`), calibrated against human labels
(:func:`judge_agreement`) and used to fill pooling holes (:func:`fill_holes`).

Modules, low to high: ``prompt`` (templates, reading a grade), ``texts`` (the pairs a
judge sees), ``adapter`` (:class:`OpenAICompatible`), ``engine`` (:func:`judge`),
``stub`` (:class:`StubServer`, a local OpenAI-compatible server for demos and tests).
"""

from .adapter import OpenAICompatible
from .engine import DryRun, JudgeResult, judge
from .prompt import JudgeAnswerError, PromptTemplate, load_prompt, parse_grade
from .stub import StubServer, overlap_grade

__all__ = [
    "DryRun",
    "JudgeAnswerError",
    "JudgeResult",
    "OpenAICompatible",
    "PromptTemplate",
    "StubServer",
    "judge",
    "load_prompt",
    "overlap_grade",
    "parse_grade",
]
