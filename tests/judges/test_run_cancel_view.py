"""Cancelling a judge run (JUDGE_RUN_ACTIONS.cancel, /grading/judges/runs/<pk>/cancel/): POST only,
reviewers only; back to the run page or a local `next`, never another host; an unknown id is a 404."""
import pytest
from django.urls import reverse

from grading.judges import services
from tests.factories import make_responses, make_setting

pytestmark = pytest.mark.django_db


@pytest.fixture
def running(endpoint, rubric_question, django_capture_on_commit_callbacks):
    make_responses(rubric_question, 3)
    with django_capture_on_commit_callbacks(execute=False):
        return services.start_judge_run(make_setting(endpoint))


def test_a_reviewer_cancels_and_no_call_goes_out(reviewer_client, running, llm_server):
    answer = reviewer_client.post(reverse("grading:judge_run_cancel", args=[running.pk]))
    assert answer.status_code == 302 and answer["Location"] == reverse("grading:judge_run_detail", args=[running.pk])
    running.refresh_from_db()
    assert running.status == "cancelled"
    ids = list(running.items.values_list("pk", flat=True))
    services.process_judge_chunk(running.pk, running.epoch, ids, task_id="late")
    assert llm_server.request_count == 0
    progress = reviewer_client.get(reverse("grading:judge_run_progress", args=[running.pk])).json()
    assert progress["status"] == "cancelled" and progress["can_resume"] and not progress["can_cancel"]


@pytest.mark.parametrize("target, expected", [
    ("/grading/judges/runs/", "/grading/judges/runs/"),
    ("https://elsewhere.example/", None),
    ("//elsewhere.example/", None),
])
def test_next_goes_back_to_a_local_path_only(reviewer_client, running, target, expected):
    answer = reviewer_client.post(reverse("grading:judge_run_cancel", args=[running.pk]), {"next": target})
    assert answer["Location"] == (expected or reverse("grading:judge_run_detail", args=[running.pk]))


def test_refused_writes_leave_the_run_running(client, annotator, reviewer, running):
    url = reverse("grading:judge_run_cancel", args=[running.pk])
    assert "/accounts/login/" in client.post(url)["Location"]
    client.force_login(annotator)
    assert client.post(url).status_code == 403
    client.force_login(reviewer)
    assert client.get(url).status_code == 405
    running.refresh_from_db()
    assert running.status == "running"


@pytest.mark.parametrize("pk", [999999, 2**63])
def test_an_unknown_run_is_a_404(reviewer_client, pk):
    assert reviewer_client.post(f"/grading/judges/runs/{pk}/cancel/").status_code == 404
