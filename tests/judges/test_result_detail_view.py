"""One judge result's page (grading.judges.views.result_detail, /grading/judges/results/<pk>/):
the response it judged, the score and the judge's raw output; reviewers only; an unknown id is a 404."""
import pytest
from django.urls import reverse

from tests.conftest import assert_reviewer_only
from tests.factories import make_responses, make_results, make_stored_setting

pytestmark = pytest.mark.django_db


def test_reviewers_only_and_the_page_shows_the_result(annotator, reviewer, rubric_question):
    response = make_responses(rubric_question, 1)[0]
    setting = make_stored_setting(name="imported-judge")
    result = make_results(setting, [response], [7], raw_output="Checkpoint two is missing its proof.",
                          prompt_tokens=120, completion_tokens=30)[0]
    page = assert_reviewer_only(reverse("grading:judge_result_detail", args=[result.pk]), annotator, reviewer)
    html = page.content.decode()
    assert page.status_code == 200 and page.context["result"] == result
    assert "Checkpoint two is missing its proof." in html and "imported-judge" in html
    assert reverse("annotation:response_detail", args=[response.pk]) in html
    assert "<strong>7</strong>" in html and "150" in html  # the score and the tokens


@pytest.mark.parametrize("pk", [999999, 2**63])
def test_an_unknown_result_is_a_404(reviewer_client, pk):
    assert reviewer_client.get(f"/grading/judges/results/{pk}/").status_code == 404
