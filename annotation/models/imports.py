"""Dataset imports of large files run as background jobs, with their progress."""
from django.conf import settings
from django.db import models


class ImportJob(models.Model):
    """An import of an uploaded file run by a worker (large files), with its progress."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    format = models.CharField(max_length=16)
    file_name = models.CharField(max_length=500, help_text="Name of the uploaded file.")
    stored_name = models.CharField(max_length=300, help_text="The upload under IMPORT_ROOT until the job ends.")
    file_size = models.PositiveBigIntegerField(default=0)
    exam_name = models.CharField(max_length=200, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED, db_index=True)
    done = models.PositiveBigIntegerField(default=0, help_text="Bytes of the file read so far.")
    total = models.PositiveBigIntegerField(default=0, help_text="Bytes of the file.")
    error = models.TextField(blank=True)
    report = models.ForeignKey("annotation.ImportReport", on_delete=models.SET_NULL, null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self):
        return f"{self.format} import #{self.pk} of {self.file_name} ({self.status})"

    @property
    def percent(self):
        if self.status == self.Status.DONE:
            return 100
        return int(100 * self.done / self.total) if self.total else 0
