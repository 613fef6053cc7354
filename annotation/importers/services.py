"""Import jobs: large uploads are stored, imported by a Celery worker, and followed on a page.

A running job shows it is alive through a file beside its upload (`.progress`): the worker
rewrites it with every step of progress and, from a heartbeat thread, every
IMPORT_HEARTBEAT_SECONDS. A running job whose file is older than IMPORT_STALE_SECONDS lost its
worker (killed, out of memory, machine restarted); `fail_stale_jobs` queues it again, up to
JOB_MAX_ATTEMPTS takes in all (the page says "Restarted automatically after the worker stopped:
attempt 2 of 3"), then marks it failed and removes its upload. Nothing of a dead attempt stays in
the database: the import runs in one transaction, or on SQLite in undoable write windows that the next
attempt (or, once given up, a task) removes first.
"""
import functools
import json
import logging
import os
import tempfile
import threading
import time
import uuid
import zipfile
from datetime import UTC, datetime
from pathlib import Path

from django.conf import settings
from django.core.cache import cache
from django.core.files import File
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone, translation
from django.utils.translation import gettext

from accounts.selectors import stored_language
from core.stored_files import STREAM_BLOCK, open_stream

from ..export.load import import_dataset, read_dataset_upload
from ..models import ImportJob
from . import pending, tasks
from .common import ImportFormatError
from .ineqmath import import_ineqmath
from .placement import ASK, ExamOverlap
from .realmath import import_realmath
from .write_windows import JobAbandoned, Pacer, WindowWriter, undo, write_windows_needed

logger = logging.getLogger(__name__)


def _import_full_export(raw, file_name, *, user=None, exam_name=None, on_progress=None, writer=None):
    """A full JSONL export (or its zip): exams come from the file, so no exam name applies.

    Bytes (an upload imported at once) are read in memory; a stored upload (a job) is read from
    its file, and the `dataset.jsonl` of a zip is first copied out beside it, within the caps,
    so that memory holds a line, not the file."""
    if isinstance(raw, (bytes, bytearray)):
        return import_dataset(read_dataset_upload(raw, file_name), file_name, user=user, on_progress=on_progress)
    if raw.read(4) != ZIP_MAGIC:
        raw.seek(0)
        return import_dataset(raw, file_name, user=user, on_progress=on_progress, writer=writer)
    raw.seek(0)
    extracted = Path(raw.name).with_suffix(".jsonl")
    try:
        extract_dataset(raw, file_name, extracted)
        with open(extracted, "rb") as stream:
            return import_dataset(stream, file_name, user=user, on_progress=on_progress, writer=writer)
    finally:
        extracted.unlink(missing_ok=True)


IMPORTERS = {"realmath": import_realmath, "ineqmath": import_ineqmath, "dataset": _import_full_export}
ZIP_MAGIC = b"PK\x03\x04"


def dataset_member(stream, file_name):
    """The `dataset.jsonl` entry of an export's zip (a binary file), checked against the size
    cap by the size the zip declares; reading it yields no more than that size (zipfile stops
    there and checks the CRC), so a zip bomb is refused before anything is inflated."""
    try:
        archive = zipfile.ZipFile(stream)
        info = archive.getinfo("dataset.jsonl")
    except KeyError as exc:
        raise ImportFormatError(gettext("%(file)s: the zip holds no dataset.jsonl (export it as full JSONL).")
                                % {"file": file_name}) from exc
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError) as exc:
        raise ImportFormatError(gettext("%(file)s: not a readable zip (%(error)s).") % {"file": file_name, "error": exc}) from exc
    if info.file_size > settings.IMPORT_MAX_BYTES:
        raise ImportFormatError(
            gettext("%(file)s: dataset.jsonl is %(size)s bytes uncompressed, larger than %(max)s bytes "
                    "(REALMATH_IMPORT_MAX_BYTES).") % {"file": file_name, "size": info.file_size,
                                                       "max": settings.IMPORT_MAX_BYTES}
        )
    return archive, info


