"""Cancelling a geometry run (GEOMETRY_RUN_ACTIONS.cancel, /grading/studies/geometry/runs/<pk>/cancel/):
POST only, reviewers only; a waiting analysis is stopped; an unknown id is a 404."""
import json

import pytest
from django.urls import reverse

from studies.geometry import services
from studies.geometry.models import GeometryRun

from ..conftest import assert_post_refused

pytestmark = pytest.mark.django_db


@pytest.fixture
def waiting():
    lines = [json.dumps({"segment_text": f"text number {i}", "sample_id": str(i), "question": f"Q{i % 2}", "sub_id": "",
                         "real_score": 0, "max_score": 1, "analysis_subset": "human"}) for i in range(6)]
    return services.start_run(segments=services.parse_segments_jsonl("\n".join(lines)), bootstrap=10, cluster=False,
                              enqueue=False)


def test_a_reviewer_cancels_a_waiting_analysis(reviewer_client, waiting):
    answer = reviewer_client.post(reverse("studies:geometry_run_cancel", args=[waiting.pk]))
    assert answer.status_code == 302 and answer["Location"] == reverse("studies:geometry_run", args=[waiting.pk])
    waiting.refresh_from_db()
    assert (waiting.status, waiting.analysis_state) == ("cancelled", "cancelled")
    progress = reviewer_client.get(reverse("studies:geometry_run_progress", args=[waiting.pk])).json()
    assert progress["can_resume"] and not progress["can_cancel"]


def test_refused_writes_leave_the_run_as_it_was(annotator, reviewer, waiting):
    url = reverse("studies:geometry_run_cancel", args=[waiting.pk])
    assert_post_refused(url, annotator, reviewer)
    waiting.refresh_from_db()
    assert waiting.status != GeometryRun.Status.CANCELLED


@pytest.mark.parametrize("pk", [999999, 2**63])
def test_an_unknown_run_is_a_404(reviewer_client, pk):
    assert reviewer_client.post(f"/grading/studies/geometry/runs/{pk}/cancel/").status_code == 404


def test_cancel_during_the_analysis_from_the_page_then_resume(reviewer_client, django_capture_on_commit_callbacks):
    lines = [json.dumps({"segment_text": f"text number {i}", "sample_id": str(i), "question": f"Q{i % 2}", "sub_id": "",
                         "real_score": 0, "max_score": 1, "analysis_subset": "human"}) for i in range(6)]
    run = services.start_run(segments=services.parse_segments_jsonl("\n".join(lines)), bootstrap=10, cluster=False,
                             enqueue=False)  # lexical: its data is there, the analysis is waiting
    page = reviewer_client.get(reverse("studies:geometry_run", args=[run.pk])).content.decode()
    assert 'id="cancel-button" >' in page  # enabled while the analysis is to come
    response = reviewer_client.post(reverse("studies:geometry_run_cancel", args=[run.pk]))
    assert response.status_code == 302 and response["Location"] == reverse("studies:geometry_run", args=[run.pk])
    run.refresh_from_db()
    assert (run.status, run.analysis_state) == ("cancelled", "cancelled")
    with django_capture_on_commit_callbacks(execute=True):
        reviewer_client.post(reverse("studies:geometry_run_resume", args=[run.pk]))
    run.refresh_from_db()
    assert (run.status, run.analysis_state) == ("done", "done"), run.analysis_error
