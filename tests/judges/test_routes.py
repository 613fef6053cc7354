"""Queues come from CELERY_TASK_ROUTES (core.routing.route_task): every LLM task (judge chunks,
synthetic generation, the meta-evaluation pre-label) goes to REALMATH_JUDGE_QUEUE, OCR pages to
OCR_QUEUE, the rest to Celery's default queue; a blank setting means the default queue."""
import pytest

from annotation.export.tasks import run_export_job_task
from config.celery import app
from grading.generation.tasks import run_generation_chunk_task
from grading.judges.tasks import run_judge_chunk_task
from grading.review.tasks import propose_meta_eval_chunk_task
from ocr.tasks import run_ocr_task

LLM_TASKS = [run_judge_chunk_task, run_generation_chunk_task, propose_meta_eval_chunk_task]


def _queue(task):
    return app.amqp.router.route({}, task.name, (1, 1, []), {})["queue"].name


@pytest.mark.parametrize("task", LLM_TASKS, ids=lambda t: t.name)
def test_llm_tasks_go_to_the_judge_queue(settings, task):
    settings.JUDGE_TASK_QUEUE, settings.OCR_QUEUE = "llm-calls", "pages"
    assert _queue(task) == "llm-calls"


def test_ocr_and_other_tasks(settings):
    settings.JUDGE_TASK_QUEUE, settings.OCR_QUEUE = "llm-calls", "pages"
    assert _queue(run_ocr_task) == "pages"
    assert _queue(run_export_job_task) == app.conf.task_default_queue


@pytest.mark.parametrize("task", [*LLM_TASKS, run_ocr_task], ids=lambda t: t.name)
def test_blank_setting_means_the_default_queue(settings, task):
    settings.JUDGE_TASK_QUEUE, settings.OCR_QUEUE = "", ""
    assert _queue(task) == app.conf.task_default_queue
