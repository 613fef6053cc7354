"""The generation form (grading.generation.views.generation_start, /grading/judges/generation/new/): a grid run and its pages."""
import pytest
from django.urls import reverse

from annotation.models import Response
from grading.models import GenerationRun
from tests.llm_server import Reply

pytestmark = pytest.mark.django_db


def test_generation_form_run_and_pages(reviewer_client, endpoint, llm_server, rubric_question,
                                        django_capture_on_commit_callbacks):
    llm_server.default = Reply("(1) x = 2\n(2) x = -2")
    data = {
        "name": "control group", "endpoint": endpoint.pk, "models": "alpha-7b, beta-8b", "temperatures": "0, 1",
        "per_cell": 1, "questions": [rubric_question.pk], "max_tokens": 256, "price_input_per_1k": "0.01",
        "price_output_per_1k": "0.02", "system_prompt": "You are a student.",
        "prompt_template": "Answer like a student: {{ problem }} and {{ answer_format }}",
    }
    with django_capture_on_commit_callbacks(execute=True):
        response = reviewer_client.post(reverse("grading:judge_generation_start"), data)
    run = GenerationRun.objects.get()
    assert response.status_code == 302 and run.n_items == 4 and run.status == "done"
    written = Response.objects.filter(source="synthetic")
    assert sorted(written.values_list("student_id", flat=True)) == [
        "alpha-7b_t_0_0", "alpha-7b_t_1_0", "beta-8b_t_0_0", "beta-8b_t_1_0"]
    assert "Answer like a student: Find all x" in written.first().generator_prompt
    progress = reviewer_client.get(reverse("grading:judge_generation_progress", args=[run.pk])).json()
    assert progress["ok"] == 4 and float(progress["cost"]) > 0
    page = reviewer_client.get(reverse("grading:judge_generation_detail", args=[run.pk])).content.decode()
    assert "alpha-7b_t_1_0" in page and "Written" in page
    listing = reviewer_client.get(reverse("grading:judge_generation_list")).content.decode()
    assert "control group" in listing
