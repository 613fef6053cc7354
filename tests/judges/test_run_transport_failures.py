"""What a judge run records when the HTTP layer refuses an answer: a redirect to another host (not
followed), a 200 that is not a chat completion (retried, then recorded) (issue 29, items 2 and 10;
the client itself: tests/llm/test_client_transport.py)."""
import pytest

from grading.models import JudgeResult
from tests.factories import make_endpoint, make_setting
from tests.llm_server import LlmServer, Reply

from .helpers import run_now


@pytest.fixture
def elsewhere():
    """A second server: where a redirect points (reached by another name of the same machine)."""
    with LlmServer(host="127.0.0.1") as server:
        yield server


def test_a_redirect_in_a_run_is_recorded_as_such(llm_server, elsewhere, responses, settings,
                                                 django_capture_on_commit_callbacks):
    settings.LLM_ALLOWED_HOSTS = ["127.0.0.1"]
    llm_server.script(None, Reply(status=307, headers={"Location": f"http://localhost:{elsewhere.port}/v1/x"}))
    run_now(django_capture_on_commit_callbacks, make_setting(make_endpoint(llm_server)), response_ids=[responses[0].pk])
    result = JudgeResult.objects.get(response=responses[0])
    assert (result.status, result.attempts, result.errors[0]["kind"]) == ("error", 1, "redirect")
    assert elsewhere.request_count == 0 and "Answer 0" not in str(elsewhere.requests)


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
