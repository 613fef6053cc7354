"""Models of the error-geometry and step-surprisal study (app label `grading`).

Invariants:

- A run's segments are fixed when it starts (`GeometrySegment` rows: text, group, points, steps);
  nothing here is a response or a judge result, so metrics, the queue and exports cannot see it.
- A segment's vector is cached by (model, SHA-256 of its text) in `SegmentVector`, a step
  transition's log-probability figures by (model, SHA-256 of the prompt sent) in
  `TransitionScore`: a resumed, repeated or second run never asks the endpoint again for them.
- The run is a `AbstractRun` (status, epoch, size, chunk size, who, when) on grading/runs/engine.py, like
  ProbeRun; its analysis (`analysis_state`, `results`) is done once all segments have their
  data. Cancelling a run whose analysis is waiting or running stops the analysis too (status
  cancelled, analysis cancelled); resume analyses it again.
"""
from django.db import models
from django.utils.translation import gettext_lazy as _

from grading.judges.models import LlmEndpoint
from grading.runs.models import AbstractRun


class GeometryRun(AbstractRun):
    """One study: error-segment geometry (vectors) or step surprisal (log-probabilities)."""

    class Kind(models.TextChoices):
        GEOMETRY = "geometry", _("Error-segment geometry")
        SURPRISAL = "surprisal", _("Step surprisal")

    class Backend(models.TextChoices):
        LEXICAL = "lexical", _("Lexical baseline (no model)")
        SERVED = "served", _("Served model")

    class Analysis(models.TextChoices):
        WAITING = "", _("Waiting for data")
        RUNNING = "running", _("Analysing")
        DONE = "done", _("Analysed")
        FAILED = "failed", _("Analysis failed")
        CANCELLED = "cancelled", _("Analysis cancelled")

    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.GEOMETRY)
    backend = models.CharField(max_length=16, choices=Backend.choices, default=Backend.LEXICAL)
    endpoint = models.ForeignKey(LlmEndpoint, on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    model = models.CharField(max_length=200, blank=True)
    selection = models.JSONField(default=dict, blank=True, help_text="exam, unit, limit and source of the segments.")
    params = models.JSONField(default=dict, blank=True, help_text="seed, bootstrap, permutations, top-k, splitter.")
    seed = models.IntegerField(default=42)
    skipped = models.JSONField(default=dict, blank=True, help_text="Why answers or sub-questions gave no segment.")
    analysis_state = models.CharField(max_length=16, choices=Analysis.choices, default=Analysis.WAITING, blank=True)
    analysis_error = models.TextField(blank=True)
    analysed = models.DateTimeField(null=True, blank=True)
    results = models.JSONField(default=dict, blank=True, help_text="Every figure of the study (the JSON beside the figures).")

    class Meta(AbstractRun.Meta):
        app_label = "grading"  # the app label and tables stay grading's: no data moves

    def __str__(self):
        return f"{self.get_kind_display()} run {self.pk}"


class GeometrySegment(models.Model):
    """One error segment of a run (the run's piece of work): where points were lost, its steps,
    and, for a surprisal run, the figures of each step transition."""

    class State(models.TextChoices):
        PENDING = "pending", _("Pending")
        OK = "ok", _("Done")
        ERROR = "error", _("Call failed")

    class Unit(models.TextChoices):
        SUB_QUESTION = "sub_question", _("Sub-question below full points")
        STEP_LABEL = "step_label", _("Span an expert marked wrong")

    run = models.ForeignKey(GeometryRun, on_delete=models.CASCADE, related_name="items")
    response = models.ForeignKey("annotation.Response", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    sample_id = models.CharField(max_length=200, help_text="The answer's student id (or the imported sample_id).")
    question = models.TextField(blank=True, help_text="The question's statement.")
    question_key = models.CharField(max_length=64, help_text="The question's statement hash: the unit of the intervals.")
    sub_id = models.CharField(max_length=64, blank=True)
    unit = models.CharField(max_length=16, choices=Unit.choices, default=Unit.SUB_QUESTION)
    subset = models.CharField(max_length=16, help_text="human, synthetic or probe-derived (the paper's analysis_subset).")
    source = models.CharField(max_length=16, blank=True, help_text="human / synthetic / probe-derived / imported.")
    probe = models.CharField(max_length=40, blank=True, help_text="Probe-derived segments: the probe that made the error.")
    real_score = models.FloatField(null=True, blank=True)
    max_score = models.FloatField(null=True, blank=True)
    gold = models.FloatField(null=True, blank=True, help_text="The answer's gold score.")
    full_points = models.FloatField(null=True, blank=True, help_text="The question's full score.")
    text = models.TextField()
    text_hash = models.CharField(max_length=64, db_index=True)
    steps = models.JSONField(default=list, blank=True, help_text="[[start, end]] of each step in the text.")
    splitter = models.CharField(max_length=24, default="rule")
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)
    figures = models.JSONField(default=list, blank=True, help_text="Surprisal runs: one dict per step transition.")
    errors = models.JSONField(default=list, blank=True)
    claim_owner = models.CharField(max_length=120, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        app_label = "grading"  # the app label and tables stay grading's: no data moves
        ordering = ["run_id", "id"]
        indexes = [models.Index(fields=["run", "state"])]

    def __str__(self):
        return f"segment {self.pk} of run {self.run_id}"


class SegmentVector(models.Model):
    """A text's embedding by one model (float32 bytes), fetched once."""

    model = models.CharField(max_length=200)
    text_hash = models.CharField(max_length=64)
    dims = models.PositiveIntegerField()
    vector = models.BinaryField()
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "grading"  # the app label and tables stay grading's: no data moves
        constraints = [models.UniqueConstraint(fields=["model", "text_hash"], name="unique_segment_vector")]

    def __str__(self):
        return f"{self.model} vector of {self.text_hash[:12]}"


class TransitionScore(models.Model):
    """The surprisal and LL of one step given its context, by one model (prompt hashed), fetched once."""

    model = models.CharField(max_length=200)
    prompt_hash = models.CharField(max_length=64)
    figures = models.JSONField(default=dict)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "grading"  # the app label and tables stay grading's: no data moves
        constraints = [models.UniqueConstraint(fields=["model", "prompt_hash"], name="unique_transition_score")]

    def __str__(self):
        return f"{self.model} transition {self.prompt_hash[:12]}"


__all__ = ["GeometryRun", "GeometrySegment", "SegmentVector", "TransitionScore"]
