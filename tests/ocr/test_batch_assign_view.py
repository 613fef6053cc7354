"""Saving the pages' student, question and page number (ocr.views.batch_assign,
/ocr/batches/<pk>/assign/): POST only, reviewers only; a question of another exam or a number that
is no page number is refused with a message and saves nothing; an unknown id is a 404."""
import pytest
from django.test import Client
from django.urls import reverse

from ocr.models import Page
from tests.factories import make_question

from .helpers import pages_without_ocr

pytestmark = pytest.mark.django_db


def test_a_reviewer_saves_the_assignment(reviewer_client, make_batch, exam_questions):
    batch, pages = pages_without_ocr(make_batch, 2)
    target = exam_questions["3-18"]
    data = {"page": [str(p.pk) for p in pages]}
    for i, p in enumerate(pages):
        data.update({f"student-{p.pk}": "s42", f"question-{p.pk}": str(target.pk), f"page_number-{p.pk}": str(i + 1)})
    answer = reviewer_client.post(reverse("ocr:batch_assign", args=[batch.pk]), data, follow=True)
    assert "Saved the assignment of 2 page(s)" in answer.content.decode()
    assert list(Page.objects.filter(batch=batch).order_by("page_number").values_list(
        "student_id", "question_id", "page_number")) == [("s42", target.pk, 1), ("s42", target.pk, 2)]


@pytest.mark.parametrize("field, value, message", [
    ("question", "abc", "is not a question id"),
    ("page_number", "0", "is not a whole number from 1 to"),
    ("question", "OTHER", "is not in exam"),
])
def test_a_bad_row_is_refused_and_nothing_is_saved(reviewer_client, make_batch, field, value, message):
    batch, pages = pages_without_ocr(make_batch, 1)
    page = pages[0]
    if value == "OTHER":
        value = str(make_question("elsewhere", exam_name="Another exam").pk)
    data = {"page": [str(page.pk)], f"student-{page.pk}": "changed", f"{field}-{page.pk}": value}
    answer = reviewer_client.post(reverse("ocr:batch_assign", args=[batch.pk]), data, follow=True)
    assert answer.status_code == 200 and message in answer.content.decode()
    assert Page.objects.get(pk=page.pk).student_id == "s000"


def test_refused_writes_save_nothing(annotator, reviewer, make_batch):
    batch, pages = pages_without_ocr(make_batch, 1)
    url = reverse("ocr:batch_assign", args=[batch.pk])
    data = {"page": [str(pages[0].pk)], f"student-{pages[0].pk}": "intruder"}
    assert "/accounts/login/" in Client().post(url, data)["Location"]
    other = Client()
    other.force_login(annotator)
    assert other.post(url, data).status_code == 403
    other.force_login(reviewer)
    assert other.get(url).status_code == 405
    assert Page.objects.get(pk=pages[0].pk).student_id == "s000"


@pytest.mark.parametrize("pk", [999999, 2**63])
def test_an_unknown_batch_is_a_404(reviewer_client, pk):
    assert reviewer_client.post(f"/ocr/batches/{pk}/assign/").status_code == 404


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
