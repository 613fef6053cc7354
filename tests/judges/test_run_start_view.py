"""The run start page (grading.judges.views.run_start, /grading/judges/runs/new/): counts the selection, starts or says why not."""
import pytest
from django.urls import reverse

from grading.models import JudgeRun
from tests.factories import make_endpoint, make_responses, make_setting

from .helpers import score_by_answer

pytestmark = pytest.mark.django_db


def test_start_page_counts_the_selection_and_starts(reviewer_client, endpoint, llm_server, rubric_question,
                                                     django_capture_on_commit_callbacks):
    make_responses(rubric_question, 4, source="human")
    make_responses(rubric_question, 3, source="synthetic", start=100)
    llm_server.default = score_by_answer({})
    setting = make_setting(endpoint)
    page = reviewer_client.get(reverse("grading:judge_run_start"), {"source": "synthetic", "config": setting.pk})
    assert page.status_code == 200 and page.context["n_matching"] == 3
    with django_capture_on_commit_callbacks(execute=True):
        response = reviewer_client.post(
            reverse("grading:judge_run_start"), {"config": setting.pk, "source": "synthetic", "note": "synthetic only"}
        )
    run = JudgeRun.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("grading:judge_run_detail", args=[run.pk])
    assert run.n_items == 3 and run.selection == {"source": "synthetic"} and run.note == "synthetic only"
    assert llm_server.request_count == 3
    run.refresh_from_db()
    assert run.status == "done"


def test_start_refuses_an_empty_selection(reviewer_client, endpoint, rubric_question):
    setting = make_setting(endpoint)
    response = reviewer_client.post(reverse("grading:judge_run_start"), {"config": setting.pk, "q": "nothing matches this"})
    assert response.status_code == 200
    assert "No response matches" in response.content.decode()
    assert not JudgeRun.objects.exists()


def test_start_names_a_missing_key_and_starts_nothing(reviewer_client, llm_server, rubric_question, monkeypatch):
    make_responses(rubric_question, 2)
    monkeypatch.delenv("REALMATH_LLM_KEY_UNSET", raising=False)
    setting = make_setting(make_endpoint(llm_server, api_key_env="REALMATH_LLM_KEY_UNSET"))
    response = reviewer_client.post(reverse("grading:judge_run_start"), {"config": setting.pk})
    page = response.content.decode()
    assert response.status_code == 200 and "REALMATH_LLM_KEY_UNSET is not set" in page
    assert "leave the endpoint&#x27;s API key variable blank" in page
    assert not JudgeRun.objects.exists() and llm_server.request_count == 0


def test_an_endpoint_without_key_variable_needs_no_key(reviewer_client, llm_server, rubric_question,
                                                       django_capture_on_commit_callbacks):
    make_responses(rubric_question, 2)
    llm_server.default = score_by_answer({})
    setting = make_setting(make_endpoint(llm_server, api_key_env=""))
    with django_capture_on_commit_callbacks(execute=True):
        reviewer_client.post(reverse("grading:judge_run_start"), {"config": setting.pk})
    assert JudgeRun.objects.get().status == "done" and llm_server.request_count == 2
