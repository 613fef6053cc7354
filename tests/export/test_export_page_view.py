"""The export page (annotation.export.views.export_page, /export/): reviewers start an export and download it; bad requests refused."""
import io
import zipfile

import pytest
from django.urls import reverse

from annotation.models import ExportJob

from ..conftest import api_client_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("_export_root")]


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
