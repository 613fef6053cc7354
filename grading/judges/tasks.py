"""Celery tasks of the grading app: thin wrappers around grading.judges.services.

Both are safe to run twice (acks_late redelivery, a resumed run): the services key every
piece of work and skip or take over what is already claimed. The services import this module
to queue its tasks, so each task imports its service inside its body (no import cycle).
"""
from celery import shared_task
from celery.signals import worker_init, worker_process_shutdown

import llm


@shared_task(name="grading.judges.tasks.run_judge_chunk", bind=True, acks_late=True, ignore_result=True)
def run_judge_chunk_task(self, run_id, epoch, item_ids):
    """Judge a chunk of a run's items."""
    from . import services  # cycle: services queue this task

    report = services.process_judge_chunk(run_id, epoch, item_ids, task_id=self.request.id,
                                          hand_over_tail=not self.request.is_eager)
    return {"claimed": report.claimed, "cached": report.cached, "recorded": report.recorded}


@shared_task(name="grading.judges.tasks.poll_judge_batches", bind=True, acks_late=True, ignore_result=True)
def poll_judge_batches_task(self, run_id, chain):
    """One look at a batch run's provider batches; it queues the next look itself (with back-off)
    while the run has batch work, and stops when its `chain` is no longer the run's."""
    from . import services  # cycle: services queue this task

    return services.poll_batch_run(run_id, chain)


@worker_process_shutdown.connect
def finish_judge_tails(**kwargs):
    """A pool process that stops (warm shutdown, max tasks reached) first records the calls its
    chunk tasks left in flight (see services.TAILS)."""
    from . import services  # cycle: services queue this module's tasks

    services.finish_tails(timeout=services.TAIL_SHUTDOWN_SECONDS)


@worker_init.connect
def warm_up_llm_client(**kwargs):
    """In the worker's main process, before the pool forks: each pool process inherits the
    loaded client, and the services its tasks import in their body, instead of paying for them
    on its first call."""
    from . import services  # noqa: F401 (imported here, before the fork: see the docstring)

    llm.warm_up()
