"""A release upload refused for a choice, kept so that the choice imports it in one step.

When an import was told to ask first and some of the file's questions are in another exam
(`placement.ExamOverlap`), the page shows where they are with one button per choice (join that
exam, move them here, leave them). The upload is kept under IMPORT_ROOT as
``pending-<token>.upload`` beside ``pending-<token>.json`` (who uploaded it, format, file name,
exam, the exams holding its questions, the job it came from), for PENDING_SECONDS; only its
uploader can take it. `expire` (run with the periodic stale-job check) removes old ones.
"""
import json
import re
import shutil
import time
import uuid
from pathlib import Path

from django.conf import settings

PENDING_SECONDS = 3600
TOKEN = re.compile(r"^[0-9a-f]{32}$")


def _paths(token):
    root = Path(settings.IMPORT_ROOT)
    return root / f"pending-{token}.upload", root / f"pending-{token}.json"


def keep(user, *, fmt, file_name, exam_name, overlap, source, job_id=None):
    """Keep `source` (bytes, or the path of a stored upload, moved) for a choice; its token."""
    token = uuid.uuid4().hex
    upload, meta = _paths(token)
    upload.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(source, (bytes, bytearray)):
        upload.write_bytes(source)
    else:
        shutil.move(source, upload)
    meta.write_text(json.dumps({
        "user": getattr(user, "pk", None), "format": fmt, "file_name": file_name, "exam": exam_name,
        "job": job_id, "created": time.time(), "questions": overlap.questions,
        "holders": [{"id": exam.pk, "name": exam.name, "questions": n} for exam, n in overlap.holders],
    }))
    return token


def read(token, user):
    """(meta, path of the upload) of a pending upload of `user`; LookupError if there is none
    (unknown, someone else's, expired)."""
    if not TOKEN.match(str(token)):
        raise LookupError(token)
    upload, meta_path = _paths(token)
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, ValueError) as exc:
        raise LookupError(token) from exc
    if meta.get("user") != user.pk or time.time() - meta.get("created", 0) > PENDING_SECONDS or not upload.exists():
        raise LookupError(token)
    return meta, upload


def for_job(job):
    """(token, meta) of the pending upload a job left when it was refused for a choice, or None."""
    for meta_path in Path(settings.IMPORT_ROOT).glob("pending-*.json"):
        try:
            meta = json.loads(meta_path.read_text())
        except (OSError, ValueError):
            continue
        if meta.get("job") == job.pk:
            return meta_path.stem.removeprefix("pending-"), meta
    return None


def drop(token):
    for path in _paths(token):
        path.unlink(missing_ok=True)


def expire():
    """Remove the pending uploads older than PENDING_SECONDS."""
    cutoff = time.time() - PENDING_SECONDS
    for path in Path(settings.IMPORT_ROOT).glob("pending-*"):
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink(missing_ok=True)
        except OSError:
            continue
