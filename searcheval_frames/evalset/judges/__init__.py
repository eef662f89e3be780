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


def _compare_options() -> list[str]:
    """The keywords ``holes_verdicts(**compare_options)`` may pass on to ``compare``."""
    import inspect

    from ...analysis.compare import compare
    from ...core.evaluate import evaluate

    return [p.name for fn in (compare, evaluate) for p in inspect.signature(fn).parameters.values()
            if p.kind is p.KEYWORD_ONLY]


def _checked_functions() -> None:
    """Every public function of ``sef.judges`` refuses unknown keywords with the closest
    name (``options.keywords_checked``, as the package's own namespace does)."""
    import inspect

    from ...options import keywords_checked

    for name in __all__:
        value = globals()[name]
        if inspect.isfunction(value):
            also = _compare_options if name == "holes_verdicts" else None
            globals()[name] = keywords_checked(value, also=also)


_checked_functions()
