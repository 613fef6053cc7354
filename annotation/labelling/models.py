"""Expert labels, their assignment, drafts, save log and adjudication.

Judge output lives in the grading app, apart from these.
"""
from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy
from simple_history.models import HistoricalRecords

from annotation.models.dataset import Response, RubricCheckpoint, SubQuestion

IMPORTED_RATER = "(imported)"  # never a username: those cannot contain brackets


class Label(models.Model):
    """One expert's grading of one response.

    Imported gold labels have no annotator and carry their provenance instead.
    `version` grows by one on every accepted save; a save based on an older version is refused.
    """

    class Mark(models.TextChoices):
        REACHED = "reached", gettext_lazy("Reached")
        PARTLY = "partly", gettext_lazy("Partly reached")
        NOT_REACHED = "not_reached", gettext_lazy("Not reached")

    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="labels")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="labels"
    )
    sub_scores = models.JSONField(default=dict, blank=True, help_text=gettext_lazy("Points per sub-question label."))
    total = models.DecimalField(max_digits=7, decimal_places=2, null=True, blank=True)
    checkpoint_marks = models.JSONField(
        default=dict, blank=True, help_text=gettext_lazy("{checkpoint id: reached | partly | not_reached}.")
    )
    override_reason = models.TextField(
        blank=True, help_text=gettext_lazy("Why the points differ from what the marked checkpoints propose.")
    )
    comment = models.TextField(blank=True)
    transcript_hash = models.CharField(
        max_length=64, blank=True, help_text=gettext_lazy("The transcript the step-label offsets refer to.")
    )
    submitted = models.BooleanField(default=False)
    submitted_at = models.DateTimeField(null=True, blank=True)
    is_imported = models.BooleanField(default=False)
    provenance = models.JSONField(default=dict, blank=True)
    version = models.PositiveIntegerField(default=1)
    anchoring = models.JSONField(
        default=dict, blank=True,
        help_text=gettext_lazy("Anchoring experiment, recorded on submission: {shown, score, setting, result, seed}; "
                  "empty when the exam runs no experiment."),
    )
    active_seconds = models.PositiveIntegerField(
        default=0, help_text=gettext_lazy("Active time its annotator spent on it: seconds with the page focused and input "
                             "in the last minute, measured in the browser, summed from bounded increments."),
    )
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["response_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["response", "annotator"],
                condition=models.Q(annotator__isnull=False),
                name="one_label_per_annotator",
            ),
            models.UniqueConstraint(
                fields=["response"], condition=models.Q(is_imported=True), name="one_imported_label"
            ),
        ]

    def __str__(self):
        who = self.annotator or "imported"
        return f"{who} on response {self.response_id}: {self.total}"

    @property
    def rater_name(self):
        return IMPORTED_RATER if self.is_imported else (self.annotator.username if self.annotator else "?")


class StepLabel(models.Model):
    """A verdict on a span of the transcript. Offsets count Unicode code points of the raw text;
    the quote with its prefix and suffix finds the span again after a correction
    (annotation.quote_anchors)."""

    class Verdict(models.TextChoices):
        CORRECT = "correct", gettext_lazy("Correct")
        CALCULATION = "calculation_error", gettext_lazy("Calculation error")
        LOGICAL_GAP = "logical_gap", gettext_lazy("Logical gap")
        MISSING_STEP = "missing_step", gettext_lazy("Missing step")
        UNJUSTIFIED = "unjustified_claim", gettext_lazy("Unjustified claim")
        OTHER = "other", gettext_lazy("Other")

    label = models.ForeignKey(Label, on_delete=models.CASCADE, related_name="step_labels")
    checkpoint = models.ForeignKey(RubricCheckpoint, on_delete=models.SET_NULL, null=True, blank=True)
    sub_question = models.ForeignKey(SubQuestion, on_delete=models.SET_NULL, null=True, blank=True)
    start = models.PositiveIntegerField(null=True, blank=True, help_text=gettext_lazy("Span start in the transcript."))
    end = models.PositiveIntegerField(null=True, blank=True)
    quote = models.TextField(blank=True, help_text=gettext_lazy("The labelled text (W3C TextQuoteSelector exact)."))
    prefix = models.TextField(blank=True, help_text=gettext_lazy("Text just before the quote, to find it again after a correction."))
    suffix = models.TextField(blank=True, help_text=gettext_lazy("Text just after the quote."))
    needs_review = models.BooleanField(
        default=False,
        help_text=gettext_lazy("A transcript correction removed the quote or made it ambiguous: start/end are the old place."),
    )
    verdict = models.CharField(max_length=32, choices=Verdict.choices, default=Verdict.CORRECT)
    awarded_points = models.DecimalField(max_digits=7, decimal_places=2, null=True, blank=True)
    comment = models.TextField(blank=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["label_id", "start", "id"]

    def __str__(self):
        return f"{self.get_verdict_display()} [{self.start}:{self.end}]"


class LabelDraft(models.Model):
    """Autosaved, unsaved work of one person on one response's label (one per person and response)."""

    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="label_drafts")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="label_drafts")
    label = models.ForeignKey(
        Label, on_delete=models.CASCADE, null=True, blank=True, related_name="drafts",
        help_text=gettext_lazy("The label being edited, when it exists (a reviewer may edit someone else's)."),
    )
    base_version = models.PositiveIntegerField(default=0, help_text=gettext_lazy("Label version the draft started from."))
    payload = models.JSONField(default=dict)
    active_seconds = models.PositiveIntegerField(
        default=0, help_text=gettext_lazy("Active time gathered while drafting; moves to the label when it is saved.")
    )
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["response", "user"], name="one_label_draft_per_user")]

    def __str__(self):
        return f"draft of {self.user_id} on response {self.response_id}"


