"""Resuming a run (JUDGE_RUN_ACTIONS.resume, /grading/judges/runs/<pk>/resume/): a stalled run is offered and resumed."""
import pytest
from django.urls import reverse

from grading.judges import services
from grading.models import JudgeRun
from tests.factories import make_responses, make_setting

from .helpers import score_by_answer

pytestmark = pytest.mark.django_db


def test_a_stalled_run_offers_resume(reviewer_client, endpoint, llm_server, rubric_question,
                                     django_capture_on_commit_callbacks):
    from datetime import timedelta

    from django.utils import timezone

    from grading.models import JudgeResult

    make_responses(rubric_question, 4)
    llm_server.default = score_by_answer({})
    with django_capture_on_commit_callbacks(execute=False):
        run = services.start_judge_run(make_setting(endpoint), chunk_size=2)
    ids = list(run.items.order_by("id").values_list("pk", flat=True))
    services.process_judge_chunk(run.pk, run.epoch, ids[:2], task_id="t1")  # then the worker died
    long_ago = timezone.now() - timedelta(minutes=5)
    JudgeRun.objects.filter(pk=run.pk).update(created=long_ago)
    JudgeResult.objects.update(finished=long_ago)
    progress = reviewer_client.get(reverse("grading:judge_run_progress", args=[run.pk])).json()
    assert progress["stalled"] and progress["can_resume"]
    with django_capture_on_commit_callbacks(execute=True):
        reviewer_client.post(reverse("grading:judge_run_resume", args=[run.pk]))
    run.refresh_from_db()
    assert run.status == "done" and run.epoch == 2 and llm_server.request_count == 4
