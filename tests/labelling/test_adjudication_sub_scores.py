"""An adjudicator's gold keeps points per sub-question: her own (their sum is the gold), or the
picked label's breakdown, so the release export's sub_question_scores is never empty for it."""
import pytest
from django.urls import reverse

from annotation.export.release import release_queryset, release_record
from annotation.labelling import services
from annotation.labelling.rules import LabelInvalid
from annotation.models import Adjudication, Response
from tests.labelling.conftest import disagree

pytestmark = pytest.mark.django_db


def exported(response):
    return release_record(release_queryset(Response.objects.filter(pk=response.pk)).get())


def test_own_points_per_sub_question_make_the_gold_and_reach_the_export(reviewer, annotator, annotator2):
    _, (response,) = disagree(annotator, annotator2)
    services.adjudicate(response=response, reviewer=reviewer, reason="Half of (2).",
                        sub_scores={"(1)": "2", "(2)": "2.5"})
    response.refresh_from_db()
    assert response.gold_score == 4.5
    assert Adjudication.objects.get().sub_scores == {"(1)": 2, "(2)": 2.5}
    record = exported(response)
    assert record["gt"] == 4.5 and record["sub_question_scores"] == {"(1)": 2, "(2)": 2.5}


def test_a_picked_label_keeps_its_breakdown(reviewer, annotator, annotator2):
    _, (response,) = disagree(annotator, annotator2)
    picked = response.labels.get(annotator=annotator)
    services.adjudicate(response=response, reviewer=reviewer, chosen_label=picked)
    assert Adjudication.objects.get().sub_scores == {"(1)": 3, "(2)": 4}
    assert exported(response)["sub_question_scores"] == {"(1)": 3, "(2)": 4}


def test_a_total_of_her_own_over_a_picked_label_does_not_export_the_labels_breakdown(reviewer, annotator, annotator2):
    _, (response,) = disagree(annotator, annotator2)
    picked = response.labels.get(annotator=annotator)
    services.adjudicate(response=response, reviewer=reviewer, chosen_label=picked, gold_score="5", reason="x")
    assert exported(response)["sub_question_scores"] == {}  # 3 + 4 is not 5


@pytest.mark.parametrize("sub_scores, gold, message", [
    ({"(1)": "2", "(2)": "2"}, "5", "add up to 4"),
    ({"(1)": "2"}, None, "missing: (2)"),
    ({"(1)": "9", "(2)": "0"}, None, "between 0 and"),
    ({"(3)": "1", "(1)": "1", "(2)": "1"}, None, "not a sub-question"),
    ({"(1)": "x", "(2)": "1"}, None, "not a number"),
])
def test_bad_points_are_refused_in_words(reviewer, annotator, annotator2, sub_scores, gold, message):
    _, (response,) = disagree(annotator, annotator2)
    with pytest.raises(LabelInvalid) as caught:
        services.adjudicate(response=response, reviewer=reviewer, reason="x", gold_score=gold, sub_scores=sub_scores)
    assert message in " ".join(caught.value.errors["sub_scores"])
    assert not Adjudication.objects.exists()


def test_page_takes_points_per_sub_question_and_asks_for_them_with_a_total_of_her_own(reviewer_client, annotator, annotator2):
    _, (response,) = disagree(annotator, annotator2)
    url = reverse("annotation:adjudicate", args=[response.pk])
    page = reviewer_client.get(url).content.decode()
    assert 'name="sub:(1)"' in page and 'name="sub:(2)"' in page
    answer = reviewer_client.post(url, {"gold_score": "4.5", "reason": "Half of (2).", "seen_gold_status": "none"})
    assert answer.status_code == 400 and "Give the points per sub-question" in answer.content.decode()
    assert 'value="4.5"' in answer.content.decode()
    answer = reviewer_client.post(url, {"sub:(1)": "2", "sub:(2)": "2.5", "reason": "Half of (2).",
                                        "seen_gold_status": "none"})
    assert answer.status_code == 302
    assert exported(response)["sub_question_scores"] == {"(1)": 2, "(2)": 2.5}


def test_api_takes_points_per_sub_question(reviewer, annotator, annotator2):
    from rest_framework.test import APIClient
    _, (response,) = disagree(annotator, annotator2)
    api = APIClient()
    api.force_authenticate(reviewer)
    done = api.post(reverse("adjudication-list"), {"response": response.pk, "reason": "mine",
                                                   "sub_scores": {"(1)": "1", "(2)": "1.5"}}, format="json")
    assert done.status_code == 201, done.data
    assert done.data["gold_score"] == "2.50" and done.data["sub_scores"] == {"(1)": 1, "(2)": 1.5}
