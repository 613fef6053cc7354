import pytest
from django.urls import reverse

from annotation.models import ImportReport, Response
from tests.conftest import REALMATH_HUMAN, REALMATH_SYNTHETIC, api_client_for

pytestmark = pytest.mark.django_db


def test_reviewer_uploads_release_file_and_sees_report(reviewer_client):
    with REALMATH_HUMAN.open("rb") as handle:
        response = reviewer_client.post(reverse("annotation:import"), {"format": "realmath", "file": handle}, follow=True)
    assert response.status_code == 200
    assert Response.objects.count() == 32
    assert b"responses_created" in response.content


def test_upload_of_malformed_file_shows_error_and_writes_nothing(reviewer_client, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('[{"student_id": "x"}]')
    with bad.open("rb") as handle:
        response = reviewer_client.post(reverse("annotation:import"), {"format": "realmath", "file": handle})
    assert response.status_code == 200
    assert "Nothing was imported. record 0: missing field" in response.content.decode()
    assert ImportReport.objects.count() == 0


def test_api_import_and_reimport(reviewer):
    api = api_client_for(reviewer)
    with REALMATH_SYNTHETIC.open("rb") as handle:
        first = api.post("/api/import/", {"format": "realmath", "file": handle})
    assert first.status_code == 201
    assert first.json()["counts"]["responses_created"] == 32
    with REALMATH_SYNTHETIC.open("rb") as handle:
        second = api.post("/api/import/", {"format": "realmath", "file": handle})
    assert second.json()["counts"]["responses_created"] == 0
    assert second.json()["counts"]["responses_skipped"] == 32


def test_api_import_malformed_is_400(reviewer):
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("x.json", b"not json", content_type="application/json")
    response = api_client_for(reviewer).post("/api/import/", {"format": "realmath", "file": upload})
    assert response.status_code == 400
    assert "not valid JSON" in response.json()["detail"]
