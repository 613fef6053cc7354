"""An adjudication decision page (annotation.labelling.views.adjudicate, /adjudication/<pk>/): roles, pick a label or give a score, refusals."""
import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Adjudication

from .conftest import disagree

pytestmark = pytest.mark.django_db


def test_roles(annotator_client, annotator, annotator2):
    _, (response,) = disagree(annotator, annotator2)
    for url in (reverse("annotation:adjudication_queue"), reverse("annotation:adjudicate", args=[response.pk])):
        assert Client().get(url).status_code == 302
        assert annotator_client.get(url).status_code == 403
    assert annotator_client.post(reverse("annotation:adjudicate", args=[response.pk]), {"gold_score": "1"}).status_code == 403


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
