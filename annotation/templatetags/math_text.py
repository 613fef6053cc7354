"""`{{ text|bare_math }}`: bare LaTeX in a statement or rubric delimited for KaTeX
(annotation.mathtext). The result is still escaped by the template like any text."""
from django import template

from annotation.mathtext import delimit_bare_latex

register = template.Library()


@register.filter
def bare_math(text):
    return delimit_bare_latex(str(text or ""))
