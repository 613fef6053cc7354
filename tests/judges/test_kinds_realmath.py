"""RealMath-Eval judges: the rubric prompt, replaying imported prompts, several samples."""
import statistics

import pytest

from annotation.models import Response
from grading.models import JudgeResult, JudgeSetting
from tests.factories import make_setting
from tests.llm_server import Reply

from .helpers import run_now

pytestmark = pytest.mark.django_db


def test_rubric_prompt_carries_problem_rubric_and_answer(endpoint, llm_server, sample_data, django_capture_on_commit_callbacks):
    response = Response.objects.filter(source="human").order_by("id").first()
    question = response.question
    llm_server.default = Reply("Overall Score: 3")
    setting = make_setting(endpoint, name="rubric", kind=JudgeSetting.Kind.RUBRIC, temperature=0.7, max_tokens=8192)
    run_now(django_capture_on_commit_callbacks, setting, response_ids=[response.pk])
    sent = llm_server.requests[0]
    assert question.statement in sent.text and question.reference_solution in sent.text and response.transcript in sent.text
    assert f"out of {int(question.full_score)} points" in sent.text and "Overall Score: X" in sent.text
    assert sent.payload["model"] == "judge-model" and sent.payload["temperature"] == 0.7
    assert sent.payload["max_tokens"] == 8192 and sent.payload["messages"][0]["role"] == "system"
    assert sent.headers["authorization"] == "Bearer sk-test-not-a-real-key"  # read from the named variable
    assert JudgeResult.objects.get().score == 3


def test_reasoning_effort_and_extra_body_reach_the_request_as_top_level_keys(
    endpoint, llm_server, sample_data, django_capture_on_commit_callbacks
):
    """The body the typed `chat.completions.create` would send: `extra_body` merged in, its keys winning."""
    response = Response.objects.order_by("id").first()
    llm_server.default = Reply("Overall Score: 1")
    setting = make_setting(endpoint, name="extras", kind=JudgeSetting.Kind.RUBRIC, temperature=0.3, max_tokens=64,
                          reasoning_effort="low", extra_body={"top_p": 0.5, "temperature": 0.9, "seed": 7})
    run_now(django_capture_on_commit_callbacks, setting, response_ids=[response.pk])
    payload = llm_server.requests[0].payload
    assert set(payload) == {"model", "messages", "temperature", "max_tokens", "reasoning_effort", "top_p", "seed"}
    assert (payload["reasoning_effort"], payload["top_p"], payload["seed"], payload["temperature"]) == ("low", 0.5, 7, 0.9)
    assert JudgeResult.objects.get().score == 1


def test_replay_sends_the_records_own_prompt(endpoint, llm_server, sample_data, django_capture_on_commit_callbacks):
    replayed = list(Response.objects.exclude(judge_query="").order_by("id")[:3])
    bare = Response.objects.create(question=replayed[0].question, student_id="no-query", transcript="x", transcript_hash="h")
    llm_server.default = Reply("**Overall Score:** 2\n\nBrief Explanation: replayed.")
    setting = make_setting(endpoint, kind=JudgeSetting.Kind.REPLAY)
    run_now(django_capture_on_commit_callbacks, setting, response_ids=[r.pk for r in replayed] + [bare.pk])
    assert llm_server.request_count == 3
    sent = sorted(r.payload["messages"][-1]["content"] for r in llm_server.requests)
    assert sent == sorted(r.judge_query for r in replayed)
    assert all(len(r.payload["messages"]) == 1 for r in llm_server.requests)
    skipped = JudgeResult.objects.get(response=bare)
    assert (skipped.status, skipped.parse_status, skipped.attempts) == ("invalid", "no_input", 0)


def test_samples_give_median_and_spread(endpoint, llm_server, responses, django_capture_on_commit_callbacks):
    llm_server.script("Answer 0:", Reply("Overall Score: 2"), Reply("Overall Score: 9"), Reply("Overall Score: 4"),
                      Reply("no score"), Reply("Overall Score: 5"))
    setting = make_setting(endpoint, samples=5, aggregate="median")
    run_now(django_capture_on_commit_callbacks, setting, response_ids=[responses[0].pk])
    result = JudgeResult.objects.get()
    assert result.score == 4.5  # median of 2, 9, 4, 5 (the unreadable sample does not count)
    assert result.spread == pytest.approx(statistics.pstdev([2, 9, 4, 5]))
    assert [s["parse_status"] for s in result.samples] == ["ok", "ok", "ok", "unparseable", "ok"]
    assert result.prompt_tokens == sum(s["prompt_tokens"] for s in result.samples)
    assert result.cost == 0 and result.latency_ms >= 0


def test_cost_uses_the_settings_prices(endpoint, llm_server, responses, django_capture_on_commit_callbacks):
    from decimal import Decimal

    llm_server.default = Reply("Overall Score: 1", prompt_tokens=1000, completion_tokens=500)
    setting = make_setting(endpoint, price_input_per_1k="0.003", price_output_per_1k="0.012")
    run_now(django_capture_on_commit_callbacks, setting, response_ids=[responses[0].pk])
    assert JudgeResult.objects.get().cost == Decimal("0.009")  # 1000 * 0.003/1k + 500 * 0.012/1k


def test_home_panel_for_reviewers_only(reviewer, annotator, endpoint, llm_server, responses,
                                       django_capture_on_commit_callbacks):
    from django.test import Client
    from django.urls import reverse

    llm_server.default = Reply("Overall Score: 1")
    run_now(django_capture_on_commit_callbacks, make_setting(endpoint, name="home-judge"))
    as_reviewer, as_annotator = Client(), Client()
    as_reviewer.force_login(reviewer)
    as_annotator.force_login(annotator)
    home = as_reviewer.get(reverse("home")).content.decode()
    assert 'id="judges-panel"' in home and "home-judge" in home
    home = as_annotator.get(reverse("home")).content.decode()
    assert 'id="judges-panel"' not in home and reverse("grading:judges_home") not in home
