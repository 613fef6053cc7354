"""Fixtures of the llm library's tests: the scripted loopback server and the two rate-limit stores
(a file store, and Redis at REDIS_URL or a private redis-server: the definitions the judge tests
use, imported so that there is one of each)."""
import pytest

from tests.judges.conftest import redis_url, store  # noqa: F401 (fixtures)
from tests.llm_server import LlmServer


@pytest.fixture
def llm_server():
    with LlmServer() as server:
        yield server
