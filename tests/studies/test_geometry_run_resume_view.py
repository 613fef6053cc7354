"""Resuming a geometry run (GEOMETRY_RUN_ACTIONS.resume, /grading/studies/geometry/runs/<pk>/resume/):
POST only, reviewers only; a cancelled analysis runs to the end; a finished run is not resumed;
an unknown id is a 404."""
import json

import pytest
from django.test import Client
from django.urls import reverse

from studies.geometry import services
from studies.geometry.models import GeometryRun

from ..conftest import assert_post_refused
from .helpers import lexical_geometry_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def cancelled():
    lines = [json.dumps({"segment_text": f"text number {i}", "sample_id": str(i), "question": f"Q{i % 2}", "sub_id": "",
                         "real_score": 0, "max_score": 1, "analysis_subset": "human"}) for i in range(6)]
    run = services.start_run(segments=services.parse_segments_jsonl("\n".join(lines)), bootstrap=10, cluster=False,
                             enqueue=False)
    return services.cancel_run(run)


def test_a_cancelled_analysis_is_resumed_to_the_end(reviewer_client, cancelled, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        answer = reviewer_client.post(reverse("studies:geometry_run_resume", args=[cancelled.pk]))
    assert answer.status_code == 302
    cancelled.refresh_from_db()
    assert (cancelled.status, cancelled.analysis_state) == ("done", "done"), cancelled.analysis_error
    assert cancelled.results["study"] == "error_geometry"


def test_a_finished_run_is_not_resumed(reviewer_client):
    run = lexical_geometry_run()
    answer = reviewer_client.post(reverse("studies:geometry_run_resume", args=[run.pk]), follow=True)
    assert "has nothing left to do" in answer.content.decode()
    run.refresh_from_db()
    assert run.epoch == 1


def test_refused_writes_leave_the_run_cancelled(annotator, reviewer, cancelled):
    url = reverse("studies:geometry_run_resume", args=[cancelled.pk])
    assert_post_refused(url, annotator, reviewer)
    cancelled.refresh_from_db()
    assert cancelled.status == "cancelled"


@pytest.mark.parametrize("pk", [999999, 2**63])
def test_an_unknown_run_is_a_404(reviewer_client, pk):
    assert reviewer_client.post(f"/grading/studies/geometry/runs/{pk}/resume/").status_code == 404


def test_cancel_then_resume(reviewer_client, annotator, endpoint, llm_server, django_capture_on_commit_callbacks):
    lines = [json.dumps({"segment_text": f"text {i}", "sample_id": str(i), "question": "Q", "sub_id": "", "real_score": 0,
                         "max_score": 1, "analysis_subset": "human"}) for i in range(3)]
    run = services.start_run(backend="served", endpoint=endpoint, model="m", segments=services.parse_segments_jsonl(
        "\n".join(lines)), bootstrap=0, cluster=False, enqueue=False)
    cancel = reverse("studies:geometry_run_cancel", args=[run.pk])
    resume = reverse("studies:geometry_run_resume", args=[run.pk])
    other = Client()
    other.force_login(annotator)
    assert other.post(cancel).status_code == 403 and reviewer_client.get(cancel).status_code == 405
    reviewer_client.post(cancel)
    run.refresh_from_db()
    assert run.status == GeometryRun.Status.CANCELLED
    with django_capture_on_commit_callbacks(execute=True):
        reviewer_client.post(resume)
    run.refresh_from_db()
    assert run.status == "done" and run.epoch == 2 and run.analysis_state == "done", run.analysis_error


def test_an_analysis_whose_worker_died_is_offered_again(reviewer_client, django_capture_on_commit_callbacks):
    from datetime import timedelta

    from django.utils import timezone

    run = lexical_geometry_run("<b>bold</b> answer")
    GeometryRun.objects.filter(pk=run.pk).update(analysis_state="running", results={},
                                                 finished=timezone.now() - timedelta(hours=1))
    progress = reviewer_client.get(reverse("studies:geometry_run_progress", args=[run.pk])).json()
    assert progress["can_resume"] and progress["stalled"]
    with django_capture_on_commit_callbacks(execute=True):
        reviewer_client.post(reverse("studies:geometry_run_resume", args=[run.pk]))
    run.refresh_from_db()
    assert run.analysis_state == "done" and run.results["study"] == "error_geometry"
