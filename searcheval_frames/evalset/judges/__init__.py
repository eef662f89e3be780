"""Automatic relevance judges: any function or an OpenAI-compatible LLM, journaled,
cached and resumable (:func:`judge`), calibrated against human labels
(:func:`judge_agreement`) and used to fill pooling holes (:func:`fill_holes`).

Modules, low to high: ``prompt`` (templates, reading a grade), ``texts`` (the pairs a
judge sees), ``adapter`` (:class:`OpenAICompatible`), ``engine`` (:func:`judge`), ``holes`` (:func:`fill_holes`), ``plot`` (figures),
``stats`` (kappa, alpha, tau_AP), ``calibrate`` (:func:`judge_agreement`),
``stub`` (:class:`StubServer`, a local OpenAI-compatible server for demos and tests).
"""

from .adapter import OpenAICompatible
from .calibrate import JudgeAgreement, judge_agreement
from .engine import DryRun, JudgeResult, judge
from .holes import FilledQrels, fill_holes, holes_verdicts
from .plot import judge_agreement_plot, judge_confusion_plot, judge_rank_plot
from .prompt import JudgeAnswerError, PromptTemplate, load_prompt, parse_grade
from .stats import krippendorff_alpha, tau_ap
from .stub import StubServer, overlap_grade

__all__ = [
    "DryRun",
    "FilledQrels",
    "JudgeAgreement",
    "JudgeAnswerError",
    "JudgeResult",
    "OpenAICompatible",
    "PromptTemplate",
    "StubServer",
    "fill_holes",
    "holes_verdicts",
    "judge",
    "judge_agreement",
    "judge_agreement_plot",
    "judge_confusion_plot",
    "judge_rank_plot",
    "krippendorff_alpha",
    "load_prompt",
    "overlap_grade",
    "parse_grade",
    "tau_ap",
]
