"""Fixing mis-scanned packets: move, swap, reassign; the responses follow or are rewritten; history kept."""
import pytest
from django.urls import reverse

from annotation.models import Label, Response
from ocr import packets, services
from ocr.models import OcrRun, PacketEdit, Page

from ..conftest import assert_reviewer_only
from .class_scans import class_pdf, pdf_upload, roster, template

pytestmark = pytest.mark.django_db


def class_batch(exam_questions, reviewer, students=("s01", "s02"), verify=True):
    """A class batch (cover, 3-17, 3-18 per packet) whose answer pages are OCR'd (text known) and verified."""
    pages = {"1": None, "2": "3-17", "3": "3-18"}
    batch = packets.ingest_class_pdf(exam=exam_questions["exam"], engine="tesseract",
                                     upload=pdf_upload(class_pdf(3 * len(students))), roster=roster(*students),
                                     template=template(pages), user=reviewer)
    for run in OcrRun.objects.filter(page__batch=batch).select_related("page__question"):
        page = run.page
        OcrRun.objects.filter(pk=run.pk).update(status="done", raw_text=f"{page.student_id} {page.question.location}")
        run.refresh_from_db()
        services.seed_transcript(run)
        if verify:
            services.verify_transcript(Page.objects.get(pk=page.pk), text=run.raw_text, base_version=1, user=reviewer)
    return batch


def page_at(batch, pdf_page):
    return Page.objects.select_related("batch", "source_file").get(batch=batch, index_in_file=pdf_page - 1)


def response_of(student, question):
    return Response.objects.get(student_id=student, question=question)


def test_swapping_two_whole_answers_moves_their_responses_and_labels(exam_questions, reviewer, annotator):
    batch = class_batch(exam_questions, reviewer)
    q17 = exam_questions["3-17"]
    first, second = response_of("s01", q17), response_of("s02", q17)
    label = Label.objects.create(response=first, annotator=annotator, total=3, submitted=True)
    edit = packets.swap_pages(page_at(batch, 2), page_at(batch, 5), user=reviewer)
    first.refresh_from_db()
    second.refresh_from_db()
    # The page that said "s01 3-17" was s02's answer: its response (and the label on it) is s02's now.
    assert (first.student_id, first.transcript) == ("s02", "s01 3-17")
    assert (second.student_id, second.transcript) == ("s01", "s02 3-17")
    assert Label.objects.get(pk=label.pk).response_id == first.pk
    assert page_at(batch, 2).response_id == first.pk and page_at(batch, 5).response_id == second.pk
    assert first.history.first().history_change_reason.startswith("Pages PDF p. 2")
    assert edit.action == "swap" and edit.user == reviewer and len(edit.changes) == 2
    assert {note["what"] for note in edit.responses} == {"moved with its pages to student s02",
                                                        "moved with its pages to student s01"}


def test_swapping_answers_with_the_same_text(exam_questions, reviewer):
    batch = class_batch(exam_questions, reviewer, verify=False)
    for pdf_page in (2, 5):
        page = page_at(batch, pdf_page)
        services.verify_transcript(page, text="$x=1$", base_version=1, user=reviewer)
    packets.swap_pages(page_at(batch, 2), page_at(batch, 5), user=reviewer)
    q17 = exam_questions["3-17"]
    assert sorted(Response.objects.filter(question=q17).values_list("student_id", flat=True)) == ["s01", "s02"]


def test_moving_a_page_into_another_answer_rewrites_both_and_releases_the_empty_one(exam_questions, reviewer):
    batch = class_batch(exam_questions, reviewer)
    q17, q18 = exam_questions["3-17"], exam_questions["3-18"]
    gone = response_of("s01", q18)
    edit = packets.move_page(page_at(batch, 3), student_id="s02", question_id=q17.pk, page_number=1, user=reviewer)
    joined = response_of("s02", q17)
    assert joined.transcript == "s01 3-18\n\ns02 3-17" and joined.version == 2  # inserted as page 1
    assert [page_at(batch, n).page_number for n in (3, 5)] == [1, 2]
    assert not Response.objects.filter(pk=gone.pk).exists()  # no page and nothing on it: deleted
    notes = {note["response"]: note["what"] for note in edit.responses}
    assert notes[gone.pk] == "deleted: no page and no label left"
    assert edit.changes[0]["before"] == {"student_id": "s01", "question": q18.pk, "page_number": 1, "cover": False}
    assert edit.changes[0]["after"] == {"student_id": "s02", "question": q17.pk, "page_number": 1, "cover": False}


def test_a_response_left_without_pages_keeps_its_labels(exam_questions, reviewer, annotator):
    batch = class_batch(exam_questions, reviewer)
    q17, q18 = exam_questions["3-17"], exam_questions["3-18"]
    labelled = response_of("s01", q18)
    Label.objects.create(response=labelled, annotator=annotator, total=2, submitted=True)
    edit = packets.move_page(page_at(batch, 3), student_id="s02", question_id=q17.pk, user=reviewer)
    labelled.refresh_from_db()
    assert labelled.status == "transcribing" and labelled.extra["scan_pages_moved"] is True
    assert labelled.labels.count() == 1
    assert {"response": labelled.pk, "what": "kept with its labels, but it has no page now: check it"} in [
        {"response": note["response"], "what": note["what"]} for note in edit.responses]
    assert response_of("s02", q17).transcript == "s02 3-17\n\ns01 3-18"  # appended: no page number given


