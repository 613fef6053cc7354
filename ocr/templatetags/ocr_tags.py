"""Template filters of the scan pages."""
from django import template
from django.utils.translation import pgettext_lazy

register = template.Library()

# The states of a scanned answer (ocr.selectors.batch_answers) as people read them; the codes stay
# in the page's data-state attributes and in the JSON.
ANSWER_STATE_LABELS = {
    "OCR": pgettext_lazy("answer state", "OCR"),
    "corrected": pgettext_lazy("answer state", "corrected"),
    "verified": pgettext_lazy("answer state", "verified"),
    "assigned": pgettext_lazy("answer state", "assigned"),
    "labelled": pgettext_lazy("answer state", "labelled"),
}


@register.filter
def answer_state(code):
    return ANSWER_STATE_LABELS.get(code, code)
