"""The judges' home page (grading.judges.views.judges_home, /grading/judges/): its settings,
endpoints and latest runs; reviewers only."""
import pytest
from django.urls import reverse

from tests.conftest import assert_reviewer_only
from tests.factories import make_responses, make_setting

from .helpers import run_now, score_by_answer

pytestmark = pytest.mark.django_db
URL = reverse("grading:judges_home")


def test_reviewers_only_and_the_page_lists_settings_endpoints_and_runs(
        annotator, reviewer, endpoint, llm_server, rubric_question, django_capture_on_commit_callbacks):
    make_responses(rubric_question, 2)
    llm_server.default = score_by_answer({})
    setting = make_setting(endpoint, name="rubric-home-a")
    run = run_now(django_capture_on_commit_callbacks, setting)
    page = assert_reviewer_only(URL, annotator, reviewer)
    html = page.content.decode()
    assert page.status_code == 200
    assert "rubric-home-a" in html and endpoint.name in html
    assert reverse("grading:judge_run_detail", args=[run.pk]) in html
    assert reverse("grading:judge_setting_detail", args=[setting.pk]) in html


def test_an_empty_home_renders_and_a_stray_parameter_changes_nothing(reviewer_client):
    page = reviewer_client.get(URL, {"page": "x" * 50, "config": "-1"})
    assert page.status_code == 200
    assert list(page.context["configs"]) == [] and list(page.context["runs"]) == []
