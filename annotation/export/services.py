"""Export jobs: create one, run it (in a Celery worker), find its file, notice a dead worker.

The worker writes and zips an export in a temporary folder of its machine (`tempfile`, TMPDIR: its
scratch space, removed when the job ends), then saves the zip to the storage layer (`default_storage`: the local
media folder, or the S3 bucket with REALMATH_STORAGE=s3) as `exports/<name>.zip`, so that the web
server of another machine serves it. Jobs finished before that kept their zip under EXPORT_ROOT
(`file_name` without the `exports/` prefix); they still download from there.

A running job has a heartbeat: the worker writing it refreshes `heartbeat` with every chunk of
progress and while zipping. A job whose heartbeat is older than `EXPORT_STALE_SECONDS` lost its
worker (killed, out of memory, machine restarted): `fail_stale_jobs` removes its temporary
folder and queues it again, up to JOB_MAX_ATTEMPTS takes in all (the page says "Restarted
automatically after the worker stopped: attempt 2 of 3"), then marks it failed with a message
saying so. The periodic task `annotation.fail_stale_export_jobs` and every worker taking a job
call it. Each take of a job raises `attempt`, and a worker writes progress and the
result only while its attempt is current and the job still runs, so a worker that was only slow
and comes back after its job was given up changes nothing and removes its own files.
A job is taken only while queued: a redelivered task never restarts a job that was running;
only the stale check does, a bounded number of times (a job that kills every worker it
reaches, e.g. out of memory, is not restarted for ever).
"""
import functools
import logging
import shutil
import tempfile
import time
import zipfile
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext as _

from core.stored_files import open_stream

from ..models import ExportJob, Response
from ..selectors import RESPONSE_FILTERS, filter_responses
from . import tasks
from .writers import FORMATS, write_export

logger = logging.getLogger(__name__)

BEAT_SECONDS = 5
COPY_BLOCK = 4 * 1024 * 1024


class JobLost(Exception):
    """The job was given up (its heartbeat went stale) while this worker was writing it."""


def clean_filters(params):
    return {name: str(params[name]) for name in RESPONSE_FILTERS if params.get(name) not in (None, "")}


def create_export_job(user, fmt, params):
    """Queue an export of the responses matching params; the worker picks it up after commit."""
    if fmt not in FORMATS:
        raise ValueError(gettext("Unknown format %(fmt)s; choose one of %(join)s.") % {"fmt": repr(fmt), "join": ', '.join(FORMATS)})
    filters = clean_filters(params)
    total = filter_responses(Response.objects.all(), filters).count()
    if not total:
        raise ValueError(gettext("No response matches these filters; there is nothing to export."))
    job = ExportJob.objects.create(format=fmt, filters=filters, total=total, created_by=user)
    transaction.on_commit(lambda: tasks.run_export_job_task.delay(job.pk))
    return job


STORED_PREFIX = "exports/"


def download_name(job):
    return f"realmath-export-{job.pk}-{job.format}.zip"


def open_export(job):
    """The finished zip of a job open for reading, as a stream from the storage layer (a local file
    under EXPORT_ROOT for jobs finished before exports went there), or None when it has none (not
    finished, failed, or removed)."""
    if job.status != ExportJob.Status.DONE or not job.file_name:
        return None
    if job.file_name.startswith(STORED_PREFIX):
        try:
            return open_stream(job.file_name)
        except FileNotFoundError:
            return None
    path = Path(settings.EXPORT_ROOT) / Path(job.file_name).name  # written before exports were stored
    return path.open("rb") if path.is_file() else None


def _work_dirs(job_id):
    """Temporary folders of a job's attempts on this machine, and under EXPORT_ROOT where earlier
    versions made them (the trailing dash keeps job 1 from matching job 12). A worker on another
    machine that died leaves its own in its temporary folder, for the system to clear."""
    yield from Path(tempfile.gettempdir()).glob(f"{WORK_PREFIX}{job_id}-*")
    yield from Path(settings.EXPORT_ROOT).glob(f"export-{job_id}-*")


WORK_PREFIX = "realmath-export-"


def fail_stale_jobs():
    """Running jobs whose worker stopped giving signs of life: their temporary folders are removed
    and they are queued again (a new attempt, which starts from nothing), while fewer than
    JOB_MAX_ATTEMPTS workers took them; then marked failed. Returns the ids marked failed."""
    now = timezone.now()
    cutoff = now - timedelta(seconds=settings.EXPORT_STALE_SECONDS)
    stale = ExportJob.objects.filter(status=ExportJob.Status.RUNNING).filter(
        Q(heartbeat__lt=cutoff) | Q(heartbeat__isnull=True, created__lt=cutoff)
    )
    failed = []
    for job in stale.only("pk", "heartbeat", "created", "attempt"):
        last = timezone.localtime(job.heartbeat or job.created)
        current = ExportJob.objects.filter(pk=job.pk, status=ExportJob.Status.RUNNING, attempt=job.attempt)
        if job.attempt < settings.JOB_MAX_ATTEMPTS:
            # Queued again: the next worker takes it as attempt + 1 and writes it from the start; the
            # stopped attempt's worker, if it was only slow, changes nothing (its attempt is not current).
            if current.update(status=ExportJob.Status.QUEUED, done=0, heartbeat=None, error=""):
                for folder in _work_dirs(job.pk):
                    shutil.rmtree(folder, ignore_errors=True)
                transaction.on_commit(functools.partial(tasks.run_export_job_task.delay, job.pk))
                logger.warning("Export job %s: no heartbeat since %s, queued again (attempt %s of %s)", job.pk, last,
                               job.attempt + 1, settings.JOB_MAX_ATTEMPTS)
            continue
        message = (
            f"The export stopped: its worker gave no sign of life after {last:%Y-%m-%d %H:%M:%S} "
            f"(it was killed, ran out of memory or was restarted), {job.attempt} times in a row, so it was not "
            "started again. Its temporary files were removed; start the export again."
        )
        if current.update(status=ExportJob.Status.FAILED, error=message, finished=now):
            for folder in _work_dirs(job.pk):
                shutil.rmtree(folder, ignore_errors=True)
            logger.warning("Export job %s: no heartbeat since %s, marked failed", job.pk, last)
            failed.append(job.pk)
    return failed


