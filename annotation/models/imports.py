"""Dataset imports of large files run as background jobs, with their progress."""
from django.db import models
from django.utils.translation import gettext_lazy

from .jobs import BackgroundJob


class ImportJob(BackgroundJob):
    """An import of an uploaded file run by a worker (large files), with its progress."""

    format = models.CharField(max_length=16)
    file_name = models.CharField(max_length=500, help_text=gettext_lazy("Name of the uploaded file."))
    stored_name = models.CharField(max_length=300, help_text=gettext_lazy("The upload under IMPORT_ROOT until the job ends."))
    file_size = models.PositiveBigIntegerField(default=0)
    exam_name = models.CharField(max_length=200, blank=True)
    done = models.PositiveBigIntegerField(default=0, help_text=gettext_lazy("Bytes of the file read so far."))
    total = models.PositiveBigIntegerField(default=0, help_text=gettext_lazy("Bytes of the file."))
    report = models.ForeignKey("annotation.ImportReport", on_delete=models.SET_NULL, null=True, blank=True)
    written = models.JSONField(
        default=dict, blank=True,
        help_text="{table: [[after, up to], ...]}: the rows its committed batches wrote (SQLite), removed if it fails.",
    )

    attempt = models.PositiveIntegerField(
        default=0, help_text=gettext_lazy("Raised each time a worker takes the job; a worker writes only while it is current.")
    )

    class Meta(BackgroundJob.Meta):
        pass

    def __str__(self):
        return f"{self.format} import #{self.pk} of {self.file_name} ({self.status})"
