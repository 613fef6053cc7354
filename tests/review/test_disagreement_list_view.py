"""The disagreement queue (grading.review.views.disagreement_list, /grading/review/disagreements/): exactly the cases over the threshold."""
import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_admin_may(admin_client_, cases):
    assert admin_client_.get(reverse("grading:review_disagreements")).status_code == 200


def test_queue_lists_exactly_the_disagreements(reviewer_client, cases):
    url = reverse("grading:review_disagreements")
    page = reviewer_client.get(url, {"setting": cases["config"].pk})
    assert sorted(r.score for r in page.context["page"]) == [3.0, 8.0]
    page = reviewer_client.get(url, {"setting": cases["config"].pk, "threshold": "1"})
    assert sorted(r.score for r in page.context["page"]) == [3.0, 4.0, 6.0, 8.0]
    page = reviewer_client.get(url, {"setting": cases["config"].pk, "threshold": "-3"})
    assert page.context["threshold"] == 2 and len(page.context["page"]) == 2


def test_the_attribution_filter_names_both_as_the_column_does(reviewer_client, reviewer, cases):
    """Issue 39: the filter said 两者 where the column and legend say 两者兼有 (grading.labels)."""
    from accounts.services import set_user_language

    set_user_language(reviewer, "zh-hans")
    page = reviewer_client.get(reverse("grading:review_disagreements"), {"setting": cases["config"].pk}).content.decode()
    assert '<option value="both">两者兼有</option>' in page
