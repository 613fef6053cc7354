"""Cancel and resume of a probe run (PROBE_RUN_ACTIONS.resume, /grading/studies/probes/runs/<pk>/resume/; POST, reviewers only)."""
import pytest
from django.test import Client
from django.urls import reverse

from studies import services
from tests.factories import make_question, make_setting

from .helpers import FAIR, make_answers

pytestmark = pytest.mark.django_db


def as_user(user):
    other = Client()
    other.force_login(user)
    return other


def test_cancel_then_resume(annotator, reviewer_client, endpoint, llm_server,
                            django_capture_on_commit_callbacks):
    llm_server.default = FAIR
    make_answers(make_question(), 2)
    run = services.start_probe_run(make_setting(endpoint), probe_names=["drop-final-answer"], enqueue=False)
    cancel = reverse("studies:probe_run_cancel", args=[run.pk])
    resume = reverse("studies:probe_run_resume", args=[run.pk])
    assert Client().post(cancel).status_code == 302 and as_user(annotator).post(cancel).status_code == 403
    assert reviewer_client.get(cancel).status_code == 405
    reviewer_client.post(cancel)
    run.refresh_from_db()
    assert run.status == "cancelled"
    with django_capture_on_commit_callbacks(execute=True):
        reviewer_client.post(resume)
    run.refresh_from_db()
    assert run.status == "done" and run.epoch == 2
