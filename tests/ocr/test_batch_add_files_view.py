"""Adding scans to a batch (ocr.views.batch_add_files, /ocr/batches/<pk>/files/): POST only,
reviewers only; new pages are queued for OCR and the report says what was accepted; no file or
a file that is no image is refused with a message; an unknown id is a 404."""
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from ocr.models import OcrRun, Page

from .conftest import distinct_image, png_bytes
from .helpers import pages_without_ocr

pytestmark = pytest.mark.django_db


def png(name, n):
    return SimpleUploadedFile(name, png_bytes(distinct_image(n)), content_type="image/png")


def test_a_reviewer_adds_a_scan_and_its_page_is_queued(reviewer_client, make_batch):
    batch, _ = pages_without_ocr(make_batch, 1)
    answer = reviewer_client.post(reverse("ocr:batch_add_files", args=[batch.pk]),
                                  {"scans": [png("s009_3-17_1.png", 90)]}, follow=True)
    assert "1 of 1 file(s) accepted, 1 new page(s) queued for OCR." in answer.content.decode()
    added = Page.objects.get(batch=batch, student_id="s009")
    assert OcrRun.objects.get(page=added).status == "queued"


def test_no_file_or_a_file_that_is_no_image_is_refused(reviewer_client, make_batch):
    batch, _ = pages_without_ocr(make_batch, 1)
    url = reverse("ocr:batch_add_files", args=[batch.pk])
    empty = reviewer_client.post(url, {}, follow=True)
    assert "Choose one or more files to add." in empty.content.decode()
    bad = reviewer_client.post(url, {"scans": [SimpleUploadedFile("notes.png", b"not an image at all")]}, follow=True)
    assert bad.status_code == 200 and "0 of 1 file(s) accepted" in bad.content.decode()
    assert "notes.png:" in bad.content.decode()
    assert Page.objects.filter(batch=batch).count() == 1


def test_refused_writes_add_nothing(annotator, reviewer, make_batch):
    batch, _ = pages_without_ocr(make_batch, 1)
    url = reverse("ocr:batch_add_files", args=[batch.pk])
    assert "/accounts/login/" in Client().post(url, {"scans": [png("s1_3-17_1.png", 91)]})["Location"]
    other = Client()
    other.force_login(annotator)
    assert other.post(url, {"scans": [png("s1_3-17_1.png", 91)]}).status_code == 403
    other.force_login(reviewer)
    assert other.get(url).status_code == 405
    assert Page.objects.filter(batch=batch).count() == 1


@pytest.mark.parametrize("pk", [999999, 2**63])
def test_an_unknown_batch_is_a_404(reviewer_client, pk):
    assert reviewer_client.post(f"/ocr/batches/{pk}/files/", {"scans": [png("x.png", 92)]}).status_code == 404
