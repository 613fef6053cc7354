"""A refused class PDF keeps its files for another try (ocr.class_uploads): another exam, one file
replaced, the exam that holds the labels suggested; only its uploader sees it; it expires."""
import os
from datetime import timedelta

import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from ocr import class_uploads, selectors, tasks
from ocr.models import PendingClassUpload, ScanBatch
from tests.factories import make_question

from .class_scans import class_pdf, roster, template

pytestmark = pytest.mark.django_db

GOOD = {"1": "3-17", "2": "3-18"}


@pytest.fixture
def release_exam(exam_questions):
    """A second exam holding labels 7-01 and 7-02 (the first holds 3-17, 3-18 and 5-1 twice)."""
    q1 = make_question("Release 7-01: $e^{x}$.", exam_name="Release exam", location="7-01")
    make_question("Release 7-02: $\\ln x$.", exam_name="Release exam", location="7-02")
    return q1.exam


def upload(client, exam, pdf=None, roster_bytes=None, template_bytes=None, engine="tesseract"):
    data = {"exam": exam.pk, "engine": engine, "name": "3B"}
    if pdf is not None:
        data["pdf"] = SimpleUploadedFile("class.pdf", pdf, "application/pdf")
    if roster_bytes is not None:
        data["roster"] = SimpleUploadedFile("ROSTER.csv", roster_bytes, "text/csv")
    if template_bytes is not None:
        data["template"] = SimpleUploadedFile("TEMPLATE.json", template_bytes, "application/json")
    return client.post(reverse("ocr:class_upload"), data)


def test_a_label_of_another_exam_keeps_the_files_and_suggests_that_exam(reviewer_client, exam_questions,
                                                                       release_exam):
    pdf = class_pdf(2)
    refused = upload(reviewer_client, exam_questions["exam"], pdf, roster("a"), template({"1": "7-01", "2": "7-02"}))
    pending = PendingClassUpload.objects.get()
    assert refused.status_code == 302 and refused["Location"] == reverse("ocr:class_pending", args=[pending.pk])
    assert not ScanBatch.objects.exists()
    assert default_storage.open(pending.pdf_stored).read() == pdf
    assert bytes(pending.roster) == roster("a") and pending.template_name == "TEMPLATE.json"
    page = reviewer_client.get(refused["Location"])
    body = page.content.decode()
    assert page.status_code == 200
    assert "names question “7-01”, which exam “Scan exam” does not have" in body
    assert "Nothing was imported yet: your files are kept here" in body
    assert f'data-exam="{release_exam.pk}"' in body and "Import into exam “Release exam”" in body
    # The suggestion's button: one click, no file chosen again.
    taken = reviewer_client.post(refused["Location"], {"exam": release_exam.pk, "engine": "tesseract", "name": "3B"})
    batch = ScanBatch.objects.get()
    assert taken.status_code == 302 and taken["Location"] == reverse("ocr:batch_detail", args=[batch.pk])
    assert batch.exam == release_exam and batch.name == "3B" and batch.pages.count() == 2
    assert not PendingClassUpload.objects.exists() and not default_storage.exists(pending.pdf_stored)
    assert reviewer_client.get(refused["Location"]).status_code == 404


def test_replace_one_file_and_keep_the_others(reviewer_client, exam_questions):
    refused = upload(reviewer_client, exam_questions["exam"], class_pdf(4), roster("a", "b", "c"), template(GOOD))
    pending = PendingClassUpload.objects.get()
    assert "The PDF has 4 pages, but the roster has 3 students" in " ".join(pending.problems)
    wrong_again = reviewer_client.post(refused["Location"], {
        "exam": exam_questions["exam"].pk, "engine": "tesseract",
        "roster": SimpleUploadedFile("ROSTER-2.csv", roster("a", "a"), "text/csv")})
    assert wrong_again.status_code == 400 and "lists student a twice" in wrong_again.content.decode()
    pending.refresh_from_db()
    assert pending.roster_name == "ROSTER-2.csv" and "lists student a twice" in pending.problems[0]
    taken = reviewer_client.post(refused["Location"], {
        "exam": exam_questions["exam"].pk, "engine": "tesseract", "name": "fixed",
        "roster": SimpleUploadedFile("ROSTER-3.csv", roster("a", "b"), "text/csv")})
    assert taken.status_code == 302
    batch = ScanBatch.objects.get()
    assert batch.roster == ["a", "b"] and batch.name == "fixed" and not PendingClassUpload.objects.exists()


def test_a_missing_file_is_asked_for_and_the_given_ones_kept(reviewer_client, exam_questions):
    refused = upload(reviewer_client, exam_questions["exam"], class_pdf(2), roster("a"))
    pending = PendingClassUpload.objects.get()
    assert refused.status_code == 302 and pending.pdf_stored and not pending.template
    page = reviewer_client.get(refused["Location"]).content.decode()
    assert "TEMPLATE.json: This field is required." in page and "not kept: choose it below" in page
    again = reviewer_client.post(refused["Location"], {"exam": exam_questions["exam"].pk, "engine": "tesseract"})
    assert again.status_code == 400 and "Choose TEMPLATE.json: none is kept" in again.content.decode()
    taken = reviewer_client.post(refused["Location"], {
        "exam": exam_questions["exam"].pk, "engine": "tesseract",
        "template": SimpleUploadedFile("TEMPLATE.json", template(GOOD), "application/json")})
    assert taken.status_code == 302 and ScanBatch.objects.get().pages.count() == 2


def test_nothing_chosen_keeps_nothing(reviewer_client, exam_questions):
    refused = reviewer_client.post(reverse("ocr:class_upload"), {"exam": exam_questions["exam"].pk,
                                                                 "engine": "tesseract"})
    assert refused.status_code == 400 and "Nothing was uploaded" in refused.content.decode()
    assert not PendingClassUpload.objects.exists()


