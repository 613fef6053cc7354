"""Celery tasks of the judge-vs-human review: thin wrappers around grading.review.services.

Discovered through ``app.autodiscover_tasks([..., "grading.review"])`` in config/celery.py. The
services import this module to queue its task, so the task imports them inside its body.
"""
from celery import shared_task


@shared_task(name="grading.review.tasks.propose_meta_eval_chunk", bind=True, acks_late=True, ignore_result=True)
def propose_meta_eval_chunk_task(self, run_id, epoch, result_ids):
    """Ask the LLM meta-evaluator about a chunk of a run's cases (safe to run twice)."""
    from . import services  # cycle: services queue this task

    return services.process_meta_eval_chunk(run_id, epoch, result_ids, task_id=self.request.id)
