"""The Celery router behind ``CELERY_TASK_ROUTES``: LLM tasks go to the judge queue, OCR tasks
to the OCR queue, everything else to Celery's default queue; never chosen at the call site."""
from django.conf import settings

# Task-name prefix -> the setting naming its queue (blank setting: Celery's default queue).
QUEUE_SETTINGS = {
    "grading.judges.tasks.": "JUDGE_TASK_QUEUE",
    "grading.review.tasks.": "JUDGE_TASK_QUEUE",
    "studies.tasks.": "JUDGE_TASK_QUEUE",
    "studies.geometry.tasks.": "JUDGE_TASK_QUEUE",
    "ocr.": "OCR_QUEUE",  # ocr.run_ocr
}


def route_task(name, args, kwargs, options, task=None, **kw):
    """Celery router (``CELERY_TASK_ROUTES``): LLM tasks to the judge queue, OCR to the OCR queue.

    Settings are read per message, so a changed setting (tests, a reloaded worker) applies at once.
    """
    for prefix, setting in QUEUE_SETTINGS.items():
        if name.startswith(prefix):
            queue = getattr(settings, setting)
            return {"queue": queue} if queue else None
    return None