def extract_dataset(stream, file_name, target):
    """Copy the `dataset.jsonl` of a zip to `target`, in blocks, never more than the caps."""
    archive, info = dataset_member(stream, file_name)
    written = 0
    try:
        with archive.open(info) as member, open(target, "wb") as out:
            for block in iter(lambda: member.read(1 << 20), b""):
                written += len(block)
                if written > min(info.file_size, settings.IMPORT_MAX_BYTES):
                    raise ImportFormatError(gettext("%(file)s: dataset.jsonl holds more than its zip declares.")
                                            % {"file": file_name})
                out.write(block)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        raise ImportFormatError(gettext("%(file)s: not a readable zip (%(error)s).") % {"file": file_name, "error": exc}) from exc


def import_size(upload, fmt):
    """The bytes an import of this upload will read: its size, or for the zip of a full export
    the uncompressed size of its dataset.jsonl (raises ImportFormatError past the cap)."""
    if fmt != "dataset":
        return upload.size
    upload.seek(0)
    head = upload.read(4)
    upload.seek(0)
    if head != ZIP_MAGIC:
        return upload.size
    try:
        _, info = dataset_member(upload, upload.name)
        return max(upload.size, info.file_size)
    finally:
        upload.seek(0)


def runs_in_background(upload, fmt="dataset"):
    """Whether an upload is imported by a worker: decided on what the import reads (for a zip,
    uncompressed), not on the bytes uploaded."""
    return import_size(upload, fmt) > settings.IMPORT_SYNC_MAX_BYTES


STAGED_PREFIX = "imports/"


def _staged(job):
    """Whether the job's upload is staged in the storage layer (`imports/<id>.upload`, readable by a
    worker on any machine) rather than a file under IMPORT_ROOT (jobs queued by earlier versions,
    and uploads kept for a choice, `pending.py`)."""
    return job.stored_name.startswith(STAGED_PREFIX)


def stored_path(job):
    """The job's upload as a local file: under IMPORT_ROOT, where a worker also copies an upload
    staged in the storage layer while it imports it (its scratch space; the files beside it too)."""
    return Path(settings.IMPORT_ROOT) / Path(job.stored_name).name


def _upload_is_there(job):
    return default_storage.exists(job.stored_name) if _staged(job) else stored_path(job).exists()


def _remove_staged(job):
    """Remove the staged upload and its options from the storage layer (nothing for a local one)."""
    if _staged(job):
        for name in (job.stored_name, _options_name(job.stored_name)):
            try:
                default_storage.delete(name)
            except Exception:  # noqa: BLE001 - logged; the job's outcome is what the uploader sees
                logger.exception("Import job %s: could not remove the staged file %s", job.pk, name)


def _options_name(stored_name):
    return stored_name.removesuffix(".upload") + ".options"


def _fetch_staged(job, target, beat=lambda: None):
    """Make the staged upload of a job the local file `target` (the worker's scratch space): a hard
    link when the storage is a folder of this machine, else a copy read block by block from the
    storage's stream (an S3 object's stream cannot seek; the importers read a file twice)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    target.unlink(missing_ok=True)  # a copy a dead attempt left
    try:
        os.link(default_storage.path(job.stored_name), target)
        return
    except (NotImplementedError, OSError):
        pass
    partial = target.with_suffix(".partial-upload")
    with open_stream(job.stored_name) as source, open(partial, "wb") as sink:
        for block in iter(lambda: source.read(STREAM_BLOCK), b""):
            sink.write(block)
            beat()
    partial.replace(target)


def _progress_path(job):
    return stored_path(job).with_suffix(".progress")


def _options_path(job):
    """The job's import options beside its upload (what else the form chose: `overlap`)."""
    return stored_path(job).with_suffix(".options")


def _job_options(job):
    try:
        if _staged(job):
            with open_stream(_options_name(job.stored_name)) as stream:
                return json.loads(stream.read())
        return json.loads(_options_path(job).read_text())
    except (OSError, ValueError):
        return {}


