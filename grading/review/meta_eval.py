"""The meta-evaluation taxonomy: why a judge and the expert gold differ by two points or more.

Categories A-D come from the RealMath-Eval paper, E from its released classifier. The
definitions below are shown on the review screen and fed to the optional LLM pre-labeller.
"""
import json
import re
from dataclasses import dataclass

from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy, gettext_noop

from core.numbers import json_int

from ..judges.parsing import balanced_end

CATEGORIES = {
    "A": (
        gettext_noop("Error severity & follow-through"),
        gettext_noop("The student made a calculation, transcription or value error. The gold score penalises it strictly "
        "(often the whole part); the judge carries the error forward and credits the later, correct reasoning."),
    ),
    "B": (
        gettext_noop("Process norms & completeness"),
        gettext_noop("The result is right but steps are skipped, variables undefined or the form non-standard. The gold "
        "score deducts for the missing process; the judge looks past it because the answer or idea is right."),
    ),
    "C": (
        gettext_noop("Logical rigor & edge cases"),
        gettext_noop("The argument has holes: missing conditions, cases or justification. The gold score demands a complete "
        "proof; the judge is persuaded by the general line and misses the gap."),
    ),
    "D": (
        gettext_noop("Insight recognition"),
        gettext_noop("A valid method that the reference does not use. One side recognises it and the other does not."),
    ),
    "E": (
        gettext_noop("Out of distribution / other"),
        gettext_noop("None of the above: an impossible gold score, hallucinated or garbled text, a refusal, a wrong reference."),
    ),
}
# The names and definitions above are English on purpose (they are also the LLM pre-labeller's
# prompt); gettext_noop marks them for the catalogue, and people see them in their language.
CATEGORY_DISPLAY = {code: (gettext_lazy(name), gettext_lazy(definition)) for code, (name, definition) in CATEGORIES.items()}
CATEGORY_CHOICES = [(code, format_lazy("{}. {}", code, gettext_lazy(name))) for code, (name, _) in CATEGORIES.items()]


def direction(judge_score, gold_score):
    """'over' when the judge gave more than the gold score, 'under' when less, '' when equal."""
    if judge_score is None or gold_score is None or judge_score == gold_score:
        return ""
    return "over" if judge_score > gold_score else "under"


@dataclass
class MetaEvalOutput:
    category: str | None
    analysis: str
    is_ood: bool
    data: dict
    error: str = ""


_FENCE = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)


def _first_json_object(text):
    fenced = _FENCE.search(text)
    if fenced:
        return fenced.group(1)
    start = text.find("{")
    if start < 0:
        return None
    end = balanced_end(text, start)
    return None if end is None else text[start : end + 1]


def parse_meta_eval_output(text):
    """Read the classifier's JSON answer (fenced or bare, with prose around it). Never raises."""
    raw = _first_json_object(text or "")
    if raw is None:
        return MetaEvalOutput(None, "", False, {}, error="no JSON object in the output")
    try:
        data = json.loads(raw, parse_int=json_int)
    except (ValueError, RecursionError) as exc:  # model text: an over-long integer or deep nesting too
        return MetaEvalOutput(None, "", False, {}, error=f"invalid JSON: {getattr(exc, 'msg', exc)}")
    if not isinstance(data, dict):
        return MetaEvalOutput(None, "", False, {}, error="the JSON is not an object")
    code = str(data.get("primary_category_code", "")).strip().upper()[:1]
    ood = data.get("ood_details") if isinstance(data.get("ood_details"), dict) else {}
    analysis = data.get("analysis") if isinstance(data.get("analysis"), str) else ""
    if code not in CATEGORIES:
        return MetaEvalOutput(None, analysis, bool(ood.get("is_ood")), data, error=f"unknown category {code!r}")
    return MetaEvalOutput(code, analysis, bool(ood.get("is_ood")), data)
