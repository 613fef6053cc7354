"""`rater_label`: a rater's name as shown; the imported gold's rater key "(imported)" (kept as it
is in the data and the agreement figures) in the interface language."""
from django import template
from django.utils.translation import pgettext_lazy

from annotation.models.labels import IMPORTED_RATER

register = template.Library()


@register.filter
def rater_label(name):
    return pgettext_lazy("rater", "(imported)") if name == IMPORTED_RATER else name
