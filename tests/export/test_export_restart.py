"""An export whose worker died finishes without a click (issue 40, item 12): the periodic stale
check queues it again, up to JOB_MAX_ATTEMPTS takes, the next worker writes it from the start and
the page says "Restarted automatically after the worker stopped: attempt 2 of 3".

The last test kills a real Celery worker in the middle of an export, then starts another worker
with its embedded beat (as `make run` does) and a stale timeout of seconds: the export is done,
whole, by the second worker, and nobody pressed anything."""
import json
import zipfile
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
from tests.workers import Worker, judge_worker_env, on_a_database_workers_reach, purge_queue, wait_for

from .conftest import scratch_left

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _export_root(settings, tmp_path):
    settings.EXPORT_ROOT = tmp_path / "exports"
    settings.EXPORT_STALE_SECONDS = 300
    settings.JOB_MAX_ATTEMPTS = 3


def _dead_job(reviewer, attempt=1):
    """A job as a killed worker left it: running, a stale heartbeat, a temporary folder with a partial file."""
    job = ExportJob.objects.create(format="jsonl", filters={}, status="running", done=1, total=3,
                                   created_by=reviewer, attempt=attempt)
    ExportJob.objects.filter(pk=job.pk).update(heartbeat=timezone.now() - timedelta(minutes=6))
    folder = Path(export_services.settings.EXPORT_ROOT) / f"export-{job.pk}-abc123"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "dataset.jsonl").write_text('{"type": "user"}\n')
    return job, folder


def test_a_dead_export_is_restarted_and_finishes(reviewer, reviewer_client, db):
    make_responses(make_question(), 3)
    job, folder = _dead_job(reviewer)
    tasks.fail_stale_export_jobs_task()  # beat's periodic check; the restarted job runs at once (eager tasks)
    job.refresh_from_db()
    assert job.status == "done" and job.attempt == 2 and job.error == "" and job.total == 3
    assert not folder.exists() and default_storage.exists(job.file_name)
    assert scratch_left() == [] and list(Path(export_services.settings.EXPORT_ROOT).iterdir()) == []  # the zip is in the storage only
    state = reviewer_client.get(reverse("annotation:export_progress", args=[job.pk])).json()
    assert state["notice"] == "Restarted automatically after the worker stopped: attempt 2 of 3."
    assert state["download"]


def test_a_queued_restart_is_shown_and_the_last_attempt_fails(reviewer, reviewer_client, db, monkeypatch):
    monkeypatch.setattr(tasks.run_export_job_task, "delay", lambda job_id: None)  # no worker takes it yet
    waiting, _ = _dead_job(reviewer, attempt=1)
    last, last_folder = _dead_job(reviewer, attempt=3)
    assert export_services.fail_stale_jobs() == [last.pk]
    waiting.refresh_from_db()
    last.refresh_from_db()
    assert waiting.status == "queued" and waiting.heartbeat is None and waiting.done == 0
    page = reviewer_client.get(reverse("annotation:export_job", args=[waiting.pk])).content.decode()
    assert "Restarted automatically after the worker stopped: attempt 2 of 3." in page
    assert last.status == "failed" and "3 times in a row" in last.error and not last_folder.exists()


@pytest.mark.integration
def test_a_killed_worker_s_export_finishes_without_a_click(tmp_path, settings, reviewer):
    on_a_database_workers_reach(tmp_path, lambda: _killed_worker_scenario(tmp_path, settings, reviewer))


def _killed_worker_scenario(tmp_path, settings, reviewer):
    queue, env = judge_worker_env(tmp_path, settings, "export-restart")
    env.update(REALMATH_DEFAULT_QUEUE=queue, REALMATH_EXPORT_ROOT=str(settings.EXPORT_ROOT),
               REALMATH_MEDIA_ROOT=str(settings.MEDIA_ROOT),  # the storage the web side reads the zip from
               TMPDIR=str(tmp_path / "tmp"),  # where the workers make their scratch folders
               REALMATH_EXPORT_STALE_SECONDS="4", REALMATH_STALE_CHECK_SECONDS="1",
               REALMATH_BEAT_LOCK=str(tmp_path / "beat.lock"))
    settings.EXPORT_STALE_SECONDS = 4
    question = make_question("Restart problem: find x.")
    make_responses(question, 4000)  # a few seconds of writing: long enough to be killed in the middle
    job = ExportJob.objects.create(format="jsonl", filters={}, total=4000, created_by=reviewer)
    workers = []
    try:
        first = Worker(env, tmp_path / "first.log", queue=queue)
        workers.append(first)
        first.wait_ready()
        tasks.run_export_job_task.apply_async(args=[job.pk], queue=queue)
        wait_for(lambda: ExportJob.objects.get(pk=job.pk).status == "running", 60, "the export to start")
        first.kill()  # SIGKILL, mid-export
        job.refresh_from_db()
        assert job.status == "running" and job.attempt == 1, "the worker must die mid-export"
        killed_at = timezone.now()

        # Another worker with its beat, as `make run` starts it: nobody presses anything.
        second = Worker(env, tmp_path / "second.log", queue=queue,
                        extra_args=("-B", "-s", str(tmp_path / "beat-schedule")))
        workers.append(second)
        second.wait_ready()
        wait_for(lambda: ExportJob.objects.get(pk=job.pk).status in ("done", "failed"), 60,
                 "the export to be restarted and finished")
        job.refresh_from_db()
        assert job.status == "done", job.error
        assert job.attempt == 2 and job.finished > killed_at
        assert job.manifest["counts"]["responses"] == 4000
        with export_services.open_export(job) as stream, zipfile.ZipFile(stream) as archive:
            lines = archive.read("dataset.jsonl").decode().splitlines()
        assert sum(1 for line in lines if json.loads(line).get("type") == "response") == 4000
        assert list((tmp_path / "tmp").glob("realmath-export-*")) == []  # no scratch folder left (the workers' TMPDIR)
        assert not Path(settings.EXPORT_ROOT).exists()  # no zip
    finally:
        for worker in workers:
            worker.stop()
        purge_queue(queue)
