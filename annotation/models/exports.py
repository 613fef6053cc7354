"""Dataset exports run as background jobs; the finished file is kept for download."""
from django.db import models
from django.utils.translation import gettext_lazy

from .jobs import BackgroundJob


class ExportJob(BackgroundJob):
    format = models.CharField(max_length=16)
    filters = models.JSONField(default=dict, blank=True, help_text=gettext_lazy("Response-list filters of the selection."))
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    file_name = models.CharField(max_length=300, blank=True, help_text=gettext_lazy("Zip file under EXPORT_ROOT."))
    file_size = models.PositiveBigIntegerField(default=0)
    manifest = models.JSONField(default=dict, blank=True)
    heartbeat = models.DateTimeField(
        null=True, blank=True, help_text=gettext_lazy("Last sign of life of the worker writing it (while running).")
    )
    attempt = models.PositiveIntegerField(
        default=0, help_text=gettext_lazy("Raised each time a worker takes the job; a worker writes only while it is current.")
    )

    class Meta(BackgroundJob.Meta):
        pass

    def __str__(self):
        return f"{self.format} export #{self.pk} ({self.status})"
