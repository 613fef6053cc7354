"""A background import whose worker died, once it used its attempts, is marked failed by the periodic
task (no page read writes; restarts before that: tests/dataset/test_import_job_restart.py); a slow
but live one is not."""
import os
import time
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.importers import services as import_services
from annotation.importers import tasks
from annotation.models import ImportJob

pytestmark = pytest.mark.django_db


@pytest.fixture
def import_root(settings, tmp_path):
    settings.JOB_MAX_ATTEMPTS = 1  # the attempt a dead worker had was the last one
    settings.IMPORT_ROOT = tmp_path / "imports"
    settings.IMPORT_ROOT.mkdir()
    return settings.IMPORT_ROOT


def running_job(import_root, reviewer, *, started_ago, progress_ago=None):
    job = ImportJob.objects.create(format="realmath", file_name="big.json", stored_name="abc.upload", file_size=10,
                                   status=ImportJob.Status.RUNNING, created_by=reviewer, attempt=1)
    ImportJob.objects.filter(pk=job.pk).update(created=timezone.now() - timedelta(seconds=started_ago))
    (import_root / "abc.upload").write_bytes(b"[]")
    if progress_ago is not None:
        progress = import_root / "abc.progress"
        progress.write_text("3 10")
        stamp = time.time() - progress_ago
        os.utime(progress, (stamp, stamp))
    return job


def test_job_without_sign_of_life_is_failed_by_the_periodic_task(reviewer_client, reviewer, import_root, settings):
    settings.IMPORT_STALE_SECONDS = 60
    job = running_job(import_root, reviewer, started_ago=3600, progress_ago=120)
    progress = reverse("annotation:import_job_progress", args=[job.pk])
    assert reviewer_client.get(progress).json()["status"] == "running"
    assert reviewer_client.get(reverse("annotation:import_job", args=[job.pk])).status_code == 200
    assert reviewer_client.get(reverse("annotation:import")).status_code == 200
    job.refresh_from_db()
    assert job.status == ImportJob.Status.RUNNING and (import_root / "abc.upload").exists()  # a GET writes nothing

    tasks.fail_stale_import_jobs_task()  # what the beat schedule runs every minute
    state = reviewer_client.get(progress).json()
    assert state["status"] == "failed"
    assert "stopped" in state["error"] and "Nothing was imported; upload the file again." in state["error"]
    job.refresh_from_db()
    assert job.status == ImportJob.Status.FAILED and job.finished is not None
    assert not (import_root / "abc.upload").exists() and not (import_root / "abc.progress").exists()
    assert "Nothing was imported; upload the file again." in reviewer_client.get(
        reverse("annotation:import_job", args=[job.pk])).content.decode()


def test_job_that_never_wrote_progress_is_judged_by_its_age(reviewer, import_root, settings):
    settings.IMPORT_STALE_SECONDS = 60
    job = running_job(import_root, reviewer, started_ago=3600)
    tasks.fail_stale_import_jobs_task()
    job.refresh_from_db()
    assert job.status == ImportJob.Status.FAILED


def test_job_with_recent_progress_keeps_running(reviewer_client, reviewer, import_root, settings):
    settings.IMPORT_STALE_SECONDS = 60
    job = running_job(import_root, reviewer, started_ago=3600, progress_ago=5)
    state = reviewer_client.get(reverse("annotation:import_job_progress", args=[job.pk])).json()
    assert state["status"] == "running" and state["done"] == 3
    assert (import_root / "abc.upload").exists()
    tasks.fail_stale_import_jobs_task()
    job.refresh_from_db()
    assert job.status == ImportJob.Status.RUNNING and (import_root / "abc.upload").exists()


@pytest.mark.django_db(transaction=True)
def test_heartbeat_keeps_a_long_silent_import_alive(reviewer, import_root, settings, monkeypatch):
    settings.IMPORT_STALE_SECONDS = 0.3
    settings.IMPORT_HEARTBEAT_SECONDS = 0.05
    seen = {}

    def silent_importer(stream, file_name, *, user=None, on_progress=None, **kwargs):
        time.sleep(0.8)  # far longer than the stale limit, without reporting progress
        import_services.fail_stale_jobs()
        seen["status"] = ImportJob.objects.get(file_name=file_name).status
        raise import_services.ImportFormatError("stop here")

    monkeypatch.setitem(import_services.IMPORTERS, "realmath", silent_importer)
    job = ImportJob.objects.create(format="realmath", file_name="slow.json", stored_name="slow.upload", file_size=2,
                                   created_by=reviewer)
    (import_root / "slow.upload").write_bytes(b"[]")
    import_services.run_import_job(job.pk)
    assert seen["status"] == ImportJob.Status.RUNNING
    job.refresh_from_db()
    assert job.status == ImportJob.Status.FAILED and job.error == "Nothing was imported. stop here"
    assert list(import_root.iterdir()) == []


def test_the_stale_check_is_scheduled(settings):
    from config.celery import app

    entries = [entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()]
    assert "annotation.fail_stale_import_jobs" in entries
    assert tasks.fail_stale_import_jobs_task.name in app.tasks
