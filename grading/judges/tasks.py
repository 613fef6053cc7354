"""Celery tasks of the grading app: thin wrappers around grading.judges.services and .generation.

Both are safe to run twice (acks_late redelivery, a resumed run): the services key every
piece of work and skip or take over what is already claimed.
"""
# Loaded here, in the worker's main process, so that forked pool processes inherit it
# instead of each importing the client on its first call.
import openai  # noqa: F401
from celery import shared_task

from . import generation, services


@shared_task(bind=True, acks_late=True, ignore_result=True)
def run_judge_chunk(self, run_id, epoch, item_ids):
    """Judge a chunk of a run's items."""
    report = services.process_judge_chunk(run_id, epoch, item_ids, task_id=self.request.id)
    return {"claimed": report.claimed, "cached": report.cached, "recorded": report.recorded}


@shared_task(bind=True, acks_late=True, ignore_result=True)
def run_generation_chunk(self, run_id, epoch, item_ids):
    """Write a chunk of a generation run's synthetic answers."""
    report = generation.process_generation_chunk(run_id, epoch, item_ids, task_id=self.request.id)
    return {"claimed": report.claimed, "recorded": report.recorded}
