"""A run's progress JSON (JUDGE_RUN_ACTIONS.progress, /grading/judges/runs/<pk>/progress.json), through detail, cancel and resume."""
import pytest
from django.urls import reverse

from grading.judges import services
from tests.factories import make_responses, make_setting
from tests.llm_server import Reply

from .helpers import score_by_answer

pytestmark = pytest.mark.django_db


def test_detail_progress_cancel_resume(reviewer_client, endpoint, llm_server, rubric_question,
                                      django_capture_on_commit_callbacks):
    make_responses(rubric_question, 6)
    llm_server.default = score_by_answer({1: 9})
    llm_server.script("Answer 2:", Reply("no score here"))
    config = make_setting(endpoint)
    with django_capture_on_commit_callbacks(execute=False):
        run = services.start_judge_run(config, chunk_size=3)
    ids = list(run.items.order_by("id").values_list("pk", flat=True))
    services.process_judge_chunk(run.pk, run.epoch, ids[:3], task_id="t1")

    progress = reviewer_client.get(reverse("grading:judge_run_progress", args=[run.pk])).json()
    assert (progress["done"], progress["total"], progress["ok"], progress["invalid"]) == (3, 6, 2, 1)
    assert progress["status"] == "running" and progress["percent"] == 50.0
    assert progress["prompt_tokens"] > 0 and progress["latency_ms_p50"] is not None
    assert progress["can_cancel"] and not progress["can_resume"] and not progress["stalled"]
    # Resuming a run that is making progress is refused (it would only duplicate calls).
    reviewer_client.post(reverse("grading:judge_run_resume", args=[run.pk]))
    run.refresh_from_db()
    assert run.epoch == 1

    page = reviewer_client.get(reverse("grading:judge_run_detail", args=[run.pk]))
    html = page.content.decode()
    assert page.status_code == 200 and "no score here" in html and "unparseable" in html
    assert 'id="cancel-button"' in html and "3 / 6" in html

    assert reviewer_client.post(reverse("grading:judge_run_cancel", args=[run.pk])).status_code == 302
    run.refresh_from_db()
    assert run.status == "cancelled"
    with django_capture_on_commit_callbacks(execute=True):
        assert reviewer_client.post(reverse("grading:judge_run_resume", args=[run.pk])).status_code == 302
    run.refresh_from_db()
    assert run.status == "done" and run.epoch == 2
    progress = reviewer_client.get(reverse("grading:judge_run_progress", args=[run.pk])).json()
    assert progress["done"] == 6 and not progress["can_cancel"]
    filtered = reviewer_client.get(reverse("grading:judge_run_detail", args=[run.pk]), {"state": "invalid"})
    assert len(filtered.context["page"]) == 1
