"""The list of generation runs (grading.generation.views.generation_list, /grading/judges/generation/):
each run with its grid and progress; reviewers only; a bad page number is not a 500."""
import pytest
from django.urls import reverse

from grading.generation import services as generation
from tests.conftest import assert_reviewer_only
from tests.llm_server import Reply

pytestmark = pytest.mark.django_db
URL = reverse("grading:judge_generation_list")


def test_reviewers_only_and_each_run_is_listed_with_its_grid_and_progress(
        annotator, reviewer, endpoint, llm_server, rubric_question, django_capture_on_commit_callbacks):
    llm_server.default = Reply("x = 2")
    questions = type(rubric_question).objects.filter(pk=rubric_question.pk)
    with django_capture_on_commit_callbacks(execute=True):
        run = generation.start_generation_run(endpoint=endpoint, models=["gen-model-a", "gen-model-b"],
                                              temperatures=[0, 0.7], questions=questions, name="grid-run")
    page = assert_reviewer_only(URL, annotator, reviewer)
    html = page.content.decode()
    assert page.status_code == 200 and [r.pk for r in page.context["page"]] == [run.pk]
    assert "grid-run" in html and "gen-model-a, gen-model-b" in html and "0.7" in html
    assert "4 / 4" in html  # two models x two temperatures, all written
    assert reverse("grading:judge_generation_detail", args=[run.pk]) in html


@pytest.mark.parametrize("page", ["zz", "-1", "99999", "9" * 40])
def test_a_bad_page_number_is_not_a_500(reviewer_client, page):
    answer = reviewer_client.get(URL, {"page": page})
    assert answer.status_code == 200 and "No generation runs yet." in answer.content.decode()
