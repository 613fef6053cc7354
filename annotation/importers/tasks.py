"""Celery tasks of dataset imports (thin wrappers around services)."""
from celery import shared_task

from . import batches, jobs


@shared_task(name="annotation.run_import_job", acks_late=True)
def run_import_job(job_id):
    jobs.run_import_job(job_id)


@shared_task(name="annotation.undo_import_job")
def undo_import_job(job_id):
    batches.undo(job_id)
