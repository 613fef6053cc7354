"""A geometry run's progress JSON (GEOMETRY_RUN_ACTIONS.progress,
/grading/studies/geometry/runs/<pk>/progress.json): reviewers only; a waiting analysis and a
finished one; an unknown id is a 404."""
import json

import pytest
from django.urls import reverse

from studies.geometry import services
from tests.conftest import assert_reviewer_only

from .helpers import lexical_geometry_run

pytestmark = pytest.mark.django_db


def test_reviewers_only_and_a_finished_run_says_so(annotator, reviewer):
    run = lexical_geometry_run()
    progress = assert_reviewer_only(reverse("studies:geometry_run_progress", args=[run.pk]),
                                    annotator, reviewer).json()
    assert progress["finished"] and progress["analysis"] == "done" and progress["total"] == 16
    assert not progress["can_cancel"] and not progress["can_resume"]


def test_a_waiting_analysis_can_be_cancelled(reviewer_client):
    lines = [json.dumps({"segment_text": f"text number {i}", "sample_id": str(i), "question": f"Q{i % 2}", "sub_id": "",
                         "real_score": 0, "max_score": 1, "analysis_subset": "human"}) for i in range(6)]
    run = services.start_run(segments=services.parse_segments_jsonl("\n".join(lines)), bootstrap=10, cluster=False,
                             enqueue=False)
    progress = reviewer_client.get(reverse("studies:geometry_run_progress", args=[run.pk])).json()
    assert not progress["finished"] and progress["can_cancel"] and progress["total"] == 6


@pytest.mark.parametrize("pk", [999999, 2**63])
def test_an_unknown_run_is_a_404(reviewer_client, pk):
    assert reviewer_client.get(f"/grading/studies/geometry/runs/{pk}/progress.json").status_code == 404
