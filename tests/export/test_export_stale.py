"""An export whose worker died: its heartbeat goes stale, the periodic task queues it again a bounded
number of times (tests/export/test_export_restart.py) and then marks the job failed and removes its
temp folder; no page or API read writes anything. Here every job has used its attempts."""
import tempfile
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files.storage import default_storage
from django.urls import reverse
from django.utils import timezone

from annotation.export import services as export_services
from annotation.export import tasks
from annotation.models import ExportJob
from tests.factories import make_question, make_responses

from ..conftest import api_client_for
from .conftest import scratch_left

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _export_root(settings, tmp_path):
    settings.EXPORT_ROOT = tmp_path / "exports"
    settings.EXPORT_STALE_SECONDS = 300
    settings.JOB_MAX_ATTEMPTS = 1  # the attempt a dead worker had was the last one


@pytest.fixture
def responses(db):
    return make_responses(make_question(), 3)


def _running_job(reviewer, *, beat_age, filters=None, heartbeat=True):
    """A job as a worker left it: running, attempt 1, a temporary folder with a partial file."""
    job = ExportJob.objects.create(format="jsonl", filters=filters or {}, status="running", done=1, total=3,
                                   created_by=reviewer, attempt=1)
    beat = timezone.now() - beat_age
    ExportJob.objects.filter(pk=job.pk).update(heartbeat=beat if heartbeat else None, created=beat)
    folder = Path(export_services.settings.EXPORT_ROOT) / f"export-{job.pk}-abc123"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "dataset.jsonl").write_text('{"type": "user"}\n')
    return job, folder


def test_job_of_a_dead_worker_is_failed_and_its_folder_removed(reviewer_client, reviewer, responses):
    dead, dead_folder = _running_job(reviewer, beat_age=timedelta(minutes=6), filters={"source": "human"})
    alive, alive_folder = _running_job(reviewer, beat_age=timedelta(seconds=20))
    reviewer_client.get(reverse("annotation:export_job", args=[dead.pk]))
    dead.refresh_from_db()
    assert dead.status == "running" and dead_folder.exists()  # a GET writes nothing

    tasks.fail_stale_export_jobs_task()  # what the beat schedule runs every minute
    page = reviewer_client.get(reverse("annotation:export_job", args=[dead.pk])).content.decode()

    dead.refresh_from_db()
    assert dead.status == "failed" and dead.finished is not None
    assert "no sign of life" in dead.error and "start the export again" in dead.error
    assert not dead_folder.exists()
    assert "no sign of life" in page and "Start this export again" in page
    assert 'id="export-restart" hidden' not in page
    alive.refresh_from_db()
    assert alive.status == "running" and alive_folder.exists()  # a worker still beating is left alone
    listing = reviewer_client.get(reverse("annotation:export")).content.decode()
    assert "no sign of life" in listing and "start again" in listing

    # Starting it again runs the same export (tasks run eagerly in tests).
    response = reviewer_client.post(reverse("annotation:export"), {"format": "jsonl", "source": "human"})
    again = ExportJob.objects.latest("pk")
    assert response.status_code == 302 and again.pk not in (dead.pk, alive.pk)
    again.refresh_from_db()
    assert again.status == "done" and again.filters == {"source": "human"} and again.total == 3


def test_progress_and_api_report_the_failure(reviewer_client, reviewer, responses):
    job, folder = _running_job(reviewer, beat_age=timedelta(minutes=10))
    legacy, legacy_folder = _running_job(reviewer, beat_age=timedelta(hours=1), heartbeat=False)
    assert api_client_for(reviewer).get("/api/exports/", {"status": "failed"}).json()["results"] == []
    tasks.fail_stale_export_jobs_task()
    state = reviewer_client.get(reverse("annotation:export_progress", args=[job.pk])).json()
    assert state["status"] == "failed" and "no sign of life" in state["error"] and not folder.exists()
    listed = api_client_for(reviewer).get("/api/exports/", {"status": "failed"}).json()
    assert {row["id"] for row in listed["results"]} == {job.pk, legacy.pk}
    assert not legacy_folder.exists()


