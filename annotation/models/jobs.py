"""What every background job of the dataset (export, import) has: a status, an error, who
started it and when it ended, and its progress as a percentage of `done` out of `total`
(each job kind declares those two counters in its own unit: responses or bytes)."""
from django.conf import settings
from django.db import models
from django.utils.translation import gettext, gettext_lazy


class BackgroundJob(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", gettext_lazy("Queued")
        RUNNING = "running", gettext_lazy("Running")
        DONE = "done", gettext_lazy("Done")
        FAILED = "failed", gettext_lazy("Failed")

    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED, db_index=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True
        ordering = ["-created", "-id"]

    @property
    def restart_notice(self):
        """What the job's page says of a job started again after its worker stopped (the stale
        checks re-queue it, services.fail_stale_jobs), or "". Needs the job kind's `attempt`."""
        attempt = getattr(self, "attempt", 0)
        shown = attempt + 1 if self.status == self.Status.QUEUED else attempt  # queued: the next take's number
        if shown < 2:
            return ""
        return gettext("Restarted automatically after the worker stopped: attempt %(attempt)s of %(max)s.") % {
            "attempt": shown, "max": max(shown, settings.JOB_MAX_ATTEMPTS)}

    @property
    def percent(self):
        if self.status == self.Status.DONE:
            return 100
        return int(100 * self.done / self.total) if self.total else 0
