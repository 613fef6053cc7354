"""Concurrency and rate limits per endpoint (llm/ratelimit.py), across threads and processes, on
both stores; the backoff and Retry-After. A judge run under an endpoint's limits:
tests/judges/test_run_limits.py."""
import multiprocessing
import os
import time
import uuid

import pytest

import llm
from llm import ratelimit
from tests.factories import API_KEY_ENV
from tests.llm_server import Reply


@pytest.fixture(autouse=True)
def _private_limits(settings, tmp_path, monkeypatch):
    """A private rate-limit state per test, and a key in the environment."""
    settings.LLM_RATELIMIT_DIR = tmp_path / "ratelimit"
    settings.LLM_RATELIMIT_PREFIX = f"realmath-test:{uuid.uuid4().hex}:"
    monkeypatch.setenv(API_KEY_ENV, "sk-test-not-a-real-key")


def limits(**fields):
    values = {"key": f"ep:{time.monotonic_ns()}", "lease_seconds": 30.0}
    values.update(fields)
    return ratelimit.Limits(**values)


def test_concurrency_slots_and_lease_expiry(store):
    lim = limits(max_concurrency=2, lease_seconds=0.3)
    assert store.try_acquire(lim, "a", 0)[0]
    assert store.try_acquire(lim, "b", 0)[0]
    assert not store.try_acquire(lim, "c", 0)[0]
    store.release(lim, "a")
    assert store.try_acquire(lim, "c", 0)[0]
    # "b" and "c" belong to a worker that was killed: their leases run out.
    time.sleep(0.35)
    assert store.try_acquire(lim, "d", 0)[0] and store.try_acquire(lim, "e", 0)[0]


def test_requests_per_window(store):
    lim = limits(requests_per_minute=3, window=0.4)
    assert all(store.try_acquire(lim, f"h{i}", 0)[0] for i in range(3))
    ok, wait = store.try_acquire(lim, "h3", 0)
    assert not ok and 0 < wait <= 0.4
    time.sleep(wait + 0.02)
    assert store.try_acquire(lim, "h3", 0)[0]


def test_tokens_per_window_with_correction(store):
    lim = limits(tokens_per_minute=100, window=0.4)
    assert store.try_acquire(lim, "a", 60)[0]
    assert not store.try_acquire(lim, "b", 60)[0]
    store.release(lim, "a", actual_tokens=20)  # the call used fewer tokens than estimated
    assert store.try_acquire(lim, "b", 60)[0]
    ok, wait = store.try_acquire(lim, "c", 60)
    assert not ok and wait > 0
    time.sleep(0.42)
    assert store.try_acquire(lim, "c", 60)[0]


def test_cooldown_pauses_everyone(store):
    lim = limits(max_concurrency=5)
    store.cooldown(lim, 0.3)
    ok, wait = store.try_acquire(lim, "a", 0)
    assert not ok and 0.2 < wait <= 0.3
    limiter = ratelimit.Limiter(lim, store)
    started = time.monotonic()
    limiter.release(limiter.acquire())
    assert time.monotonic() - started >= 0.2


def _calls_in_a_process(spec, n, barrier):
    barrier.wait()
    call = llm.CallSpec(model="m", max_tokens=16)
    for i in range(n):
        llm.complete(spec, call, [{"role": "user", "content": f"process {os.getpid()} call {i}"}])


@pytest.mark.parametrize("backend", ["file", "redis"])
def test_concurrency_limit_holds_across_processes(backend, llm_server, settings, monkeypatch, request):
    if backend == "redis":
        settings.REDIS_URL = request.getfixturevalue("redis_url")
    else:
        settings.REDIS_URL = ""
    llm_server.default = Reply("Overall Score: 1", latency=0.08)
    spec = llm.EndpointSpec(
        key=f"endpoint:procs:{time.monotonic_ns()}", base_url=llm_server.url, api_key_env=API_KEY_ENV,
        timeout=5, max_attempts=2, max_concurrency=2,
    )
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(3)
    procs = [ctx.Process(target=_calls_in_a_process, args=(spec, 5, barrier)) for _ in range(3)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(30)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    assert llm_server.request_count == 15
    assert llm_server.max_in_flight == 2


def test_backoff_honours_retry_after():
    assert llm.backoff_delay(1, retry_after=2.0, base=0.01, cap=0.05) >= 2.0
    delays = [llm.backoff_delay(a, base=1.0, cap=8.0) for a in (1, 2, 3, 4, 5, 6)]
    assert 0.5 <= delays[0] <= 1.0 and 4.0 <= delays[4] <= 8.0 and delays[5] <= 8.0
    assert llm.parse_retry_after({"retry-after": "3"}) == 3.0
    assert llm.parse_retry_after({"retry-after-ms": "250"}) == 0.25
    assert llm.parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert llm.parse_retry_after({"retry-after": "soon"}) is None

