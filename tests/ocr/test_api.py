"""The ocr API: upload a batch, follow its progress, save and verify transcripts (409 when stale)."""
import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from ocr.models import Page, Transcript
from tests.conftest import api_client_for

from .conftest import distinct_image, png_bytes
from .helpers import pages_without_ocr

pytestmark = pytest.mark.django_db


def upload(client, exam, *files, engine="tesseract"):
    from django.core.files.uploadedfile import SimpleUploadedFile

    payload = {"exam": exam.pk, "engine": engine,
               "files": [SimpleUploadedFile(name, data, content_type="image/png") for name, data in files]}
    return client.post(reverse("ocr-api-batch-list"), payload, format="multipart")


def test_annotators_and_anonymous_users_are_refused(annotator, exam_questions, make_batch):
    _, pages = pages_without_ocr(make_batch, 1)
    urls = [reverse("ocr-api-batch-list"), reverse("ocr-api-page-detail", args=[pages[0].pk]),
            reverse("ocr-api-batch-progress", args=[pages[0].batch_id])]
    for client, expected in ((api_client_for(annotator), 403), (APIClient(), 403)):
        for url in urls:
            assert client.get(url).status_code in (expected, 401)
        assert upload(client, exam_questions["exam"], ("a_3-17_1.png", png_bytes(distinct_image(1)))).status_code in (
            expected, 401)
        saved = client.post(reverse("ocr-api-page-transcript", args=[pages[0].pk]),
                            {"text": "x", "base_version": 1}, format="json")
        assert saved.status_code in (expected, 401)
    assert Transcript.objects.get(page=pages[0]).version == 1


def test_upload_reports_every_file(reviewer, exam_questions, django_capture_on_commit_callbacks):
    client = api_client_for(reviewer)
    response = upload(client, exam_questions["exam"], ("s1_3-17_1.png", png_bytes(distinct_image(3))),
                      ("bad_3-17_2.png", b"not an image"))
    assert response.status_code == 201
    files = response.json()["files"]
    assert [f["status"] for f in files] == ["accepted", "refused"]
    assert "plain text" in files[1]["message"]
    batch_id = response.json()["batch"]["id"]
    progress = client.get(reverse("ocr-api-batch-progress", args=[batch_id])).json()
    assert progress["total"] == 1
    listed = client.get(reverse("ocr-api-batch-files", args=[batch_id])).json()
    assert len(listed) == 2
    assert client.get(reverse("ocr-api-batch-list")).json()["count"] == 1
    page = Page.objects.get(batch_id=batch_id)
    detail = client.get(reverse("ocr-api-page-detail", args=[page.pk])).json()
    assert detail["student_id"] == "s1" and detail["ocr_runs"][0]["engine"] == "tesseract"


def test_upload_with_an_unknown_engine_is_a_400(reviewer, exam_questions):
    response = upload(api_client_for(reviewer), exam_questions["exam"], ("a.png", png_bytes(distinct_image(1))),
                      engine="nope")
    assert response.status_code == 400 and "engine" in response.json()


def test_save_stale_save_and_verify(reviewer, admin_user, make_batch):
    _, pages = pages_without_ocr(make_batch, 1)
    page = pages[0]
    url = reverse("ocr-api-page-transcript", args=[page.pk])
    first, second = api_client_for(reviewer), api_client_for(admin_user)

    saved = first.post(url, {"text": "解：$x=1$", "base_version": 1, "action": "autosave"}, format="json")
    assert saved.status_code == 200 and saved.json()["version"] == 2

    stale = second.post(url, {"text": "overwrite!", "base_version": 1}, format="json")
    assert stale.status_code == 409
    assert stale.json()["stale"] is True and stale.json()["version"] == 2
    assert "rev1 saved version 2" in stale.json()["detail"]
    assert Transcript.objects.get(page=page).text == "解：$x=1$"

    verified = first.post(url, {"text": "解：$x=2$", "base_version": 2, "action": "verify"}, format="json")
    assert verified.status_code == 200
    data = verified.json()
    assert data["status"] == "verified" and data["version"] == 3 and data["response_version"] == 1
    page.refresh_from_db()
    assert page.response.transcript == "解：$x=2$" and data["response"] == page.response_id


def test_invalid_save_requests(reviewer, make_batch):
    _, pages = pages_without_ocr(make_batch, 1, question="9-99")
    url = reverse("ocr-api-page-transcript", args=[pages[0].pk])
    client = api_client_for(reviewer)
    assert client.post(url, {"text": "x"}, format="json").status_code == 400
    assert client.post(url, {"text": "x", "base_version": 1, "action": "delete"}, format="json").status_code == 400
    refused = client.post(url, {"text": "x", "base_version": 1, "action": "verify"}, format="json")
    assert refused.status_code == 400 and "Assign a student and a question" in refused.json()["detail"]


def test_session_saves_need_the_csrf_token(reviewer, make_batch):
    from django.test import Client

    _, pages = pages_without_ocr(make_batch, 1)
    client = Client(enforce_csrf_checks=True)
    client.force_login(reviewer)
    response = client.post(reverse("ocr-api-page-transcript", args=[pages[0].pk]),
                           {"text": "x", "base_version": 1}, content_type="application/json")
    assert response.status_code == 403


def test_a_malformed_id_is_refused_before_it_is_looked_up(reviewer, db):
    for url in ("/api/ocr/batches/0.5/", "/api/ocr/pages/0.5/", "/api/ocr/batches/0.5/progress/"):
        assert APIClient().get(url).status_code == 401
        assert api_client_for(reviewer).get(url).status_code == 404
