"""Cancelling a probe run (PROBE_RUN_ACTIONS.cancel, /grading/studies/probes/runs/<pk>/cancel/):
POST only, reviewers only; no judge call goes out after; an unknown id is a 404."""
import pytest
from django.urls import reverse

from studies import services
from tests.factories import make_question, make_setting

from ..conftest import assert_post_refused
from .helpers import FAIR, make_answers

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(endpoint, llm_server):
    llm_server.default = FAIR
    make_answers(make_question(), 2)
    return services.start_probe_run(make_setting(endpoint), probe_names=["drop-final-answer"], enqueue=False)


def test_a_reviewer_cancels_and_no_call_goes_out(reviewer_client, run, llm_server):
    answer = reviewer_client.post(reverse("studies:probe_run_cancel", args=[run.pk]))
    assert answer.status_code == 302 and answer["Location"] == reverse("studies:probe_run", args=[run.pk])
    run.refresh_from_db()
    assert run.status == "cancelled"
    services.run_inline(run)  # a worker picking the run up afterwards
    assert llm_server.request_count == 0
    progress = reviewer_client.get(reverse("studies:probe_run_progress", args=[run.pk])).json()
    assert progress["status"] == "cancelled" and progress["can_resume"]


def test_refused_writes_leave_the_run_running(annotator, reviewer, run):
    url = reverse("studies:probe_run_cancel", args=[run.pk])
    assert_post_refused(url, annotator, reviewer)
    run.refresh_from_db()
    assert run.status == "running"


@pytest.mark.parametrize("pk", [999999, 2**63])
def test_an_unknown_run_is_a_404(reviewer_client, pk):
    assert reviewer_client.post(f"/grading/studies/probes/runs/{pk}/cancel/").status_code == 404
