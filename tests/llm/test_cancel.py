"""A cancel reaches calls that wait (issue 40, item 11): against a server answering 429 with a long
Retry-After, a cancelled call (its token, or the process shutting down) stops waiting at once and
sends nothing more; so does a call waiting in the limiter for the endpoint's cooldown."""
import threading
import time
import uuid

import pytest

import llm
from llm import cancel
from tests.cancel_helpers import run_in_thread, wait_until
from tests.llm_server import LlmServer, Reply

MESSAGES = [{"role": "user", "content": "Grade this."}]


@pytest.fixture(autouse=True)
def _private_limits(settings, tmp_path):
    settings.LLM_RATELIMIT_DIR = tmp_path / "ratelimit"
    settings.LLM_RATELIMIT_PREFIX = f"realmath-test:{uuid.uuid4().hex}:"
    settings.REDIS_URL = ""
    settings.LLM_RETRY_BASE_SECONDS = 0.01
    settings.LLM_RETRY_MAX_SECONDS = 0.05
    yield
    cancel.reset_shutdown()


@pytest.fixture
def throttling_server():
    """Every request answered 429 with a Retry-After of 60 s."""
    with LlmServer(default=Reply(status=429, retry_after=60)) as server:
        yield server


def endpoint(server, **kwargs):
    return llm.EndpointSpec(key=f"cancel-{uuid.uuid4().hex[:8]}", base_url=server.url, timeout=5.0, **kwargs)


def call_in_thread(target, token):
    """`llm.complete` under `token` in a thread; returns (thread, outcome list)."""
    return run_in_thread(lambda: llm.complete(target, llm.CallSpec(model="m"), MESSAGES), token)


def test_a_cancelled_call_stops_waiting_out_a_429_and_sends_nothing_more(throttling_server):
    target, token = endpoint(throttling_server), llm.CancelToken()
    thread, outcome = call_in_thread(target, token)
    assert wait_until(lambda: throttling_server.request_count == 1)
    time.sleep(0.5)  # now waiting out the Retry-After
    cancelled_at = time.monotonic()
    token.cancel()
    thread.join(5)
    assert not thread.is_alive(), "the call kept waiting out the 429 after the cancel"
    assert time.monotonic() - cancelled_at < 2
    assert isinstance(outcome[0], llm.CallCancelled) and isinstance(outcome[0], llm.LlmCallFailed)
    kinds = [e["kind"] for e in outcome[0].errors]
    assert kinds == ["http", "cancelled"] and "cancelled" in outcome[0].errors[-1]["message"]
    time.sleep(1.0)
    assert throttling_server.request_count == 1  # no request after the cancel


def test_a_call_waiting_for_the_endpoint_cooldown_in_the_limiter_stops_too(throttling_server):
    """The first call's 429 pauses the endpoint for 60 s; a second call waits in the limiter."""
    target, token = endpoint(throttling_server, max_concurrency=1), llm.CancelToken()
    first, first_out = call_in_thread(target, token)
    assert wait_until(lambda: throttling_server.request_count == 1)
    second, second_out = call_in_thread(target, token)
    time.sleep(1.0)
    assert throttling_server.request_count == 1 and second.is_alive()
    token.cancel()
    first.join(5)
    second.join(5)
    assert not first.is_alive() and not second.is_alive()
    assert isinstance(first_out[0], llm.CallCancelled) and isinstance(second_out[0], llm.CallCancelled)
    assert [e["kind"] for e in second_out[0].errors] == ["cancelled"]  # it never sent anything
    time.sleep(0.5)
    assert throttling_server.request_count == 1


def test_a_process_shutting_down_stops_every_waiting_call(throttling_server):
    target = endpoint(throttling_server)
    thread, outcome = call_in_thread(target, None)  # no token: only a shutdown stops it
    assert wait_until(lambda: throttling_server.request_count == 1)
    time.sleep(0.5)
    llm.shut_down()
    thread.join(5)
    assert not thread.is_alive()
    assert isinstance(outcome[0], llm.CallCancelled) and "shutting down" in str(outcome[0])
    time.sleep(0.5)
    assert throttling_server.request_count == 1


