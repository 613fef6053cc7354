"""The step-judge validation list (grading.review.views.validation_list, /grading/review/validation/):
one row per answer the IneqMath judges scored, with each judge's verdict and the reviewer's marks;
reviewers only; bad filters are ignored, never a 500."""
import pytest
from django.urls import reverse

from grading.models import JudgeSetting
from grading.review import services
from tests.conftest import assert_reviewer_only

pytestmark = pytest.mark.django_db
URL = reverse("grading:review_validation")


def test_reviewers_only_and_every_judged_answer_is_listed_with_its_marks(annotator, reviewer, step_judged):
    toy = step_judged["results"][JudgeSetting.Kind.INEQ_TOY_CASE]
    services.save_step_validations(toy[0].response, {toy[0].pk: True}, user=reviewer)
    services.save_step_validations(toy[1].response, {toy[1].pk: False}, user=reviewer)
    page = assert_reviewer_only(URL, annotator, reviewer)
    html = page.content.decode()
    assert page.status_code == 200
    assert sorted(page.context["page"].object_list) == sorted(r.pk for r in step_judged["responses"])
    assert "✓ right" in html and "✗ wrong" in html
    for response in step_judged["responses"]:
        assert reverse("grading:review_validation_case", args=[response.pk]) in html


def test_without_step_judges_the_list_is_empty(reviewer_client):
    page = reviewer_client.get(URL)
    assert page.status_code == 200 and len(page.context["page"]) == 0


@pytest.mark.parametrize("params", [{"state": "bogus"}, {"question": "abc"}, {"question": str(2**70)},
                                    {"judge_toy_case": "zz"}, {"page": "-3"}])
def test_bad_filters_are_not_a_500(reviewer_client, step_judged, params):
    assert reviewer_client.get(URL, params).status_code == 200
