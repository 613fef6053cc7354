"""What the HTTP layer of an LLM call refuses: redirects, a trickling server past the deadline,
a 200 that is not a chat completion (issue 29, items 2, 9 and 10)."""
import time

import pytest

from grading.models import JudgeResult
from llm import client
from tests.factories import API_KEY_ENV, make_endpoint, make_setting
from tests.llm_server import LlmServer, Reply

from .helpers import run_now

MESSAGES = [{"role": "user", "content": "Answer 0: x = 2"}]


def spec(server, **fields):
    values = {"key": f"transport-{time.monotonic_ns()}", "base_url": server.url, "api_key_env": API_KEY_ENV,
              "timeout": 2.0, "max_attempts": 3}
    values.update(fields)
    return client.EndpointSpec(**values)


def call(endpoint):
    return client.complete(endpoint, client.CallSpec(model="judge-model"), MESSAGES)


@pytest.fixture
def elsewhere():
    """A second server: where a redirect points (reached by another name of the same machine)."""
    with LlmServer(host="127.0.0.1") as server:
        yield server


@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_a_redirect_to_another_host_is_not_followed_nor_retried(llm_server, elsewhere, settings, status):
    settings.LLM_ALLOWED_HOSTS = ["127.0.0.1"]
    target = f"http://localhost:{elsewhere.port}/v1/chat/completions"
    llm_server.script(None, Reply(status=status, headers={"Location": target}))
    with pytest.raises(client.LlmCallFailed) as failed:
        call(spec(llm_server))
    assert elsewhere.request_count == 0 and llm_server.request_count == 1
    (error,) = failed.value.errors
    assert error["kind"] == "redirect" and error["status"] == status
    assert f"localhost:{elsewhere.port}" in error["message"] and "not followed" in error["message"]


def test_a_redirect_in_a_run_is_recorded_as_such(llm_server, elsewhere, responses, settings,
                                                 django_capture_on_commit_callbacks):
    settings.LLM_ALLOWED_HOSTS = ["127.0.0.1"]
    llm_server.script(None, Reply(status=307, headers={"Location": f"http://localhost:{elsewhere.port}/v1/x"}))
    run_now(django_capture_on_commit_callbacks, make_setting(make_endpoint(llm_server)), response_ids=[responses[0].pk])
    result = JudgeResult.objects.get(response=responses[0])
    assert (result.status, result.attempts, result.errors[0]["kind"]) == ("error", 1, "redirect")
    assert elsewhere.request_count == 0 and "Answer 0" not in str(elsewhere.requests)


@pytest.mark.parametrize("with_headers", [False, True], ids=["body", "headers-and-body"])
def test_a_trickling_server_cannot_outlast_the_deadline(llm_server, with_headers):
    # ~300 bytes at 0.3 s each: 90 s per attempt without an overall deadline (each byte comes
    # well within the 1 s read timeout).
    llm_server.script(None, *[Reply("Overall Score: 5", trickle=0.3, trickle_headers=with_headers)] * 2)
    started = time.monotonic()
    with pytest.raises(client.LlmCallFailed) as failed:
        call(spec(llm_server, timeout=1.0, max_attempts=2))
    elapsed = time.monotonic() - started
    assert [e["kind"] for e in failed.value.errors] == ["timeout", "timeout"]
    assert "deadline of 1 s" in failed.value.errors[0]["message"]
    assert all(e["latency_ms"] < 1600 for e in failed.value.errors)
    assert elapsed < 4.0


def test_the_deadline_does_not_cut_a_slow_but_timely_answer(llm_server):
    llm_server.script(None, Reply("Overall Score: 5", trickle=0.002))  # ~0.6 s in all, timeout 2 s
    assert call(spec(llm_server)).text == "Overall Score: 5"


@pytest.mark.parametrize("reply", [
    Reply(body=b"<html><body>Bad gateway</body></html>", content_type="text/html"),
    Reply(body=b"<html>502</html>"),
    Reply(body=b'{"id": "x", "object": "chat.completion"}'),
    Reply(body=b'{"choices": []}'),
    Reply(body=b'{"choices": "none"}'),
    Reply(body=b'{"choices": [{"index": 0}]}'),
    Reply(body=b'{"choices": [{"message": {"content": 5}}]}'),
    Reply(body=b"[]"),
], ids=["html", "html-as-json", "no-choices", "empty-choices", "choices-string", "no-message", "content-number",
        "list"])
def test_a_200_that_is_not_a_chat_completion_is_bad_response_and_retried(llm_server, reply):
    llm_server.script(None, reply, Reply("Overall Score: 3"))
    completion = call(spec(llm_server))
    assert completion.text == "Overall Score: 3" and completion.attempts == 2
    assert [e["kind"] for e in completion.errors] == ["bad_response"]


def test_unreadable_answers_in_a_run_are_retried_then_recorded(llm_server, responses,
                                                               django_capture_on_commit_callbacks):
    llm_server.script("Answer 0:", Reply(body=b"<html>x</html>", content_type="text/html"), Reply("Overall Score: 4"))
    llm_server.script("Answer 1:", *[Reply(body=b'{"object": "chat.completion"}')] * 4)
    endpoint = make_endpoint(llm_server, max_attempts=4)
    run_now(django_capture_on_commit_callbacks, make_setting(endpoint), response_ids=[responses[0].pk, responses[1].pk])
    retried = JudgeResult.objects.get(response=responses[0])
    assert (retried.status, retried.score, retried.attempts) == ("ok", 4, 2)
    assert retried.errors[0]["kind"] == "bad_response"
    failed = JudgeResult.objects.get(response=responses[1])
    assert (failed.status, failed.attempts) == ("error", 4)
    assert [e["kind"] for e in failed.errors] == ["bad_response"] * 4


def test_the_client_takes_no_proxy_from_the_environment(monkeypatch, llm_server):
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("ALL_PROXY", "http://127.0.0.1:9")
    assert call(spec(llm_server, max_attempts=1)).text
