"""Uploading a class PDF with its roster and template (ocr.views.class_upload, /ocr/class/): POST
only, reviewers only; taken whole (one packet per student, pages queued) or refused whole: with
files, they are kept for another try; without any, a 400 with the reasons on the batch list."""
import pytest
from django.test import Client
from django.urls import reverse

from ocr.models import PendingClassUpload, ScanBatch

from .class_scans import class_pdf, roster, template
from .test_class_pending import GOOD, upload

pytestmark = pytest.mark.django_db


def test_a_good_class_pdf_is_taken_whole(reviewer_client, exam_questions):
    answer = upload(reviewer_client, exam_questions["exam"], class_pdf(4), roster("a", "b"), template(GOOD))
    batch = ScanBatch.objects.get()
    assert answer.status_code == 302 and answer["Location"] == reverse("ocr:batch_detail", args=[batch.pk])
    assert batch.roster == ["a", "b"] and batch.pages.count() == 4
    assert sorted(set(batch.pages.values_list("student_id", flat=True))) == ["a", "b"]
    assert "2 packets, 4 pages queued." in reviewer_client.get(answer["Location"]).content.decode()


def test_a_refused_pdf_keeps_its_files_for_another_try(reviewer_client, exam_questions):
    answer = upload(reviewer_client, exam_questions["exam"], class_pdf(3), roster("a"), template(GOOD))
    pending = PendingClassUpload.objects.get()
    assert answer.status_code == 302 and answer["Location"] == reverse("ocr:class_pending", args=[pending.pk])
    assert not ScanBatch.objects.exists() and pending.problems


def test_no_file_at_all_is_a_400_with_the_reasons(reviewer_client, exam_questions):
    answer = reviewer_client.post(reverse("ocr:class_upload"), {"exam": exam_questions["exam"].pk,
                                                                 "engine": "tesseract"})
    assert answer.status_code == 400 and "Nothing was uploaded" in answer.content.decode()
    assert not PendingClassUpload.objects.exists() and not ScanBatch.objects.exists()


def test_refused_writes_take_nothing(annotator, reviewer, exam_questions):
    url = reverse("ocr:class_upload")
    assert "/accounts/login/" in Client().post(url)["Location"]
    other = Client()
    other.force_login(annotator)
    assert upload(other, exam_questions["exam"], class_pdf(2), roster("a"), template(GOOD)).status_code == 403
    other.force_login(reviewer)
    assert other.get(url).status_code == 405
    assert not ScanBatch.objects.exists() and not PendingClassUpload.objects.exists()
