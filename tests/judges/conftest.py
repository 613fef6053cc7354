"""Fixtures for the judge tests: the scripted LLM server, endpoints, settings, fast retries."""
import uuid

import pytest

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
