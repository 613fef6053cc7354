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
    setting = make_setting(endpoint)
    with django_capture_on_commit_callbacks(execute=False):
        run = services.start_judge_run(setting, chunk_size=3)
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


def test_seconds_elapsed_count_every_epoch_of_a_resumed_run(reviewer_client, endpoint, llm_server, rubric_question,
                                                            django_capture_on_commit_callbacks):
    """Issue 39: after a resume the run page counted only the last epoch (11 s of a 33 s run)."""
    from datetime import timedelta

    from django.utils import timezone

    from grading.models import JudgeRun

    make_responses(rubric_question, 4)
    llm_server.default = score_by_answer({})
    with django_capture_on_commit_callbacks(execute=False):
        run = services.start_judge_run(make_setting(endpoint), chunk_size=2)
    ids = list(run.items.order_by("id").values_list("pk", flat=True))
    services.process_judge_chunk(run.pk, run.epoch, ids[:2], task_id="t1")
    start = timezone.now() - timedelta(hours=2)
    # The first epoch ran 20 s and was cancelled; it stood cancelled for an hour and more.
    JudgeRun.objects.filter(pk=run.pk).update(created=start)
    reviewer_client.post(reverse("grading:judge_run_cancel", args=[run.pk]))
    JudgeRun.objects.filter(pk=run.pk).update(finished=start + timedelta(seconds=20))
    with django_capture_on_commit_callbacks(execute=False):
        reviewer_client.post(reverse("grading:judge_run_resume", args=[run.pk]))
    run.refresh_from_db()
    assert run.epoch == 2 and run.earlier_seconds == pytest.approx(20.0)
    JudgeRun.objects.filter(pk=run.pk).update(resumed=timezone.now() - timedelta(seconds=13))
    progress = reviewer_client.get(reverse("grading:judge_run_progress", args=[run.pk])).json()
    assert 33.0 <= progress["elapsed_s"] < 40.0  # 20 s + 13 s, not 13 s and not two hours
