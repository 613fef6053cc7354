"""Celery application. The broker comes from settings (CELERY_BROKER_URL)."""
import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("realmath")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
app.autodiscover_tasks(["grading"], related_name="review_tasks")  # the review's tasks live beside the judges'
