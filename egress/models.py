"""One row per HTTP request sent to a provider: where it went, what for, about which answers, how big.

Never the content: no prompt, image or answer text is stored here (llm.observe).
"""
from django.db import models
from django.utils.translation import gettext_lazy

from . import purposes


class ProviderCall(models.Model):
    host = models.CharField(max_length=255, db_index=True, help_text=gettext_lazy("Host (and port) the request went to."))
    method = models.CharField(max_length=10)
    path = models.CharField(max_length=500, help_text=gettext_lazy("The URL's path, without its query."))
    purpose = models.CharField(max_length=40, blank=True, db_index=True, choices=purposes.CHOICES)
    answer_ids = models.JSONField(default=list, blank=True, help_text=gettext_lazy("Ids of the responses the call is about."))
    page_ids = models.JSONField(default=list, blank=True, help_text=gettext_lazy("Ids of the scanned pages the call is about."))
    bytes_sent = models.PositiveBigIntegerField(default=0)
    bytes_received = models.PositiveBigIntegerField(default=0)
    status = models.PositiveIntegerField(default=0, help_text=gettext_lazy("HTTP status; 0 when no answer came."))
    error = models.CharField(max_length=100, blank=True, help_text=gettext_lazy("Why the request failed, when it did."))
    started = models.DateTimeField(db_index=True)
    duration_ms = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-started", "-id"]
        verbose_name = gettext_lazy("provider call")
        verbose_name_plural = gettext_lazy("provider calls")

    def __str__(self):
        return f"{self.method} {self.host}{self.path} ({self.purpose or 'unlabelled'})"
