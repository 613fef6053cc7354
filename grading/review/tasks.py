"""Celery tasks of the judge-vs-human review: thin wrappers around grading.review.services.

Discovered through ``app.autodiscover_tasks([..., "grading.review"])`` in config/celery.py.
"""
from celery import shared_task

from . import services


@shared_task(bind=True, acks_late=True, ignore_result=True)
def propose_meta_eval_chunk(self, run_id, result_ids):
    """Ask the LLM meta-evaluator about a chunk of a run's cases (safe to run twice)."""
    return services.process_meta_eval_chunk(run_id, result_ids)
