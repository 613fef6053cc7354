"""Celery tasks of dataset imports (thin wrappers around services). The services import this
module to queue its task, so the task imports them inside its body (no import cycle)."""
from celery import shared_task


@shared_task(name="annotation.run_import_job", acks_late=True, bind=True)
def run_import_job_task(self, job_id):
    from . import services  # cycle: services queue this task

    # In a worker, at a lower CPU priority (IMPORT_NICE); an eager task (tests) in this thread.
    services.run_import_job(job_id, low_priority=not self.request.is_eager)


@shared_task(name="annotation.undo_import_job")
def undo_import_job_task(job_id):
    from . import write_windows  # cycle: the import services queue this task

    write_windows.undo(job_id)


@shared_task(name="annotation.fail_stale_import_jobs", ignore_result=True)
def fail_stale_import_jobs_task():
    """Periodic (``CELERY_BEAT_SCHEDULE``): imports whose worker died are queued again (a bounded
    number of times, JOB_MAX_ATTEMPTS; the next attempt first removes what the dead one wrote), then
    marked failed and their uploads removed, so that the import pages only read."""
    from . import services  # cycle: services queue this module's tasks

    services.fail_stale_jobs()
