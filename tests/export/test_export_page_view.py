import io
import zipfile

import pytest
from django.urls import reverse

from annotation.models import ExportJob

from ..conftest import api_client_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _export_root(settings, tmp_path):
    settings.EXPORT_ROOT = tmp_path / "exports"


def test_reviewer_starts_export_and_downloads_zip(reviewer_client, sample_data):
    response = reviewer_client.post(reverse("annotation:export"), {"format": "csv", "source": "human"})
    job = ExportJob.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("annotation:export_job", args=[job.pk])
    job.refresh_from_db()  # tasks run eagerly in tests
    assert job.status == "done" and job.done == job.total == 32
    progress = reviewer_client.get(reverse("annotation:export_progress", args=[job.pk])).json()
    assert progress["percent"] == 100 and progress["download"]
    download = reviewer_client.get(progress["download"])
    archive = zipfile.ZipFile(io.BytesIO(b"".join(download.streaming_content)))
    assert {"manifest.json", "responses.csv", "annotations.csv"} <= set(archive.namelist())
    page = reviewer_client.get(reverse("annotation:export_job", args=[job.pk])).content.decode()
    assert "responses.csv" in page and "Download zip" in page


def test_empty_selection_is_refused_with_message(reviewer_client, sample_data):
    response = reviewer_client.post(reverse("annotation:export"), {"format": "jsonl", "score_min": "99"})
    assert response.status_code == 400
    assert "nothing to export" in response.content.decode()
    assert not ExportJob.objects.exists()


def test_unknown_format_is_refused(reviewer_client, sample_data):
    response = reviewer_client.post(reverse("annotation:export"), {"format": "xlsx"})
    assert response.status_code == 400 and "Unknown format" in response.content.decode()


def test_annotators_cannot_export(annotator_client, annotator, sample_data):
    assert annotator_client.get(reverse("annotation:export")).status_code == 403
    assert annotator_client.post(reverse("annotation:export"), {"format": "jsonl"}).status_code == 403
    assert api_client_for(annotator).post("/api/exports/", {"format": "jsonl"}, format="json").status_code == 403


def test_api_export(reviewer, sample_data):
    api = api_client_for(reviewer)
    created = api.post("/api/exports/", {"format": "realmath", "filters": {"source": "synthetic"}}, format="json")
    assert created.status_code == 202
    job = api.get(f"/api/exports/{created.json()['id']}/").json()
    assert job["status"] == "done" and job["manifest"]["counts"]["responses"] == 32
    download = api.get(f"/api/exports/{job['id']}/download/")
    assert download.status_code == 200
    assert api.post("/api/exports/", {"format": "nope"}, format="json").status_code == 400


def test_api_lists_exports_filtered_by_format(reviewer, sample_data):
    api = api_client_for(reviewer)
    api.post("/api/exports/", {"format": "csv"}, format="json")
    api.post("/api/exports/", {"format": "jsonl"}, format="json")
    listed = api.get("/api/exports/", {"format": "csv"})
    assert listed.status_code == 200  # `format` is our filter, not DRF's renderer switch
    assert [job["format"] for job in listed.json()["results"]] == ["csv"]


def test_failed_export_is_recorded(reviewer, sample_data, monkeypatch):
    from annotation.export import services as export_services

    def explode(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(export_services, "write_export", explode)
    with pytest.raises(OSError):
        api_client_for(reviewer).post("/api/exports/", {"format": "jsonl"}, format="json")
    job = ExportJob.objects.get()
    assert job.status == "failed" and "disk full" in job.error
