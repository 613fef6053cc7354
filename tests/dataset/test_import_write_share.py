"""Labelling stays quick while a large import runs in the worker (issue 40, item 14; measured by
bench/import_write_bench.py, figures in docs/export.md):

- on SQLite the import's write transactions are short (a step is 25 answers of a release file,
  committed once IMPORT_BATCH_SECONDS have passed), so a save waits for little of one, and the
  import keeps the worker's CPU priority (a low-priority thread holding SQLite's one write lock
  would make every save wait longer);
- on PostgreSQL it stays one transaction, run in a thread of lower CPU priority (IMPORT_NICE), so
  the web server's requests get the CPU first; the worker process itself keeps its priority."""
import os
import threading

import pytest
from django.db import connection

from annotation.importers import realmath, write_windows
from annotation.importers import services as jobs
from annotation.models import ImportJob, Response
from tests.conftest import REALMATH_HUMAN

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def import_root(settings, tmp_path):
    settings.IMPORT_ROOT = tmp_path / "imports"
    settings.IMPORT_ROOT.mkdir()
    return settings.IMPORT_ROOT


def _job(import_root, user):
    data = REALMATH_HUMAN.read_bytes()
    (import_root / "f.upload").write_bytes(data)
    return ImportJob.objects.create(format="realmath", file_name="f.json", stored_name="f.upload", file_size=len(data),
                                    created_by=user)


def _priority():
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


def test_defaults_keep_each_write_transaction_short(settings):
    assert settings.IMPORT_BATCH_SECONDS <= 0.1 and settings.IMPORT_BATCH_PAUSE_SECONDS >= settings.IMPORT_BATCH_SECONDS
    assert realmath.JOB_BATCH <= 25


@pytest.mark.skipif(connection.vendor != "sqlite", reason="write windows are written on SQLite only")
def test_on_sqlite_a_write_transaction_holds_one_step_of_25_answers(admin_user, import_root, settings, monkeypatch):
    settings.IMPORT_BATCH_SECONDS = 0  # a transaction per step
    settings.IMPORT_BATCH_PAUSE_SECONDS = 0
    job = _job(import_root, admin_user)
    sizes, seen = [], []
    real_commit, real_begin = write_windows.WindowWriter._commit, write_windows.WindowWriter._begin

    def begin(self):
        real_begin(self)
        seen.append(_priority())

    def commit(self):
        sizes.append(write_windows._counters().get("annotation_response", 0) - self.before.get("annotation_response", 0))
        real_commit(self)

    monkeypatch.setattr(write_windows.WindowWriter, "_begin", begin)
    monkeypatch.setattr(write_windows.WindowWriter, "_commit", commit)
    before = _priority()
    jobs.run_import_job(job.pk, low_priority=True)  # as the worker's task calls it
    job.refresh_from_db()
    assert job.status == "done", job.error
    assert Response.objects.count() == 32 and sum(sizes) == 32
    assert max(sizes) <= 25  # was 200 records to a transaction
    assert set(seen) == {before}  # not lowered on SQLite (priority inversion on the write lock)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the low-priority thread is PostgreSQL's")
def test_on_postgresql_the_import_is_one_transaction_in_a_low_priority_thread(admin_user, import_root, settings,
                                                                             monkeypatch):
    settings.IMPORT_NICE = 10
    job = _job(import_root, admin_user)
    seen = {}
    real = jobs.IMPORTERS["realmath"]

    def watched(*args, **kwargs):
        seen.update(priority=_priority(), atomic=connection.in_atomic_block, thread=threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setitem(jobs.IMPORTERS, "realmath", watched)
    before = _priority()
    jobs.run_import_job(job.pk, low_priority=True)
    job.refresh_from_db()
    assert job.status == "done", job.error
    assert seen == {"priority": min(19, before + 10), "atomic": True, "thread": "import-job"}
    assert _priority() == before  # the worker's own thread keeps its priority
    assert Response.objects.count() == 32
