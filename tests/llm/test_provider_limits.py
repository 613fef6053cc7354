"""Limits learned from the provider's headers: both stores, limits changed mid-run, a 429 storm,
typed limits as a ceiling, unreadable headers. Against the loopback server enforcing per-key
limits (tests/llm_limits.py) over a one-second "minute", with the client's window the same. A judge
run following the provider's limits: tests/judges/test_run_limits.py."""
import threading
import time
import uuid

import pytest

import llm
from llm import ratelimit
from tests.factories import API_KEY_ENV
from tests.llm_limits import KeyLimits
from tests.llm_server import Reply

WINDOW = 1.0


@pytest.fixture(autouse=True)
def _llm_environment(settings, tmp_path, monkeypatch):
    """Fast backoff, a private rate-limit state per test, and a key in the environment."""
    settings.LLM_RETRY_BASE_SECONDS = 0.01
    settings.LLM_RETRY_MAX_SECONDS = 0.05
    settings.LLM_RATELIMIT_DIR = tmp_path / "ratelimit"
    settings.LLM_RATELIMIT_PREFIX = f"realmath-test:{uuid.uuid4().hex}:"
    monkeypatch.setenv(API_KEY_ENV, "sk-test-not-a-real-key")


@pytest.fixture
def short_window(settings):
    settings.LLM_RATELIMIT_WINDOW_SECONDS = WINDOW


@pytest.fixture(params=["file", "redis"])
def backend(request, settings):
    if request.param == "redis":
        settings.REDIS_URL = request.getfixturevalue("redis_url")
    else:
        settings.REDIS_URL = ""
    return request.param


def spec_for(server, **fields):
    values = {"key": f"endpoint:provider:{uuid.uuid4().hex}", "base_url": server.url, "api_key_env": API_KEY_ENV,
              "timeout": 5, "max_attempts": 2, "max_concurrency": 8}
    values.update(fields)
    return llm.EndpointSpec(**values)


