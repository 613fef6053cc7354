"""The abstract base of every run of LLM calls (no table of its own: no migration)."""
from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy


class AbstractRun(models.Model):
    """What every run of LLM calls in Celery chunks has (judge, generation, probe,
    meta-evaluation and geometry runs; grading/runs/engine.py is their one engine): a status, an epoch raised by
    each resume, its size and chunk size, who started it and when it was resumed and finished.
    Abstract: each run keeps its own table."""

    class Status(models.TextChoices):
        RUNNING = "running", gettext_lazy("Running")
        CANCELLED = "cancelled", gettext_lazy("Cancelled")
        DONE = "done", gettext_lazy("Done")

    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING, db_index=True)
    epoch = models.PositiveIntegerField(
        default=1, help_text=gettext_lazy("Raised by each resume; tasks queued for an older epoch do nothing.")
    )
    n_items = models.PositiveIntegerField(default=0)
    chunk_size = models.PositiveIntegerField(default=16)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    resumed = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    # The seconds the epochs before the last resume took (each from its start to its cancel, or to
    # the resume of a stalled epoch): the run's elapsed time is this plus the current epoch's.
    earlier_seconds = models.FloatField(default=0)

    class Meta:
        abstract = True
        ordering = ["-created", "-id"]
