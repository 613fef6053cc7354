"""A fix of a class batch's packets (ocr.views.batch_packets_fix, /ocr/batches/<pk>/packets/fix/):
POST only, reviewers only; a swap moves the two pages and is kept in the history; an unknown
action, a page of no batch or a missing student id is a 400 with the reason and changes nothing;
an unknown id is a 404."""
import pytest
from django.test import Client
from django.urls import reverse

from ocr.models import PacketEdit, Page

from .test_packets import class_batch, page_at

pytestmark = pytest.mark.django_db


def places(batch):
    return list(Page.objects.filter(batch=batch).order_by("pk").values_list("student_id", "question_id", "page_number"))


def test_a_reviewer_swaps_two_pages(reviewer_client, reviewer, exam_questions):
    batch = class_batch(exam_questions, reviewer)
    first, second = page_at(batch, 2), page_at(batch, 5)
    answer = reviewer_client.post(reverse("ocr:batch_packets_fix", args=[batch.pk]),
                                  {"action": "swap", "first": first.pk, "second": second.pk})
    assert answer.status_code == 302 and answer["Location"] == reverse("ocr:batch_packets", args=[batch.pk])
    assert (page_at(batch, 2).student_id, page_at(batch, 5).student_id) == (second.student_id, first.student_id)
    assert PacketEdit.objects.filter(batch=batch).count() == 1


@pytest.mark.parametrize("data, reason", [
    ({"action": "explode"}, "Unknown action: nothing was changed."),
    ({"action": "swap", "first": "9" * 30, "second": "1"}, "Choose a page of this batch."),
    ({"action": "packet", "student_id": "s01", "to_student_id": ""}, "Give the student id"),
])
def test_a_refused_fix_is_a_400_with_the_reason(reviewer_client, reviewer, exam_questions, data, reason):
    batch = class_batch(exam_questions, reviewer)
    before = places(batch)
    answer = reviewer_client.post(reverse("ocr:batch_packets_fix", args=[batch.pk]), data)
    assert answer.status_code == 400 and reason in answer.content.decode()
    assert places(batch) == before and not PacketEdit.objects.exists()


def test_refused_writes_change_nothing(annotator, reviewer, exam_questions):
    batch = class_batch(exam_questions, reviewer)
    before = places(batch)
    url = reverse("ocr:batch_packets_fix", args=[batch.pk])
    data = {"action": "swap", "first": page_at(batch, 2).pk, "second": page_at(batch, 5).pk}
    assert "/accounts/login/" in Client().post(url, data)["Location"]
    other = Client()
    other.force_login(annotator)
    assert other.post(url, data).status_code == 403
    other.force_login(reviewer)
    assert other.get(url).status_code == 405
    assert places(batch) == before


@pytest.mark.parametrize("pk", [999999, 2**63])
def test_an_unknown_batch_is_a_404(reviewer_client, pk):
    assert reviewer_client.post(f"/ocr/batches/{pk}/packets/fix/", {"action": "swap"}).status_code == 404
