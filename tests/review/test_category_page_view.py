"""The category page (grading.review.views.category_page, /grading/review/categories/): counts by direction and judge."""
import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_category_page_counts(reviewer_client, reviewer, cases):
    from grading.review import services as review_services

    review_services.confirm_meta_evaluation(cases["results"][0], user=reviewer, category="A")
    review_services.confirm_meta_evaluation(cases["results"][1], user=reviewer, category="C")
    page = reviewer_client.get(reverse("grading:review_categories"))
    summary = page.context["summary"]
    assert summary["counts"] == [1, 0, 1, 0, 0] and summary["total"] == 2
    assert [row["counts"] for row in summary["by_direction"]] == [[1, 0, 0, 0, 0], [0, 0, 1, 0, 0]]
    assert 'data-category-group="by_judge"' in page.content.decode()
