"""Celery task of the judge studies: a thin wrapper around studies.services.

Safe to run twice (acks_late redelivery, a resumed run): items are claimed with an owner tag
and written only by their owner; an older epoch's chunk does nothing. The services import this
module to queue its task, so the task imports them inside its body.
"""
from celery import shared_task


@shared_task(name="studies.tasks.run_probe_chunk", bind=True, acks_late=True, ignore_result=True)
def run_probe_chunk_task(self, run_id, epoch, item_ids):
    """Judge the original and derived text of a chunk of a probe run's items."""
    from . import services  # cycle: services queue this task

    report = services.process_probe_chunk(run_id, epoch, item_ids, task_id=self.request.id)
    return {"claimed": report.claimed, "cached": report.cached, "recorded": report.recorded}


@shared_task(name="studies.tasks.rewrite_style_answers", acks_late=True, ignore_result=True)
def rewrite_style_answers_task(endpoint_id, model, exam=None, limit=None):
    """Issue 27: the style ablation's LLM rewrites (answers that have one for their text are kept)."""
    from grading.models import LlmEndpoint  # noqa: PLC0415

    from . import style  # noqa: PLC0415

    endpoint = LlmEndpoint.objects.get(pk=endpoint_id)
    return style.rewrite_answers(endpoint, model, style.selected_answers(exam=exam, limit=limit))
