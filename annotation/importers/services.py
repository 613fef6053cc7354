"""Import jobs: large uploads are stored, imported by a Celery worker, and followed on a page.

A running job shows it is alive through a file beside its upload (`.progress`): the worker
rewrites it with every step of progress and, from a heartbeat thread, every
IMPORT_HEARTBEAT_SECONDS. A running job whose file is older than IMPORT_STALE_SECONDS lost its
worker (killed, out of memory, machine restarted); `fail_stale_jobs` marks it failed and removes
its upload. Nothing of it is in the database: the import runs in one transaction.
"""
import logging
import threading
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ..export.load import import_dataset, read_dataset_upload
from ..models import ImportJob
from . import tasks
from .common import ImportFormatError
from .ineqmath import import_ineqmath
from .realmath import import_realmath

logger = logging.getLogger(__name__)


def _import_full_export(raw, file_name, *, user=None, exam_name=None, on_progress=None):
    """A full JSONL export (or its zip): exams come from the file, so no exam name applies."""
    raw = raw if isinstance(raw, (bytes, bytearray)) else raw.read()
    return import_dataset(read_dataset_upload(raw, file_name), file_name, user=user, on_progress=on_progress)


IMPORTERS = {"realmath": import_realmath, "ineqmath": import_ineqmath, "dataset": _import_full_export}


def runs_in_background(upload):
    return upload.size > settings.IMPORT_SYNC_MAX_BYTES


def stored_path(job):
    return Path(settings.IMPORT_ROOT) / job.stored_name


def _progress_path(job):
    return stored_path(job).with_suffix(".progress")


def job_progress(job):
    """(done, total) of a job. A running import writes them to a file beside its upload, not to the
    database: its transaction would hide them until the end (and on SQLite hold the write lock)."""
    if job.status == ImportJob.Status.RUNNING:
        try:
            done, total = _progress_path(job).read_text().split()
            return int(done), int(total)
        except (OSError, ValueError):
            pass
    return job.done, job.total


def _write_progress(progress_path, done, total):
    partial = progress_path.with_suffix(".partial")
    partial.write_text(f"{done} {total}")
    partial.replace(progress_path)


def _last_sign_of_life(job):
    """When the worker last wrote the job's progress file (its start if it never did)."""
    try:
        return _progress_path(job).stat().st_mtime
    except OSError:
        return None


def fail_stale_jobs():
    """Mark failed the running jobs whose worker stopped showing signs of life."""
    cutoff = time.time() - settings.IMPORT_STALE_SECONDS
    for job in ImportJob.objects.filter(status=ImportJob.Status.RUNNING):
        last = _last_sign_of_life(job)
        if last is None:
            last = job.created.timestamp()
        if last >= cutoff:
            continue
        since = timezone.localtime(datetime.fromtimestamp(last, tz=UTC))
        error = (f"The worker importing this file stopped (no sign of life since {since:%Y-%m-%d %H:%M:%S}). "
                 "Nothing was imported; upload the file again.")
        if ImportJob.objects.filter(pk=job.pk, status=ImportJob.Status.RUNNING).update(
            status=ImportJob.Status.FAILED, error=error, finished=timezone.now()
        ):
            logger.warning("Import job %s: no sign of life since %s, marked failed", job.pk, since)
            stored_path(job).unlink(missing_ok=True)
            _progress_path(job).unlink(missing_ok=True)


class _Heartbeat:
    """Touches the progress file every IMPORT_HEARTBEAT_SECONDS while the import runs."""

    def __init__(self, path):
        self.path, self._stop = path, threading.Event()
        self._thread = threading.Thread(target=self._beat, name="import-heartbeat", daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _beat(self):
        while not self._stop.wait(settings.IMPORT_HEARTBEAT_SECONDS):
            try:
                self.path.touch()
            except OSError:
                pass


def create_import_job(user, fmt, upload, exam_name=""):
    """Store the upload and queue its import; the worker picks it up after commit."""
    if fmt not in IMPORTERS:
        raise ValueError(f"Unknown format {fmt!r}; choose one of {', '.join(IMPORTERS)}.")
    root = Path(settings.IMPORT_ROOT)
    root.mkdir(parents=True, exist_ok=True)
    stored_name = f"{uuid.uuid4().hex}.upload"
    with open(root / stored_name, "wb") as handle:
        for chunk in upload.chunks():
            handle.write(chunk)
    job = ImportJob.objects.create(format=fmt, file_name=upload.name, stored_name=stored_name, file_size=upload.size,
                                   exam_name=exam_name or "", created_by=user)
    transaction.on_commit(lambda: tasks.run_import_job.delay(job.pk))
    return job


def _finish(job_id, **fields):
    ImportJob.objects.filter(pk=job_id).update(finished=timezone.now(), **fields)


def run_import_job(job_id):
    """Import the stored file of a job; a malformed file fails the job with the importer's message."""
    updated = ImportJob.objects.filter(pk=job_id, status=ImportJob.Status.QUEUED).update(status=ImportJob.Status.RUNNING)
    if not updated:
        return  # running elsewhere, finished or unknown: a redelivered task does nothing
    job = ImportJob.objects.select_related("created_by").get(pk=job_id)
    path = stored_path(job)

    progress_path = _progress_path(job)
    _write_progress(progress_path, 0, job.file_size)

    def progress(done, total):
        _write_progress(progress_path, done, total)

    kwargs = {"exam_name": job.exam_name} if job.exam_name else {}
    try:
        with open(path, "rb") as stream, _Heartbeat(progress_path):
            result = IMPORTERS[job.format](stream, job.file_name, user=job.created_by, on_progress=progress, **kwargs)
    except ImportFormatError as exc:
        _finish(job_id, status=ImportJob.Status.FAILED, error=f"Nothing was imported. {exc}")
        return
    except Exception as exc:
        _finish(job_id, status=ImportJob.Status.FAILED, error=f"Nothing was imported. {type(exc).__name__}: {exc}")
        raise
    finally:
        path.unlink(missing_ok=True)
        progress_path.unlink(missing_ok=True)
    _finish(job_id, status=ImportJob.Status.DONE, report_id=result.report_id, done=job.file_size, total=job.file_size)
