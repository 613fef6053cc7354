"""Celery task of generation runs: a thin wrapper around grading.generation.services.

Its name is the one it had in grading.judges.tasks (``name=``): messages already queued still find
it, and `core.routing` sends it to the judge queue by that prefix. Safe to run twice (claims).
"""
from celery import shared_task
from celery.signals import worker_init


@shared_task(name="grading.judges.tasks.run_generation_chunk", bind=True, acks_late=True, ignore_result=True)
def run_generation_chunk_task(self, run_id, epoch, item_ids):
    """Write a chunk of a generation run's synthetic answers."""
    from . import services  # cycle: services queue this task

    report = services.process_generation_chunk(run_id, epoch, item_ids, task_id=self.request.id)
    return {"claimed": report.claimed, "recorded": report.recorded}


@worker_init.connect
def warm_up_generation(**kwargs):
    """In the worker's main process, before the pool forks: each pool process inherits the
    services the chunk task imports in its body (grading.judges.tasks warms up the LLM client)."""
    from . import services  # noqa: F401 (imported here, before the fork: see the docstring)
