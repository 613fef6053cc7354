"""The probe runs' API: the same run actions as judge, generation and meta-evaluation runs
(grading/runs/api.py): start, list, progress, cancel, resume (409 while it still makes progress)."""
import pytest

from studies.models import ProbeRun
from tests.conftest import api_client_for
from tests.factories import make_question, make_setting

from .helpers import FAIR, make_answers

pytestmark = pytest.mark.django_db


def test_start_follow_cancel_resume(reviewer, annotator, endpoint, llm_server, django_capture_on_commit_callbacks):
    llm_server.default = FAIR
    make_answers(make_question(), 2)
    setting = make_setting(endpoint)
    api = api_client_for(reviewer)
    assert api_client_for(annotator).get("/api/probe-runs/").status_code == 403
    with django_capture_on_commit_callbacks(execute=False):
        created = api.post("/api/probe-runs/", {"setting": setting.pk, "probes": ["drop-final-answer"]}, format="json")
    assert created.status_code == 201
    run_id = created.json()["id"]
    assert created.json()["status"] == "running" and created.json()["n_items"] == 2
    assert [row["id"] for row in api.get("/api/probe-runs/").json()["results"]] == [run_id]
    progress = api.get(f"/api/probe-runs/{run_id}/progress/").json()
    assert progress["can_resume"] is False
    assert api.post(f"/api/probe-runs/{run_id}/resume/").status_code == 409  # still running, not stalled
    assert api.post(f"/api/probe-runs/{run_id}/cancel/").json()["status"] == "cancelled"
    with django_capture_on_commit_callbacks(execute=True):
        resumed = api.post(f"/api/probe-runs/{run_id}/resume/").json()
    assert resumed["epoch"] == 2
    assert ProbeRun.objects.get(pk=run_id).status == "done"


def test_bad_requests(reviewer, endpoint):
    api = api_client_for(reviewer)
    assert api.post("/api/probe-runs/", {"setting": 999999, "probes": ["all"]}, format="json").status_code == 404
    refused = api.post("/api/probe-runs/", {"setting": make_setting(endpoint).pk, "probes": ["nope"]}, format="json")
    assert refused.status_code == 400 and "Unknown probe nope" in str(refused.json())
    assert api.get("/api/probe-runs/abc/").status_code == 404
