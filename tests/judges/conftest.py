"""Fixtures for the judge tests: the scripted LLM server, endpoints, settings, fast retries, the
rate-limit stores (a file store, and Redis at REDIS_URL or a private redis-server), and the data
the setting form posts (`form_data`, for the setting page tests)."""
import os
import shutil
import socket
import subprocess
import time
import uuid

import pytest

from llm import ratelimit
from tests.factories import API_KEY_ENV, make_endpoint, make_question, make_responses
from tests.llm_server import LlmServer


@pytest.fixture(autouse=True)
def _judge_environment(settings, tmp_path, monkeypatch):
    """Fast backoff, a private rate-limit state per test, and a key in the environment."""
    settings.LLM_RETRY_BASE_SECONDS = 0.01
    settings.LLM_RETRY_MAX_SECONDS = 0.05
    settings.LLM_RATELIMIT_DIR = tmp_path / "ratelimit"
    settings.LLM_RATELIMIT_PREFIX = f"realmath-test:{uuid.uuid4().hex}:"
    monkeypatch.setenv(API_KEY_ENV, "sk-test-not-a-real-key")


@pytest.fixture
def llm_server():
    with LlmServer() as server:
        yield server


@pytest.fixture
def endpoint(llm_server, db):
    return make_endpoint(llm_server)


@pytest.fixture
def rubric_question(db):
    return make_question("Find all x with $x^2 = 4$.", full_score=10)


@pytest.fixture
def responses(rubric_question):
    return make_responses(rubric_question, 6)


def form_data(ep, **overrides):
    data = {
        "name": "rubric-a", "kind": "rubric", "endpoint": ep.pk, "model": "judge-x", "temperature": "0.7",
        "max_tokens": "4096", "reasoning_effort": "", "samples": "1", "aggregate": "mean", "parse_retries": "1",
        "price_input_per_1k": "0.001", "price_output_per_1k": "0.002", "system_prompt": "", "prompt_template": "",
        "extra_body": "", "notes": "",
    }
    data.update(overrides)
    return data


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def redis_url():
    """REDIS_URL when given (CI), else a private redis-server for this session."""
    url = os.environ.get("REDIS_URL")
    if url:
        yield url
        return
    exe = shutil.which("redis-server")
    if exe is None:
        if os.environ.get("REALMATH_REQUIRE_SERVICES"):
            pytest.fail("redis-server is required (REALMATH_REQUIRE_SERVICES=1) but not installed")
        pytest.skip("neither REDIS_URL nor redis-server is available")
    port = _free_port()
    proc = subprocess.Popen(
        [exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    import redis

    client = redis.Redis(port=port)
    for _ in range(100):
        try:
            client.ping()
            break
        except redis.ConnectionError:
            time.sleep(0.05)
    yield f"redis://127.0.0.1:{port}/0"
    proc.terminate()
    proc.wait(5)


@pytest.fixture(params=["file", "redis"])
def store(request, tmp_path, settings):
    if request.param == "file":
        return ratelimit.FileStore(tmp_path / "rl")
    url = request.getfixturevalue("redis_url")
    return ratelimit.RedisStore.for_url(url, f"realmath-test:{os.getpid()}:{time.monotonic_ns()}:")
