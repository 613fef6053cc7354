"""Celery tasks of the annotation app (thin wrappers around services)."""
from celery import shared_task

from . import jobs


@shared_task(name="annotation.run_export_job", acks_late=True)
def run_export_job(job_id):
    jobs.run_export_job(job_id)