class LabelSaveAttempt(models.Model):
    """Every attempt to save a label, accepted or refused: the history shows both outcomes."""

    class Outcome(models.TextChoices):
        SAVED = "saved", gettext_lazy("Saved")
        CONFLICT = "conflict", gettext_lazy("Refused: stale version")
        INVALID = "invalid", gettext_lazy("Refused: invalid")
        FORBIDDEN = "forbidden", gettext_lazy("Refused: not allowed")

    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="label_save_attempts")
    label = models.ForeignKey(
        Label, on_delete=models.CASCADE, null=True, blank=True, related_name="save_attempts"
    )
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    submit = models.BooleanField(default=False)
    base_version = models.PositiveIntegerField()
    found_version = models.PositiveIntegerField(null=True, blank=True, help_text=gettext_lazy("Version in the database then."))
    new_version = models.PositiveIntegerField(null=True, blank=True)
    outcome = models.CharField(max_length=16, choices=Outcome.choices)
    detail = models.TextField(blank=True)
    payload = models.JSONField(default=dict, blank=True, help_text=gettext_lazy("What was sent."))
    created = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created", "-id"]
        indexes = [models.Index(fields=["label", "created"]), models.Index(fields=["response", "created"])]

    def __str__(self):
        return f"{self.get_outcome_display()} by {self.user_id} on response {self.response_id}"


class Assignment(models.Model):
    """A request for one label of one response.

    With an annotator it is that person's work; without one it is an open slot that the first
    annotator to press "next" claims. A claim holds a lock (`lock_holder` until `lock_expires`)
    so that two people never work on the same slot; an unstarted open slot whose lock expired
    goes back to the pool.
    """

    class Strategy(models.TextChoices):
        ROUND_ROBIN = "round_robin", gettext_lazy("Round-robin")
        LEAST_LOADED = "least_loaded", gettext_lazy("Least loaded")
        OPEN = "open", gettext_lazy("Open pool (first come)")

    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, null=True, blank=True, related_name="assignments"
    )
    strategy = models.CharField(max_length=16, choices=Strategy.choices, default=Strategy.ROUND_ROBIN)
    assigned_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created = models.DateTimeField(auto_now_add=True)
    lock_holder = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    lock_expires = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["response_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["response", "annotator"],
                condition=models.Q(annotator__isnull=False),
                name="one_assignment_per_annotator",
            )
        ]
        indexes = [
            models.Index(fields=["annotator", "completed_at", "response"]),
            models.Index(fields=["annotator", "response"]),
            models.Index(fields=["lock_holder", "lock_expires"]),
        ]

    def __str__(self):
        return f"response {self.response_id} for {self.annotator_id or 'anyone'}"


class Adjudication(models.Model):
    """A reviewer's decision on the gold score of a response whose labels disagree."""

    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="adjudications")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    gold_score = models.DecimalField(max_digits=7, decimal_places=2)
    reason = models.TextField(blank=True)
    chosen_label = models.ForeignKey(
        Label, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    previous_gold_score = models.DecimalField(max_digits=7, decimal_places=2, null=True, blank=True)
    previous_gold_status = models.CharField(max_length=16, blank=True)
    label_totals = models.JSONField(default=dict, help_text=gettext_lazy("{rater: total} as the reviewer saw them."))
    sub_scores = models.JSONField(
        default=dict, blank=True,
        help_text="{sub-question: points} of the gold: the reviewer's own, or the picked label's breakdown.",
    )
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self):
        return f"gold {self.gold_score} for response {self.response_id}"


class LabelSummary(models.Model):
    """The spread of a response's submitted labels (imported gold included), kept up to date on
    every submission so the adjudication queue is an index lookup, not a scan of all labels."""

    response = models.OneToOneField(Response, on_delete=models.CASCADE, primary_key=True, related_name="label_summary")
    n_labels = models.PositiveIntegerField(default=0)
    low = models.DecimalField(max_digits=7, decimal_places=2, null=True, blank=True)
    high = models.DecimalField(max_digits=7, decimal_places=2, null=True, blank=True)
    spread = models.DecimalField(max_digits=7, decimal_places=2, default=0)
    adjudicated = models.BooleanField(default=False)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["adjudicated", "spread"])]

    def __str__(self):
        return f"response {self.response_id}: {self.n_labels} labels, spread {self.spread}"