class _Hold:
    """A worker's hold on one attempt of a job: progress and heartbeats, written while the attempt is current."""

    def __init__(self, job):
        self.job_id, self.attempt = job.pk, job.attempt
        self.last_beat = time.monotonic()

    def _current(self):
        return ExportJob.objects.filter(pk=self.job_id, status=ExportJob.Status.RUNNING, attempt=self.attempt)

    def _update(self, **fields):
        if not self._current().update(heartbeat=timezone.now(), **fields):
            raise JobLost(f"export job {self.job_id} (attempt {self.attempt}) was given up or taken over")
        self.last_beat = time.monotonic()

    def progress(self, done, total):
        self._update(done=done, total=total)

    def beat(self):
        if time.monotonic() - self.last_beat >= BEAT_SECONDS:
            self._update()

    def finish(self, **fields):
        self._update(status=ExportJob.Status.DONE, finished=timezone.now(), **fields)

    def fail(self, error):
        self._current().update(status=ExportJob.Status.FAILED, error=error, finished=timezone.now())


def _zip_folder(folder, target, beat):
    """Zip the files of folder into target, beating between blocks (a large file takes a while)."""
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.iterdir()):
            info = zipfile.ZipInfo.from_file(path, arcname=path.name)
            info.compress_type = zipfile.ZIP_DEFLATED
            with open(path, "rb") as source, archive.open(info, "w", force_zip64=True) as sink:
                for block in iter(lambda: source.read(COPY_BLOCK), b""):
                    sink.write(block)
                    beat()


class _Zip(File):
    """The finished zip handed to the storage: read in blocks with a heartbeat between them (an
    upload to a bucket takes a while); a local folder storage moves the file instead of copying it."""

    def __init__(self, path, beat):
        self._path, self._beat, self.lost = path, beat, False
        super().__init__(path.open("rb"), name=path.name)

    def temporary_file_path(self):
        return str(self._path)

    def read(self, *args):
        data = self.file.read(*args)
        if not self.lost:
            try:
                self._beat()
            except JobLost:  # the job was given up: the upload ends, then the object is removed
                self.lost = True
        return data


def _store(path, beat):
    """Save the zip at path to the storage layer; returns the name the storage gave it."""
    with _Zip(path, beat) as content:
        return default_storage.save(STORED_PREFIX + path.name, content)


def _remove_stored(name):
    if name:
        try:
            default_storage.delete(name)
        except Exception:  # noqa: BLE001 - logged; the job's state is what the person waiting sees
            logger.exception("Export: could not remove the stored file %s", name)


def run_export_job(job_id):
    """Write the export to a temporary folder, zip it there, save the zip to the storage layer,
    record the manifest; the temporary folder is removed whatever happens."""
    fail_stale_jobs()
    taken = ExportJob.objects.filter(pk=job_id, status=ExportJob.Status.QUEUED).update(
        status=ExportJob.Status.RUNNING, done=0, heartbeat=timezone.now(), attempt=F("attempt") + 1
    )
    if not taken:
        return  # running elsewhere, finished, failed or unknown: a redelivered task does nothing
    job = ExportJob.objects.get(pk=job_id)
    hold = _Hold(job)
    queryset = filter_responses(Response.objects.all(), job.filters)
    try:  # nothing of an export is written outside the storage layer but this scratch folder
        work = Path(tempfile.mkdtemp(prefix=f"{WORK_PREFIX}{job_id}-"))
    except OSError as exc:  # said at once on the job, not 300 s later as a dead worker
        reason = exc.strerror or type(exc).__name__
        root = tempfile.gettempdir()
        hold.fail(_("The temporary folder %(folder)s cannot be written (%(reason)s). Check TMPDIR and that the "
                    "worker may create files there, then start the export again.")
                  % {"folder": root, "reason": reason})
        logger.error("Export job %s: cannot write to %s: %s", job_id, root, exc)
        return
    name = download_name(job)
    stored = None
    try:
        manifest = write_export(queryset, job.format, work / "data", filters=job.filters, on_progress=hold.progress)
        _zip_folder(work / "data", work / name, hold.beat)
        size = (work / name).stat().st_size
        stored = _store(work / name, hold.beat)  # the object appears whole or not at all
        count = manifest["counts"]["responses"]
        hold.finish(file_name=stored, file_size=size, manifest=manifest, done=count, total=count)
    except JobLost as exc:
        _remove_stored(stored)
        logger.warning("%s; its files were removed", exc)
    except Exception as exc:  # noqa: BLE001 - any failure is recorded on the job for the person waiting
        _remove_stored(stored)
        hold.fail(f"{type(exc).__name__}: {exc}")
        raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
