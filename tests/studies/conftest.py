"""Fixtures for the studies tests: the judge tests' scripted LLM server, endpoint and environment."""
from tests.judges.conftest import _judge_environment, endpoint, llm_server  # noqa: F401
