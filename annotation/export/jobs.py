"""Export jobs: create one, run it (in a Celery worker), and find its file for download."""
import shutil
import tempfile
import zipfile
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ..models import ExportJob, Response
from ..selectors import RESPONSE_FILTERS, filter_responses
from .writers import FORMATS, write_export


def clean_filters(params):
    return {name: str(params[name]) for name in RESPONSE_FILTERS if params.get(name) not in (None, "")}


def create_export_job(user, fmt, params):
    """Queue an export of the responses matching params; the worker picks it up after commit."""
    from .tasks import run_export_job  # cycle: export.tasks imports this module

    if fmt not in FORMATS:
        raise ValueError(f"Unknown format {fmt!r}; choose one of {', '.join(FORMATS)}.")
    filters = clean_filters(params)
    total = filter_responses(Response.objects.all(), filters).count()
    if not total:
        raise ValueError("No response matches these filters; there is nothing to export.")
    job = ExportJob.objects.create(format=fmt, filters=filters, total=total, created_by=user)
    transaction.on_commit(lambda: run_export_job.delay(job.pk))
    return job


def export_path(job):
    return Path(settings.EXPORT_ROOT) / job.file_name


def _zip_folder(folder, target):
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.iterdir()):
            archive.write(path, arcname=path.name)


def run_export_job(job_id):
    """Write the export to a temporary folder, zip it under EXPORT_ROOT, record the manifest."""
    updated = ExportJob.objects.filter(pk=job_id, status__in=[ExportJob.Status.QUEUED, ExportJob.Status.RUNNING]).update(
        status=ExportJob.Status.RUNNING, done=0
    )
    if not updated:
        return  # finished or unknown: a redelivered task does nothing
    job = ExportJob.objects.get(pk=job_id)
    queryset = filter_responses(Response.objects.all(), job.filters)

    def progress(done, total):
        ExportJob.objects.filter(pk=job_id).update(done=done, total=total)

    root = Path(settings.EXPORT_ROOT)
    root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f"export-{job_id}-", dir=root))
    try:
        manifest = write_export(queryset, job.format, work / "data", filters=job.filters, on_progress=progress)
        name = f"realmath-export-{job_id}-{job.format}.zip"
        _zip_folder(work / "data", root / name)
    except Exception as exc:  # noqa: BLE001 - any failure is recorded on the job for the person waiting
        ExportJob.objects.filter(pk=job_id).update(
            status=ExportJob.Status.FAILED, error=f"{type(exc).__name__}: {exc}", finished=timezone.now()
        )
        raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    ExportJob.objects.filter(pk=job_id).update(
        status=ExportJob.Status.DONE, file_name=name, file_size=(root / name).stat().st_size, manifest=manifest,
        done=manifest["counts"]["responses"], total=manifest["counts"]["responses"], finished=timezone.now(),
    )
