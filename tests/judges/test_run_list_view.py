"""The list of judge runs (grading.judges.views.run_list, /grading/judges/runs/): filtered by
status and setting; reviewers only; bad filters are ignored, never a 500."""
import pytest
from django.urls import reverse

from grading.judges import services
from tests.conftest import assert_reviewer_only
from tests.factories import make_responses, make_setting

from .helpers import run_now, score_by_answer

pytestmark = pytest.mark.django_db
URL = reverse("grading:judge_run_list")


@pytest.fixture
def two_runs(endpoint, llm_server, rubric_question, django_capture_on_commit_callbacks):
    make_responses(rubric_question, 2)
    llm_server.default = score_by_answer({})
    done = run_now(django_capture_on_commit_callbacks, make_setting(endpoint, name="listed-a"))
    with django_capture_on_commit_callbacks(execute=False):
        running = services.start_judge_run(make_setting(endpoint, name="listed-b"))
    return done, running


def test_reviewers_only_and_every_run_is_listed(annotator, reviewer, two_runs):
    done, running = two_runs
    page = assert_reviewer_only(URL, annotator, reviewer)
    assert page.status_code == 200
    assert [run.pk for run in page.context["page"]] == [running.pk, done.pk]
    html = page.content.decode()
    assert "listed-a" in html and "listed-b" in html


def test_filters_by_status_and_setting(reviewer_client, two_runs):
    done, running = two_runs
    assert [r.pk for r in reviewer_client.get(URL, {"status": "done"}).context["page"]] == [done.pk]
    assert [r.pk for r in reviewer_client.get(URL, {"config": running.setting_id}).context["page"]] == [running.pk]


@pytest.mark.parametrize("params", [{"status": "bogus"}, {"config": "abc"}, {"config": str(2**70)}, {"page": "zz"}])
def test_bad_filters_are_ignored_not_a_500(reviewer_client, two_runs, params):
    page = reviewer_client.get(URL, params)
    assert page.status_code == 200 and len(page.context["page"]) == 2
