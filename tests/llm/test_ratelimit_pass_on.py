"""Under a pure concurrency limit a finished call passes its slot straight to a waiting thread of
the same process (no store call); per-minute budgets, a cooldown or a stale view of the store
send it back through the store."""
import threading
import time

import pytest

from llm import ratelimit


class CountingStore(ratelimit.FileStore):
    """A file store that counts its calls."""

    def __init__(self, directory):
        super().__init__(directory)
        self.acquires = self.releases = 0

    def try_acquire(self, limits, holder, tokens):
        self.acquires += 1
        return super().try_acquire(limits, holder, tokens)

    def release(self, limits, holder, actual_tokens=None):
        self.releases += 1
        return super().release(limits, holder, actual_tokens)


@pytest.fixture
def store(tmp_path):
    return CountingStore(tmp_path / "rl")


def limits(**fields):
    values = {"key": f"ep:{time.monotonic_ns()}", "lease_seconds": 30.0}
    values.update(fields)
    return ratelimit.Limits(**values)


def _other_process_holds(store, lim, n):
    """Slots held by another worker process (in one process the local gate keeps threads from
    queueing: they queue only when other processes fill the store)."""
    assert all(store.try_acquire(lim, f"other-{i}", 0)[0] for i in range(n))


def _waiter(limiter, got):
    """A thread that waits for a slot and reports the permit it got."""
    def run():
        got.append(limiter.acquire())

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def _wait_until_waiting(limiter, n=1, timeout=5.0):
    deadline = time.monotonic() + timeout
    while len(limiter._waiters._queue) < n:
        assert time.monotonic() < deadline, "the waiter never queued"
        time.sleep(0.001)


def _one_running_one_waiting(store, **limit_fields):
    """Two slots, one held by another process, one by a call here; a second thread waits.

    Returns (limiter, the running call's permit, the list the waiter's permit lands in, the waiter).
    """
    limiter = ratelimit.Limiter(limits(max_concurrency=2, **limit_fields), store)
    _other_process_holds(store, limiter.limits, 1)
    first = limiter.acquire()
    got = []
    thread = _waiter(limiter, got)
    _wait_until_waiting(limiter)
    return limiter, first, got, thread


def test_a_released_slot_passes_to_the_waiter_without_the_store(store):
    limiter, first, got, thread = _one_running_one_waiting(store)
    acquires, releases = store.acquires, store.releases
    limiter.release(first)
    thread.join(5)

    assert got and got[0].holder == first.holder, "the waiter took the very slot that was released"
    assert got[0].granted == first.granted, "its lease still runs from the store's grant"
    assert store.releases == releases, "nothing went back to the store"
    assert store.acquires - acquires <= 1, "at most the poll that was already under way"
    limiter.release(got[0])
    assert store.releases == releases + 1  # nobody waits now: back to the store
    assert store.try_acquire(limiter.limits, "next", 0)[0]


@pytest.mark.parametrize("budget", [{"requests_per_minute": 100}, {"tokens_per_minute": 10_000}])
def test_per_minute_budgets_always_go_through_the_store(store, budget):
    limiter, first, got, thread = _one_running_one_waiting(store, **budget)
    limiter.release(first)
    thread.join(5)

    assert got and got[0].holder != first.holder, "the waiter got its own slot from the store"
    assert store.releases >= 1
    limiter.release(got[0])


def test_a_cooldown_stops_passing_slots(store):
    limiter, first, got, thread = _one_running_one_waiting(store)
    limiter.cooldown(0.3)  # a 429 with Retry-After in this process
    started = time.monotonic()
    limiter.release(first)
    thread.join(5)

    assert got and got[0].holder != first.holder
    assert time.monotonic() - started >= 0.25, "the waiter sat out the cooldown"
    limiter.release(got[0])


def test_a_stale_view_of_the_store_sends_the_slot_back(store, monkeypatch):
    monkeypatch.setattr(ratelimit, "HAND_OVER_STALENESS", 0.05)
    limiter = ratelimit.Limiter(limits(max_concurrency=2), store)
    _other_process_holds(store, limiter.limits, 1)
    first = limiter.acquire()
    limiter._waiters._store_seen = float("-inf")  # as if this process had not read the store for a while
    got = []
    thread = _waiter(limiter, got)
    _wait_until_waiting(limiter)
    limiter._waiters._store_seen = float("-inf")
    limiter.release(first)
    thread.join(5)

    assert got and got[0].holder != first.holder
    limiter.release(got[0])


def test_an_old_lease_is_not_passed_on(store):
    limiter, first, got, thread = _one_running_one_waiting(store, lease_seconds=0.2)
    time.sleep(0.12)  # more than half the lease has gone
    limiter._waiters.saw_store(0.0)
    limiter.release(first)
    thread.join(5)

    assert got and got[0].holder != first.holder
    limiter.release(got[0])


def test_a_slot_passed_after_the_waiter_stopped_looking_goes_back(store):
    """The waiter got a slot from the store just as another thread passed it one: the passed
    one must not be lost (it goes back to the store when the waiter leaves the queue)."""
    lim = limits(max_concurrency=2)
    limiter = ratelimit.Limiter(lim, store)
    waiters = limiter._waiters
    spare = ratelimit.Permit("spare", 0, time.monotonic())
    assert store.try_acquire(lim, "spare", 0)[0]
    with waiters.turn(on_leftover=limiter._give_back) as turn:
        assert waiters.pass_on(spare)
        assert not waiters.pass_on(ratelimit.Permit("second", 0, time.monotonic())), "one permit per turn"
    # The turn ended without taking it: the spare slot is free in the store again.
    assert store.try_acquire(lim, "x", 0)[0] and store.try_acquire(lim, "y", 0)[0]
    assert turn.closed


def test_many_threads_never_exceed_the_limit(store):
    limiter = ratelimit.Limiter(limits(max_concurrency=5), store)
    _other_process_holds(store, limiter.limits, 2)  # this process gets the other 3
    lock, state = threading.Lock(), {"now": 0, "max": 0, "done": 0}

    def work():
        for _ in range(20):
            with limiter.slot():
                with lock:
                    state["now"] += 1
                    state["max"] = max(state["max"], state["now"])
                time.sleep(0.002)
                with lock:
                    state["now"] -= 1
                    state["done"] += 1

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert state == {"now": 0, "max": 3, "done": 160}
    assert store.releases < 160, "most slots passed between threads"
    assert all(store.try_acquire(limiter.limits, f"h{i}", 0)[0] for i in range(3)), "every slot came back"
