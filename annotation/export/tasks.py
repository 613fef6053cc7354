"""Celery tasks of the annotation app (thin wrappers around services). The services import this
module to queue its tasks, so each task imports its service inside its body (no import cycle)."""
from celery import shared_task


@shared_task(name="annotation.run_export_job", acks_late=True)
def run_export_job_task(job_id):
    from . import services  # cycle: services queue this task

    services.run_export_job(job_id)


@shared_task(name="annotation.fail_stale_export_jobs", ignore_result=True)
def fail_stale_export_jobs_task():
    """Periodic (``CELERY_BEAT_SCHEDULE``): exports whose worker died are queued again (a bounded
    number of times, JOB_MAX_ATTEMPTS), then marked failed, so that no page or API read has to write."""
    from . import services  # cycle: services queue this module's tasks

    services.fail_stale_jobs()
