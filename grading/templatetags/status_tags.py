"""`status_label`: the name of a run's, job's or result's state code in the interface language
(for pages that hold the code itself, as progress dicts do; models have get_status_display)."""
from django import template
from django.utils.translation import gettext_lazy

from annotation.models import Response

from .. import labels
from ..judges.selectors import run_note_text

register = template.Library()

STATUS_LABELS = {
    "queued": gettext_lazy("Queued"), "running": gettext_lazy("Running"), "done": gettext_lazy("Done"),
    "failed": gettext_lazy("Failed"), "cancelled": gettext_lazy("Cancelled"), "pending": gettext_lazy("Pending"),
    "ok": gettext_lazy("OK"), "invalid": gettext_lazy("Invalid output"), "error": gettext_lazy("Call failed"),
    # a provider's batch (the Batch API: grading.JudgeBatchPart.Status)
    "new": gettext_lazy("Not uploaded yet"), "validating": gettext_lazy("Validating"),
    "in_progress": gettext_lazy("In progress"), "finalizing": gettext_lazy("Finalizing"),
    "completed": gettext_lazy("Completed"), "expired": gettext_lazy("Expired"), "cancelling": gettext_lazy("Cancelling"),
}


@register.filter
def status_label(code):
    return STATUS_LABELS.get(code, code)


@register.filter
def source_label(code):
    """"human" / "synthetic" (a response's source, a study's group) as people read it."""
    return dict(Response.Source.choices).get(code) or labels.label("source", code)


@register.filter
def run_note(note):
    """A judge run's note in the reader's language when the app wrote it (a rubric re-judge)."""
    return run_note_text(note)


@register.filter
def code_label(code, group):
    """The name of a code (a judge kind, source, probe, strategy, split rule, attribution tag) in
    the reader's language: `{{ r.tag|code_label:"attribution" }}` (grading/labels.py)."""
    return labels.label(group, code)
