"""Celery application. The broker comes from settings (CELERY_BROKER_URL)."""
import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("realmath")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
app.autodiscover_tasks(["annotation.export", "annotation.importers", "grading.judges", "grading.review", "grading.studies"])  # tasks of sub-packages
