"""A judge setting's page (grading.judges.views.setting_detail, /grading/judges/settings/<pk>/):
its prompts, versions and runs; reviewers only; an unknown id is a 404."""
import pytest
from django.urls import reverse

from grading.judges.kinds import KINDS
from tests.conftest import assert_reviewer_only
from tests.factories import make_responses, make_setting

from .helpers import run_now, score_by_answer

pytestmark = pytest.mark.django_db


def test_reviewers_only_and_the_page_shows_the_setting_its_prompt_and_its_runs(
        annotator, reviewer, endpoint, llm_server, rubric_question, django_capture_on_commit_callbacks):
    make_responses(rubric_question, 2)
    llm_server.default = score_by_answer({})
    setting = make_setting(endpoint, name="rubric-detail-a", model="judge-detail-model")
    run = run_now(django_capture_on_commit_callbacks, setting)
    page = assert_reviewer_only(reverse("grading:judge_setting_detail", args=[setting.pk]), annotator, reviewer)
    html = page.content.decode()
    assert page.status_code == 200
    assert "rubric-detail-a" in html and "judge-detail-model" in html
    assert page.context["effective_template"] == KINDS["rubric"].default_template
    assert [r.pk for r in page.context["runs"]] == [run.pk]
    assert page.context["used"] is True
    assert reverse("grading:judge_run_detail", args=[run.pk]) in html


@pytest.mark.parametrize("pk", [999999, 2**63])
def test_an_unknown_setting_is_a_404(reviewer_client, pk):
    assert reviewer_client.get(f"/grading/judges/settings/{pk}/").status_code == 404
