"""Template filters for core.uncertainty's figures: why an interval is missing, in the reader's
language ({{ interval_dict|not_estimable }}), and a p-value at its resolution ({{ p|p_value:resolution }})."""
from django import template

from ..uncertainty_text import note_from_english
from ..uncertainty_text import p_value as format_p_value

register = template.Library()


@register.filter
def not_estimable(info):
    """The translated note of an interval dict (core.uncertainty.Interval.as_dict) or of a note
    string: "not estimable: 1 question"; "" when the interval exists."""
    if isinstance(info, dict):
        return note_from_english(info.get("note", ""))
    return note_from_english(info or "")


@register.filter
def p_value(p, resolution=None):
    return format_p_value(p, resolution)
