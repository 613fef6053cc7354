"""Celery application. The broker comes from settings (CELERY_BROKER_URL)."""
import gc
import os

from celery import Celery
from celery.signals import celeryd_after_setup

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("realmath")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
app.autodiscover_tasks(["annotation.export", "annotation.importers", "grading.judges", "grading.review", "grading.studies",
                        "grading.studies.geometry"])  # tasks of sub-packages


@celeryd_after_setup.connect
def freeze_startup_objects(**kwargs):
    """In the worker's main process, once everything is imported and warmed up (``worker_init``)
    and before the pool forks: move every object so far out of the garbage collector's reach.

    Django, the `openai` client and their imports are several hundred thousand objects that live
    as long as the process. Left tracked, each full collection in a pool process walks all of
    them: 0.1-0.2 s with the process's every thread stopped, long enough to let the endpoint's
    slots go idle in the middle of a judge run (docs/judges.md, "Fifth round"). Frozen, they
    are never walked, and a child's pages shared with the parent stay shared. See `gc.freeze`.
    """
    gc.freeze()
