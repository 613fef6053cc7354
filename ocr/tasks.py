"""Celery tasks of the ocr app: thin wrappers around services."""
from celery import shared_task

from . import services


@shared_task(name="ocr.run_ocr", acks_late=True)
def run_ocr(run_id):
    """OCR one page with one engine (one task per page, so a batch spreads over the workers)."""
    run = services.perform_ocr_run(run_id)
    return None if run is None else run.status
