"""Run pages: start with filters, detail with results, progress JSON, cancel and resume."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from grading.judges import services
from grading.models import JudgeRun
from tests.factories import make_endpoint, make_question, make_responses, make_setting
from tests.llm_server import Reply

from .helpers import score_by_answer

pytestmark = pytest.mark.django_db


def test_start_page_counts_the_selection_and_starts(reviewer_client, endpoint, llm_server, rubric_question,
                                                     django_capture_on_commit_callbacks):
    make_responses(rubric_question, 4, source="human")
    make_responses(rubric_question, 3, source="synthetic", start=100)
    llm_server.default = score_by_answer({})
    config = make_setting(endpoint)
    page = reviewer_client.get(reverse("grading:judge_run_start"), {"source": "synthetic", "config": config.pk})
    assert page.status_code == 200 and page.context["n_matching"] == 3
    with django_capture_on_commit_callbacks(execute=True):
        response = reviewer_client.post(
            reverse("grading:judge_run_start"), {"config": config.pk, "source": "synthetic", "note": "synthetic only"}
        )
    run = JudgeRun.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("grading:judge_run_detail", args=[run.pk])
    assert run.n_items == 3 and run.selection == {"source": "synthetic"} and run.note == "synthetic only"
    assert llm_server.request_count == 3
    run.refresh_from_db()
    assert run.status == "done"


def test_start_refuses_an_empty_selection(reviewer_client, endpoint, rubric_question):
    config = make_setting(endpoint)
    response = reviewer_client.post(reverse("grading:judge_run_start"), {"config": config.pk, "q": "nothing matches this"})
    assert response.status_code == 200
    assert "No response matches" in response.content.decode()
    assert not JudgeRun.objects.exists()


def test_start_names_a_missing_key_and_starts_nothing(reviewer_client, llm_server, rubric_question, monkeypatch):
    make_responses(rubric_question, 2)
    monkeypatch.delenv("REALMATH_LLM_KEY_UNSET", raising=False)
    config = make_setting(make_endpoint(llm_server, api_key_env="REALMATH_LLM_KEY_UNSET"))
    response = reviewer_client.post(reverse("grading:judge_run_start"), {"config": config.pk})
    page = response.content.decode()
    assert response.status_code == 200 and "REALMATH_LLM_KEY_UNSET is not set" in page
    assert "leave the endpoint&#x27;s API key variable blank" in page
    assert not JudgeRun.objects.exists() and llm_server.request_count == 0


def test_an_endpoint_without_key_variable_needs_no_key(reviewer_client, llm_server, rubric_question,
                                                       django_capture_on_commit_callbacks):
    make_responses(rubric_question, 2)
    llm_server.default = score_by_answer({})
    config = make_setting(make_endpoint(llm_server, api_key_env=""))
    with django_capture_on_commit_callbacks(execute=True):
        reviewer_client.post(reverse("grading:judge_run_start"), {"config": config.pk})
    assert JudgeRun.objects.get().status == "done" and llm_server.request_count == 2


def test_detail_progress_cancel_resume(reviewer_client, endpoint, llm_server, rubric_question,
                                      django_capture_on_commit_callbacks):
    make_responses(rubric_question, 6)
    llm_server.default = score_by_answer({1: 9})
    llm_server.script("Answer 2:", Reply("no score here"))
    config = make_setting(endpoint)
    with django_capture_on_commit_callbacks(execute=False):
        run = services.start_judge_run(config, chunk_size=3)
    ids = list(run.items.order_by("id").values_list("pk", flat=True))
    services.process_judge_chunk(run.pk, run.epoch, ids[:3], task_id="t1")

    progress = reviewer_client.get(reverse("grading:judge_run_progress", args=[run.pk])).json()
    assert (progress["done"], progress["total"], progress["ok"], progress["invalid"]) == (3, 6, 2, 1)
    assert progress["status"] == "running" and progress["percent"] == 50.0
    assert progress["prompt_tokens"] > 0 and progress["latency_ms_p50"] is not None
    assert progress["can_cancel"] and not progress["can_resume"] and not progress["stalled"]
    # Resuming a run that is making progress is refused (it would only duplicate calls).
    reviewer_client.post(reverse("grading:judge_run_resume", args=[run.pk]))
    run.refresh_from_db()
    assert run.epoch == 1

    page = reviewer_client.get(reverse("grading:judge_run_detail", args=[run.pk]))
    html = page.content.decode()
    assert page.status_code == 200 and "no score here" in html and "unparseable" in html
    assert 'id="cancel-button"' in html and "3 / 6" in html

    assert reviewer_client.post(reverse("grading:judge_run_cancel", args=[run.pk])).status_code == 302
    run.refresh_from_db()
    assert run.status == "cancelled"
    with django_capture_on_commit_callbacks(execute=True):
        assert reviewer_client.post(reverse("grading:judge_run_resume", args=[run.pk])).status_code == 302
    run.refresh_from_db()
    assert run.status == "done" and run.epoch == 2
    progress = reviewer_client.get(reverse("grading:judge_run_progress", args=[run.pk])).json()
    assert progress["done"] == 6 and not progress["can_cancel"]
    filtered = reviewer_client.get(reverse("grading:judge_run_detail", args=[run.pk]), {"state": "invalid"})
    assert len(filtered.context["page"]) == 1


def test_student_text_and_model_output_are_escaped(reviewer_client, endpoint, llm_server, rubric_question,
                                                   django_capture_on_commit_callbacks):
    from annotation.models import Response, content_hash

    text = "Answer 0: <script>alert('student')</script>"
    Response.objects.create(question=rubric_question, student_id="<b>s</b>", transcript=text, transcript_hash=content_hash(text))
    llm_server.default = Reply("<img src=x onerror=alert(1)> Overall Score: 3")
    config = make_setting(endpoint)
    with django_capture_on_commit_callbacks(execute=True):
        run = services.start_judge_run(config)
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
        config = make_setting(endpoint, name=f"flat-{tag}")
        with django_capture_on_commit_callbacks(execute=True):
            run = services.start_judge_run(config, params={"question": str(question.pk)})
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