def test_a_packet_in_the_wrong_roster_order_is_swapped_whole(exam_questions, reviewer):
    batch = class_batch(exam_questions, reviewer)
    before = {r.pk: (r.student_id, r.transcript) for r in Response.objects.all()}
    edit = packets.reassign_packet(batch, student_id="s01", to_student_id="s02", user=reviewer)
    assert edit.summary == "Packet of s01 (3 pages) swapped with s02" and len(edit.changes) == 6
    after = {r.pk: (r.student_id, r.transcript) for r in Response.objects.all()}
    assert after.keys() == before.keys()
    for pk, (student, text) in before.items():
        assert after[pk] == ({"s01": "s02", "s02": "s01"}[student], text)  # same text, the other student
    assert page_at(batch, 1).student_id == "s02" and page_at(batch, 1).is_cover


def test_a_packet_given_to_a_new_student(exam_questions, reviewer):
    batch = class_batch(exam_questions, reviewer)
    packets.reassign_packet(batch, student_id="s02", to_student_id="s09", user=reviewer)
    assert set(Page.objects.filter(batch=batch, index_in_file__gte=3).values_list("student_id", flat=True)) == {"s09"}
    assert Response.objects.filter(student_id="s09").count() == 2 and not Response.objects.filter(student_id="s02")


def test_a_cover_that_is_an_answer_gets_its_ocr_and_an_answer_can_become_a_cover(exam_questions, reviewer):
    batch = class_batch(exam_questions, reviewer, verify=False)
    cover = page_at(batch, 1)
    assert not cover.ocr_runs.exists()
    packets.move_page(cover, student_id="s01", question_id=exam_questions["3-17"].pk, user=reviewer)
    cover.refresh_from_db()
    assert not cover.is_cover and cover.page_number == 2
    assert cover.ocr_runs.get().status == "queued"
    packets.move_page(page_at(batch, 6), student_id="s02", cover=True, user=reviewer)
    page = page_at(batch, 6)
    assert page.is_cover and page.question_id is None and page.response_id is None


def test_refused_fixes_change_nothing(exam_questions, reviewer):
    batch = class_batch(exam_questions, reviewer, verify=False)
    from tests.factories import make_question

    elsewhere = make_question("Another exam's question", exam_name="Other exam")
    places = list(Page.objects.values_list("pk", "student_id", "question_id", "page_number", "is_cover"))
    with pytest.raises(packets.PacketError, match="not in exam"):
        packets.move_page(page_at(batch, 2), student_id="s01", question_id=elsewhere.pk, user=reviewer)
    with pytest.raises(packets.PacketError, match="Give the student"):
        packets.move_page(page_at(batch, 2), student_id="  ", question_id=exam_questions["3-17"].pk)
    with pytest.raises(packets.PacketError, match="Choose the question"):
        packets.move_page(page_at(batch, 2), student_id="s01")
    with pytest.raises(packets.PacketError, match="two different pages"):
        packets.swap_pages(page_at(batch, 2), page_at(batch, 2))
    with pytest.raises(packets.PacketError, match="already belongs"):
        packets.reassign_packet(batch, student_id="s01", to_student_id="s01")
    with pytest.raises(packets.PacketError, match="No page of this batch belongs to student nobody"):
        packets.reassign_packet(batch, student_id="nobody", to_student_id="s01")
    assert list(Page.objects.values_list("pk", "student_id", "question_id", "page_number", "is_cover")) == places
    assert not PacketEdit.objects.exists()


def test_fix_packets_screen(annotator, reviewer, client, exam_questions):
    batch = class_batch(exam_questions, reviewer, students=("s02", "s01"))
    url = reverse("ocr:batch_packets", args=[batch.pk])
    page = assert_reviewer_only(url, annotator, reviewer)
    body = page.content.decode()
    assert body.index('data-student="s02"') < body.index('data-student="s01"')  # roster order
    assert "PDF p. 6" in body and "No fix made yet." in body
    client.force_login(reviewer)
    fix = reverse("ocr:batch_packets_fix", args=[batch.pk])
    done = client.post(fix, {"action": "swap", "first": page_at(batch, 2).pk, "second": page_at(batch, 5).pk},
                       follow=True)
    body = done.content.decode()
    assert "Pages PDF p. 2" in body and "swapped" in body and "by rev1" in body
    assert "PDF p. 2 (#" in body and "s02, 3-17 p1 → s01, 3-17 p1" in body  # the history says what moved
    moved = client.post(fix, {"action": "move", "page": page_at(batch, 3).pk, "student_id": "s01",
                              "question": "cover"}, follow=True)
    assert page_at(batch, 3).is_cover and "cover page" in moved.content.decode()
    refused = client.post(fix, {"action": "packet", "student_id": "s01", "to_student_id": ""})
    assert refused.status_code == 400 and "Give the student id" in refused.content.decode()
    assert client.post(fix, {"action": "swap", "first": "9" * 30, "second": "1"}).status_code == 400
    assert client.post(fix, {"action": "explode"}).status_code == 400
    assert PacketEdit.objects.filter(batch=batch).count() == 2
    client.force_login(annotator)
    assert client.post(fix, {"action": "swap"}).status_code == 403
