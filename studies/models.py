"""Judge studies: perturbation probes and OCR-vs-judge attribution.

Invariants:

- A derived answer (`DerivedAnswer`) is never an `annotation.Response`: it hangs off its
  original response, so it cannot reach judge-vs-human metrics, the disagreement queue or
  dataset exports, which all read Response and JudgeResult rows only.
- Judgements of derived text live on `ProbeItem` (never as JudgeResult rows). The original's
  judgement is an existing JudgeResult of the same setting version when one exists for the
  response's current text; otherwise it is made for the study and kept on the item only.
- A derived answer is immutable: keyed by (response, probe, seed, hash of the original text);
  a changed transcript gives a new derived answer.
"""
from django.db import models
from django.utils.translation import gettext_lazy

from grading.judges.models import JudgeResult, JudgeSetting
from grading.runs.models import AbstractRun

# Django imports studies.models only: this registers the geometry study's models too.
from .geometry.models import GeometryRun, GeometrySegment, SegmentVector, TransitionScore  # noqa: F401

PROBE_CHOICES = [
    ("drop-final-answer", gettext_lazy("Drop the final answer")),
    ("arithmetic-slip", gettext_lazy("Arithmetic slip")),
    ("truncate-last-step", gettext_lazy("Truncate the last step")),
    ("notation-swap", gettext_lazy("Notation swap")),
    ("reorder-independent-steps", gettext_lazy("Reorder independent steps")),
    ("raw-ocr", gettext_lazy("Raw OCR text")),
    ("style-rewrite", gettext_lazy("Textbook-style rewrite (style ablation)")),
]


class ProbeRun(AbstractRun):
    """One judge setting version applied to derived answers (probes) or raw OCR texts."""

    setting = models.ForeignKey(JudgeSetting, on_delete=models.PROTECT, related_name="probe_runs")
    probes = models.JSONField(default=list, help_text=gettext_lazy("Probe names (or raw-ocr)."))
    selection = models.JSONField(default=dict, blank=True, help_text=gettext_lazy("exam, question and limit used."))
    seed = models.IntegerField(default=0)
    skipped = models.JSONField(default=dict, blank=True, help_text=gettext_lazy("Answers each probe could not apply to."))

    class Meta(AbstractRun.Meta):
        app_label = "grading"  # the app label and tables stay grading's: no data moves

    def __str__(self):
        return f"Probe run {self.pk} of {self.setting}"


class DerivedAnswer(models.Model):
    """A changed copy of a response's text (a probe's output, or the raw OCR text)."""

    response = models.ForeignKey("annotation.Response", on_delete=models.CASCADE, related_name="derived_answers")
    probe = models.CharField(max_length=40, choices=PROBE_CHOICES)
    seed = models.IntegerField(default=0)
    source_hash = models.CharField(max_length=64, help_text=gettext_lazy("SHA-256 of the original text it was made from."))
    original_text = models.TextField(blank=True)
    text = models.TextField()
    change = models.JSONField(default=dict, blank=True, help_text=gettext_lazy("What the probe changed."))
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "grading"  # the app label and tables stay grading's: no data moves
        ordering = ["response_id", "probe", "id"]
        constraints = [
            models.UniqueConstraint(fields=["response", "probe", "seed", "source_hash"], name="unique_derived_answer"),
        ]

    def __str__(self):
        return f"{self.probe} of response {self.response_id}"


class ProbeItem(models.Model):
    """One derived answer of a run: the original's and the derived text's judgements."""

    class State(models.TextChoices):
        PENDING = "pending", gettext_lazy("Pending")
        OK = "ok", gettext_lazy("Judged")
        INVALID = "invalid", gettext_lazy("Invalid output")
        ERROR = "error", gettext_lazy("Call failed")

    run = models.ForeignKey(ProbeRun, on_delete=models.CASCADE, related_name="items")
    derived = models.ForeignKey(DerivedAnswer, on_delete=models.CASCADE, related_name="items")
    probe = models.CharField(max_length=40, choices=PROBE_CHOICES)
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)
    original_result = models.ForeignKey(
        JudgeResult, on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
        help_text=gettext_lazy("The existing judge result reused for the original, if any."),
    )
    original_key = models.CharField(max_length=64, blank=True)
    original_status = models.CharField(max_length=16, blank=True)
    original_score = models.FloatField(null=True, blank=True)
    original_output = models.TextField(blank=True)
    derived_key = models.CharField(max_length=64, blank=True)
    derived_status = models.CharField(max_length=16, blank=True)
    derived_score = models.FloatField(null=True, blank=True)
    derived_output = models.TextField(blank=True)
    errors = models.JSONField(default=list, blank=True)
    claim_owner = models.CharField(max_length=120, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        app_label = "grading"  # the app label and tables stay grading's: no data moves
        ordering = ["run_id", "id"]
        constraints = [models.UniqueConstraint(fields=["run", "derived"], name="unique_probe_item")]
        indexes = [models.Index(fields=["run", "state"]), models.Index(fields=["derived_key"]),
                   models.Index(fields=["original_key"])]

    def __str__(self):
        return f"{self.probe} item {self.pk} of run {self.run_id}"


__all__ = ["ProbeRun", "DerivedAnswer", "ProbeItem", "PROBE_CHOICES"]
