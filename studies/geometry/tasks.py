"""Celery tasks of the error-geometry and step-surprisal study: thin wrappers around its services.

Safe to run twice (acks_late redelivery, a resumed run): segments are claimed with an owner tag
and written only by their owner; an older epoch's chunk does nothing; the analysis is claimed
once by a conditional update. The services import this module to queue its tasks, so each task
imports them inside its body.
"""
from celery import shared_task


@shared_task(name="studies.geometry.tasks.run_geometry_chunk", bind=True, acks_late=True, ignore_result=True)
def run_geometry_chunk_task(self, run_id, epoch, item_ids):
    """Fetch the vectors or log-probabilities a chunk of a run's segments needs."""
    from . import services  # cycle: services queue this task

    report = services.process_chunk(run_id, epoch, item_ids, task_id=self.request.id)
    return {"claimed": report.claimed, "cached": report.cached, "recorded": report.recorded}


@shared_task(name="studies.geometry.tasks.analyse_geometry_run", acks_late=True, ignore_result=True)
def analyse_geometry_run_task(run_id):
    """Compute a done run's figures (once)."""
    from . import services  # cycle: services queue this task

    return services.analyse(run_id)
