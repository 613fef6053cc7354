"""Judge results on the response page: reviewers always; annotators only when the blind rule allows."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Exam, Label
from tests.conftest import api_client_for
from tests.factories import make_setting

from .helpers import run_now, score_by_answer

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged(endpoint, llm_server, responses, django_capture_on_commit_callbacks):
    llm_server.default = score_by_answer({0: 7})
    setting = make_setting(endpoint, name="hook-judge")
    run_now(django_capture_on_commit_callbacks, setting)
    return responses[0]


def page_of(client, response):
    return client.get(reverse("annotation:response_detail", args=[response.pk])).content.decode()


def test_reviewer_sees_judge_results(reviewer_client, judged):
    html = page_of(reviewer_client, judged)
    assert 'id="judge-results"' in html and "hook-judge v1" in html and "<strong>7</strong>" in html
    assert reverse("grading:judge_result_detail", args=[judged.judge_results.get().pk]) in html


def test_blind_annotator_sees_no_score_until_they_submit(annotator_client, annotator, judged):
    html = page_of(annotator_client, judged)
    assert 'id="judge-results"' not in html and "hook-judge" not in html
    api = api_client_for(annotator)
    assert api.get("/api/judge-results/", {"response": judged.pk}).json()["count"] == 0

    Label.objects.create(response=judged, annotator=annotator, submitted=True, total=5)
    html = page_of(annotator_client, judged)
    assert 'id="judge-results"' in html and "<strong>7</strong>" in html
    assert "judge_result_detail" not in html and "/grading/judges/results/" not in html  # judge pages are for reviewers
    assert api.get("/api/judge-results/", {"response": judged.pk}).json()["count"] == 1
    # Other responses of the blind exam stay hidden.
    assert api.get("/api/judge-results/").json()["count"] == 1


def test_open_exam_shows_scores_to_annotators(annotator_client, judged):
    Exam.objects.filter(pk=judged.question.exam_id).update(blind=False)
    assert "<strong>7</strong>" in page_of(annotator_client, judged)


def test_response_page_queries_do_not_grow_with_results(reviewer_client, endpoint, llm_server, judged,
                                                        django_capture_on_commit_callbacks):
    def queries():
        with CaptureQueriesContext(connection) as captured:
            reviewer_client.get(reverse("annotation:response_detail", args=[judged.pk]))
        return len(captured)

    before = queries()
    for n in range(4):
        run_now(django_capture_on_commit_callbacks, make_setting(endpoint, name=f"more-{n}"), response_ids=[judged.pk])
    assert queries() == before
    html = page_of(reviewer_client, judged)
    assert all(f"more-{n} v1" in html for n in range(4))
