"""Dataset exports run as background jobs; the finished file is kept for download."""
from django.db import models

from annotation.models.jobs import BackgroundJob


class ExportJob(BackgroundJob):
    format = models.CharField(max_length=16)
    filters = models.JSONField(default=dict, blank=True, help_text="Response-list filters of the selection.")
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    file_name = models.CharField(max_length=300, blank=True, help_text="Zip file under EXPORT_ROOT.")
    file_size = models.PositiveBigIntegerField(default=0)
    manifest = models.JSONField(default=dict, blank=True)
    heartbeat = models.DateTimeField(
        null=True, blank=True, help_text="Last sign of life of the worker writing it (while running)."
    )
    attempt = models.PositiveIntegerField(
        default=0, help_text="Raised each time a worker takes the job; a worker writes only while it is current."
    )

    class Meta(BackgroundJob.Meta):
        pass

    def __str__(self):
        return f"{self.format} export #{self.pk} ({self.status})"
