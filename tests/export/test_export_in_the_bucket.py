"""Exports go through the storage layer (issue 38): the worker zips in a scratch folder under
EXPORT_ROOT, saves the zip to the default storage (here an S3 bucket of moto's server on 127.0.0.1)
and leaves nothing behind; the page and the API stream the object from the bucket, never through a
temporary local copy, behind the same permission checks. A job given up while its zip was being
stored removes the object; a job finished before exports were stored still downloads from EXPORT_ROOT."""
import io
import zipfile
from pathlib import Path

import pytest
from django.core.files.storage import default_storage
from django.test import Client
from django.urls import reverse
from django.utils.functional import empty
from storages.backends.s3 import S3Storage

from annotation.export import services as export_services
from annotation.models import ExportJob
from tests.factories import make_question, make_responses

from ..conftest import api_client_for
from .conftest import scratch_left

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _folders(settings, tmp_path):
    settings.EXPORT_ROOT = tmp_path / "exports"
    settings.MEDIA_ROOT = tmp_path / "media"


def _keys(s3, bucket):
    return {o["Key"]: o["Size"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", [])}


def _no_spooled_copy(monkeypatch):
    """django-storages' open() downloads the whole object into a temporary file: downloads must not use it."""
    def refuse(self, name, mode="rb"):
        raise AssertionError(f"{name} opened through a temporary copy")
    monkeypatch.setattr(S3Storage, "_open", refuse)


def test_an_export_is_an_object_of_the_bucket_and_downloads_stream_from_it(s3_bucket, reviewer, reviewer_client,
                                                                          annotator, settings, monkeypatch):
    s3, bucket = s3_bucket
    make_responses(make_question("Bucket problem: find x."), 5)
    job = ExportJob.objects.create(format="jsonl", filters={}, total=5, created_by=reviewer)
    export_services.run_export_job(job.pk)
    job.refresh_from_db()
    assert job.status == "done", job.error
    assert job.file_name == f"exports/realmath-export-{job.pk}-jsonl.zip"
    assert _keys(s3, bucket) == {job.file_name: job.file_size} and job.file_size > 0
    assert scratch_left() == [] and not Path(settings.EXPORT_ROOT).exists()  # scratch removed, no zip kept
    assert not Path(settings.MEDIA_ROOT).exists()  # nothing in the local storage folder either
    stored = s3.get_object(Bucket=bucket, Key=job.file_name)["Body"].read()

    _no_spooled_copy(monkeypatch)
    default_storage._wrapped = empty  # as in a fresh web process: the lazy storage not set up yet
    page = reviewer_client.get(reverse("annotation:export_download", args=[job.pk]))
    assert page.status_code == 200 and page.streaming
    assert page["Content-Length"] == str(job.file_size)
    assert f'filename="realmath-export-{job.pk}-jsonl.zip"' in page["Content-Disposition"]
    body = b"".join(page.streaming_content)
    assert body == stored
    with zipfile.ZipFile(io.BytesIO(body)) as archive:
        assert sorted(archive.namelist()) == ["dataset.jsonl", "manifest.json"]
    api = api_client_for(reviewer).get(f"/api/exports/{job.pk}/download/")
    assert api.status_code == 200 and b"".join(api.streaming_content) == stored
    # the same permission checks as with the local folder: an annotator gets nothing
    other = Client()
    other.force_login(annotator)
    assert other.get(reverse("annotation:export_download", args=[job.pk])).status_code == 403
    assert api_client_for(annotator).get(f"/api/exports/{job.pk}/download/").status_code == 403

    s3.delete_object(Bucket=bucket, Key=job.file_name)  # removed from the bucket: a 404, not a 500
    assert reviewer_client.get(reverse("annotation:export_download", args=[job.pk])).status_code == 404
    assert api_client_for(reviewer).get(f"/api/exports/{job.pk}/download/").status_code == 404


def test_a_job_given_up_while_its_zip_was_stored_removes_the_object(s3_bucket, reviewer, settings, monkeypatch):
    s3, bucket = s3_bucket
    make_responses(make_question("Given-up problem: find y."), 3)
    job = ExportJob.objects.create(format="csv", filters={}, total=3, created_by=reviewer)
    real_store = export_services._store

    def store_then_lose_the_job(path, beat):
        name = real_store(path, beat)
        assert name in _keys(s3, bucket)
        ExportJob.objects.filter(pk=job.pk).update(status="failed", error="given up")  # the stale check's verdict
        return name

    monkeypatch.setattr(export_services, "_store", store_then_lose_the_job)
    export_services.run_export_job(job.pk)
    job.refresh_from_db()
    assert (job.status, job.error, job.file_name) == ("failed", "given up", "")
    assert _keys(s3, bucket) == {}
    assert scratch_left() == [] and not Path(settings.EXPORT_ROOT).exists()


def test_on_the_local_default_the_zip_is_in_the_media_folder(reviewer, reviewer_client, settings):
    make_responses(make_question("Local problem: find z."), 2)
    job = ExportJob.objects.create(format="jsonl", filters={}, total=2, created_by=reviewer)
    export_services.run_export_job(job.pk)
    job.refresh_from_db()
    local = Path(settings.MEDIA_ROOT) / "exports" / f"realmath-export-{job.pk}-jsonl.zip"
    assert job.status == "done" and default_storage.path(job.file_name) == str(local)
    assert local.stat().st_size == job.file_size and scratch_left() == []
    download = reviewer_client.get(reverse("annotation:export_download", args=[job.pk]))
    assert b"".join(download.streaming_content) == local.read_bytes()


def test_a_job_finished_before_exports_were_stored_still_downloads_from_export_root(reviewer, reviewer_client,
                                                                                    settings):
    old = ExportJob.objects.create(format="csv", filters={}, total=1, status="done", created_by=reviewer)
    old.file_name = f"realmath-export-{old.pk}-csv.zip"  # the name an earlier version recorded
    Path(settings.EXPORT_ROOT).mkdir(parents=True)
    (Path(settings.EXPORT_ROOT) / old.file_name).write_bytes(b"PK old zip")
    old.save()
    page = reviewer_client.get(reverse("annotation:export_download", args=[old.pk]))
    assert page.status_code == 200 and b"".join(page.streaming_content) == b"PK old zip"
    api = api_client_for(reviewer).get(f"/api/exports/{old.pk}/download/")
    assert api.status_code == 200 and b"".join(api.streaming_content) == b"PK old zip"
    (Path(settings.EXPORT_ROOT) / old.file_name).unlink()
    assert reviewer_client.get(reverse("annotation:export_download", args=[old.pk])).status_code == 404