def _beat_key(job_id, attempt):
    return f"realmath:import-beat:{job_id}:{attempt}"


def _shared_beat(job):
    """(done, total, when) an attempt last shared through the cache, or None. With Redis
    (REDIS_URL, every machine of an installation) this is how the web server and the stale check
    on another machine see a worker's progress and heartbeat; the per-process cache of one machine
    has nothing here, and the file beside the upload serves."""
    try:
        value = cache.get(_beat_key(job.pk, job.attempt))
    except Exception:  # noqa: BLE001 - an unreachable cache is no sign of life, not an error page
        return None
    return value if isinstance(value, tuple) and len(value) == 3 else None


def _share_beat(job_id, attempt, done, total):
    try:
        cache.set(_beat_key(job_id, attempt), (done, total, time.time()), timeout=20 * settings.IMPORT_STALE_SECONDS)
    except Exception:  # noqa: BLE001 - the local progress file is still written
        logger.warning("Import job %s: could not share its progress through the cache", job_id, exc_info=True)


def _forget_beat(job):
    try:
        cache.delete(_beat_key(job.pk, job.attempt))
    except Exception:  # noqa: BLE001
        logger.warning("Import job %s: could not remove its shared progress", job.pk, exc_info=True)


def job_progress(job):
    """(done, total) of a job. A running import writes them to a file beside its upload (and, for
    other machines, to the cache), not to the database: its transaction would hide them until the
    end (and on SQLite hold the write lock)."""
    if job.status == ImportJob.Status.RUNNING:
        try:
            done, total = _progress_path(job).read_text().split()
            return int(done), int(total)
        except (OSError, ValueError):
            shared = _shared_beat(job)
            if shared is not None:
                return int(shared[0]), int(shared[1])
    return job.done, job.total


def progress_in_files():
    """Whether a running import shows its progress in a file beside its upload under IMPORT_ROOT:
    only when the cache is the process's own (the embedded default, without Redis), where that
    file is how the web server of the same machine sees it. With a shared cache (REDIS_URL: every
    machine of an installation) the cache is the one channel, and a worker writes no file but in
    its temporary folder (docs/deploy.md, the two-machine test)."""
    return settings.CACHES["default"]["BACKEND"].rsplit(".", 1)[-1] in ("LocMemCache", "DummyCache")


def _write_progress(progress_path, done, total, job=None):
    if progress_in_files():
        progress_path.parent.mkdir(parents=True, exist_ok=True)
        partial = progress_path.with_suffix(".partial")
        partial.write_text(f"{done} {total}")
        partial.replace(progress_path)
    if job is not None:
        _share_beat(job.pk, job.attempt, done, total)


def _last_sign_of_life(job):
    """When the worker last wrote the job's progress file, or when it last shared its progress
    through the cache if this machine has no such file (None if it never did)."""
    try:
        return _progress_path(job).stat().st_mtime
    except OSError:
        shared = _shared_beat(job)
        return shared[2] if shared is not None else None