def test_a_token_check_runs_only_in_the_thread_that_made_it():
    asked = []
    token = llm.CancelToken(check=lambda: asked.append(threading.get_ident()) or True, every=0.0)
    seen = []
    other = threading.Thread(target=lambda: seen.append(token.cancelled))
    other.start()
    other.join()
    assert seen == [False] and asked == []  # another thread only sees cancel()
    assert token.cancelled and asked == [threading.get_ident()]


# --- the Batch API client (llm.batches): its requests retried by the transport's rules -------------

@pytest.fixture
def batch_api():
    from tests.llm_batches import BatchApi

    with LlmServer() as server:
        yield server, BatchApi(server).install()


def batch_client(server):
    return llm.BatchClient(endpoint(server), timeout=5.0)


def jsonl_file(tmp_path):
    path = tmp_path / "part.jsonl"
    path.write_bytes(llm.request_line("r1", llm.CallSpec(model="m"), MESSAGES))
    return path


def test_a_cancelled_batch_upload_stops_waiting_out_a_429_and_is_not_sent_again(batch_api, tmp_path):
    """Before, the SDK's retries slept out the Retry-After (no cancel could wake them) and then
    sent the cancelled run's upload again."""
    server, api = batch_api
    api.refuse("POST", "/files", 429, retry_after=60, times=5)
    client, token, path = batch_client(server), llm.CancelToken(), jsonl_file(tmp_path)
    thread, outcome = run_in_thread(lambda: client.upload("part.jsonl", path), token)
    assert wait_until(lambda: api.count("POST", "/files") == 1)
    time.sleep(0.5)  # now waiting out the Retry-After
    cancelled_at = time.monotonic()
    token.cancel()
    thread.join(5)
    assert not thread.is_alive(), "the upload kept waiting out the 429 after the cancel"
    assert time.monotonic() - cancelled_at < 2
    assert isinstance(outcome[0], llm.CallCancelled)
    assert [e["kind"] for e in outcome[0].errors] == ["http", "cancelled"]
    time.sleep(1.0)
    assert api.count("POST", "/files") == 1 and not api.files  # the upload was not sent again


def test_a_cancelled_batch_client_sends_nothing_once_cancelled(batch_api, tmp_path):
    server, api = batch_api
    token = llm.CancelToken()
    token.cancel()
    thread, outcome = run_in_thread(lambda: batch_client(server).upload("part.jsonl", jsonl_file(tmp_path)), token)
    thread.join(5)
    assert isinstance(outcome[0], llm.CallCancelled) and api.calls == []


def test_a_shutdown_stops_a_batch_request_waiting_out_a_429(batch_api, tmp_path):
    server, api = batch_api
    client = batch_client(server)
    file_id = client.upload("part.jsonl", jsonl_file(tmp_path))
    api.refuse("POST", "/batches", 429, retry_after=60, times=5)
    thread, outcome = run_in_thread(lambda: client.create(file_id, {"realmath_part": "1"}))  # no token
    assert wait_until(lambda: api.count("POST", "/batches") == 1)
    time.sleep(0.5)
    stopped_at = time.monotonic()
    llm.shut_down()
    thread.join(5)
    assert not thread.is_alive(), "the batch creation kept waiting out the 429 after the shutdown"
    assert time.monotonic() - stopped_at < 2
    assert isinstance(outcome[0], llm.CallCancelled) and "shutting down" in str(outcome[0])
    time.sleep(0.5)
    assert api.count("POST", "/batches") == 1 and not api.batches


def test_batch_requests_answered_429_are_waited_out_and_then_succeed(batch_api, tmp_path):
    """A 429 is the provider pacing us (the transport's rule): three of them in a row use up no
    attempt, and each Retry-After is waited out (the SDK gave up after its two retries)."""
    server, api = batch_api
    api.refuse("POST", "/files", 429, retry_after=0.5, times=3)
    path = jsonl_file(tmp_path)
    started = time.monotonic()
    file_id = batch_client(server).upload("part.jsonl", path)
    assert time.monotonic() - started >= 1.5
    assert api.count("POST", "/files") == 4
    assert api.files[file_id]["data"] == path.read_bytes()  # the whole file, on the attempt that succeeded
    api.refuse("GET", "/batches", 503, times=2)  # 5xx: two retries allowed
    assert batch_client(server).find_batch({"realmath_part": "9"}) is None
    assert api.count("GET", "/batches") == 3
