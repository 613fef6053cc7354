"""Numbers on the Validity page: shares as percentages, "—" where there is no figure."""
from django import template
from django.utils.formats import number_format

register = template.Library()


@register.filter
def pct(value, digits=1):
    """0.1234 -> "12.3%"; None -> "—"."""
    if value is None:
        return "—"
    return f"{_rounded(float(value) * 100, digits)}%"


@register.filter
def num(value, digits=2):
    if value is None:
        return "—"
    return _rounded(float(value), digits)


def _rounded(value, digits):
    """Django's number_format cuts a float's decimals off (2/3 would read 66.6%): round first."""
    return number_format(round(value, int(digits)), int(digits))


@register.filter
def get(mapping, key):
    return (mapping or {}).get(key)


@register.filter
def step_rows(figures):
    """The rows of a first-wrong-step table from its figures (report.step_agreement's or the step
    report's): all answers, then per source, then per question, each {kind, key, and the figures}."""
    if not figures:
        return []
    rows = [{"kind": "all", "key": "all", **figures}]
    rows += [{"kind": "source", "key": key, **value} for key, value in (figures.get("by_source") or {}).items()]
    rows += [{"kind": "question", "key": key, **value} for key, value in (figures.get("by_question") or {}).items()]
    return rows