def fail_stale_jobs():
    """Running jobs whose worker stopped showing signs of life: queued again while fewer than
    JOB_MAX_ATTEMPTS workers took them and their upload is still there (the next attempt first
    removes what the dead one's committed write windows wrote, `write_windows.undo`), else marked failed."""
    pending.expire()  # uploads kept for a choice nobody made
    cutoff = time.time() - settings.IMPORT_STALE_SECONDS
    for job in ImportJob.objects.filter(status=ImportJob.Status.RUNNING):
        last = _last_sign_of_life(job)
        if last is None:
            last = job.created.timestamp()
        if last >= cutoff:
            continue
        since = timezone.localtime(datetime.fromtimestamp(last, tz=UTC))
        if job.attempt < settings.JOB_MAX_ATTEMPTS and _upload_is_there(job):
            if ImportJob.objects.filter(pk=job.pk, status=ImportJob.Status.RUNNING, attempt=job.attempt).update(
                status=ImportJob.Status.QUEUED, done=0, error=""
            ):
                _progress_path(job).unlink(missing_ok=True)
                stored_path(job).with_suffix(".jsonl").unlink(missing_ok=True)
                _forget_beat(job)
                transaction.on_commit(functools.partial(tasks.run_import_job_task.delay, job.pk))
                logger.warning("Import job %s: no sign of life since %s, queued again (attempt %s of %s)", job.pk,
                               since, job.attempt + 1, settings.JOB_MAX_ATTEMPTS)
            continue
        with translation.override(_language_of(job.created_by)):
            error = gettext("The worker importing this file stopped (no sign of life since %(since)s). "
                            "Nothing was imported; upload the file again.") % {"since": f"{since:%Y-%m-%d %H:%M:%S}"}
        if ImportJob.objects.filter(pk=job.pk, status=ImportJob.Status.RUNNING).update(
            status=ImportJob.Status.FAILED, error=error, finished=timezone.now()
        ):
            logger.warning("Import job %s: no sign of life since %s, marked failed", job.pk, since)
            stored_path(job).unlink(missing_ok=True)
            _progress_path(job).unlink(missing_ok=True)
            stored_path(job).with_suffix(".jsonl").unlink(missing_ok=True)
            _options_path(job).unlink(missing_ok=True)
            _remove_staged(job)
            _forget_beat(job)
            if job.written:  # write windows it committed (SQLite): removed by a worker
                transaction.on_commit(functools.partial(tasks.undo_import_job_task.delay, job.pk))


