"""The re-judge page of a question (grading.review.views.rubric_rejudge): roles, the before/after
table, and the button that re-judges with the chosen settings (eager Celery, loopback server)."""
import uuid

import pytest
from django.test import Client
from django.urls import reverse

from annotation import services as annotation_services
from grading.models import JudgeResult, JudgeRun
from tests.factories import (
    API_KEY_ENV,
    make_endpoint,
    make_question,
    make_responses,
    make_results,
    make_setting,
    set_gold,
)
from tests.llm_server import LlmServer, Reply

pytestmark = pytest.mark.django_db


@pytest.fixture
def server():
    with LlmServer() as server:
        server.default = Reply("Overall Score: 5")
        yield server


@pytest.fixture
def edited(server, settings, monkeypatch, tmp_path):
    """As tests/judges/conftest.py: a key in the environment, a private rate-limit state."""
    monkeypatch.setenv(API_KEY_ENV, "sk-test-not-a-real-key")
    settings.LLM_RATELIMIT_DIR = tmp_path / "ratelimit"
    settings.LLM_RATELIMIT_PREFIX = f"realmath-test:{uuid.uuid4().hex}:"
    question = make_question(location="J-01")
    responses = make_responses(question, 3)
    set_gold(responses, [5, 5, 5])
    setting = make_setting(make_endpoint(server), name="page-judge")
    make_results(setting, responses, [8, 5, 5], rubric_version=1)
    question = annotation_services.edit_rubric(question, reference_solution="(1) x ------3 points")
    return {"question": question, "config": setting, "responses": responses}


def test_roles(edited, annotator_client):
    url = reverse("grading:review_rubric_rejudge", args=[edited["question"].pk])
    assert Client().get(url).status_code == 302
    assert annotator_client.get(url).status_code == 403
    assert annotator_client.post(url, {"setting": edited["config"].pk}).status_code == 403
    assert not JudgeRun.objects.exists()


def test_page_lists_stale_settings_and_before_figures(edited, reviewer_client):
    html = reviewer_client.get(reverse("grading:review_rubric_rejudge", args=[edited["question"].pk])).content.decode()
    assert 'id="rejudge-form"' in html and "page-judge v1" in html
    assert 'class="num before-mse">3.000<' in html  # deltas 3, 0, 0
    assert "not re-judged yet" in html
    question_page = reviewer_client.get(reverse("annotation:question_detail", args=[edited["question"].pk]))
    assert b'id="question-rejudge-form"' in question_page.content and b"page-judge v1 (3)" in question_page.content


def test_annotators_see_no_rejudge_panel(edited, annotator_client):
    html = annotator_client.get(reverse("annotation:question_detail", args=[edited["question"].pk])).content
    assert b"rejudge" not in html and b"page-judge" not in html


def test_button_rejudges_and_the_after_column_fills_in(edited, reviewer_client, server, django_capture_on_commit_callbacks):
    url = reverse("grading:review_rubric_rejudge", args=[edited["question"].pk])
    with django_capture_on_commit_callbacks(execute=True):
        response = reviewer_client.post(url, {"setting": [edited["config"].pk, "nonsense"]})
    assert response.status_code == 302
    assert server.request_count == 3
    assert JudgeResult.objects.filter(rubric_version=2).count() == 3 and JudgeResult.objects.count() == 6
    html = reviewer_client.get(url).content.decode()
    assert 'class="num after-mse">0.000<' in html and 'id="nothing-stale"' in html
