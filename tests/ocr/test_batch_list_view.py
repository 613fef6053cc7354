"""The upload page: batches listed, one or many files uploaded, OCR queued per page."""
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from ocr.models import OcrRun, Page, ScanBatch

from ..conftest import assert_reviewer_only
from .conftest import png_bytes, small_page
from .hostile_files import pdf_of_images

pytestmark = pytest.mark.django_db


def test_only_reviewers_and_admins_may_upload(annotator, reviewer, exam_questions, client):
    response = assert_reviewer_only(reverse("ocr:batch_list"), annotator, reviewer)
    assert response.status_code == 200
    body = response.content.decode()
    assert "&lt;student&gt;_&lt;question&gt;_&lt;page&gt;" in body
    assert "RapidOCR" in body and "Tesseract" in body
    client.force_login(annotator)
    upload = SimpleUploadedFile("s1_3-17_1.png", png_bytes(small_page()[0]), content_type="image/png")
    refused = client.post(reverse("ocr:batch_list"), {"exam": exam_questions["exam"].pk, "engine": "tesseract",
                                                      "scans": [upload]})
    assert refused.status_code == 403
    assert not ScanBatch.objects.exists()


def test_upload_several_files_runs_ocr_per_page(reviewer_client, exam_questions, run_tasks):
    first, truth = small_page(0)
    second, _ = small_page(1)
    pdf = pdf_of_images([small_page(2)[0].convert("RGB"), small_page(3)[0].convert("RGB")])
    files = [
        SimpleUploadedFile("s01_3-17_1.png", png_bytes(first), content_type="image/png"),
        SimpleUploadedFile("s01_3-17_2.png", png_bytes(second), content_type="image/png"),
        SimpleUploadedFile("s02_3-18.pdf", pdf, content_type="application/pdf"),
    ]
    with run_tasks():
        response = reviewer_client.post(
            reverse("ocr:batch_list"),
            {"exam": exam_questions["exam"].pk, "engine": "tesseract", "name": "Morning scans", "scans": files},
        )
    batch = ScanBatch.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("ocr:batch_detail", args=[batch.pk])
    assert batch.name == "Morning scans" and batch.engine == "tesseract"
    pages = list(Page.objects.filter(batch=batch).order_by("student_id", "page_number"))
    assert [(p.student_id, p.question.location, p.page_number) for p in pages] == [
        ("s01", "3-17", 1), ("s01", "3-17", 2), ("s02", "3-18", 1), ("s02", "3-18", 2),
    ]
    assert OcrRun.objects.filter(page__batch=batch, status="done").count() == 4
    assert all(p.transcript.version == 1 for p in pages)
    listing = reviewer_client.get(reverse("ocr:batch_list")).content.decode()
    assert "Morning scans" in listing


def test_upload_form_errors_are_shown(reviewer_client, exam_questions):
    response = reviewer_client.post(reverse("ocr:batch_list"), {"exam": exam_questions["exam"].pk, "engine": "nope"})
    assert response.status_code == 200
    body = response.content.decode()
    assert "Select a valid choice" in body and "This field is required" in body


def test_too_many_files_leave_no_batch_behind(reviewer_client, exam_questions, settings, tmp_path):
    """The page, the API and ingest_scans use one service (services.ingest_new_batch): files
    refused as a whole leave no empty batch (the page used to leave one)."""
    settings.OCR_MAX_FILES_PER_BATCH = 1
    files = [SimpleUploadedFile(f"s0{i}_3-17_1.png", png_bytes(small_page(i)[0]), content_type="image/png")
             for i in range(2)]
    response = reviewer_client.post(reverse("ocr:batch_list"),
                                    {"exam": exam_questions["exam"].pk, "engine": "tesseract", "scans": files})
    assert response.status_code == 200 and "the limit is 1" in response.content.decode()
    assert not ScanBatch.objects.exists()

    from django.core.management import CommandError, call_command

    for i in range(2):
        (tmp_path / f"s0{i}_3-17_1.png").write_bytes(png_bytes(small_page(i)[0]))
    with pytest.raises(CommandError, match="the limit is 1"):
        call_command("ingest_scans", str(tmp_path), "--exam", exam_questions["exam"].name)
    assert not ScanBatch.objects.exists()
