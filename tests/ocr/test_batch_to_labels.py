"""From a scan batch to labelling: the batch's answers with their state, "Assign these", the Assign page's
batch choice and `assign_labels`; the class PDF upload page and `ingest_scans` with a roster and template."""
import io
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from annotation.models import Assignment, Label
from ocr import services
from ocr.models import OcrRun, Page, ScanBatch
from ocr.selectors import batch_progress

from .class_scans import class_pdf, roster, template
from .test_packets import class_batch, page_at

pytestmark = pytest.mark.django_db


def half_verified_batch(exam_questions, reviewer, students=("s01", "s02")):
    """Each student's 3-17 verified (a ready response); their 3-18 only corrected (no response yet)."""
    batch = class_batch(exam_questions, reviewer, students=students, verify=False)
    for page in Page.objects.filter(batch=batch, is_cover=False).select_related("question", "transcript"):
        if page.question.location == "3-17":
            services.verify_transcript(page, text=page.transcript.text, base_version=1, user=reviewer)
        else:
            services.save_transcript(page, text=page.transcript.text + " corrected", base_version=1, user=reviewer)
    return batch


def test_batch_page_lists_answers_with_their_state(reviewer_client, exam_questions, reviewer, annotator):
    batch = half_verified_batch(exam_questions, reviewer, students=("s01", "s02", "s03"))
    q17 = exam_questions["3-17"]
    labelled = q17.responses.get(student_id="s01")
    assigned = q17.responses.get(student_id="s02")
    Assignment.objects.create(response=labelled, annotator=annotator, completed_at=timezone.now())
    Label.objects.create(response=labelled, annotator=annotator, total=3, submitted=True)
    Assignment.objects.create(response=assigned, annotator=annotator)
    OcrRun.objects.filter(page=page_at(batch, 9)).update(status="queued")  # s03's 3-18 not read yet
    page = page_at(batch, 9)
    page.transcript.delete()
    response = reviewer_client.get(reverse("ocr:batch_detail", args=[batch.pk]))
    states = {(a["student_id"], a["question"].location): a["state"] for a in response.context["answers"]}
    assert states == {("s01", "3-17"): "labelled", ("s02", "3-17"): "assigned", ("s03", "3-17"): "verified",
                      ("s01", "3-18"): "corrected", ("s02", "3-18"): "corrected", ("s03", "3-18"): "OCR"}
    assert response.context["answer_counts"] == {"OCR": 1, "corrected": 2, "verified": 1, "assigned": 1,
                                                 "labelled": 1}
    body = response.content.decode()
    assert "Assign these" in body and 'data-state="labelled"' in body and "1 / 1" in body
    assert reverse("annotation:response_detail", args=[labelled.pk]) in body


def test_assign_these_gives_out_the_verified_answers_only(reviewer_client, exam_questions, reviewer, annotator,
                                                         annotator2):
    batch = half_verified_batch(exam_questions, reviewer)
    url = reverse("ocr:batch_assign_labels", args=[batch.pk])
    done = reviewer_client.post(url, {"annotators": [annotator.pk, annotator2.pk], "per_response": 2,
                                      "strategy": "round_robin"}, follow=True)
    body = done.content.decode()
    assert "Created 4 assignment(s) over 2 response(s) (ann1: 2, ann2: 2)" in body
    assert "2 answer(s) of the batch are not verified yet and were left out" in body
    q17 = exam_questions["3-17"]
    assert set(Assignment.objects.values_list("response__question", flat=True)) == {q17.pk}
    again = reviewer_client.post(url, {"annotators": [annotator.pk], "per_response": 2, "strategy": "least_loaded"},
                                 follow=True)
    assert "Created 0 assignment(s) over 2 response(s); 2 already had enough." in again.content.decode()
    refused = reviewer_client.post(url, {"annotators": [annotator.pk], "per_response": 0, "strategy": "round_robin"},
                                   follow=True)
    assert "Nothing was assigned. per_response" in refused.content.decode()
    nobody = reviewer_client.post(url, {"per_response": 3, "strategy": "round_robin"}, follow=True)
    assert "Nothing was assigned. annotators: Choose at least one annotator." in nobody.content.decode()
    assert Assignment.objects.count() == 4


def test_annotators_cannot_assign_a_batch(annotator_client, exam_questions, reviewer):
    batch = half_verified_batch(exam_questions, reviewer)
    answer = annotator_client.post(reverse("ocr:batch_assign_labels", args=[batch.pk]), {"per_response": 1})
    assert answer.status_code == 403 and not Assignment.objects.exists()