def test_a_slow_worker_whose_job_was_given_up_writes_nothing(reviewer, responses, monkeypatch, settings):
    job = ExportJob.objects.create(format="jsonl", filters={}, total=3, created_by=reviewer)
    real_write = export_services.write_export

    def stall_then_go_on(queryset, fmt, out_dir, *, filters=None, on_progress=None):
        # The worker hangs long enough for its heartbeat to go stale; someone opens the page meanwhile.
        ExportJob.objects.filter(pk=job.pk).update(heartbeat=timezone.now() - timedelta(minutes=30))
        assert export_services.fail_stale_jobs() == [job.pk]
        return real_write(queryset, fmt, out_dir, filters=filters, on_progress=on_progress)

    monkeypatch.setattr(export_services, "write_export", stall_then_go_on)
    export_services.run_export_job(job.pk)

    job.refresh_from_db()
    assert job.status == "failed" and "no sign of life" in job.error and not job.file_name
    assert scratch_left() == [] and not Path(settings.EXPORT_ROOT).exists()  # no zip, no temporary folder
    assert not default_storage.exists(f"exports/realmath-export-{job.pk}-jsonl.zip")  # none stored either


def test_worker_beats_while_it_works_and_a_redelivered_task_does_not_restart_a_running_job(reviewer, responses):
    job = ExportJob.objects.create(format="csv", filters={}, total=3, created_by=reviewer)
    export_services.run_export_job(job.pk)
    job.refresh_from_db()
    assert job.status == "done" and job.attempt == 1 and job.heartbeat is not None
    assert scratch_left() == []  # scratch space removed
    assert job.file_name == f"exports/realmath-export-{job.pk}-csv.zip" and default_storage.exists(job.file_name)

    running, folder = _running_job(reviewer, beat_age=timedelta(seconds=5))
    export_services.run_export_job(running.pk)  # the broker delivers the task again
    running.refresh_from_db()
    assert (running.status, running.attempt, running.done) == ("running", 1, 1) and folder.exists()


def _queued_job(reviewer):
    return ExportJob.objects.create(format="jsonl", filters={}, status="queued", total=3, created_by=reviewer)


def test_a_temporary_folder_that_cannot_be_used_fails_the_job_at_once(reviewer, responses, tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setattr(tempfile, "tempdir", str(blocker / "tmp"))
    job = _queued_job(reviewer)
    export_services.run_export_job(job.pk)
    job.refresh_from_db()
    assert job.status == "failed" and job.finished is not None
    assert str(blocker / "tmp") in job.error and "cannot be written" in job.error and "TMPDIR" in job.error
    assert "no sign of life" not in job.error


def test_an_unwritable_export_folder_names_the_real_cause(reviewer, reviewer_client, responses, settings,
                                                        monkeypatch):
    # The tests run as root, for whom no mode bit denies a write: mkdtemp is made to fail as it
    # does for a worker user without write permission on the folder.
    def refuse(**kwargs):
        raise PermissionError(13, "Permission denied", str(kwargs.get("dir")))

    monkeypatch.setattr(export_services.tempfile, "mkdtemp", refuse)
    job = _queued_job(reviewer)
    export_services.run_export_job(job.pk)
    job.refresh_from_db()
    assert job.status == "failed" and "Permission denied" in job.error and "TMPDIR" in job.error
    page = reviewer_client.get(reverse("annotation:export_job", args=[job.pk])).content.decode()
    assert "Permission denied" in page


def test_the_stale_check_is_scheduled(settings):
    from config.celery import app

    entries = [entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()]
    assert "annotation.fail_stale_export_jobs" in entries
    assert tasks.fail_stale_export_jobs_task.name in app.tasks
