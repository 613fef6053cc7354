"""A generation run's progress JSON (GENERATION_RUN_ACTIONS.progress,
/grading/judges/generation/<pk>/progress.json): counts as items are written; reviewers only; an
unknown id is a 404."""
import pytest
from django.urls import reverse

from grading.generation import services as generation
from tests.conftest import assert_reviewer_only
from tests.llm_server import Reply

pytestmark = pytest.mark.django_db


def test_reviewers_only_and_the_counts_follow_the_items(
        annotator, reviewer, reviewer_client, endpoint, llm_server, rubric_question, django_capture_on_commit_callbacks):
    llm_server.default = Reply("x = 2")
    questions = type(rubric_question).objects.filter(pk=rubric_question.pk)
    with django_capture_on_commit_callbacks(execute=False):
        run = generation.start_generation_run(endpoint=endpoint, models=["m"], temperatures=[0, 0.5, 1],
                                              questions=questions, chunk_size=1)
    url = reverse("grading:judge_generation_progress", args=[run.pk])
    before = assert_reviewer_only(url, annotator, reviewer).json()
    assert (before["status"], before["total"], before["done"], before["pending"]) == ("running", 3, 0, 3)
    assert before["can_cancel"] and not before["can_resume"]
    first = run.items.order_by("id").values_list("pk", flat=True)[0]
    generation.process_generation_chunk(run.pk, run.epoch, [first], task_id="t1")
    after = reviewer_client.get(url).json()
    assert (after["done"], after["ok"], after["percent"]) == (1, 1, 33.3)
    assert after["prompt_tokens"] > 0 and after["last_activity"] is not None


@pytest.mark.parametrize("pk", [999999, 2**63])
def test_an_unknown_run_is_a_404(reviewer_client, pk):
    assert reviewer_client.get(f"/grading/judges/generation/{pk}/progress.json").status_code == 404
