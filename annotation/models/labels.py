"""Expert labels. Judge output lives in the grading app, apart from these."""
from django.conf import settings
from django.db import models
from simple_history.models import HistoricalRecords

from .dataset import Response, RubricCheckpoint, SubQuestion


class Annotation(models.Model):
    """One expert's grading of one response.

    Imported gold labels have no annotator and carry their provenance instead.
    """

    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="annotations")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="annotations"
    )
    sub_scores = models.JSONField(default=dict, blank=True, help_text="Points per sub-question label.")
    total = models.DecimalField(max_digits=7, decimal_places=2, null=True, blank=True)
    comment = models.TextField(blank=True)
    submitted = models.BooleanField(default=False)
    submitted_at = models.DateTimeField(null=True, blank=True)
    is_imported = models.BooleanField(default=False)
    provenance = models.JSONField(default=dict, blank=True)
    version = models.PositiveIntegerField(default=1)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["response_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["response", "annotator"],
                condition=models.Q(annotator__isnull=False),
                name="one_annotation_per_annotator",
            ),
            models.UniqueConstraint(
                fields=["response"], condition=models.Q(is_imported=True), name="one_imported_annotation"
            ),
        ]

    def __str__(self):
        who = self.annotator or "imported"
        return f"{who} on response {self.response_id}: {self.total}"


class StepLabel(models.Model):
    class Verdict(models.TextChoices):
        CORRECT = "correct", "Correct"
        CALCULATION = "calculation_error", "Calculation error"
        LOGICAL_GAP = "logical_gap", "Logical gap"
        MISSING_STEP = "missing_step", "Missing step"
        UNJUSTIFIED = "unjustified_claim", "Unjustified claim"
        OTHER = "other", "Other"

    annotation = models.ForeignKey(Annotation, on_delete=models.CASCADE, related_name="step_labels")
    checkpoint = models.ForeignKey(RubricCheckpoint, on_delete=models.SET_NULL, null=True, blank=True)
    sub_question = models.ForeignKey(SubQuestion, on_delete=models.SET_NULL, null=True, blank=True)
    start = models.PositiveIntegerField(null=True, blank=True, help_text="Span start in the transcript.")
    end = models.PositiveIntegerField(null=True, blank=True)
    quote = models.TextField(blank=True)
    verdict = models.CharField(max_length=32, choices=Verdict.choices, default=Verdict.CORRECT)
    awarded_points = models.DecimalField(max_digits=7, decimal_places=2, null=True, blank=True)
    comment = models.TextField(blank=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["annotation_id", "start", "id"]

    def __str__(self):
        return f"{self.get_verdict_display()} [{self.start}:{self.end}]"
