"""Numbers on the Validity page: shares as percentages, "—" where there is no figure."""
from django import template
from django.utils.formats import number_format

register = template.Library()


@register.filter
def pct(value, digits=1):
    """0.1234 -> "12.3%"; None -> "—"."""
    if value is None:
        return "—"
    return f"{number_format(float(value) * 100, int(digits))}%"


@register.filter
def num(value, digits=2):
    if value is None:
        return "—"
    return number_format(float(value), int(digits))


@register.filter
def get(mapping, key):
    return (mapping or {}).get(key)
