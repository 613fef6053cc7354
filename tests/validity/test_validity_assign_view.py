"""`validity.views.validity_assign`: golds drawn at random and recorded with their seed, third
labels for the Alternative Annotator Test, the deferred answers; reviewers only; bad input said."""
import pytest
from django.urls import reverse

from annotation.models import Assignment
from validity.models import GoldDraw

from .conftest import scripted

pytestmark = pytest.mark.django_db
URL = reverse("validity:assign")


@pytest.fixture
def half_gold(db):
    return scripted(gold_share=0.5, experts=0, name="half")


def test_annotators_cannot_draw(annotator_client, half_gold):
    assert annotator_client.post(URL, {"action": "golds", "n": 3, "query": f"setting={half_gold.pk}"}).status_code == 403


def test_a_random_draw_is_recorded_with_its_seed_and_assigned(reviewer_client, half_gold, annotator):
    query = f"setting={half_gold.pk}&seed=5"
    response = reviewer_client.post(URL, {"action": "golds", "n": 4, "query": query})
    assert response.status_code == 302 and response.url.endswith(query)
    draw = GoldDraw.objects.get()
    assert draw.seed == 5 and len(draw.response_ids) == 4 and draw.purpose == "golds"
    assert set(Assignment.objects.values_list("response_id", flat=True)) == set(draw.response_ids)
    # the same seed draws the same answers again (the draw can be shown to be random)
    reviewer_client.post(URL, {"action": "golds", "n": 4, "query": query})
    assert GoldDraw.objects.order_by("id").last().response_ids == draw.response_ids
    data = reviewer_client.get(reverse("validity:page") + "?" + query + "&format=json").json()
    assert data["golds_from_random_draws"] == 0  # drawn, not yet labelled: no gold yet


@pytest.mark.parametrize("n", ["0", "x", "100001", ""])
def test_a_bad_count_is_said_and_nothing_is_drawn(reviewer_client, half_gold, annotator, n):
    reviewer_client.post(URL, {"action": "golds", "n": n, "query": f"setting={half_gold.pk}"}, follow=True)
    assert not GoldDraw.objects.exists() and not Assignment.objects.exists()


def test_third_labels_for_the_alternative_annotator_test(reviewer_client, half_gold):
    from accounts.services import create_user_with_role

    for k in range(3):
        create_user_with_role(f"more{k}", "pw-more-12345", "annotator")
    reviewer_client.post(URL, {"action": "aat", "query": f"setting={half_gold.pk}"})
    draw = GoldDraw.objects.get(purpose="aat")
    assert len(draw.response_ids) == 50 and draw.labels_per_answer == 3
    assert Assignment.objects.filter(response_id=draw.response_ids[0]).count() == 3


def test_no_annotator_is_said(reviewer_client, half_gold):
    page = reviewer_client.post(URL, {"action": "golds", "n": 2, "query": f"setting={half_gold.pk}"}, follow=True)
    assert "No annotator is active" in page.content.decode() and not GoldDraw.objects.exists()


def test_unknown_action_and_missing_setting(reviewer_client, half_gold):
    page = reviewer_client.post(URL, {"action": "nope", "query": f"setting={half_gold.pk}"}, follow=True)
    assert "Unknown action." in page.content.decode()
    assert reviewer_client.get(URL).status_code == 405
