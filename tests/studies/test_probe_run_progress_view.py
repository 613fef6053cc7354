"""A probe run's progress JSON (PROBE_RUN_ACTIONS.progress, /grading/studies/probes/runs/<pk>/progress.json, polled by the pages); reviewers only."""
import pytest
from django.test import Client
from django.urls import reverse

from tests.factories import make_question, make_setting

from .helpers import FAIR, finished_run, make_answers

pytestmark = pytest.mark.django_db


def as_user(user):
    other = Client()
    other.force_login(user)
    return other


def test_progress_json(annotator, reviewer_client, endpoint, llm_server):
    llm_server.default = FAIR
    make_answers(make_question(), 2)
    run = finished_run(make_setting(endpoint), ["drop-final-answer"])
    url = reverse("studies:probe_run_progress", args=[run.pk])
    assert Client().get(url).status_code == 302
    assert as_user(annotator).get(url).status_code == 403
    data = reviewer_client.get(url).json()
    assert (data["status"], data["done"], data["total"], data["percent"], data["finished"]) == ("done", 2, 2, 100, True)
