"""Celery tasks of dataset imports (thin wrappers around services)."""
from celery import shared_task

from . import jobs


@shared_task(name="annotation.run_import_job", acks_late=True)
def run_import_job(job_id):
    jobs.run_import_job(job_id)
