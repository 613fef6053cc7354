"""The adjudication queue and decision page (reviewers)."""
import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.labelling import services
from annotation.models import Adjudication, Response

from ..factories import make_responses
from .helpers import full_label, labelled_setup

pytestmark = pytest.mark.django_db


def disagree(annotator, annotator2, n=1, question=None):
    if question is None:
        question, responses = labelled_setup(n)
    else:
        responses = make_responses(question, n, start=Response.objects.count() + 1000)
    services.assign_responses(responses=Response.objects.filter(pk__in=[r.pk for r in responses]),
                              annotators=[annotator, annotator2], per_response=2, strategy="round_robin")
    for response in responses:
        services.save_label(response=response, user=annotator, data=full_label(3, 4), base_version=0, submit=True)
        services.save_label(response=response, user=annotator2, data=full_label(1, 1), base_version=0, submit=True)
    return question, responses


def test_roles(annotator_client, annotator, annotator2):
    _, (response,) = disagree(annotator, annotator2)
    for url in (reverse("annotation:adjudication_queue"), reverse("annotation:adjudicate", args=[response.pk])):
        assert Client().get(url).status_code == 302
        assert annotator_client.get(url).status_code == 403
    assert annotator_client.post(reverse("annotation:adjudicate", args=[response.pk]), {"gold_score": "1"}).status_code == 403


def test_queue_lists_disagreements_by_threshold(reviewer_client, annotator, annotator2):
    _, (response,) = disagree(annotator, annotator2)
    page = reviewer_client.get(reverse("annotation:adjudication_queue"))
    assert [r.pk for r in page.context["page"]] == [response.pk]
    assert page.context["page"][0].spread == 5
    assert reviewer_client.get(reverse("annotation:adjudication_queue"), {"threshold": "6"}).context["page"].paginator.count == 0
    assert reviewer_client.get(reverse("annotation:adjudication_queue"), {"threshold": "junk"}).context["threshold"] == 2


def test_pick_a_label_and_move_on(reviewer_client, annotator, annotator2):
    _, (first, second) = disagree(annotator, annotator2, n=2)
    page = reviewer_client.get(reverse("annotation:adjudicate", args=[first.pk]))
    labels = page.context["labels"]
    assert [a.rater_name for a in labels] == ["ann1", "ann2"] and page.context["spread"] == 5
    answer = reviewer_client.post(
        reverse("annotation:adjudicate", args=[first.pk]),
        {"chosen": labels[0].pk, "seen_gold_score": "", "seen_gold_status": "none", "reason": ""},
    )
    assert answer.status_code == 302 and answer["Location"] == reverse("annotation:adjudicate", args=[second.pk])
    first.refresh_from_db()
    assert (first.gold_score, first.gold_status) == (7, "adjudicated")
    assert Adjudication.objects.get().chosen_label == labels[0]


def test_own_score_needs_a_reason_and_errors_keep_the_input(reviewer_client, annotator, annotator2):
    _, (response,) = disagree(annotator, annotator2)
    url = reverse("annotation:adjudicate", args=[response.pk])
    answer = reviewer_client.post(url, {"gold_score": "4.5", "seen_gold_status": "none"})
    assert answer.status_code == 400 and "Say why" in answer.content.decode() and 'value="4.5"' in answer.content.decode()
    answer = reviewer_client.post(url, {"gold_score": "99", "reason": "x", "seen_gold_status": "none"})
    assert answer.status_code == 400 and "between 0 and 7" in answer.content.decode()
    answer = reviewer_client.post(url, {"gold_score": "4.5", "sub:(1)": "3", "sub:(2)": "1.5", "reason": "Half of (2).",
                                        "seen_gold_status": "none"})
    assert answer.status_code == 302
    response.refresh_from_db()
    assert (response.gold_score, response.gold_status) == (4.5, "adjudicated")
    assert response.history.first().history_user.username == "rev1"


def test_gold_changed_meanwhile_is_refused(reviewer_client, annotator, annotator2):
    _, (response,) = disagree(annotator, annotator2)
    answer = reviewer_client.post(
        reverse("annotation:adjudicate", args=[response.pk]),
        {"gold_score": "4", "sub:(1)": "2", "sub:(2)": "2", "reason": "x", "seen_gold_score": "3",
         "seen_gold_status": "single"},
    )
    assert answer.status_code == 400 and 'id="gold-conflict"' in answer.content.decode()
    assert not Adjudication.objects.exists()


def test_queue_query_count_is_flat(reviewer_client, annotator, annotator2):
    question, _ = disagree(annotator, annotator2, n=3)
    url = reverse("annotation:adjudication_queue")
    with CaptureQueriesContext(connection) as small:
        reviewer_client.get(url)
    disagree(annotator, annotator2, n=120, question=question)
    with CaptureQueriesContext(connection) as large:
        reviewer_client.get(url + "?page=2")
    assert len(small.captured_queries) == len(large.captured_queries)