def call_many(spec, n, tag, width=8, max_tokens=16):
    """`n` chat calls from `width` threads; the completions in order (an exception where one failed)."""
    results, lock, todo = [None] * n, threading.Lock(), list(range(n))

    def work():
        while True:
            with lock:
                if not todo:
                    return
                index = todo.pop(0)
            try:
                results[index] = llm.complete(spec, llm.CallSpec(model="m", max_tokens=max_tokens),
                                              [{"role": "user", "content": f"{tag} call {index}"}])
            except Exception as exc:  # noqa: BLE001 - counted by the test
                results[index] = exc

    threads = [threading.Thread(target=work) for _ in range(width)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return results


def admitted_in_window(server, seconds, match=None, since=0.0):
    """The most requests answered 200 that started within any `seconds`."""
    return server.max_requests_in_window(seconds, status=200, match=match, since=since)


def test_store_limits_learned_ceiling_expiry_and_what_the_provider_counts(store):
    key = f"ep:{time.monotonic_ns()}"
    blank = ratelimit.Limits(key=key, lease_seconds=30.0, window=0.5)
    store.learn(blank, 3, 0, ttl=5.0)
    assert all(store.try_acquire(blank, f"a{i}", 0)[0] for i in range(3))
    ok, wait = store.try_acquire(blank, "a3", 0)
    assert not ok and 0 < wait <= 0.5
    # The provider lowers its limit mid-window: waits until enough of the window has passed.
    store.learn(blank, 2, 0, ttl=5.0)
    assert not store.try_acquire(blank, "a4", 0)[0]
    # Typed limits stay a ceiling: the provider's 100 does not raise a typed 2.
    typed = ratelimit.Limits(key=f"{key}:typed", requests_per_minute=2, lease_seconds=30.0, window=0.5)
    store.learn(typed, 100, 0, ttl=5.0)
    assert store.try_acquire(typed, "t1", 0)[0] and store.try_acquire(typed, "t2", 0)[0]
    assert not store.try_acquire(typed, "t3", 0)[0]
    # What the provider says it counted beyond the window is counted too (calls sent before the
    # limits were known): 900 of 1,000 tokens used, so a call of 200 waits.
    tokens = ratelimit.Limits(key=f"{key}:tokens", lease_seconds=30.0, window=0.5)
    store.learn(tokens, 0, 1000, ttl=5.0, used=(None, 900))
    ok, wait = store.try_acquire(tokens, "k1", 200)
    assert not ok and 0 < wait <= 0.5
    assert store.try_acquire(tokens, "k1", 100)[0]
    # Learned limits are forgotten when no answer renews them.
    short = ratelimit.Limits(key=f"{key}:short", lease_seconds=30.0, window=5.0)
    store.learn(short, 1, 0, ttl=1.0)
    assert store.try_acquire(short, "s1", 0)[0] and not store.try_acquire(short, "s2", 0)[0]
    time.sleep(1.1)
    assert store.try_acquire(short, "s2", 0)[0] and store.try_acquire(short, "s3", 0)[0]


def test_a_429_halves_the_concurrency_and_answers_raise_it_again(store):
    lim = ratelimit.Limits(key=f"ep:{time.monotonic_ns()}", max_concurrency=8, lease_seconds=30.0)
    assert all(store.try_acquire(lim, f"h{i}", 0)[0] for i in range(6))
    store.throttle(lim, 0.0)  # cap: (6 in flight + the refused one) // 2 = 3
    store.throttle(lim, 0.0)  # the same burst of 429s: cut once
    assert not store.try_acquire(lim, "x", 0)[0]
    for i in range(4):  # four answers: 3 -> 3.33 -> 3.63 -> 3.91 -> 4.17
        store.release(lim, f"h{i}", actual_tokens=10)
    assert store.try_acquire(lim, "a", 0)[0] and store.try_acquire(lim, "b", 0)[0]  # 4 in flight
    assert not store.try_acquire(lim, "c", 0)[0]
    store.release(lim, "a")  # failed calls (no usage) do not raise the cap
    store.release(lim, "b")
    assert store.try_acquire(lim, "a", 0)[0] and store.try_acquire(lim, "b", 0)[0]
    assert not store.try_acquire(lim, "c", 0)[0]
    store.release(lim, "a")
    store.release(lim, "b")
    for i in range(40):  # answers raise the cap back to the endpoint's max concurrency
        assert store.try_acquire(lim, f"r{i}", 0)[0]
        store.release(lim, f"r{i}", actual_tokens=10)
    assert all(store.try_acquire(lim, f"z{i}", 0)[0] for i in range(6))  # 8 in flight again
    assert not store.try_acquire(lim, "z6", 0)[0]


def test_limits_from_headers_change_mid_run_on_both_stores(backend, short_window, llm_server):
    llm_server.limits = KeyLimits(requests_per_minute=10, window=WINDOW)
    llm_server.latency = 0.02
    spec = spec_for(llm_server)
    started, since = time.monotonic(), time.time() + WINDOW
    first = call_many(spec, 30, "first")
    assert all(isinstance(c, llm.Completion) for c in first), [c for c in first if not isinstance(c, llm.Completion)]
    # 30 calls at 10 a second, 10 of them at once: at least 2 s; the pace kept to the provider's.
    assert time.monotonic() - started >= 1.8
    first_429 = llm_server.count(status=429)
    assert first_429 <= 8  # at most the calls sent before the first answer named the limit
    # After the first window (whose full budget the provider gives at once, on top of its refill,
    # while the first answers are on their way), the pace is the provider's. Counted at arrival in
    # windows a little shorter than the limiter's: a loaded machine delays some requests more than others.
    assert admitted_in_window(llm_server, WINDOW * 0.75, "first", since) <= 10 + 1

    llm_server.limits.set(requests_per_minute=4)  # the provider lowers the limit during the run
    started, since = time.monotonic(), time.time() + WINDOW
    second = call_many(spec, 12, "second")
    assert all(isinstance(c, llm.Completion) for c in second)
    assert time.monotonic() - started >= 1.5  # 12 at 4 a second
    assert llm_server.count(status=429) - first_429 <= 4
    assert admitted_in_window(llm_server, WINDOW * 0.75, "second", since) <= 4 + 1


def test_a_429_storm_loses_no_call_and_recovers(short_window, llm_server, settings):
    llm_server.latency = 0.01
    # The provider answers the next 24 requests 429 (more than the calls' attempts), then recovers.
    llm_server.script(None, *[Reply(status=429, retry_after=0.2) for _ in range(24)])
    spec = spec_for(llm_server, max_attempts=2)
    started = time.monotonic()
    done = call_many(spec, 10, "storm")
    elapsed = time.monotonic() - started
    assert all(isinstance(c, llm.Completion) for c in done), [c for c in done if not isinstance(c, llm.Completion)]
    assert llm_server.count(status=429) == 24 and llm_server.count(status=200) == 10
    assert sum(c.attempts for c in done) == 34
    assert all(e["status"] == 429 and e["retry_after"] == 0.2 for c in done for e in c.errors)
    # Everyone paused (a Retry-After pauses the endpoint for all) but not for long after the storm.
    assert 0.4 <= elapsed < 10


def test_429s_use_up_attempts_once_the_wait_budget_is_spent(llm_server, settings):
    settings.LLM_RATE_LIMIT_MAX_WAIT_SECONDS = 0
    llm_server.script(None, *[Reply(status=429, retry_after=0.05) for _ in range(5)])
    with pytest.raises(llm.LlmCallFailed) as caught:
        llm.complete(spec_for(llm_server, max_attempts=2), llm.CallSpec(model="m"), [{"role": "user", "content": "x"}])
    assert caught.value.attempts == 2 and llm_server.count(status=429) == 2


def test_an_exhausted_quota_is_not_retried(llm_server):
    body = b'{"error": {"message": "You exceeded your current quota", "type": "insufficient_quota", "code": "insufficient_quota"}}'
    llm_server.script(None, Reply(status=429, body=body), Reply("Overall Score: 1"))
    with pytest.raises(llm.LlmCallFailed) as caught:
        llm.complete(spec_for(llm_server), llm.CallSpec(model="m"), [{"role": "user", "content": "x"}])
    assert caught.value.attempts == 1 and llm_server.request_count == 1


def test_typed_limits_stay_a_ceiling(short_window, llm_server):
    llm_server.limits = KeyLimits(requests_per_minute=100, window=WINDOW)
    llm_server.latency = 0.01
    spec = spec_for(llm_server, requests_per_minute=4)
    started = time.monotonic()
    done = call_many(spec, 10, "typed")
    assert all(isinstance(c, llm.Completion) for c in done)
    assert time.monotonic() - started >= 1.4  # 10 at 4 a second, though the provider allows 100
    assert llm_server.count(status=429) == 0
    assert admitted_in_window(llm_server, WINDOW * 0.9) <= 4


def test_unreadable_limit_headers_are_ignored(backend, llm_server, monkeypatch):
    bad = {"x-ratelimit-limit-requests": "lots", "x-ratelimit-limit-tokens": "-1",
           "x-ratelimit-remaining-requests": "\u00b2", "x-ratelimit-reset-requests": "soon",
           "x-ratelimit-reset-tokens": "1s2"}
    learned, paused = [], []
    store_class = type(ratelimit.default_store())
    monkeypatch.setattr(store_class, "learn", lambda self, *args, **kwargs: learned.append(args))
    monkeypatch.setattr(store_class, "cooldown", lambda self, limits, seconds: paused.append(seconds))
    llm_server.script(None, Reply(status=429, retry_after="whenever", headers=bad),
                      Reply("Overall Score: 3", headers=bad))
    done = llm.complete(spec_for(llm_server), llm.CallSpec(model="m"), [{"role": "user", "content": "x"}])
    assert done.text == "Overall Score: 3" and done.attempts == 2
    assert "retry_after" not in done.errors[0]
    assert learned == [] and paused == []  # nothing learned, no pause read into them


def test_the_usage_of_each_answer_settles_the_token_budget(short_window, llm_server):
    # The provider counts 2,000 tokens a minute; each call is estimated at ~1,030 (a 1,024-token
    # cap) but uses 3: settled with the usage, more than two calls fit in one window.
    llm_server.limits = KeyLimits(tokens_per_minute=100_000, window=WINDOW)
    llm_server.default = Reply("Overall Score: 1", prompt_tokens=2, completion_tokens=1)
    spec = spec_for(llm_server, tokens_per_minute=2000, max_concurrency=1)
    started = time.monotonic()
    done = call_many(spec, 6, "usage", width=1, max_tokens=2000)
    assert all(isinstance(c, llm.Completion) for c in done)
    assert time.monotonic() - started < 0.9 * WINDOW * 2
