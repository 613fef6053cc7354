"""Services of the ocr app: OCR runs, transcripts with versions, verification into responses."""
import pytest
from django.core.files.storage import default_storage

from annotation.models import Response, content_hash
from ocr import packets, services, synthetic
from ocr.models import OcrRun, Page, Transcript, TranscriptRevision

from .conftest import distinct_image, png_bytes

pytestmark = pytest.mark.django_db


def page_with_text(make_batch, name="s01_3-17_1.png", text="解：$x=1$", n=1):
    """A page (no OCR run executed) whose transcript holds `text` at version 1."""
    batch, _ = make_batch([(name, png_bytes(distinct_image(n)))])
    page = Page.objects.get(batch=batch)
    run = page.ocr_runs.get()
    OcrRun.objects.filter(pk=run.pk).update(status="done", raw_text=text)
    run.refresh_from_db()
    services.seed_transcript(run)
    return Page.objects.get(pk=page.pk)


def test_ocr_run_stores_text_boxes_in_screen_pixels_and_seeds_the_transcript(make_batch, run_tasks, settings):
    settings.OCR_WEB_MAX_SIDE = 800  # the page is 1600 wide: the screen shows it at half size
    image = synthetic.render_page(["故直线 l 的方程为 y=2x-3"], width=1600, font_size=60, margin=100)
    with run_tasks():
        batch, _ = make_batch([("s1_3-18_1.png", png_bytes(image))], engine="tesseract")
    page = Page.objects.get(batch=batch)
    run = page.ocr_runs.get()
    assert run.status == "done", run.error
    assert run.engine_version.startswith("tesseract ") and run.seconds > 0
    assert (page.web_width, page.web_height) == (800, image.height // 2)
    first = run.tokens[0]
    assert run.raw_text[first["o"]].strip()
    x0, y0, x1, y1 = first["b"]
    assert 40 <= x0 <= 60 and 40 <= y0 <= 75 and x1 - x0 < 45  # drawn at (100, 100) at 60 px, halved
    assert all(b <= 800 for t in run.tokens for b in t["b"][::2])
    transcript = page.transcript
    assert (transcript.version, transcript.text, transcript.source_run_id) == (1, run.raw_text, run.pk)
    assert transcript.revisions.get().kind == "ocr"
    for name in (page.web, page.thumb, page.processed, page.master):
        assert default_storage.exists(name)


def test_a_later_run_never_overwrites_peoples_edits(make_batch, reviewer):
    page = page_with_text(make_batch, text="OCR text")
    services.save_transcript(page, text="corrected by hand", base_version=1, user=reviewer)
    rerun = OcrRun.objects.create(page=page, engine="tesseract", status="done", raw_text="OCR again")
    services.seed_transcript(rerun)
    other = OcrRun.objects.create(page=page, engine="rapidocr", status="done", raw_text="other engine")
    services.seed_transcript(other)
    transcript = Transcript.objects.get(page=page)
    assert (transcript.text, transcript.version) == ("corrected by hand", 2)


def test_a_stale_save_is_refused_and_nothing_is_overwritten(make_batch, reviewer, admin_user):
    page = page_with_text(make_batch)
    services.save_transcript(page, text="first editor", base_version=1, user=reviewer)
    with pytest.raises(services.StaleTranscript, match="rev1 saved version 2") as refused:
        services.save_transcript(page, text="second editor", base_version=1, user=admin_user)
    assert "Your text is still in the editor" in str(refused.value)
    transcript = Transcript.objects.get(page=page)
    assert (transcript.text, transcript.version) == ("first editor", 2)
    assert not transcript.revisions.filter(text="second editor").exists()


def test_autosaves_in_a_row_merge_into_one_revision(make_batch, reviewer, admin_user):
    page = page_with_text(make_batch)
    t = services.save_transcript(page, text="a", base_version=1, user=reviewer, kind="autosave")
    t = services.save_transcript(page, text="ab", base_version=t.version, user=reviewer, kind="autosave")
    t = services.save_transcript(page, text="abc", base_version=t.version, user=reviewer, kind="autosave")
    unchanged = services.save_transcript(page, text="abc", base_version=t.version, user=reviewer, kind="autosave")
    assert unchanged.version == t.version == 4
    kinds = list(t.revisions.order_by("version").values_list("kind", "text", "version"))
    assert kinds == [("ocr", "解：$x=1$", 1), ("autosave", "abc", 4)]
    t = services.save_transcript(page, text="abcd", base_version=4, user=admin_user, kind="autosave")
    assert t.revisions.count() == 3  # another person's autosave is its own revision


def test_verify_writes_the_response_with_history_and_later_edits_wait_for_reverify(make_batch, reviewer):
    page = page_with_text(make_batch, text="解：$x=1$")
    transcript, response = services.verify_transcript(page, text="解：$x=2$", base_version=1, user=reviewer)
    assert transcript.status == "verified" and transcript.verified_text == "解：$x=2$"
    assert response.transcript == "解：$x=2$" and response.transcript_hash == content_hash("解：$x=2$")
    assert response.source == "human" and response.student_id == "s01" and response.status == "ready"
    assert response.history.count() == 1 and response.history.first().history_user == reviewer
    run = page.ocr_runs.get()
    run.refresh_from_db()
    assert (run.cer_edits, run.cer_length) == (1, len("解:$x=2$"))

    edited = services.save_transcript(page, text="解：$x=3$", base_version=transcript.version, user=reviewer)
    assert edited.status == "changed"
    response.refresh_from_db()
    assert response.transcript == "解：$x=2$" and response.version == 1

    _, response = services.verify_transcript(page, text="解：$x=3$", base_version=edited.version, user=reviewer)
    assert response.transcript == "解：$x=3$" and response.version == 2
    assert [h.transcript for h in response.history.order_by("history_date")] == ["解：$x=2$", "解：$x=3$"]
    assert Response.objects.filter(student_id="s01").count() == 1


def test_a_two_page_answer_becomes_one_response_in_page_order(make_batch, reviewer):
    second = page_with_text(make_batch, name="s02_3-17_2.png", text="page two", n=2)
    first = page_with_text(make_batch, name="s02_3-17_1.png", text="page one", n=1)
    _, response = services.verify_transcript(second, text="page two", base_version=1, user=reviewer)
    assert response.transcript == "page one\n\npage two"
    assert response.status == "transcribing"  # page one is not verified yet
    _, response = services.verify_transcript(first, text="page one!", base_version=1, user=reviewer)
    assert response.transcript == "page one!\n\npage two" and response.status == "ready" and response.version == 2
    assert set(response.scan_pages.values_list("pk", flat=True)) == {first.pk, second.pk}


def test_verifying_needs_a_student_and_question(make_batch, reviewer):
    page = page_with_text(make_batch, name="unnamed.png")
    assert not page.is_assigned
    with pytest.raises(services.TranscriptError, match="Assign a student and a question"):
        services.verify_transcript(page, text="x", base_version=1, user=reviewer)
    assert Transcript.objects.get(page=page).version == 1


def test_ambiguous_label_waits_for_assignment_and_the_response_follows_its_page(make_batch, reviewer, exam_questions):
    page = page_with_text(make_batch, name="s03_5-1_1.png")
    assert page.question_id is None and "names 2 questions" in page.assignment_note
    target = exam_questions["5-1b"]
    packets.assign_pages(page.batch, [{"page": page.pk, "student_id": "s03", "question": target.pk, "page_number": 1}])
    page.refresh_from_db()
    assert page.question_id == target.pk and page.assignment_note == ""
    _, response = services.verify_transcript(page, text="answer", base_version=1, user=reviewer)
    edit = packets.assign_pages(
        page.batch, [{"page": page.pk, "student_id": "s04", "question": target.pk, "page_number": 1}], user=reviewer
    )
    page.refresh_from_db()
    response.refresh_from_db()
    assert page.response_id == response.pk  # the answer's only page moved: its response went with it
    assert (response.student_id, response.transcript) == ("s04", "answer")  # nothing lost
    assert edit.action == "assign" and edit.user == reviewer
    assert edit.changes[0]["before"]["student_id"] == "s03" and edit.changes[0]["after"]["student_id"] == "s04"
    with pytest.raises(packets.PacketError, match="not in exam"):
        other = make_question_elsewhere()
        packets.assign_pages(page.batch, [{"page": page.pk, "student_id": "s04", "question": other.pk}])


def make_question_elsewhere():
    from tests.factories import make_question

    return make_question("Another exam's question", exam_name="Other exam")


def test_same_page_in_a_later_batch_is_a_duplicate(make_batch):
    data = png_bytes(distinct_image(7))
    make_batch([("s1_3-17_1.png", data)])
    batch, results = make_batch([("copy_3-17_1.png", data)])
    assert results[0].status == "duplicate" and "already stored as page #" in results[0].message
    assert not batch.pages.exists()


def test_queue_another_engine_and_retry_failed(make_batch):
    page = page_with_text(make_batch)
    runs = services.queue_engine_on_batch(page.batch, "rapidocr")
    assert [r.engine for r in runs] == ["rapidocr"]
    assert services.queue_engine_on_batch(page.batch, "rapidocr") == []
    OcrRun.objects.filter(pk=runs[0].pk).update(status="failed", error="boom")
    assert services.retry_failed_runs(page.batch) == 1
    assert OcrRun.objects.get(pk=runs[0].pk).status == "queued"


def test_a_run_is_claimed_once(make_batch, run_tasks):
    page = page_with_text(make_batch)
    run = page.ocr_runs.get()
    assert services.perform_ocr_run(run.pk) is None  # already done: nothing happens
    assert TranscriptRevision.objects.filter(transcript__page=page).count() == 1


def test_a_run_whose_worker_died_can_be_taken_again(make_batch):
    from datetime import timedelta

    from django.utils import timezone

    page = page_with_text(make_batch)
    run = page.ocr_runs.get()
    OcrRun.objects.filter(pk=run.pk).update(status="running", started=timezone.now())
    assert services.perform_ocr_run(run.pk) is None  # someone is on it
    assert services.retry_failed_runs(page.batch) == 0
    OcrRun.objects.filter(pk=run.pk).update(started=timezone.now() - timedelta(hours=1))
    assert services.retry_failed_runs(page.batch) == 1
    assert OcrRun.objects.get(pk=run.pk).status == "queued"


def test_uploaded_pages_are_decoded_and_encoded_before_the_upload_transaction(make_batch, monkeypatch):
    """On SQLite a transaction that has written holds the database's only write lock, which the
    workers' writes wait for: the slow part of an upload (decoding, PNG encoding of the master)
    happens before the upload's transaction opens, not inside it."""
    from django.db import connection

    from ocr import imaging

    outside, depths, real = len(connection.atomic_blocks), [], imaging.encode_png

    def spy(image, *args, **kwargs):
        depths.append(len(connection.atomic_blocks))
        return real(image, *args, **kwargs)

    monkeypatch.setattr(imaging, "encode_png", spy)
    twice = png_bytes(distinct_image(70, (120, 90)))
    batch, results = make_batch([("s70_3-17_1.png", twice), ("s71_3-17_1.png", png_bytes(distinct_image(71, (120, 90))))])

    assert [r.status for r in results] == ["accepted", "accepted"]
    assert depths == [outside, outside]
    pages = list(Page.objects.filter(batch=batch).order_by("student_id"))
    assert [p.student_id for p in pages] == ["s70", "s71"]
    assert all(p.master.startswith("ocr/masters/") and default_storage.exists(p.master) for p in pages)
    # The same image again: skipped before anything is written.
    _, again = make_batch([("s72_3-17_1.png", twice)])
    assert again[0].status == "duplicate" and "already stored as page #" in again[0].message
    assert len(depths) == 2


@pytest.mark.parametrize("page", ["²", "9" * 25])
def test_a_file_name_with_an_odd_page_number_is_accepted_with_a_note(make_batch, page):
    """`s5_3-07_².png` used to be refused with "an unexpected error occurred" (issue 29, item 13)."""
    batch, (result,) = make_batch([(f"s5_3-17_{page}.png", png_bytes(distinct_image(90)))])
    assert result.status == "accepted", result.message
    assert "is not a whole number from 1 to 9999" in result.message
    (stored,) = batch.pages.all()
    assert (stored.student_id, stored.page_number) == ("s5", 1) and stored.question_id is not None
