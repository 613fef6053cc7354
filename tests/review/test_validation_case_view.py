"""One answer's step-judge validation (grading.review.views.validation_case,
/grading/review/validation/<pk>/): each judge's verdict, marked right or wrong by a reviewer;
reviewers only; an unknown id is a 404; a mark on another answer's result is refused."""
import pytest
from django.urls import reverse

from grading.models import JudgeSetting, StepJudgeValidation
from tests.conftest import assert_reviewer_only

pytestmark = pytest.mark.django_db
K = JudgeSetting.Kind


def test_reviewers_only_and_the_page_shows_each_judges_verdict(annotator, reviewer, step_judged):
    response = step_judged["responses"][0]
    toy = step_judged["results"][K.INEQ_TOY_CASE][0]
    page = assert_reviewer_only(reverse("grading:review_validation_case", args=[response.pk]), annotator, reviewer)
    html = page.content.decode()
    assert page.status_code == 200
    assert "Toy case" in html and "Logical gap" in html and f'name="mark_{toy.pk}"' in html
    assert "Answer 900" in html


def test_a_reviewer_marks_verdicts_and_goes_on_to_the_next_answer(reviewer_client, step_judged):
    first, second = step_judged["responses"][:2]
    toy = step_judged["results"][K.INEQ_TOY_CASE][0]
    saved = reviewer_client.post(reverse("grading:review_validation_case", args=[first.pk]),
                                 {f"mark_{toy.pk}": "wrong", f"note_{toy.pk}": "no toy case here", "then": "next"})
    assert saved.status_code == 302 and f"/validation/{second.pk}/" in saved["Location"]
    mark = StepJudgeValidation.objects.get()
    assert (mark.result_id, mark.verdict_right, mark.note) == (toy.pk, False, "no toy case here")


def test_refused_writes_save_nothing(annotator, reviewer_client, step_judged):
    from django.test import Client


    first = step_judged["responses"][0]
    elsewhere = step_judged["results"][K.INEQ_TOY_CASE][1]  # a result of another answer
    url = reverse("grading:review_validation_case", args=[first.pk])
    annotator_only = Client()
    annotator_only.force_login(annotator)
    assert annotator_only.post(url, {f"mark_{step_judged['results'][K.INEQ_TOY_CASE][0].pk}": "right"}).status_code == 403
    answer = reviewer_client.post(url, {f"mark_{elsewhere.pk}": "right", "bogus": "x"})
    assert answer.status_code == 302  # only this answer's results are read from the form
    assert not StepJudgeValidation.objects.exists()


@pytest.mark.parametrize("pk", [999999, 2**63])
def test_an_unknown_answer_is_a_404(reviewer_client, step_judged, pk):
    assert reviewer_client.get(f"/grading/review/validation/{pk}/").status_code == 404
