"""Judge runs under an endpoint's limits: its concurrency, its requests per window, and the
provider's limits when the endpoint's are blank (the limiter itself, across threads and processes,
is tested in tests/llm/test_ratelimit.py and tests/llm/test_provider_limits.py)."""
import time

import pytest

from tests.factories import make_endpoint, make_setting
from tests.llm_limits import KeyLimits

from .helpers import run_now, score_by_answer

WINDOW = 1.0


@pytest.mark.django_db
def test_run_respects_endpoint_concurrency(llm_server, rubric_question, django_capture_on_commit_callbacks):
    from tests.factories import make_responses

    make_responses(rubric_question, 12)
    llm_server.default = score_by_answer({})
    llm_server.latency = 0.1
    endpoint = make_endpoint(llm_server, max_concurrency=3)
    run_now(django_capture_on_commit_callbacks, make_setting(endpoint), chunk_size=12)
    assert llm_server.request_count == 12
    assert llm_server.max_in_flight == 3


@pytest.mark.django_db
def test_run_respects_requests_per_window(llm_server, rubric_question, settings, django_capture_on_commit_callbacks):
    from tests.factories import make_responses

    settings.LLM_RATELIMIT_WINDOW_SECONDS = 0.5
    make_responses(rubric_question, 7)
    llm_server.default = score_by_answer({})
    endpoint = make_endpoint(llm_server, max_concurrency=8, requests_per_minute=3)
    started = time.monotonic()
    run_now(django_capture_on_commit_callbacks, make_setting(endpoint))
    assert time.monotonic() - started >= 1.0  # 7 requests at 3 per half second
    assert llm_server.request_count == 7
    # The limiter admits 3 per 0.5 s; a request reaches the server a little after its admission
    # (up to tens of ms on a loaded machine), so count arrivals in a shorter window.
    assert llm_server.max_requests_in_window(0.3) <= 3


@pytest.mark.django_db
def test_a_judge_run_with_blank_limits_follows_the_provider(settings, llm_server, rubric_question,
                                                            django_capture_on_commit_callbacks):
    from grading.models import JudgeRunItem
    from tests.factories import make_responses

    settings.LLM_RATELIMIT_WINDOW_SECONDS = WINDOW
    make_responses(rubric_question, 24)
    llm_server.default = score_by_answer({})
    llm_server.limits = KeyLimits(requests_per_minute=12, window=WINDOW)
    endpoint = make_endpoint(llm_server, max_concurrency=8, max_attempts=2)
    started = time.monotonic()
    run = run_now(django_capture_on_commit_callbacks, make_setting(endpoint))
    assert run.items.filter(state=JudgeRunItem.State.OK).count() == 24
    assert time.monotonic() - started >= 0.9  # 24 at 12 a second, 12 at once
    assert llm_server.count(status=429) <= 8