def test_assign_page_can_pick_a_batch(reviewer_client, exam_questions, reviewer, annotator):
    batch = half_verified_batch(exam_questions, reviewer)
    other = class_batch(exam_questions, reviewer, students=("s07",))
    page = reviewer_client.get(reverse("annotation:assign") + f"?batch={batch.pk}")
    assert [b.pk for b in page.context["batches"]] == [other.pk, batch.pk]
    assert f'<option value="{batch.pk}" selected>' in page.content.decode()
    done = reviewer_client.post(reverse("annotation:assign"), {"batch": batch.pk, "per_response": 1,
                                                               "strategy": "round_robin",
                                                               "annotators": [annotator.pk]}, follow=True)
    assert "Created 2 assignment(s) over 2 response(s) (ann1: 2)" in done.content.decode()
    assert set(Assignment.objects.values_list("response__student_id", flat=True)) == {"s01", "s02"}


def test_assign_labels_command(exam_questions, reviewer, annotator, annotator2):
    batch = half_verified_batch(exam_questions, reviewer)
    class_batch(exam_questions, reviewer, students=("s07",))
    out = io.StringIO()
    call_command("assign_labels", "--exam", "Scan exam", "--batch", str(batch.pk), "--question", "3-17",
                 "--annotators", "ann1,ann2", "--per-response", "1", "--strategy", "least-loaded",
                 "--by", reviewer.username, stdout=out)
    assert "Created 2 assignment(s) over 2 response(s) (ann1: 1, ann2: 1); 0 already had enough." in out.getvalue()
    assert Assignment.objects.filter(assigned_by=reviewer, strategy="least_loaded").count() == 2
    out = io.StringIO()
    call_command("assign_labels", "--exam", "Scan exam", "--batch", str(batch.pk), "--annotators", "ann1,ann2",
                 "--per-response", "2", stdout=out)
    assert "Created 2 assignment(s) over 2 response(s)" in out.getvalue()
    assert f"2 answer(s) of batch #{batch.pk} are not verified yet and were left out." in out.getvalue()
    out = io.StringIO()
    call_command("assign_labels", "--exam", "Scan exam", "--annotators", "ann1", "--per-response", "1", stdout=out)
    assert "over 4 response(s)" in out.getvalue()  # the whole exam: every response of both batches


@pytest.mark.parametrize("arguments, message", [
    (["--exam", "Nope"], "No exam named or numbered 'Nope'"),
    (["--exam", "Scan exam", "--batch", "999999"], "No scan batch #999999"),
    (["--exam", "Scan exam", "--batch", "9" * 30], "No scan batch #"),
    (["--exam", "Scan exam", "--question", "9-99"], "No question labelled or numbered '9-99'"),
    (["--exam", "Scan exam", "--question", "5-1"], "'5-1' names 2 questions"),
    (["--exam", "Scan exam", "--annotators", "ann1,ghost,nobody"], "No user named 'ghost', 'nobody'"),
    (["--exam", "Scan exam", "--annotators", "rev1"], "Not an active annotator: 'rev1'"),
    (["--exam", "Scan exam", "--annotators", ""], "Nothing was assigned. annotators: Choose at least one annotator"),
    (["--exam", "Scan exam", "--annotators", "ann1", "--per-response", "0"], "Ask for at least one label"),
])
def test_assign_labels_command_errors(exam_questions, reviewer, annotator, arguments, message):
    if "--per-response" not in arguments:
        arguments = [*arguments, "--per-response", "1"]
    with pytest.raises(CommandError, match=message):
        call_command("assign_labels", *arguments)
    assert not Assignment.objects.exists()


def test_assign_labels_refuses_a_batch_of_another_exam(exam_questions, reviewer, annotator):
    from tests.factories import make_question

    make_question("Elsewhere", exam_name="Other exam")
    batch = class_batch(exam_questions, reviewer, students=("s07",))
    with pytest.raises(CommandError, match=f"Scan batch #{batch.pk} belongs to exam “Scan exam”, not “Other exam”"):
        call_command("assign_labels", "--exam", "Other exam", "--batch", str(batch.pk), "--annotators", "ann1",
                     "--per-response", "1")


