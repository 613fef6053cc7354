"""The assignment page (annotation.labelling.views.assign, /assign/): assign by question or exam, k per response, strategies, withdraw."""
import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Assignment

from ..conftest import make_user
from .helpers import labelled_setup

pytestmark = pytest.mark.django_db
URL = "/assign/"


def test_roles(annotator_client):
    assert reverse("annotation:assign") == URL
    assert Client().get(URL).status_code == 302
    assert annotator_client.get(URL).status_code == 403
    assert annotator_client.post(URL, {"question": "1"}).status_code == 403


def test_assign_a_question_round_robin(reviewer_client, annotator, annotator2):
    question, responses = labelled_setup(4)
    answer = reviewer_client.post(
        URL, {"question": question.pk, "per_response": 2, "strategy": "round_robin",
              "annotators": [annotator.pk, annotator2.pk], "action": "assign"}, follow=True,
    )
    assert "Created 8 assignment(s) over 4 response(s) (ann1: 4, ann2: 4)" in answer.content.decode()
    assert Assignment.objects.count() == 8
    page = reviewer_client.get(URL)
    assert [p.username for p in page.context["overview"]["people"]] == ["ann1", "ann2"]
    assert page.context["overview"]["questions"][0].slots == 8


def test_assign_an_exam_to_the_open_pool_and_withdraw(reviewer_client, annotator):
    question, responses = labelled_setup(3)
    reviewer_client.post(URL, {"exam": question.exam_id, "per_response": 1, "strategy": "open", "action": "assign"})
    assert Assignment.objects.filter(annotator__isnull=True).count() == 3
    answer = reviewer_client.post(URL, {"exam": question.exam_id, "action": "withdraw"}, follow=True)
    assert "Withdrew 3 unstarted assignment(s)." in answer.content.decode()
    assert not Assignment.objects.exists()


def test_bad_input_changes_nothing(reviewer_client, annotator):
    labelled_setup(2)
    answer = reviewer_client.post(URL, {"per_response": 2, "annotators": [annotator.pk]}, follow=True)
    assert "Choose a question, an exam or a scan batch" in answer.content.decode()
    question, _ = labelled_setup(2, statement="Other")
    answer = reviewer_client.post(URL, {"question": question.pk, "per_response": 2, "strategy": "round_robin"}, follow=True)
    assert "Nothing was assigned" in answer.content.decode()
    answer = reviewer_client.post(URL, {"question": question.pk, "per_response": "many", "annotators": [annotator.pk]}, follow=True)
    assert "Nothing was assigned" in answer.content.decode()
    assert not Assignment.objects.exists()


def test_query_count_is_flat(reviewer_client, annotator, annotator2):
    question, _ = labelled_setup(5)
    reviewer_client.post(URL, {"question": question.pk, "per_response": 1, "strategy": "least_loaded",
                               "annotators": [annotator.pk, annotator2.pk]})
    with CaptureQueriesContext(connection) as small:
        reviewer_client.get(URL)
    make_user("ann3", "annotator")
    more, _ = labelled_setup(500, statement="Bigger")
    reviewer_client.post(URL, {"question": more.pk, "per_response": 2, "strategy": "round_robin",
                               "annotators": [annotator.pk, annotator2.pk]})
    with CaptureQueriesContext(connection) as large:
        reviewer_client.get(URL)
    assert len(small.captured_queries) == len(large.captured_queries)


def test_huge_ids_are_refused_cleanly(reviewer_client):
    answer = reviewer_client.post(URL, {"question": "9" * 30, "per_response": 1}, follow=True)
    assert answer.status_code == 200 and "Choose a question, an exam or a scan batch" in answer.content.decode()


def test_the_form_keeps_its_choices_after_a_submit(reviewer_client, annotator, annotator2):
    question, responses = labelled_setup(2)
    answer = reviewer_client.post(
        URL, {"question": question.pk, "source": "human", "per_response": 1, "strategy": "least_loaded",
              "annotators": [annotator2.pk], "action": "assign"}, follow=True,
    )
    html = answer.content.decode()
    assert f'<option value="{question.pk}" selected>' in html
    assert '<option value="human" selected>' in html and '<option value="least_loaded" selected>' in html
    assert 'name="per_response" value="1"' in html
    assert f'value="{annotator2.pk}" checked>' in html and f'value="{annotator.pk}" checked>' not in html
    fresh = reviewer_client.get(URL).content.decode()  # a first visit ticks every annotator
    assert f'value="{annotator.pk}" checked>' in fresh and f'value="{annotator2.pk}" checked>' in fresh
