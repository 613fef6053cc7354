"""The exports API (annotation.export.api.ExportJobViewSet, /api/exports/): start, list by format, download, a failure recorded."""
import pytest

from annotation.models import ExportJob

from ..conftest import api_client_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("_export_root")]


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
