"""Names of codes where people read them (issue 39): judge kinds, answer sources, perturbation
probes, prompt strategies, few-shot split rules and the OCR-vs-judge attribution tags.

The codes themselves stay what they are in the data, the API, the exports and the JSON appendix
of the methods report; pages and the report's tables show `label(group, code)`. Each name is the
code itself in English (researchers read the codes in the paper and the exports) and a Chinese
word in Chinese, through a message context per group (pgettext), so that "both" as a tag and
"both" elsewhere can be translated apart. An unknown code is shown as it is.
"""
from django.utils.translation import pgettext_lazy

LABELS = {
    "kind": {
        "rubric": pgettext_lazy("judge kind", "rubric"),
        "replay": pgettext_lazy("judge kind", "replay"),
        "ineq_final_answer": pgettext_lazy("judge kind", "ineq_final_answer"),
        "ineq_toy_case": pgettext_lazy("judge kind", "ineq_toy_case"),
        "ineq_logical_gap": pgettext_lazy("judge kind", "ineq_logical_gap"),
        "ineq_numerical_approximation": pgettext_lazy("judge kind", "ineq_numerical_approximation"),
        "ineq_numerical_computation": pgettext_lazy("judge kind", "ineq_numerical_computation"),
        "ineq_holistic": pgettext_lazy("judge kind", "ineq_holistic"),
        "cas_final_answer": pgettext_lazy("judge kind", "cas_final_answer"),
        "external": pgettext_lazy("judge kind", "external"),
    },
    "source": {
        "human": pgettext_lazy("answer source", "human"),
        "synthetic": pgettext_lazy("answer source", "synthetic"),
        "probe-derived": pgettext_lazy("answer source", "probe-derived"),  # the geometry study's third group
    },
    "probe": {
        "drop-final-answer": pgettext_lazy("probe", "drop-final-answer"),
        "arithmetic-slip": pgettext_lazy("probe", "arithmetic-slip"),
        "truncate-last-step": pgettext_lazy("probe", "truncate-last-step"),
        "notation-swap": pgettext_lazy("probe", "notation-swap"),
        "reorder-independent-steps": pgettext_lazy("probe", "reorder-independent-steps"),
    },
    "strategy": {
        "reason-then-score": pgettext_lazy("prompt strategy", "reason-then-score"),
        "verification-first": pgettext_lazy("prompt strategy", "verification-first"),
        "follow-through-first": pgettext_lazy("prompt strategy", "follow-through-first"),
        "few-shot": pgettext_lazy("prompt strategy", "few-shot"),
    },
    "split": {
        "answer": pgettext_lazy("few-shot split rule", "answer"),
        "student": pgettext_lazy("few-shot split rule", "student"),
        "class": pgettext_lazy("few-shot split rule", "class"),
        "exam": pgettext_lazy("few-shot split rule", "exam"),
    },
    "attribution": {
        "ocr": pgettext_lazy("OCR attribution tag", "ocr"),
        "judge": pgettext_lazy("OCR attribution tag", "judge"),
        "both": pgettext_lazy("OCR attribution tag", "both"),
        "none": pgettext_lazy("OCR attribution tag", "none"),
    },
}


def label(group: str, code) -> str:
    """The name of `code` of `group` in the active language; the code itself when unknown."""
    if code is None or code == "":
        return code
    name = LABELS.get(group, {}).get(str(code))
    return str(name) if name is not None else str(code)
