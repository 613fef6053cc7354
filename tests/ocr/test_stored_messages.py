"""Sentences the app stores (issue 39): a class PDF's report, the packet-fix history, an upload's
report and a rubric re-judge's run note are shown in the reader's language, not in the English
they were written in; the English stays in the API; rows written before are shown as they are."""
import pytest
from django.urls import reverse

from accounts.services import set_user_language
from ocr import packets
from ocr.models import PacketEdit, ScanFile

from .conftest import distinct_image, png_bytes
from .test_packets import class_batch, page_at

pytestmark = pytest.mark.django_db


def _page(client, url):
    return client.get(url).content.decode()


def test_the_class_pdf_report_and_the_fix_history_in_chinese(exam_questions, reviewer, reviewer_client):
    batch = class_batch(exam_questions, reviewer, students=("s03", "s04"), verify=False)
    packets.reassign_packet(batch, student_id="s03", to_student_id="s04", user=reviewer)
    packets.swap_pages(page_at(batch, 2), page_at(batch, 5), user=reviewer)
    english = _page(reviewer_client, reverse("ocr:batch_detail", args=[batch.pk]))
    assert "Accepted: 2 packets of 3 pages (6 pages), cut by the roster and the template." in english
    history = _page(reviewer_client, reverse("ocr:batch_packets", args=[batch.pk]))
    assert "Packet of s03 (3 pages) swapped with s04" in history

    set_user_language(reviewer, "zh-hans")
    chinese = _page(reviewer_client, reverse("ocr:batch_detail", args=[batch.pk]))
    assert "已接收：2 份答卷，每份 3 页（共 6 页），已按名单和模板切分。" in chinese
    assert "Accepted:" not in chinese and "cut by the roster" not in chinese
    history = _page(reviewer_client, reverse("ocr:batch_packets", args=[batch.pk]))
    assert "s03 的答卷（3 页）已与 s04 的互换" in history and "swapped with" not in history
    assert "页面 PDF 第 2 页" in history and "Pages PDF p." not in history
    assert "s03，封面页 → s04，封面页" in history and ", cover" not in history  # each page's move, in words too
    # The API keeps the English sentence.
    api = reviewer_client.get(reverse("ocr-api-batch-files", args=[batch.pk])).json()
    files = api["results"] if isinstance(api, dict) else api
    assert any(f["message"].startswith("Accepted: 2 packets") for f in files)


def test_an_upload_report_in_chinese_and_an_old_row_as_it_was(exam_questions, reviewer, reviewer_client, make_batch):
    batch, _ = make_batch([("s1_9-99_1.png", png_bytes(distinct_image(7)))])
    scan_file = ScanFile.objects.get(batch=batch)
    assert scan_file.message.startswith("Accepted: 1 page(s).") and "No question labelled" in scan_file.message
    set_user_language(reviewer, "zh-hans")
    page = _page(reviewer_client, reverse("ocr:batch_detail", args=[batch.pk]))
    assert "已接收：1 页。" in page and "没有标签或编号为“9-99”的题目" in page
    assert "Accepted: 1 page(s)." not in page
    # A row written before the parts existed: its English, not an empty cell.
    ScanFile.objects.filter(pk=scan_file.pk).update(message="Accepted: 1 page(s). (old row)", message_parts=[])
    assert "Accepted: 1 page(s). (old row)" in _page(reviewer_client, reverse("ocr:batch_detail", args=[batch.pk]))
    edit = PacketEdit.objects.create(batch=batch, action="swap", summary="Pages #1 and #2 swapped (old row)")
    assert edit.summary_text == "Pages #1 and #2 swapped (old row)"


def test_a_rejudge_note_in_chinese(reviewer, reviewer_client):
    from grading.judges.selectors import run_note_text
    from grading.judges.services.lifecycle import REJUDGE_NOTE
    from grading.models import JudgeRun
    from tests.factories import make_setting

    note = REJUDGE_NOTE.format(question=19, versions="v1", version=2)
    assert note == "Re-judge of question 19: rubric v1 -> v2"  # as stored (and as older rows hold it)
    run = JudgeRun.objects.create(setting=make_setting(kind="cas_final_answer"), note=note, created_by=reviewer)
    set_user_language(reviewer, "zh-hans")
    page = _page(reviewer_client, reverse("grading:judge_run_detail", args=[run.pk]))
    assert "重新评判题目 #19：评分细则 v1 → v2" in page and "Re-judge of question" not in page
    assert run_note_text("my own note, in English") == "my own note, in English"


def test_a_pages_assignment_note_in_chinese(exam_questions, reviewer, reviewer_client, make_batch):
    """The note a page keeps on why it has no question is stored in English (the API, exports) and
    shown in the reader's language on the batch and correction pages, as one sentence."""
    from ocr.models import Page

    batch, _ = make_batch([("s1_9-99_1.png", png_bytes(distinct_image(8)))])
    page = Page.objects.get(batch=batch)
    assert page.assignment_note.startswith("No question labelled or numbered “9-99” in exam")
    set_user_language(reviewer, "zh-hans")
    for url in (reverse("ocr:batch_detail", args=[batch.pk]), reverse("ocr:page_correct", args=[page.pk])):
        body = _page(reviewer_client, url)
        assert "没有标签或编号为“9-99”的题目" in body and "No question labelled" not in body, url
    body = _page(reviewer_client, reverse("ocr:page_correct", args=[page.pk]))
    assert "此页尚未指定题目：请先在" in body and "This page has no" not in body