class _Heartbeat:
    """Touches the progress file (and refreshes the shared progress) every IMPORT_HEARTBEAT_SECONDS
    while the import runs; `update` records a step of progress."""

    def __init__(self, path, job=None, total=0):
        self.path, self.job, self._stop = path, job, threading.Event()
        self.done_total = (0, total)
        self._thread = threading.Thread(target=self._beat, name="import-heartbeat", daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def update(self, done, total):
        self.done_total = (done, total)
        _write_progress(self.path, done, total, self.job)

    def _beat(self):
        while not self._stop.wait(settings.IMPORT_HEARTBEAT_SECONDS):
            if progress_in_files():
                try:
                    self.path.touch()
                except OSError:
                    pass
            if self.job is not None:  # the last progress, shared again with a new time
                _share_beat(self.job.pk, self.job.attempt, *self.done_total)


def create_import_job(user, fmt, upload, exam_name="", overlap=None):
    """Stage the upload in the storage layer (`imports/<id>.upload`: the local media folder, or the
    bucket that every worker machine reads) and queue its import; the worker picks it up after
    commit. `overlap` (release files: what to do with questions already in another exam) is staged
    beside it."""
    if fmt not in IMPORTERS:
        raise ValueError(gettext("Unknown format %(fmt)s; choose one of %(join)s.") % {"fmt": repr(fmt), "join": ', '.join(IMPORTERS)})
    stored_name = default_storage.save(f"{STAGED_PREFIX}{uuid.uuid4().hex}.upload", upload)
    if overlap:
        default_storage.save(_options_name(stored_name), ContentFile(json.dumps({"overlap": overlap}).encode()))
    job = ImportJob.objects.create(format=fmt, file_name=upload.name, stored_name=stored_name, file_size=upload.size,
                                   exam_name=exam_name or "", created_by=user)
    transaction.on_commit(lambda: tasks.run_import_job_task.delay(job.pk))
    return job


def import_pending(user, token, overlap):
    """Import an upload kept for a choice (`pending.py`) with that choice: ("report", ImportResult)
    at once, or ("job", ImportJob) when it is large. LookupError if it is not this user's or gone;
    ImportFormatError if the choice cannot be followed (nothing written, the upload kept)."""
    if overlap == ASK:
        raise ImportFormatError(gettext("Choose what to do with the questions already in another exam."))
    meta, kept = pending.read(token, user)
    kwargs = {"exam_name": meta["exam"], "overlap": overlap} if meta.get("exam") else {"overlap": overlap}
    size = default_storage.size(kept)
    if size > settings.IMPORT_SYNC_MAX_BYTES:  # staged again as a job's upload, read by a worker
        with open_stream(kept) as stream:
            stored_name = default_storage.save(f"{STAGED_PREFIX}{uuid.uuid4().hex}.upload", File(stream))
        default_storage.save(_options_name(stored_name), ContentFile(json.dumps({"overlap": overlap}).encode()))
        job = ImportJob.objects.create(format=meta["format"], file_name=meta["file_name"], stored_name=stored_name,
                                       file_size=size, exam_name=meta.get("exam") or "", created_by=user)
        pending.drop(token)
        transaction.on_commit(lambda: tasks.run_import_job_task.delay(job.pk))
        return "job", job
    with open_stream(kept) as stream:  # small (IMPORT_SYNC_MAX_BYTES): read in memory, as an upload is
        data = stream.read()
    result = IMPORTERS[meta["format"]](data, meta["file_name"], user=user, **kwargs)
    pending.drop(token)
    return "report", result


def _finish(job_id, **fields):
    ImportJob.objects.filter(pk=job_id).update(finished=timezone.now(), **fields)


def _language_of(user):
    """The language the messages of a user's job are written in: the one the person chose, else the
    server's (a worker has no request to take the browser's from)."""
    return (stored_language(user) if user is not None else "") or settings.LANGUAGE_CODE


def run_import_job(job_id, *, low_priority=False):
    """Import the stored file of a job; a malformed file fails the job with the importer's message,
    written in the language of the person who uploaded it.

    With `low_priority` (a worker: the task passes it) on PostgreSQL the import runs in a thread of
    its own at the CPU priority IMPORT_NICE (Linux: a thread's nice value is its own, so the worker
    process keeps its priority for its next tasks): on a small machine the web server's requests
    (label saves) then get the CPU first while a large import runs (docs/export.md, "Labelling
    goes on during a large import")."""
    updated = ImportJob.objects.filter(pk=job_id, status=ImportJob.Status.QUEUED).update(
        status=ImportJob.Status.RUNNING, attempt=F("attempt") + 1)
    if not updated:
        return  # running elsewhere, finished or unknown: a redelivered task does nothing
    job = ImportJob.objects.select_related("created_by").get(pk=job_id)
    if job.written:  # a restart after a worker died: what its committed write windows wrote goes first
        undo(job_id)

    def work():
        with translation.override(_language_of(job.created_by)):
            _run(job)

    # Not on SQLite: a batch holds the one write lock, and a thread of low priority holding it on a
    # busy machine would make every save wait longer (priority inversion; measured in docs/export.md).
    if low_priority and settings.IMPORT_NICE and not write_windows_needed():
        _in_low_priority_thread(work, settings.IMPORT_NICE)
    else:
        work()


def _in_low_priority_thread(work, nice):
    """Run `work()` in a new thread whose CPU priority is lowered by `nice`; its exception, if any,
    is raised here. The thread's database connection is closed when it ends."""
    failure = []

    def run():
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), min(19, os.getpriority(
                os.PRIO_PROCESS, threading.get_native_id()) + nice))
        except OSError:  # not allowed here: the import runs at the worker's priority
            logger.warning("Could not lower the import thread's CPU priority", exc_info=True)
        try:
            work()
        except BaseException as exc:  # noqa: BLE001 - handed to the task's thread, which raises it
            failure.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=run, name="import-job", daemon=True)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]


def _run(job):
    """Import a job's upload: a staged one from a local copy in a temporary folder of the worker
    (its scratch space, removed when the job ends whatever happens), one under IMPORT_ROOT (queued
    by an earlier version) where it is."""
    if not _staged(job):
        return _run_from(job, stored_path(job))
    with tempfile.TemporaryDirectory(prefix=f"realmath-import-{job.pk}-") as scratch:
        return _run_from(job, Path(scratch) / Path(job.stored_name).name)


