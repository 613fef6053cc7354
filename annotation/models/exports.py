"""Dataset exports run as background jobs; the finished file is kept for download."""
from django.conf import settings
from django.db import models


class ExportJob(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    format = models.CharField(max_length=16)
    filters = models.JSONField(default=dict, blank=True, help_text="Response-list filters of the selection.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED, db_index=True)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    file_name = models.CharField(max_length=300, blank=True, help_text="Zip file under EXPORT_ROOT.")
    file_size = models.PositiveBigIntegerField(default=0)
    manifest = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    finished = models.DateTimeField(null=True, blank=True)
    heartbeat = models.DateTimeField(
        null=True, blank=True, help_text="Last sign of life of the worker writing it (while running)."
    )
    attempt = models.PositiveIntegerField(
        default=0, help_text="Raised each time a worker takes the job; a worker writes only while it is current."
    )

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self):
        return f"{self.format} export #{self.pk} ({self.status})"

    @property
    def percent(self):
        if self.status == self.Status.DONE:
            return 100
        return int(100 * self.done / self.total) if self.total else 0
