"""Cancelling a generation run (GENERATION_RUN_ACTIONS.cancel, /grading/judges/generation/<pk>/cancel/):
POST only, reviewers only; a cancelled run writes nothing more; an unknown id is a 404."""
import pytest
from django.urls import reverse

from grading.generation import services as generation
from tests.llm_server import Reply

pytestmark = pytest.mark.django_db


@pytest.fixture
def running(endpoint, llm_server, rubric_question, django_capture_on_commit_callbacks):
    llm_server.default = Reply("x = 2")
    questions = type(rubric_question).objects.filter(pk=rubric_question.pk)
    with django_capture_on_commit_callbacks(execute=False):
        return generation.start_generation_run(endpoint=endpoint, models=["m"], temperatures=[0, 1],
                                               questions=questions, chunk_size=1)


def test_a_reviewer_cancels_and_the_run_writes_nothing_more(reviewer_client, running, llm_server):
    url = reverse("grading:judge_generation_cancel", args=[running.pk])
    answer = reviewer_client.post(url)
    assert answer.status_code == 302
    assert answer["Location"] == reverse("grading:judge_generation_detail", args=[running.pk])
    running.refresh_from_db()
    assert running.status == "cancelled"
    ids = list(running.items.values_list("pk", flat=True))
    assert generation.process_generation_chunk(running.pk, running.epoch, ids, task_id="late").skipped == 2
    assert llm_server.request_count == 0
    page = reviewer_client.get(answer["Location"])
    assert "cancelled" in page.content.decode()


def test_refused_writes_leave_the_run_running(client, annotator, reviewer, running):
    url = reverse("grading:judge_generation_cancel", args=[running.pk])
    assert client.post(url).status_code == 302 and "/accounts/login/" in client.post(url)["Location"]
    client.force_login(annotator)
    assert client.post(url).status_code == 403
    client.force_login(reviewer)
    assert client.get(url).status_code == 405  # a GET never cancels
    running.refresh_from_db()
    assert running.status == "running"


@pytest.mark.parametrize("pk", [999999, 2**63])
def test_an_unknown_run_is_a_404(reviewer_client, pk):
    assert reviewer_client.post(f"/grading/judges/generation/{pk}/cancel/").status_code == 404
