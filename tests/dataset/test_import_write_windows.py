"""A large import in the worker on SQLite is written in short transactions (label saves get the
write lock between them) and stays all or nothing: a failure, or a worker that died, leaves
nothing of it (issue 29, item 8; annotation/importers/write_windows.py)."""
import json
from datetime import timedelta

import pytest
from django.apps import apps
from django.db import connection
from django.utils import timezone

from annotation.export import load
from annotation.export.writers import write_export
from annotation.importers import realmath, write_windows
from annotation.importers import services as jobs
from annotation.models import ImportJob, Label, Response
from tests.conftest import REALMATH_HUMAN

# Batches are SQLite's answer to its one writer (`write_windows.write_windows_needed`); on PostgreSQL a job
# keeps one transaction, and its rollback is what leaves nothing of a failed import.
pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.skipif(connection.vendor != "sqlite", reason="write windows are written on SQLite only")]


@pytest.fixture
def import_root(settings, tmp_path):
    settings.IMPORT_ROOT = tmp_path / "imports"
    settings.IMPORT_ROOT.mkdir()
    settings.IMPORT_BATCH_SECONDS = 0  # a transaction per step: many write windows from a small file
    settings.IMPORT_BATCH_PAUSE_SECONDS = 0
    return settings.IMPORT_ROOT


def _rows():
    """Rows of every table an import writes (history and join tables too), but its job."""
    return {model._meta.label: model._base_manager.count() for app in ("annotation", "grading", "ocr", "auth")
            for model in apps.get_app_config(app).get_models(include_auto_created=True) if model is not ImportJob}


def _job(import_root, user, fmt, data):
    (import_root / "f.upload").write_bytes(data)
    return ImportJob.objects.create(format=fmt, file_name="f.json", stored_name="f.upload", file_size=len(data),
                                    created_by=user)


def _full_export(tmp_path):
    write_export(Response.objects.all(), "jsonl", tmp_path)
    return (tmp_path / "dataset.jsonl").read_bytes()


def test_a_job_commits_batch_by_batch_and_notes_what_it_wrote(admin_user, import_root, monkeypatch):
    monkeypatch.setattr(realmath, "JOB_BATCH", 5)
    data = REALMATH_HUMAN.read_bytes()
    job = _job(import_root, admin_user, "realmath", data)
    commits = []
    real = write_windows.WindowWriter._commit

    def counting(self):
        commits.append(self.written and dict(self.written))
        real(self)

    write_windows.WindowWriter._commit = counting
    try:
        jobs.run_import_job(job.pk)
    finally:
        write_windows.WindowWriter._commit = real
    job.refresh_from_db()
    assert job.status == "done" and job.report.counts["responses_created"] == len(json.loads(data))
    assert len(commits) >= 32 // 5  # the exam, each batch of records, the report: separate transactions
    written = job.written
    for table, model in (("annotation_response", Response), ("annotation_label", Label)):
        noted = {pk for low, high in written[table] for pk in range(low + 1, high + 1)}
        assert noted == set(model.objects.values_list("pk", flat=True))


@pytest.mark.parametrize("fmt", ["realmath", "dataset"])
def test_a_failure_after_some_windows_leaves_nothing(sample_data, admin_user, import_root, tmp_path, monkeypatch, fmt):
    if fmt == "dataset":
        data = _full_export(tmp_path)
        Response.objects.all().delete()
        target, name = load, "_load_response"
    else:
        data = REALMATH_HUMAN.read_bytes()
        Response.objects.all().delete()
        monkeypatch.setattr(realmath, "JOB_BATCH", 5)
        target, name = realmath._ImportSteps, "add"
    before = _rows()
    real, calls = getattr(target, name), []

    def failing(*args, **kwargs):
        calls.append(1)
        if len(calls) == 4:
            raise RuntimeError("disk full")
        return real(*args, **kwargs)

    monkeypatch.setattr(target, name, failing)
    job = _job(import_root, admin_user, fmt, data)
    with pytest.raises(RuntimeError, match="disk full"):
        jobs.run_import_job(job.pk)
    job.refresh_from_db()
    assert job.status == "failed" and job.error == "Nothing was imported. RuntimeError: disk full"
    assert _rows() == before and job.written == {}


def _running_dataset_job(tmp_path, admin_user):
    """A full export of the sample data with its answers deleted, the rows as they are now, and a
    running dataset import job with its batch writer."""
    data = _full_export(tmp_path)
    Response.objects.all().delete()
    before = _rows()
    job = ImportJob.objects.create(format="dataset", file_name="f.jsonl", stored_name="f.upload",
                                   status=ImportJob.Status.RUNNING, created_by=admin_user)
    return data, before, job, write_windows.WindowWriter(job.pk)


def test_a_dead_workers_windows_are_removed_when_its_job_goes_stale(sample_data, admin_user, import_root, tmp_path,
                                                                    settings):
    data, before, job, writer = _running_dataset_job(tmp_path, admin_user)
    load.import_dataset(data, "f.jsonl", user=admin_user, writer=writer)
    writer.atomic.__exit__(SystemExit, SystemExit(), None)  # killed in its last batch: rolled back
    assert Response.objects.count() == 64  # the committed write windows are in the database
    settings.IMPORT_STALE_SECONDS = 60
    ImportJob.objects.filter(pk=job.pk).update(created=timezone.now() - timedelta(hours=1))
    jobs.fail_stale_jobs()  # queues the removal (run at once in tests)
    job.refresh_from_db()
    assert job.status == "failed" and "Nothing was imported" in job.error
    assert _rows() == before


def test_a_worker_whose_job_was_given_up_stops_and_removes_its_windows(sample_data, admin_user, import_root, tmp_path):
    data, before, job, writer = _running_dataset_job(tmp_path, admin_user)
    real, seen = writer.step, []

    def step():
        seen.append(1)
        if len(seen) == 10:  # the web process judged it dead meanwhile
            ImportJob.objects.filter(pk=job.pk).update(status=ImportJob.Status.FAILED)
        real()

    writer.step = step
    with pytest.raises(write_windows.JobAbandoned):
        load.import_dataset(data, "f.jsonl", user=admin_user, writer=writer)
    writer.fail()
    assert _rows() == before
