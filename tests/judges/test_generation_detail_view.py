"""A generation run's page (grading.generation.views.generation_detail, /grading/judges/generation/<pk>/):
its progress and the answers written; reviewers only; an unknown id is a 404."""
import pytest
from django.urls import reverse

from grading.generation import services as generation
from tests.conftest import assert_reviewer_only
from tests.llm_server import Reply

pytestmark = pytest.mark.django_db


def test_reviewers_only_and_the_page_shows_progress_and_answers(
        annotator, reviewer, endpoint, llm_server, rubric_question, django_capture_on_commit_callbacks):
    llm_server.default = Reply("Hence x = 2 or x = -2.")
    questions = type(rubric_question).objects.filter(pk=rubric_question.pk)
    with django_capture_on_commit_callbacks(execute=True):
        run = generation.start_generation_run(endpoint=endpoint, models=["gen-model"], temperatures=[0, 1],
                                              questions=questions)
    page = assert_reviewer_only(reverse("grading:judge_generation_detail", args=[run.pk]), annotator, reviewer)
    assert page.status_code == 200
    progress = page.context["progress"]
    assert (progress["total"], progress["done"], progress["ok"], progress["error"]) == (2, 2, 2, 0)
    items = list(page.context["page"])
    assert len(items) == 2 and all(item.response is not None for item in items)
    html = page.content.decode()
    assert "gen-model" in html
    assert reverse("annotation:response_detail", args=[items[0].response_id]) in html


@pytest.mark.parametrize("pk", [999999, 2**63])
def test_an_unknown_run_is_a_404(reviewer_client, pk):
    assert reviewer_client.get(f"/grading/judges/generation/{pk}/").status_code == 404
