"""A run's page (grading.judges.views.run_detail, /grading/judges/runs/<pk>/): escaped text, flat query counts."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from grading.judges import services
from tests.factories import make_question, make_responses, make_setting
from tests.llm_server import Reply

from .helpers import score_by_answer

pytestmark = pytest.mark.django_db


def test_student_text_and_model_output_are_escaped(reviewer_client, endpoint, llm_server, rubric_question,
                                                   django_capture_on_commit_callbacks):
    from annotation.models import Response, content_hash

    text = "Answer 0: <script>alert('student')</script>"
    Response.objects.create(question=rubric_question, student_id="<b>s</b>", transcript=text, transcript_hash=content_hash(text))
    llm_server.default = Reply("<img src=x onerror=alert(1)> Overall Score: 3")
    setting = make_setting(endpoint)
    with django_capture_on_commit_callbacks(execute=True):
        run = services.start_judge_run(setting)
    html = reviewer_client.get(reverse("grading:judge_run_detail", args=[run.pk])).content.decode()
    assert "<img src=x" not in html and "&lt;img src=x" in html
    assert "<b>s</b>" not in html
    result = run.items.get().result
    html = reviewer_client.get(reverse("grading:judge_result_detail", args=[result.pk])).content.decode()
    assert "<img src=x" not in html


def test_query_counts_stay_flat(reviewer_client, endpoint, llm_server, django_capture_on_commit_callbacks):
    llm_server.default = score_by_answer({})

    def count_queries(n_responses, tag):
        question = make_question(f"Question {tag}", location=tag)
        make_responses(question, n_responses, start=1000 * len(tag))
        setting = make_setting(endpoint, name=f"flat-{tag}")
        with django_capture_on_commit_callbacks(execute=True):
            run = services.start_judge_run(setting, params={"question": str(question.pk)})
        counts = []
        for url in (
            reverse("grading:judge_run_detail", args=[run.pk]),
            reverse("grading:judge_run_progress", args=[run.pk]),
            reverse("grading:judge_run_list"),
            reverse("grading:judges_home"),
        ):
            with CaptureQueriesContext(connection) as queries:
                assert reviewer_client.get(url).status_code == 200
            counts.append(len(queries))
        return counts

    small = count_queries(2, "a")
    large = count_queries(30, "bb")
    assert small == large
