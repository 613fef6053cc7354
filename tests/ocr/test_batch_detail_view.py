"""The batch page: progress, file report, pages with assignment; query count flat in pages."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from ocr.models import OcrRun, Page

from ..conftest import assert_reviewer_only
from .helpers import pages_without_ocr

pytestmark = pytest.mark.django_db


def test_reviewer_only(annotator, reviewer, make_batch):
    batch, _ = pages_without_ocr(make_batch, 1)
    assert assert_reviewer_only(reverse("ocr:batch_detail", args=[batch.pk]), annotator, reviewer).status_code == 200
    for name in ("ocr:batch_assign", "ocr:batch_run_engine", "ocr:batch_retry", "ocr:batch_add_files"):
        assert assert_reviewer_only(reverse(name, args=[batch.pk]), annotator, reviewer, "post").status_code == 302


def test_batch_page_shows_pages_files_and_progress(reviewer_client, make_batch):
    batch, pages = pages_without_ocr(make_batch, 2)
    OcrRun.objects.filter(page=pages[1]).update(status="queued")
    response = reviewer_client.get(reverse("ocr:batch_detail", args=[batch.pk]))
    body = response.content.decode()
    assert "OCR 1 / 2 pages" in body
    assert body.count('class="ocr-thumb"') == 0  # not prepared: no thumbnail yet
    assert "s000_3-17_1.png" in body and "Accepted" in body
    assert reverse("ocr:page_correct", args=[pages[0].pk]) in body
    progress = reviewer_client.get(reverse("ocr:batch_progress", args=[batch.pk])).json()
    assert progress == {"total": 2, "queued": 1, "running": 0, "done": 1, "failed": 0, "finished": 1,
                        "percent": 50, "complete": False, "eta_seconds": None, "eta_text": "", "stalled": False}


def test_query_count_is_flat_as_pages_grow(reviewer_client, make_batch):
    small, _ = pages_without_ocr(make_batch, 3, start=0, student="a")
    large, _ = pages_without_ocr(make_batch, 30, start=100, student="b")
    counts = []
    for batch in (small, large):
        with CaptureQueriesContext(connection) as queries:
            response = reviewer_client.get(reverse("ocr:batch_detail", args=[batch.pk]))
        assert response.status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1], counts


def test_assignment_sets_student_question_and_page(reviewer_client, make_batch, exam_questions):
    batch, pages = pages_without_ocr(make_batch, 2, question="5-1")
    assert all("names 2 questions" in p.assignment_note for p in pages)
    body = reviewer_client.get(reverse("ocr:batch_detail", args=[batch.pk])).content.decode()
    assert "names 2 questions" in body
    target = exam_questions["5-1b"]
    data = {"page": [str(p.pk) for p in pages]}
    for i, p in enumerate(pages):
        data[f"student-{p.pk}"] = "s77"
        data[f"question-{p.pk}"] = str(target.pk)
        data[f"page_number-{p.pk}"] = str(i + 1)
    response = reviewer_client.post(reverse("ocr:batch_assign", args=[batch.pk]), data, follow=True)
    assert "Saved the assignment of 2 page(s)" in response.content.decode()
    assert list(Page.objects.filter(batch=batch).order_by("page_number").values_list(
        "student_id", "question_id", "page_number", "assignment_note")) == [
        ("s77", target.pk, 1, ""), ("s77", target.pk, 2, "")]


def test_assignment_refuses_a_question_of_another_exam(reviewer_client, make_batch):
    from tests.factories import make_question

    batch, pages = pages_without_ocr(make_batch, 1)
    other = make_question("elsewhere", exam_name="Other")
    data = {"page": [str(pages[0].pk)], f"student-{pages[0].pk}": "x", f"question-{pages[0].pk}": str(other.pk)}
    response = reviewer_client.post(reverse("ocr:batch_assign", args=[batch.pk]), data, follow=True)
    assert "is not in exam" in response.content.decode()
    assert Page.objects.get(pk=pages[0].pk).student_id == "s000"


def test_run_another_engine_and_retry(reviewer_client, make_batch):
    batch, pages = pages_without_ocr(make_batch, 2)
    response = reviewer_client.post(reverse("ocr:batch_run_engine", args=[batch.pk]), {"engine": "rapidocr"},
                                    follow=True)
    assert "Queued rapidocr on 2 page(s)" in response.content.decode()
    OcrRun.objects.filter(page__batch=batch, engine="rapidocr").update(status="failed", error="boom")
    response = reviewer_client.post(reverse("ocr:batch_retry", args=[batch.pk]), follow=True)
    assert "Queued 2 failed run(s) again" in response.content.decode()


@pytest.mark.parametrize("field, value, message", [
    ("question", "²", "is not a question id"),
    ("question", "9" * 25, "is not a question id"),
    ("page_number", "²", "is not a whole number from 1 to 9999"),
    ("page_number", "9" * 25, "is not a whole number from 1 to 9999"),
    ("page_number", "0", "is not a whole number from 1 to 9999"),
])
def test_assignment_with_an_odd_number_is_refused_clearly(reviewer_client, make_batch, field, value, message):
    """`int()` after `str.isdigit()` answered 500 for "²"; a 25-digit number overflowed the column."""
    batch, pages = pages_without_ocr(make_batch, 1)
    page = pages[0]
    data = {"page": [str(page.pk)], f"student-{page.pk}": "changed", f"{field}-{page.pk}": value}
    response = reviewer_client.post(reverse("ocr:batch_assign", args=[batch.pk]), data, follow=True)
    assert response.status_code == 200
    body = response.content.decode()
    assert message in body and "Nothing was saved" in body
    assert Page.objects.get(pk=page.pk).student_id == "s000"


@pytest.mark.parametrize("page", ["²", "9" * 25, "-1", "x"])
def test_assignment_ignores_page_ids_that_name_no_page(reviewer_client, make_batch, page):
    batch, _ = pages_without_ocr(make_batch, 1)
    data = {"page": [page], f"student-{page}": "x", f"question-{page}": "²", f"page_number-{page}": "²"}
    response = reviewer_client.post(reverse("ocr:batch_assign", args=[batch.pk]), data, follow=True)
    assert response.status_code == 200 and "Saved the assignment of 0 page(s)" in response.content.decode()
