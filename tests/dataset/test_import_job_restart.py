"""An import whose worker died starts again on its own (issue 40, item 12): the periodic stale check
queues it again, up to JOB_MAX_ATTEMPTS takes, and the next attempt first removes what the dead
one's committed write windows wrote (SQLite), so the import ends whole and nothing is doubled; the page
says "Restarted automatically after the worker stopped: attempt 2 of 3"."""
from datetime import timedelta

import pytest
from django.db import connection
from django.urls import reverse
from django.utils import timezone

from annotation.export import load
from annotation.export.writers import write_export
from annotation.importers import tasks, write_windows
from annotation.models import ImportJob, Response

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def import_root(settings, tmp_path):
    settings.IMPORT_ROOT = tmp_path / "imports"
    settings.IMPORT_ROOT.mkdir()
    settings.IMPORT_STALE_SECONDS = 60
    settings.JOB_MAX_ATTEMPTS = 3
    settings.IMPORT_BATCH_SECONDS = 0  # a transaction per step: many write windows from a small file
    settings.IMPORT_BATCH_PAUSE_SECONDS = 0
    return settings.IMPORT_ROOT


def _dead_job(import_root, user, data, attempt=1):
    """A dataset import a worker took (`attempt`) and died in: its upload still stored, no sign of life for an hour."""
    (import_root / "f.upload").write_bytes(data)
    job = ImportJob.objects.create(format="dataset", file_name="f.jsonl", stored_name="f.upload", file_size=len(data),
                                   status=ImportJob.Status.RUNNING, created_by=user, attempt=attempt)
    ImportJob.objects.filter(pk=job.pk).update(created=timezone.now() - timedelta(hours=1))
    return job


def _export_then_clear(tmp_path):
    write_export(Response.objects.all(), "jsonl", tmp_path)
    data = (tmp_path / "dataset.jsonl").read_bytes()
    count = Response.objects.count()
    Response.objects.all().delete()
    return data, count


def test_a_dead_import_is_restarted_and_finishes_without_a_click(sample_data, reviewer, reviewer_client, import_root,
                                                                 tmp_path):
    data, count = _export_then_clear(tmp_path)
    job = _dead_job(import_root, reviewer, data)
    if write_windows.write_windows_needed():  # SQLite: the dead worker committed some write windows before it died
        writer = write_windows.WindowWriter(job.pk, attempt=1)
        try:
            load.import_dataset(data, "f.jsonl", user=reviewer, writer=writer)
        finally:
            writer.atomic.__exit__(SystemExit, SystemExit(), None)  # killed in its last batch
        assert 0 < Response.objects.count()
    tasks.fail_stale_import_jobs_task()  # the beat's periodic check; the restarted job runs at once (eager tasks)
    job.refresh_from_db()
    assert job.status == ImportJob.Status.DONE, job.error
    assert job.attempt == 2
    assert Response.objects.count() == count  # whole, and nothing doubled
    assert not (import_root / "f.upload").exists()
    state = reviewer_client.get(reverse("annotation:import_job_progress", args=[job.pk])).json()
    assert state["notice"] == "Restarted automatically after the worker stopped: attempt 2 of 3."


def test_a_slow_worker_of_a_restarted_import_writes_nothing_more(sample_data, reviewer, import_root, tmp_path):
    if not write_windows.write_windows_needed():
        pytest.skip("write windows are written on SQLite only")
    data, _ = _export_then_clear(tmp_path)
    job = _dead_job(import_root, reviewer, data)
    ImportJob.objects.filter(pk=job.pk).update(attempt=2)  # restarted since: attempt 2 is the job's now
    with pytest.raises(write_windows.JobAbandoned):
        write_windows.WindowWriter(job.pk, attempt=1).step()
    assert Response.objects.count() == 0


def test_an_import_that_used_its_attempts_is_failed_not_restarted(reviewer, import_root, reviewer_client):
    job = _dead_job(import_root, reviewer, b"[]", attempt=3)
    tasks.fail_stale_import_jobs_task()
    job.refresh_from_db()
    assert job.status == ImportJob.Status.FAILED and "upload the file again" in job.error
    assert not (import_root / "f.upload").exists()
    state = reviewer_client.get(reverse("annotation:import_job_progress", args=[job.pk])).json()
    assert state["notice"] == "Restarted automatically after the worker stopped: attempt 3 of 3."


def test_a_queued_restart_says_which_attempt_comes(reviewer, import_root, reviewer_client, monkeypatch):
    monkeypatch.setattr(tasks.run_import_job_task, "delay", lambda job_id: None)  # no worker takes it yet
    job = _dead_job(import_root, reviewer, b"[]", attempt=1)
    tasks.fail_stale_import_jobs_task()
    job.refresh_from_db()
    assert job.status == ImportJob.Status.QUEUED and (import_root / "f.upload").exists()
    page = reviewer_client.get(reverse("annotation:import_job", args=[job.pk])).content.decode()
    assert "Restarted automatically after the worker stopped: attempt 2 of 3." in page
    assert connection.vendor in ("sqlite", "postgresql")


def test_a_slow_worker_of_a_restarted_import_removes_only_its_own_rows(sample_data, reviewer, import_root):
    """Its job was restarted while it was frozen: when it wakes, its batch writer finds the job's
    attempt is not its own; it removes what it wrote, never the new attempt's rows, and leaves the
    job's note of them alone."""
    if not write_windows.write_windows_needed():
        pytest.skip("write windows are written on SQLite only")
    job = _dead_job(import_root, reviewer, b"[]")
    ids = sorted(Response.objects.values_list("pk", flat=True))
    old_rows, new_rows = ids[:10], ids[10:20]
    writer = write_windows.WindowWriter(job.pk, attempt=1)
    writer.written = {"annotation_response": [[old_rows[0] - 1, old_rows[-1]]]}
    new_note = {"annotation_response": [[new_rows[0] - 1, new_rows[-1]]]}
    ImportJob.objects.filter(pk=job.pk).update(attempt=2, written=new_note)  # restarted; attempt 2 writing
    writer.fail()
    assert not Response.objects.filter(pk__in=old_rows).exists()
    assert Response.objects.filter(pk__in=new_rows).count() == 10
    job.refresh_from_db()
    assert job.written == new_note


def test_another_installations_heartbeat_is_no_sign_of_life(reviewer, import_root, monkeypatch, settings):
    """Two installations (or two xdist workers) sharing one Redis have jobs with the same id: the
    other one's live heartbeat for "job 1, attempt 1", written under its own REALMATH_CACHE_KEY_PREFIX,
    must not keep this installation's dead job 1 running (the PostgreSQL phase of CI failed so)."""
    from django.core.cache import caches
    from django.core.cache.backends.base import BaseCache

    monkeypatch.setattr(tasks.run_import_job_task, "delay", lambda job_id: None)
    job = _dead_job(import_root, reviewer, b"[]", attempt=1)
    own = caches["default"]
    params = {**settings.CACHES["default"], "KEY_PREFIX": f"{own.key_prefix}-other-installation"}
    other = type(own)(params.get("LOCATION", ""), params)
    assert isinstance(other, BaseCache) and other.make_key("k") != own.make_key("k")
    key = f"realmath:import-beat:{job.pk}:1"
    other.set(key, (0, 2, __import__("time").time()), timeout=60)
    try:
        tasks.fail_stale_import_jobs_task()
    finally:
        other.delete(key)
    job.refresh_from_db()
    assert job.status == ImportJob.Status.QUEUED and job.attempt == 1
