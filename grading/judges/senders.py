"""
The threads that send a process's calls to one LLM endpoint, each holding one of its slots.

`complete` (grading.judges.client) does not send its request itself: it queues it here and
waits. A sender thread takes the request, gets a slot from the endpoint's limiter, sends, hands
the reply (or the exception) back, and then, if another request is queued, sends that one at
once on the same slot. Only when nothing is queued does it give the slot back.

Why: a slot that passes from a finished call to a waiting thread waits for that thread to wake
up and win the interpreter lock from everything else the process is doing (recording answers,
claiming work), a few milliseconds per call at every burst of answers. The thread that just
read an answer already holds the lock, so the next request leaves at once, as in a single
asyncio loop.

A slot is kept from one call to the next only when the limiter allows it (`Limiter.may_keep`:
a pure concurrency limit, a lease with time left, no cooldown seen); under a requests- or
tokens-per-minute budget every call goes through the shared store as before. Retries, their
back-off and the error record stay with the caller (`complete`): a sender only sends.

One pool per process and endpoint limits, at most `max_concurrency` threads; a thread idle for
IDLE_SECONDS ends.
"""
from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future

logger = logging.getLogger(__name__)

IDLE_SECONDS = 30.0
DEFAULT_SIZE = 8  # threads when the endpoint sets no concurrency limit


class Send:
    """One queued request: `send()` runs on a sender thread; `outcome()` gives its result or raises."""

    __slots__ = ("send", "tokens", "started", "actual_tokens", "_future")

    def __init__(self, send: Callable[[Send], object], tokens: int):
        self.send, self.tokens = send, tokens
        self.started = 0.0  # time.monotonic() when the request left (the slot was held from then)
        self.actual_tokens = None  # set by `send` when known: the limiter's token budget is settled with it
        self._future = Future()

    def wait(self) -> Send:
        self._future.exception()  # blocks until done, raises nothing
        return self

    def outcome(self):
        return self._future.result()


class Senders:
    """The sender threads of one endpoint in this process."""

    def __init__(self, limiter, size: int):
        self.limiter, self.size = limiter, max(1, size)
        self._queue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self._threads = 0

    def run(self, send: Callable[[Send], object], tokens: int = 0) -> Send:
        """Queue `send` and wait until a sender has run it; the returned Send holds the outcome."""
        item = Send(send, tokens)
        self._queue.put(item)
        with self._lock:
            if self._idle == 0 and self._threads < self.size:
                self._threads += 1
                threading.Thread(target=self._serve, name="llm-sender", daemon=True).start()
        return item.wait()

    @property
    def threads(self) -> int:
        return self._threads

    def _serve(self):
        try:
            while (item := self._next()) is not None:
                self._send_on_one_slot(item)
        finally:
            with self._lock:
                self._threads -= 1

    def _next(self) -> Send | None:
        """The next queued request, waiting up to IDLE_SECONDS; None: this thread should end."""
        while True:
            with self._lock:
                self._idle += 1
            try:
                item = self._queue.get(timeout=IDLE_SECONDS)
            except queue.Empty:
                item = None
            with self._lock:
                self._idle -= 1
                # A request queued just as the wait ended saw this thread idle and started no
                # other: take it rather than leave it with nobody.
                if item is not None or self._queue.empty():
                    return item

    def _send_on_one_slot(self, item: Send):
        try:
            permit = self.limiter.acquire(item.tokens)
        except BaseException as exc:  # noqa: BLE001 - the store failed: the caller gets the error
            item._future.set_exception(exc)
            return
        while True:
            item.started = time.monotonic()
            try:
                item._future.set_result(item.send(item))
                answered = True
            except BaseException as exc:  # noqa: BLE001 - the caller classifies and records it
                item._future.set_exception(exc)
                answered = False  # a 429 or an outage: the next call goes through the store
            if answered and self.limiter.may_keep(permit):
                try:
                    item = self._queue.get_nowait()
                    continue
                except queue.Empty:
                    pass
            try:
                self.limiter.release(permit, item.actual_tokens)
            except Exception:  # the lease frees the slot in time; this thread carries on
                logger.exception("Giving an LLM endpoint's slot back failed")
            return


_pools: dict = {}
_pools_lock = threading.Lock()


def senders_for(limiter) -> Senders:
    """This process's senders for the endpoint `limiter` guards (one pool per set of limits)."""
    key = (os.getpid(), limiter.limits)
    with _pools_lock:
        pool = _pools.get(key)
        if pool is None:
            pool = _pools[key] = Senders(limiter, limiter.limits.max_concurrency or DEFAULT_SIZE)
        return pool
