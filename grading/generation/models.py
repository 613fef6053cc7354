"""Synthetic answer generation runs and their items (app label `grading`: re-exported by
grading/models/__init__.py, tables and migrations unchanged)."""
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy

from ..judges.models import LlmEndpoint
from ..runs.models import AbstractRun


class GenerationRun(AbstractRun):
    """Synthetic answers: every selected question × model × temperature, `per_cell` times."""

    name = models.CharField(max_length=200, blank=True)
    endpoint = models.ForeignKey(LlmEndpoint, on_delete=models.PROTECT, related_name="generation_runs")
    model_names = models.JSONField(default=list, help_text=gettext_lazy("Model names."))
    temperatures = models.JSONField(default=list, help_text=gettext_lazy("Temperatures, e.g. [0, 0.5, 1]."))
    per_cell = models.PositiveSmallIntegerField(default=1, validators=[MinValueValidator(1), MaxValueValidator(100)])
    system_prompt = models.TextField(blank=True)
    prompt_template = models.TextField()
    max_tokens = models.PositiveIntegerField(default=4096, null=True, blank=True)
    selection = models.JSONField(default=dict, blank=True, help_text=gettext_lazy("Question filters used."))
    price_input_per_1k = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    price_output_per_1k = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    chunk_size = models.PositiveIntegerField(default=8)

    def __str__(self):
        return self.name or f"Generation run {self.pk}"


class GenerationItem(models.Model):
    """One synthetic answer to write: a question, a model, a temperature and an index."""

    class State(models.TextChoices):
        PENDING = "pending", gettext_lazy("Pending")
        OK = "ok", gettext_lazy("Written")
        ERROR = "error", gettext_lazy("Call failed")

    run = models.ForeignKey(GenerationRun, on_delete=models.CASCADE, related_name="items")
    question = models.ForeignKey("annotation.Question", on_delete=models.CASCADE, related_name="+")
    model = models.CharField(max_length=200)
    temperature = models.FloatField()
    index = models.PositiveIntegerField()
    student_id = models.CharField(max_length=200)
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)
    response = models.ForeignKey("annotation.Response", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=14, decimal_places=6, default=0)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    errors = models.JSONField(default=list, blank=True)
    claim_owner = models.CharField(max_length=120, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run_id", "id"]
        constraints = [
            models.UniqueConstraint(fields=["run", "question", "model", "temperature", "index"], name="unique_generation_item"),
        ]
        indexes = [models.Index(fields=["run", "state"])]

    def __str__(self):
        return self.student_id or f"generation item {self.pk}"


__all__ = ["GenerationRun", "GenerationItem"]
