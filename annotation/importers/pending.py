"""A release upload refused for a choice, kept so that the choice imports it in one step.

When an import was told to ask first and some of the file's questions are in another exam
(`placement.ExamOverlap`), the page shows where they are with one button per choice (join that
exam, move them here, leave them). The upload is kept in the storage layer (the local media
folder, or the bucket every machine reads: the worker that was refused and the web server that
imports on the choice may be different machines) as ``imports/pending/<token>.upload`` beside
``<token>.json`` (who uploaded it, format, file name, exam, the exams holding its questions, the
job it came from), for PENDING_SECONDS; only its uploader can take it. `expire` (run with the
periodic stale-job check) removes old ones.
"""
import json
import logging
import re
import time
import uuid
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from core.stored_files import open_stream

logger = logging.getLogger(__name__)

PENDING_SECONDS = 3600
TOKEN = re.compile(r"^[0-9a-f]{32}$")
PREFIX = "imports/pending/"


def _names(token):
    return f"{PREFIX}{token}.upload", f"{PREFIX}{token}.json"


def keep(user, *, fmt, file_name, exam_name, overlap, source, job_id=None):
    """Keep `source` (bytes, or the path of a local copy of the upload: a worker's scratch file,
    left for its owner to remove) in the storage layer for a choice; its token."""
    token = uuid.uuid4().hex
    upload, meta = _names(token)
    if isinstance(source, (bytes, bytearray)):
        default_storage.save(upload, ContentFile(bytes(source)))
    else:
        with open(source, "rb") as stream:
            default_storage.save(upload, File(stream))
    default_storage.save(meta, ContentFile(json.dumps({
        "user": getattr(user, "pk", None), "format": fmt, "file_name": file_name, "exam": exam_name,
        "job": job_id, "created": time.time(), "questions": overlap.questions,
        "holders": [{"id": exam.pk, "name": exam.name, "questions": n} for exam, n in overlap.holders],
    }).encode()))
    return token


def _meta(name):
    with open_stream(name) as stream:
        return json.loads(stream.read())


def read(token, user):
    """(meta, storage name of the upload) of a pending upload of `user`; LookupError if there is
    none (unknown, someone else's, expired)."""
    if not TOKEN.match(str(token)):
        raise LookupError(token)
    upload, meta_name = _names(token)
    try:
        meta = _meta(meta_name)
    except (OSError, ValueError) as exc:
        raise LookupError(token) from exc
    if (meta.get("user") != user.pk or time.time() - meta.get("created", 0) > PENDING_SECONDS
            or not default_storage.exists(upload)):
        raise LookupError(token)
    return meta, upload


def _kept_files():
    try:
        return default_storage.listdir(PREFIX)[1]
    except FileNotFoundError:  # the local folder was never made: nothing kept
        return []


def for_job(job):
    """(token, meta) of the pending upload a job left when it was refused for a choice, or None."""
    for file_name in _kept_files():
        if not file_name.endswith(".json"):
            continue
        try:
            meta = _meta(PREFIX + file_name)
        except (OSError, ValueError):
            continue
        if meta.get("job") == job.pk:
            return file_name.removesuffix(".json"), meta
    return None


def drop(token):
    for name in _names(token):
        default_storage.delete(name)


def expire():
    """Remove the pending uploads older than PENDING_SECONDS (and those kept under IMPORT_ROOT by
    earlier versions)."""
    cutoff = time.time() - PENDING_SECONDS
    for file_name in _kept_files():
        try:
            if default_storage.get_modified_time(PREFIX + file_name).timestamp() < cutoff:
                default_storage.delete(PREFIX + file_name)
        except Exception:  # noqa: BLE001 - removed by the next pass; one object must not stop the check
            logger.warning("Could not expire the pending upload %s", file_name, exc_info=True)
    for path in Path(settings.IMPORT_ROOT).glob("pending-*"):
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink(missing_ok=True)
        except OSError:
            continue
