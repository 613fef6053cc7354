"""Judge-vs-human review: meta-evaluation of disagreements and expert validation of step judges.

A MetaEvaluation says why one judge result and the expert gold differ (category A-E, see
grading.review.meta_eval). Proposals of the LLM meta-evaluator are kept in their own rows
(MetaEvalProposal), apart from the confirmed label, so that one can count how often the
expert kept the machine's proposal.
"""
from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy
from simple_history.models import HistoricalRecords

from grading.judges.models import JudgeResult, LlmEndpoint
from grading.review.meta_eval import CATEGORY_CHOICES
from grading.runs.models import AbstractRun


class Direction(models.TextChoices):
    NONE = "", "—"
    OVER = "over", gettext_lazy("Judge over-scored")
    UNDER = "under", gettext_lazy("Judge under-scored")


class MetaEvalRun(AbstractRun):
    """One pass of the LLM meta-evaluator over a disagreement queue (a Celery job)."""

    endpoint = models.ForeignKey(LlmEndpoint, on_delete=models.PROTECT, related_name="meta_eval_runs")
    model = models.CharField(max_length=200)
    temperature = models.FloatField(null=True, blank=True, default=0.0)
    max_tokens = models.PositiveIntegerField(null=True, blank=True, default=2048)
    prompt_version = models.CharField(max_length=32)
    selection = models.JSONField(default=dict, blank=True, help_text=gettext_lazy("Queue filters: setting, run, threshold."))
    result_ids = models.JSONField(default=list, blank=True, help_text=gettext_lazy("The judge results the run asks about."))
    chunk_size = models.PositiveIntegerField(default=8)

    def __str__(self):
        return f"Meta-evaluation run {self.pk} ({self.model})"


class MetaEvaluation(models.Model):
    """Why a judge result and the gold differ: one category and an analysis, per judge result.

    `category` is blank until a person (or an import of released labels) confirms one; the
    LLM's suggestion is `proposal`, never written into `category` by the machine. `judge_score`
    and `gold_score` record what the label was given against (gold can change later).
    """

    class Source(models.TextChoices):
        LLM = "llm", gettext_lazy("LLM proposal, confirmed by a person")
        PERSON = "person", gettext_lazy("A person")
        IMPORT = "import", gettext_lazy("Imported label")

    result = models.OneToOneField(JudgeResult, on_delete=models.CASCADE, related_name="meta_evaluation")
    category = models.CharField(max_length=1, choices=CATEGORY_CHOICES, blank=True, db_index=True)
    analysis = models.TextField(blank=True)
    is_ood = models.BooleanField(default=False)
    direction = models.CharField(max_length=8, choices=Direction.choices, blank=True)
    judge_score = models.FloatField(null=True, blank=True)
    gold_score = models.FloatField(null=True, blank=True)
    proposed_by = models.CharField(max_length=8, choices=Source.choices, default=Source.PERSON)
    proposal = models.ForeignKey(
        "MetaEvalProposal", on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
        help_text=gettext_lazy("The LLM proposal the reviewer saw (latest usable one)."),
    )
    kept_proposal = models.BooleanField(
        null=True, blank=True, help_text=gettext_lazy("Confirmed category equals the LLM's; empty when there was no proposal.")
    )
    confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    confirmed_at = models.DateTimeField(null=True, blank=True)
    provenance = models.JSONField(default=dict, blank=True, help_text=gettext_lazy("For imported labels: file and record."))
    version = models.PositiveIntegerField(default=0, help_text=gettext_lazy("Grows on every confirmation; stale saves are refused."))
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["result_id"]

    def __str__(self):
        return f"{self.category or '?'} on judge result {self.result_id}"

    @property
    def confirmed(self):
        return bool(self.category)


class MetaEvalProposal(models.Model):
    """What the LLM meta-evaluator answered for one judge result, raw output included."""

    class Status(models.TextChoices):
        OK = "ok", gettext_lazy("OK")
        INVALID = "invalid", gettext_lazy("Unreadable output")
        ERROR = "error", gettext_lazy("Call failed")

    meta_evaluation = models.ForeignKey(MetaEvaluation, on_delete=models.CASCADE, related_name="proposals")
    run = models.ForeignKey(MetaEvalRun, on_delete=models.SET_NULL, null=True, blank=True, related_name="proposals")
    model = models.CharField(max_length=200, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices)
    category = models.CharField(max_length=1, choices=CATEGORY_CHOICES, blank=True)
    analysis = models.TextField(blank=True)
    is_ood = models.BooleanField(default=False)
    data = models.JSONField(default=dict, blank=True, help_text=gettext_lazy("The parsed JSON answer."))
    raw_output = models.TextField(blank=True)
    error = models.TextField(blank=True)
    errors = models.JSONField(default=list, blank=True, help_text=gettext_lazy("Failed call attempts."))
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["meta_evaluation_id", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "meta_evaluation"], condition=models.Q(run__isnull=False), name="one_proposal_per_run"
            )
        ]

    def __str__(self):
        return f"{self.category or self.status} proposed for {self.meta_evaluation_id}"


class StepJudgeValidation(models.Model):
    """An expert's word on one step-judge verdict (IneqMath): was the judge right?"""

    result = models.OneToOneField(JudgeResult, on_delete=models.CASCADE, related_name="validation")
    judge_says_pass = models.BooleanField(help_text=gettext_lazy("The verdict judged (a snapshot of the result's score)."))
    verdict_right = models.BooleanField()
    note = models.TextField(blank=True)
    validated_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    validated_at = models.DateTimeField(auto_now=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["result_id"]

    def __str__(self):
        return f"{'right' if self.verdict_right else 'wrong'} verdict on {self.result_id}"


__all__ = ["Direction", "MetaEvalRun", "MetaEvaluation", "MetaEvalProposal", "StepJudgeValidation"]
