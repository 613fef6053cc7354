"""The run watchdog's Celery tasks (grading.runs.engine: `RunEngine.watch`, `watch_running`).

Their names are those they had in grading.judges.tasks (``name=``): messages already queued still
find them, and `core.routing` sends them to the judge queue by that prefix.
"""
from celery import shared_task
from celery.signals import worker_ready
from django.utils.module_loading import import_string


@shared_task(name="grading.judges.tasks.watch_run", ignore_result=True)
def watch_run_task(engine, run_id, epoch, takeovers=0):
    """The watchdog of one run (any kind: `engine` is the dotted path of its RunEngine): takes it
    over once its worker has been silent for a claim's lease, else looks again (grading.runs.engine)."""
    from . import engine as run_engine  # cycle: the run engine queues this task

    if engine not in run_engine.engine_paths():
        return "unknown engine"
    return import_string(engine).watch(run_id, epoch, takeovers)


@shared_task(name="grading.judges.tasks.watch_running_runs", ignore_result=True)
def watch_running_runs_task():
    from . import engine as run_engine  # cycle: the run engine queues this task

    return run_engine.watch_running()


@worker_ready.connect
def watch_runs_after_start(**kwargs):
    """A worker that (re)starts watches every running run: the watchdog of a run whose worker
    died with its messages resumes from here."""
    watch_running_runs_task.delay()
