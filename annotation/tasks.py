"""Celery tasks of the annotation app (thin wrappers around services)."""
from celery import shared_task

from .export import jobs
from .importers import jobs as import_jobs


@shared_task(name="annotation.run_export_job", acks_late=True)
def run_export_job(job_id):
    jobs.run_export_job(job_id)


@shared_task(name="annotation.run_import_job", acks_late=True)
def run_import_job(job_id):
    import_jobs.run_import_job(job_id)
