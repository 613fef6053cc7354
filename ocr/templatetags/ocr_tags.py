"""Template filters of the scan pages."""
from django import template
from django.utils.translation import pgettext_lazy

from ..redaction import regions_for

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
def redaction_in(page, batch):
    """The page's redaction regions on its deskewed image (as hatched: Page.deskewed), read from the
    batch the view already has (`Page.redaction_regions` would query the batch again for every page
    of a list)."""
    return page.deskewed(regions_for(batch.template if batch.is_class_scan else None, page.index_in_file))


@register.filter
def answer_state(code):
    return ANSWER_STATE_LABELS.get(code, code)
