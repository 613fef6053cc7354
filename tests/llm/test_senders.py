"""The sender threads: each holds one of an endpoint's slots and sends queued calls one after
another on it; the limits hold, errors reach their caller, and no slot is left taken."""
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from llm import ratelimit, senders

from .test_ratelimit_pass_on import CountingStore, limits


@pytest.fixture
def store(tmp_path):
    return CountingStore(tmp_path / "rl")


class Endpoint:
    """A fake endpoint: counts calls in flight and the most seen at once."""

    def __init__(self, seconds=0.02):
        self.seconds = seconds
        self.lock = threading.Lock()
        self.in_flight = self.most = self.calls = 0

    def send(self, request):
        with self.lock:
            self.in_flight += 1
            self.calls += 1
            self.most = max(self.most, self.in_flight)
        time.sleep(self.seconds)
        with self.lock:
            self.in_flight -= 1
        return f"answer {self.calls}"


def send_many(pool, endpoint, n):
    with ThreadPoolExecutor(n) as callers:
        return list(callers.map(lambda _: pool.run(endpoint.send), range(n)))


def test_queued_calls_go_out_on_the_slots_already_held(store):
    limiter = ratelimit.Limiter(limits(max_concurrency=2), store)
    pool, endpoint = senders.Senders(limiter, 2), Endpoint()
    sent = send_many(pool, endpoint, 12)
    assert endpoint.calls == 12 and endpoint.most == 2
    assert all(request.outcome().startswith("answer") and request.started > 0 for request in sent)
    # Each sender asked the store for its slot once and gave it back once; the calls in
    # between went out on the slot it held.
    assert store.acquires <= 4 and store.releases <= 4
    with store._state(limiter.limits.key) as state:
        assert state["holders"] == {}


def test_under_a_per_minute_budget_every_call_goes_through_the_store(store):
    limiter = ratelimit.Limiter(limits(max_concurrency=2, requests_per_minute=1000), store)
    pool, endpoint = senders.Senders(limiter, 2), Endpoint(seconds=0.005)
    send_many(pool, endpoint, 10)
    assert endpoint.calls == 10 and endpoint.most <= 2
    assert store.releases == 10
    with store._state(limiter.limits.key) as state:
        assert len(state["requests"]) == 10 and state["holders"] == {}


def test_an_error_reaches_its_caller_and_the_slot_goes_back_to_the_store(store):
    limiter = ratelimit.Limiter(limits(max_concurrency=1), store)
    pool, endpoint = senders.Senders(limiter, 1), Endpoint()

    def refused(request):
        deadline = time.monotonic() + 5
        while pool._queue.qsize() < 1:  # until the next call waits in the queue
            assert time.monotonic() < deadline
            time.sleep(0.001)
        raise ConnectionError("the endpoint hung up")

    with ThreadPoolExecutor(2) as callers:
        failing = callers.submit(pool.run, refused)
        following = callers.submit(pool.run, endpoint.send)
        with pytest.raises(ConnectionError, match="hung up"):
            failing.result().outcome()
        assert following.result().outcome() == "answer 1"
    # The slot was not kept for the queued call (the error may be a 429 or an outage): the
    # store was asked again, and the cooldown a 429 sets would have been seen there.
    assert (store.acquires, store.releases) == (2, 2)


def test_a_failing_store_fails_the_call_not_the_thread(store, monkeypatch):
    limiter = ratelimit.Limiter(limits(max_concurrency=1), store)
    pool = senders.Senders(limiter, 1)
    monkeypatch.setattr(store, "try_acquire", lambda *args: (_ for _ in ()).throw(OSError("store gone")))
    with pytest.raises(OSError, match="store gone"):
        pool.run(Endpoint().send).outcome()
    monkeypatch.undo()
    assert pool.run(Endpoint().send).outcome() == "answer 1"


def test_idle_senders_end_and_new_ones_start_when_calls_come(store, monkeypatch):
    # Long enough that a loaded machine still sees the senders before they idle out.
    monkeypatch.setattr(senders, "IDLE_SECONDS", 1.0)
    limiter = ratelimit.Limiter(limits(max_concurrency=3), store)
    pool, endpoint = senders.Senders(limiter, 3), Endpoint()
    send_many(pool, endpoint, 6)
    assert 1 <= pool.threads <= 3
    deadline = time.monotonic() + 15
    while pool.threads and time.monotonic() < deadline:
        time.sleep(0.01)
    assert pool.threads == 0
    assert pool.run(endpoint.send).outcome() == "answer 7"


def test_one_pool_per_process_limits_and_store(store, tmp_path):
    first = ratelimit.Limiter(limits(max_concurrency=4), store)
    same = ratelimit.Limiter(first.limits, ratelimit.FileStore(store.directory))
    other = ratelimit.Limiter(limits(max_concurrency=4), store)
    assert senders.senders_for(first) is senders.senders_for(same)
    assert senders.senders_for(other) is not senders.senders_for(first)
    assert senders.senders_for(first).size == 4
    # The same limits over another store (another deployment's, or another test's) get their
    # own threads: a pool takes its slots from the store it was made with.
    elsewhere = ratelimit.Limiter(first.limits, ratelimit.FileStore(tmp_path / "elsewhere"))
    assert senders.senders_for(elsewhere) is not senders.senders_for(first)
    assert senders.senders_for(elsewhere).limiter.store.directory == tmp_path / "elsewhere"


def test_a_burst_gets_its_threads_even_when_one_sits_idle(store):
    limiter = ratelimit.Limiter(limits(max_concurrency=6), store)
    pool, endpoint = senders.Senders(limiter, 6), Endpoint(seconds=0.1)
    pool.run(endpoint.send)
    assert pool.threads == 1  # idle now
    send_many(pool, endpoint, 6)
    assert endpoint.most == 6


def test_no_request_is_stranded_while_threads_time_out(store, monkeypatch):
    monkeypatch.setattr(senders, "IDLE_SECONDS", 0.001)  # threads end all the time
    limiter = ratelimit.Limiter(limits(max_concurrency=1), store)
    pool, endpoint = senders.Senders(limiter, 1), Endpoint(seconds=0)
    with ThreadPoolExecutor(3) as callers:
        for _ in range(200):
            calls = [callers.submit(pool.run, endpoint.send) for _ in range(2)]
            assert all(call.result(timeout=5).outcome() for call in calls)
            time.sleep(0.002)
    assert endpoint.calls == 400
