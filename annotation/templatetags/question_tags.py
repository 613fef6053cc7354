"""`{{ question|question_choice }}`: how a question is named in a picker: its exam, its label and
the start of its statement, so two questions labelled "3-16" in two exams are told apart."""
from django import template

register = template.Library()

SNIPPET = 48


def snippet(text, length=SNIPPET):
    text = str(text or "").strip()  # as stored (a page check matches it against the data)
    return text if len(text) <= length else text[: length - 1].rstrip() + "…"


@register.filter
def question_choice(question):
    label = question.location or question.external_id or f"#{question.pk}"
    exam = getattr(getattr(question, "exam", None), "name", "")
    text = getattr(question, "snippet", None)
    text = snippet(question.statement if text is None else text)
    return " · ".join(part for part in (exam, label) if part) + (f" — {text}" if text else "")