def test_only_its_uploader_sees_it(reviewer_client, exam_questions):
    from django.test import Client

    from tests.conftest import make_user

    upload(reviewer_client, exam_questions["exam"], class_pdf(3), roster("a"), template(GOOD))
    pending = PendingClassUpload.objects.get()
    client = Client()
    client.force_login(make_user("reviewer2", "reviewer"))
    assert client.get(reverse("ocr:class_pending", args=[pending.pk])).status_code == 404
    assert client.post(reverse("ocr:class_pending_discard", args=[pending.pk])).status_code == 404
    assert client.post(reverse("ocr:class_pending", args=[pending.pk]),
                       {"exam": exam_questions["exam"].pk, "engine": "tesseract"}).status_code == 404
    assert "pending-uploads" not in client.get(reverse("ocr:batch_list")).content.decode()
    assert "pending-uploads" in reviewer_client.get(reverse("ocr:batch_list")).content.decode()
    assert reviewer_client.get(reverse("ocr:class_pending", args=[10**30])).status_code == 404
    discarded = reviewer_client.post(reverse("ocr:class_pending_discard", args=[pending.pk]))
    assert discarded.status_code == 302 and not PendingClassUpload.objects.exists()
    assert not default_storage.exists(pending.pdf_stored)


def test_annotators_cannot_reach_it(reviewer_client, exam_questions, annotator):
    from django.test import Client

    upload(reviewer_client, exam_questions["exam"], class_pdf(3), roster("a"), template(GOOD))
    pending = PendingClassUpload.objects.get()
    annotator_client = Client()
    annotator_client.force_login(annotator)
    assert annotator_client.get(reverse("ocr:class_pending", args=[pending.pk])).status_code in (302, 403)


def test_expired_uploads_are_deleted_with_their_pdf(reviewer_client, exam_questions, settings):
    upload(reviewer_client, exam_questions["exam"], class_pdf(3), roster("a"), template(GOOD))
    pending = PendingClassUpload.objects.get()
    assert pending.expires > timezone.now() + timedelta(hours=settings.OCR_PENDING_CLASS_UPLOAD_HOURS - 1)
    PendingClassUpload.objects.update(expires=timezone.now() - timedelta(seconds=1))
    assert reviewer_client.get(reverse("ocr:class_pending", args=[pending.pk])).status_code == 404
    assert tasks.delete_expired_class_uploads_task() == 1  # what the hourly beat entry runs
    assert not PendingClassUpload.objects.exists() and not default_storage.exists(pending.pdf_stored)
    assert "delete-expired-class-uploads" in settings.CELERY_BEAT_SCHEDULE


def test_a_person_keeps_a_bounded_number(reviewer_client, exam_questions, settings):
    settings.OCR_PENDING_CLASS_UPLOADS_PER_USER = 2
    for n in range(3):
        upload(reviewer_client, exam_questions["exam"], class_pdf(3 + n), roster("a"), template(GOOD))
    kept = list(PendingClassUpload.objects.order_by("id"))
    assert len(kept) == 2 and [p.pdf_size > 0 for p in kept] == [True, True]
    stored = [f for d, _, files in os.walk(settings.MEDIA_ROOT / "ocr" / "pending") for f in files]
    assert len(stored) == 2


def test_a_pdf_beyond_the_limit_is_not_kept(reviewer_client, exam_questions, settings):
    settings.OCR_MAX_CLASS_PDF_BYTES = 100
    upload(reviewer_client, exam_questions["exam"], class_pdf(2), roster("a"), template(GOOD))
    pending = PendingClassUpload.objects.get()
    assert not pending.pdf_stored and bytes(pending.roster) == roster("a")
    assert "is larger than" in " ".join(pending.problems) or "limit" in " ".join(pending.problems)


def test_suggestions_name_exams_holding_every_label(exam_questions, release_exam):
    found = selectors.exams_for_template(template({"1": "7-01", "2": "+", "3": "7-02", "4": None}),
                                         tried=exam_questions["exam"])
    assert found["exams"] == [release_exam]
    assert found["labels"] == [{"label": "7-01", "exams": ["Release exam"]},
                               {"label": "7-02", "exams": ["Release exam"]}]
    mixed = selectors.exams_for_template(template({"1": "7-01", "2": "3-17", "3": "9-99"}))
    assert mixed["exams"] == [] and mixed["labels"][2] == {"label": "9-99", "exams": []}
    # An exam where a label names two questions is no suggestion; a broken template suggests nothing.
    assert selectors.exams_for_template(template({"1": "5-1"}))["exams"] == []
    assert selectors.exams_for_template(b"{not json") == {"exams": [], "labels": []}
    assert selectors.exams_for_template(None) == {"exams": [], "labels": []}


def test_keep_and_retry_services_directly(exam_questions, release_exam, reviewer):
    from .class_scans import pdf_upload

    pending = class_uploads.keep_refused_upload(
        user=reviewer, problems=["x"], exam=exam_questions["exam"], engine="tesseract",
        pdf=pdf_upload(class_pdf(2)),
        roster=SimpleUploadedFile("ROSTER.csv", roster("a")),
        template=SimpleUploadedFile("TEMPLATE.json", template({"1": "7-01", "2": "7-02"})))
    with pytest.raises(class_uploads.packets.ClassScanRefused):
        class_uploads.retry(pending, exam=exam_questions["exam"], engine="tesseract", user=reviewer)
    assert PendingClassUpload.objects.filter(pk=pending.pk).exists()
    batch = class_uploads.retry(pending, exam=release_exam, engine="tesseract", user=reviewer)
    assert batch.exam == release_exam and not PendingClassUpload.objects.exists()