def _run_from(job, path):
    job_id = job.pk
    progress_path = _progress_path(job)
    if _staged(job):
        last = [time.monotonic()]

        def beat():  # a large object takes a while to copy: the job shows it is alive meanwhile
            if time.monotonic() - last[0] >= settings.IMPORT_HEARTBEAT_SECONDS:
                _write_progress(progress_path, 0, job.file_size, job)
                last[0] = time.monotonic()

        try:
            _write_progress(progress_path, 0, job.file_size, job)
            _fetch_staged(job, path, beat)
        except Exception as exc:  # noqa: BLE001 - gone from the storage, storage unreachable, scratch not writable
            _finish(job_id, status=ImportJob.Status.FAILED, error=gettext("Nothing was imported. %(error)s")
                    % {"error": f"{type(exc).__name__}: {exc}"})
            path.unlink(missing_ok=True)
            progress_path.unlink(missing_ok=True)
            progress_path.with_suffix(".partial").unlink(missing_ok=True)
            _remove_staged(job)
            _forget_beat(job)
            return

    heartbeat = _Heartbeat(progress_path, job, job.file_size)
    heartbeat.update(0, job.file_size)

    kwargs = {"exam_name": job.exam_name} if job.exam_name else {}
    kwargs.update(_job_options(job))
    # On SQLite the import is written in short transactions that can be undone (write_windows.py); on
    # PostgreSQL in one transaction, paced the same way (write_windows.Pacer).
    writer = WindowWriter(job_id, attempt=job.attempt) if write_windows_needed() else Pacer()
    abandoned = False
    try:
        with open(path, "rb") as stream, heartbeat, writer.transaction():
            result = IMPORTERS[job.format](stream, job.file_name, user=job.created_by, on_progress=heartbeat.update,
                                           writer=writer, **kwargs)
            # Done in the import's last transaction: a worker killed after it left a whole import;
            # a worker only slow whose job was restarted meanwhile rolls its import back instead.
            if not ImportJob.objects.filter(pk=job_id, attempt=job.attempt).update(
                    finished=timezone.now(), status=ImportJob.Status.DONE, report_id=result.report_id,
                    done=job.file_size, total=job.file_size):
                raise JobAbandoned(f"import job {job_id} was restarted while attempt {job.attempt} ran")
            if writer is not None:
                writer.finish()
    except JobAbandoned:  # marked failed or restarted meanwhile (no sign of life): undo what it wrote
        writer.fail()
        abandoned = True  # the upload and its files are the stale check's or the next attempt's now
        return
    except ExamOverlap as exc:  # asked to ask first: the upload waits for the choice (pending.py)
        if writer is not None:
            writer.fail()
        pending.keep(job.created_by, fmt=job.format, file_name=job.file_name, exam_name=exc.exam_name, overlap=exc,
                     source=path, job_id=job_id)
        _finish(job_id, status=ImportJob.Status.FAILED,
                error=gettext("Nothing was imported. %(error)s") % {"error": exc})
        return
    except ImportFormatError as exc:
        if writer is not None:
            writer.fail()
        _finish(job_id, status=ImportJob.Status.FAILED,
                error=gettext("Nothing was imported. %(error)s") % {"error": exc})
        return
    except Exception as exc:
        if writer is not None:
            writer.fail(type(exc), exc, exc.__traceback__)
        _finish(job_id, status=ImportJob.Status.FAILED,
                error=gettext("Nothing was imported. %(error)s") % {"error": f"{type(exc).__name__}: {exc}"})
        raise
    finally:
        if not abandoned:
            path.unlink(missing_ok=True)
            progress_path.unlink(missing_ok=True)
            _options_path(job).unlink(missing_ok=True)
            _remove_staged(job)
            _forget_beat(job)
