"""Metrics and the disagreement queue open on the setting the person chose last, else on the
newest setting with results to compare with a gold (not on one with "0 of N")."""
import pytest
from django.test import Client
from django.urls import reverse

from tests.factories import make_question, make_responses, make_results, make_stored_setting, set_gold

pytestmark = pytest.mark.django_db


@pytest.fixture
def settings_pair():
    question = make_question()
    golds = make_responses(question, 3)
    set_gold(golds, [5, 5, 5])
    no_gold = make_responses(question, 2, start=20)
    comparable = make_stored_setting("with gold")
    make_results(comparable, golds, [8, 5, 1])
    newest = make_stored_setting("without gold")
    make_results(newest, no_gold, [3, 4], key_prefix="n")
    return comparable, newest


@pytest.mark.parametrize("name", ["grading:review_metrics", "grading:review_disagreements"])
def test_opens_on_the_newest_setting_with_results_to_compare(reviewer_client, settings_pair, name):
    comparable, _ = settings_pair
    page = reviewer_client.get(reverse(name))
    assert page.context["scope"].setting == comparable


@pytest.mark.parametrize("name", ["grading:review_metrics", "grading:review_disagreements"])
def test_opens_on_the_setting_the_person_chose_last(reviewer_client, admin_user, settings_pair, name):
    comparable, newest = settings_pair
    assert reviewer_client.get(reverse(name), {"setting": newest.pk}).context["scope"].setting == newest
    assert reviewer_client.get(reverse(name)).context["scope"].setting == newest
    other = Client()
    other.force_login(admin_user)  # another person keeps her own default
    assert other.get(reverse(name)).context["scope"].setting == comparable
    assert reviewer_client.get(reverse("grading:review_metrics"), {"setting": comparable.pk}).status_code == 200
    assert reviewer_client.get(reverse(name)).context["scope"].setting == comparable
