"""The answer list (annotation.views.response_list, /responses/): filters, pages, flat query count."""
import pytest
from django.urls import reverse

from annotation.models import Response
from tests.factories import make_question, make_responses

from .conftest import count_queries

pytestmark = pytest.mark.django_db


def test_response_list_query_count_is_flat(reviewer_client):
    question = make_question()
    make_responses(question, 10, gold=3)
    small = count_queries(reviewer_client, reverse("annotation:response_list"))
    make_responses(question, 990, gold=4, start=10, source="synthetic")
    large = count_queries(reviewer_client, reverse("annotation:response_list"))
    filtered = count_queries(reviewer_client, reverse("annotation:response_list") + "?source=synthetic&page=3")
    assert small == large == filtered


def test_response_list_filters(reviewer_client, sample_data):
    url = reverse("annotation:response_list")
    assert reviewer_client.get(url).context["page"].paginator.count == 64
    assert reviewer_client.get(url + "?source=human").context["page"].paginator.count == 32
    assert reviewer_client.get(url + "?level=high").context["page"].paginator.count == 32
    high_scores = reviewer_client.get(url + "?score_min=8").context["page"].paginator.count
    assert high_scores == Response.objects.filter(gold_score__gte=8).count() > 0
    assert reviewer_client.get(url + "?score_min=abc").status_code == 200  # bad filter input is ignored


def test_response_list_paginates(reviewer_client):
    question = make_question()
    make_responses(question, 120)
    page = reviewer_client.get(reverse("annotation:response_list") + "?page=3")
    assert len(page.context["page"].object_list) == 20
    assert reviewer_client.get(reverse("annotation:response_list") + "?page=999").status_code == 200


def test_response_list_with_an_id_no_column_can_hold_lists_nothing(reviewer_client):
    question = make_question()
    make_responses(question, 3)
    url = reverse("annotation:response_list")
    assert reviewer_client.get(url, {"question": question.pk}).context["page"].paginator.count == 3
    assert reviewer_client.get(url, {"question": "9" * 30}).context["page"].paginator.count == 0
    assert reviewer_client.get(url, {"question": "abc"}).context["page"].paginator.count == 3
