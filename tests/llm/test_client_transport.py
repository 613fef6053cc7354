"""What the HTTP layer of an LLM call refuses: redirects, a trickling server past the deadline,
a 200 that is not a chat completion (issue 29, items 2, 9 and 10). The same failures inside a
judge run: tests/judges/test_run_transport_failures.py."""
import time
import uuid

import pytest

from llm import client
from tests.factories import API_KEY_ENV
from tests.llm_server import LlmServer, Reply

MESSAGES = [{"role": "user", "content": "Answer 0: x = 2"}]


@pytest.fixture(autouse=True)
def _llm_environment(settings, tmp_path, monkeypatch):
    """Fast backoff, a private rate-limit state per test, and a key in the environment."""
    settings.LLM_RETRY_BASE_SECONDS = 0.01
    settings.LLM_RETRY_MAX_SECONDS = 0.05
    settings.LLM_RATELIMIT_DIR = tmp_path / "ratelimit"
    settings.LLM_RATELIMIT_PREFIX = f"realmath-test:{uuid.uuid4().hex}:"
    monkeypatch.setenv(API_KEY_ENV, "sk-test-not-a-real-key")


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


def test_the_client_takes_no_proxy_from_the_environment(monkeypatch, llm_server):
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("ALL_PROXY", "http://127.0.0.1:9")
    assert call(spec(llm_server, max_attempts=1)).text
