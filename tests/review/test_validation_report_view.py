"""The step-judge validation report (grading.review.views.validation_report,
/grading/review/validation/report/): confusion matrices per judge and accuracies per model from
the reviewers' marks; reviewers only; an unknown positive class falls back to "flaw"."""
import pytest
from django.urls import reverse

from grading.models import JudgeSetting
from grading.review import services
from tests.conftest import assert_reviewer_only

pytestmark = pytest.mark.django_db
URL = reverse("grading:review_validation_report")


@pytest.fixture
def marked(step_judged, reviewer):
    toy = step_judged["results"][JudgeSetting.Kind.INEQ_TOY_CASE]
    for result, right in zip(toy, [True, True, False, True, False]):
        services.save_step_validations(result.response, {result.pk: right}, user=reviewer)
    return step_judged


def test_reviewers_only_and_the_report_has_the_figures_by_hand(annotator, reviewer, marked):
    page = assert_reviewer_only(URL, annotator, reviewer)
    html = page.content.decode()
    assert page.status_code == 200
    toy = next(j for j in page.context["report"]["judges"] if j["slot"] == "toy_case")
    assert (toy["tp"], toy["fp"], toy["fn"], toy["tn"]) == (1, 0, 2, 2)
    assert "model-x" in html and "model-y" in html
    assert "66.7%" in html  # model-x's answer accuracy: 2 of 3


def test_the_positive_class_can_be_pass(reviewer_client, marked):
    page = reviewer_client.get(URL, {"positive": "pass"})
    toy = next(j for j in page.context["report"]["judges"] if j["slot"] == "toy_case")
    assert (toy["tp"], toy["fp"], toy["fn"], toy["tn"]) == (2, 2, 0, 1)


@pytest.mark.parametrize("params", [{"positive": "bogus"}, {"judge_toy_case": "abc"}, {"judge_logical_gap": "-1"}])
def test_bad_parameters_are_not_a_500(reviewer_client, marked, params):
    page = reviewer_client.get(URL, params)
    assert page.status_code == 200
    toy = next(j for j in page.context["report"]["judges"] if j["slot"] == "toy_case")
    assert (toy["tp"], toy["fp"], toy["fn"], toy["tn"]) == (1, 0, 2, 2)  # "flaw", the default