def test_class_pdf_upload_page(reviewer_client, exam_questions, settings):
    from django.core.files.uploadedfile import SimpleUploadedFile

    def post(pdf, roster_bytes, template_bytes):
        return reviewer_client.post(reverse("ocr:class_upload"), {
            "exam": exam_questions["exam"].pk, "engine": "tesseract", "name": "3B",
            "pdf": SimpleUploadedFile("class.pdf", pdf, "application/pdf"),
            "roster": SimpleUploadedFile("ROSTER.csv", roster_bytes, "text/csv"),
            "template": SimpleUploadedFile("TEMPLATE.json", template_bytes, "application/json"),
        })

    refused = post(class_pdf(8), roster("a", "b", "c"), template({"1": "3-17", "2": "3-18"}))
    assert refused.status_code == 302 and "/ocr/class/kept/" in refused["Location"]  # files kept for a retry
    body = reviewer_client.get(refused["Location"]).content.decode()
    assert "The PDF has 8 pages, but the roster has 3 students of 2 pages (6 pages)" in body
    assert "Nothing was imported yet" in body and not ScanBatch.objects.exists()
    done = post(class_pdf(6), roster("a", "b", "c"), template({"1": "3-17", "2": "3-18"}))
    batch = ScanBatch.objects.get(name="3B")
    assert done.status_code == 302 and done["Location"] == reverse("ocr:batch_detail", args=[batch.pk])
    assert batch.pages.count() == 6 and batch.roster == ["a", "b", "c"]
    page = reviewer_client.get(done["Location"]).content.decode()
    assert "Class PDF: 3 packets of 2 pages." in page and "3 packets, 6 pages queued." in page
    missing = reviewer_client.post(reverse("ocr:class_upload"), {"exam": exam_questions["exam"].pk, "engine": "tesseract"})
    assert missing.status_code == 400 and ScanBatch.objects.count() == 1


def test_ingest_scans_with_a_class_pdf(tmp_path, exam_questions, reviewer):
    pdf, good, bad = tmp_path / "class.pdf", tmp_path / "TEMPLATE.json", tmp_path / "wrong.json"
    pdf.write_bytes(class_pdf(4))
    (tmp_path / "ROSTER.csv").write_bytes(roster("s01", "s02"))
    good.write_bytes(template({"1": None, "2": "3-17"}))
    bad.write_bytes(template({"1": "3-17"}))
    base = ["ingest_scans", str(pdf), "--exam", "Scan exam", "--engine", "tesseract", "--roster",
            str(tmp_path / "ROSTER.csv")]
    with pytest.raises(CommandError, match=r"(?s)nothing was stored:\n  - The PDF has 4 pages, but the roster has 2 "
                                           r"students of 1 page \(2 pages\)"):
        call_command(*base, "--template", str(bad))
    assert not ScanBatch.objects.exists()
    with pytest.raises(CommandError, match="needs both --roster"):
        call_command("ingest_scans", str(pdf), "--exam", "Scan exam", "--template", str(good))
    with pytest.raises(CommandError, match="a class PDF needs --roster and --template"):
        call_command("ingest_scans", str(pdf), "--exam", "Scan exam")
    with pytest.raises(CommandError, match="Cannot read"):
        call_command(*base, "--template", str(tmp_path / "missing.json"))
    out = io.StringIO()
    call_command(*base, "--template", str(good), "--user", reviewer.username, "--name", "3B", stdout=out)
    assert "2 packets of 2 pages; 2 answer page(s) queued for tesseract." in out.getvalue()
    batch = ScanBatch.objects.get(name="3B")
    assert batch.created_by == reviewer and batch.pages.filter(is_cover=True).count() == 2


def test_eta_from_the_pace_of_finished_pages(make_batch):
    from .helpers import pages_without_ocr

    batch, pages = pages_without_ocr(make_batch, 5)
    now = timezone.now()
    runs = list(OcrRun.objects.filter(page__batch=batch).order_by("pk"))
    for index, run in enumerate(runs[:2]):
        OcrRun.objects.filter(pk=run.pk).update(started=now - timedelta(seconds=40), finished=now - timedelta(seconds=20 - 20 * index))
    OcrRun.objects.filter(pk__in=[run.pk for run in runs[2:]]).update(status="queued")
    progress = batch_progress(batch)
    # 2 pages in 40 s since the first started: 20 s a page; 3 left, the last one finished just now.
    assert progress["eta_seconds"] == 3 * 20 - 0 and progress["eta_text"] == "about 1 min left"
    OcrRun.objects.filter(pk__in=[run.pk for run in runs[:2]]).update(finished=now - timedelta(minutes=11))
    assert batch_progress(batch)["eta_seconds"] is None  # nothing finished for ten minutes: no worker
