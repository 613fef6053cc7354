"""Resuming a generation run (GENERATION_RUN_ACTIONS.resume, /grading/judges/generation/<pk>/resume/) after errors and a cancel."""
import pytest
from django.urls import reverse

from annotation.models import Response
from grading.generation import services as generation
from grading.models import GenerationRun
from tests.llm_server import Reply

pytestmark = pytest.mark.django_db


def test_generation_errors_cancel_and_resume(reviewer_client, llm_server, rubric_question,
                                             django_capture_on_commit_callbacks):
    from tests.factories import make_endpoint

    endpoint = make_endpoint(llm_server, max_attempts=2)
    llm_server.script(None, Reply(status=503), Reply(status=503))
    llm_server.default = Reply("x = 2")
    with django_capture_on_commit_callbacks(execute=False):
        run = generation.start_generation_run(endpoint=endpoint, models=["m"], temperatures=[0, 0.5],
                                            questions=type(rubric_question).objects.filter(pk=rubric_question.pk), chunk_size=1)
    ids = list(run.items.order_by("id").values_list("pk", flat=True))
    generation.process_generation_chunk(run.pk, run.epoch, ids[:1], task_id="a")
    first = run.items.get(pk=ids[0])
    assert first.state == "error" and [e["status"] for e in first.errors] == [503, 503]
    assert reviewer_client.post(reverse("grading:judge_generation_cancel", args=[run.pk])).status_code == 302
    assert generation.process_generation_chunk(run.pk, run.epoch, ids[1:], task_id="b").skipped == 1
    with django_capture_on_commit_callbacks(execute=True):
        reviewer_client.post(reverse("grading:judge_generation_resume", args=[run.pk]))
    run.refresh_from_db()
    assert run.status == "done" and run.epoch == 2
    assert Response.objects.filter(source="synthetic").count() == 2
    bad = reviewer_client.post(reverse("grading:judge_generation_start"), {"endpoint": endpoint.pk, "models": "m",
                                                                          "temperatures": "0, 3", "per_cell": 1,
                                                                          "questions": [rubric_question.pk], "max_tokens": 10,
                                                                          "price_input_per_1k": 0, "price_output_per_1k": 0,
                                                                          "prompt_template": "{{ problem }}"})
    assert "between 0 and 2" in bad.content.decode() and GenerationRun.objects.count() == 1
