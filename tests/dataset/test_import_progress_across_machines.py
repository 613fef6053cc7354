"""A background import's progress and heartbeat reach other machines (issue 38): besides the file
beside its upload, the worker shares them through the cache (Redis on an installation of several
machines). The web server, or the beat of another machine, has no such file: it reads the cache, so
a long import that is alive elsewhere is neither shown at 0 nor restarted, and a dead one still is.
Here the cache is this process's, standing for the shared one; the worker's files are removed to
play the other machine."""
import time
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.urls import reverse
from django.utils import timezone

from annotation.importers import services as jobs
from annotation.models import ImportJob
from tests.conftest import REALMATH_HUMAN

pytestmark = pytest.mark.django_db(transaction=True)
SET_HERE = []  # beat keys this module set itself: removed after each test


@pytest.fixture(autouse=True)
def _folders(settings, tmp_path, monkeypatch):
    settings.IMPORT_SYNC_MAX_BYTES = 10
    settings.IMPORT_ROOT = tmp_path / "imports"
    settings.IMPORT_STALE_SECONDS = 60
    settings.JOB_MAX_ATTEMPTS = 1
    monkeypatch.setattr(jobs.tasks.run_import_job_task, "delay", lambda job_id: None)
    # Not cache.clear(): on the PostgreSQL phase the cache is the Redis every xdist worker shares,
    # and a flush there wiped another worker's live import heartbeat (its import then looked dead).
    yield
    cache.delete_many(SET_HERE)
    SET_HERE.clear()


def _running_elsewhere(reviewer_client, *, beat_ago, done=7, total=99):
    """A staged job taken by a worker of another machine: running for an hour, no file here."""
    with REALMATH_HUMAN.open("rb") as handle:
        reviewer_client.post(reverse("annotation:import"), {"format": "realmath", "file": handle, "exam": "Far"})
    job = ImportJob.objects.get()
    ImportJob.objects.filter(pk=job.pk).update(status=ImportJob.Status.RUNNING, attempt=1,
                                               created=timezone.now() - timedelta(hours=1))
    job.refresh_from_db()
    assert not jobs._progress_path(job).exists()
    SET_HERE.append(jobs._beat_key(job.pk, 1))
    cache.set(SET_HERE[-1], (done, total, time.time() - beat_ago))
    return job


def test_an_import_alive_on_another_machine_shows_its_progress_and_keeps_running(reviewer_client):
    job = _running_elsewhere(reviewer_client, beat_ago=5)
    state = reviewer_client.get(reverse("annotation:import_job_progress", args=[job.pk])).json()
    assert (state["status"], state["done"], state["total"]) == ("running", 7, 99)
    jobs.fail_stale_jobs()
    job.refresh_from_db()
    assert job.status == ImportJob.Status.RUNNING


def test_an_import_silent_on_another_machine_is_still_found_dead(reviewer_client):
    job = _running_elsewhere(reviewer_client, beat_ago=600)
    jobs.fail_stale_jobs()
    job.refresh_from_db()
    assert job.status == ImportJob.Status.FAILED and "stopped" in job.error
    assert cache.get(jobs._beat_key(job.pk, 1)) is None


def test_a_worker_shares_its_progress_while_it_imports_and_removes_it_at_the_end(reviewer_client, monkeypatch):
    with REALMATH_HUMAN.open("rb") as handle:
        reviewer_client.post(reverse("annotation:import"), {"format": "realmath", "file": handle, "exam": "Near"})
    job = ImportJob.objects.get()
    seen = []
    real = jobs.IMPORTERS["realmath"]

    def watching(stream, file_name, *, on_progress=None, **kwargs):
        def progress(done, total):
            on_progress(done, total)
            seen.append(cache.get(jobs._beat_key(job.pk, 1))[:2])
        return real(stream, file_name, on_progress=progress, **kwargs)

    monkeypatch.setitem(jobs.IMPORTERS, "realmath", watching)
    jobs.run_import_job(job.pk)
    job.refresh_from_db()
    assert job.status == ImportJob.Status.DONE, job.error
    size = REALMATH_HUMAN.stat().st_size
    assert seen and seen[-1] == (size, size)
    assert cache.get(jobs._beat_key(job.pk, 1)) is None
