""""Assign these" on a batch page (ocr.views.batch_assign_labels, /ocr/batches/<pk>/labels/): POST
only, reviewers only; the batch's verified answers are given out, the others left out and
counted; a bad form assigns nothing and says why; an unknown id is a 404."""
import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Assignment

from .test_batch_to_labels import half_verified_batch

pytestmark = pytest.mark.django_db


def test_a_reviewer_gives_out_the_verified_answers(reviewer_client, reviewer, annotator, exam_questions):
    batch = half_verified_batch(exam_questions, reviewer)
    answer = reviewer_client.post(reverse("ocr:batch_assign_labels", args=[batch.pk]),
                                  {"annotators": [annotator.pk], "per_response": 1, "strategy": "round_robin"},
                                  follow=True)
    html = answer.content.decode()
    assert "Created 2 assignment(s) over 2 response(s)" in html
    assert "2 answer(s) of the batch are not verified yet and were left out" in html
    assert set(Assignment.objects.values_list("response__question__location", flat=True)) == {"3-17"}


@pytest.mark.parametrize("data, reason", [
    ({"per_response": 1, "strategy": "round_robin"}, "Choose at least one annotator."),
    ({"per_response": "x", "strategy": "round_robin", "annotators": ["ANN"]}, "per_response"),
    ({"per_response": 1, "strategy": "bogus", "annotators": ["ANN"]}, "strategy"),
])
def test_a_bad_form_assigns_nothing_and_says_why(reviewer_client, reviewer, annotator, exam_questions, data, reason):
    batch = half_verified_batch(exam_questions, reviewer)
    data = {k: [annotator.pk] if v == ["ANN"] else v for k, v in data.items()}
    answer = reviewer_client.post(reverse("ocr:batch_assign_labels", args=[batch.pk]), data, follow=True)
    assert "Nothing was assigned." in answer.content.decode() and reason in answer.content.decode()
    assert not Assignment.objects.exists()


def test_refused_writes_assign_nothing(annotator, reviewer, exam_questions):
    batch = half_verified_batch(exam_questions, reviewer)
    url = reverse("ocr:batch_assign_labels", args=[batch.pk])
    data = {"annotators": [annotator.pk], "per_response": 1, "strategy": "round_robin"}
    assert "/accounts/login/" in Client().post(url, data)["Location"]
    other = Client()
    other.force_login(annotator)
    assert other.post(url, data).status_code == 403
    other.force_login(reviewer)
    assert other.get(url).status_code == 405
    assert not Assignment.objects.exists()


@pytest.mark.parametrize("pk", [999999, 2**63])
def test_an_unknown_batch_is_a_404(reviewer_client, pk):
    assert reviewer_client.post(f"/ocr/batches/{pk}/labels/", {"per_response": 1}).status_code == 404
