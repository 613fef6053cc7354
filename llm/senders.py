"""
The threads that send a process's calls to one LLM endpoint, each holding one of its slots.

`complete` (llm.client) does not send its request itself: it queues it here and
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

One pool per process, endpoint limits and shared store, at most `max_concurrency` threads; a
thread idle for IDLE_SECONDS ends.
"""
from __future__ import annotations

import contextvars
import logging
import os
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future

from . import cancel

logger = logging.getLogger(__name__)

IDLE_SECONDS = 10.0
DEFAULT_SIZE = 8  # threads when the endpoint sets no concurrency limit


class Send:
    """One queued request: `send()` runs on a sender thread; `outcome()` gives its result or raises."""

    __slots__ = ("send", "tokens", "started", "actual_tokens", "context", "token", "_future")

    def __init__(self, send: Callable[[Send], object], tokens: int, token=None):
        self.send, self.tokens = send, tokens
        self.token = token if token is not None else cancel.current()  # its cancel (llm.cancel): no slot, no send after it
        self.context = contextvars.copy_context()  # the caller's: its call label (llm.observe) goes with it
        self.started = 0.0  # time.monotonic() when the request left (the slot was held from then)
        self.actual_tokens = None  # set by `send` when known: the limiter's token budget is settled with it
        self._future = Future()

    def wait(self) -> Send:
        # Blocks until done, raises nothing; meanwhile the caller's token is looked at (a token's
        # check runs only in the thread that made it: this one), so a cancel reaches the sender.
        while not self._future.done():
            try:
                self._future.exception(timeout=cancel.POLL_SECONDS)
            except TimeoutError:
                cancel.is_cancelled(self.token)
        return self

    def outcome(self):
        return self._future.result()


class Senders:
    """The sender threads of one endpoint in this process."""

    def __init__(self, limiter, size: int):
        self.limiter, self.size = limiter, max(1, size)
        self._queue = queue.SimpleQueue()
        self._lock = threading.Lock()  # guards the three counts below
        self._waiting = 0  # requests queued and not yet taken by a thread
        self._idle = 0  # threads waiting for a request
        self._threads = 0

    def run(self, send: Callable[[Send], object], tokens: int = 0, token=None) -> Send:
        """Queue `send` and wait until a sender has run it; the returned Send holds the outcome
        (cancel.Cancelled, without sending, once `token` or the process is cancelled)."""
        item = Send(send, tokens, token)
        with self._lock:
            self._queue.put(item)
            self._waiting += 1
            # A burst of requests may find fewer idle threads than requests: start more.
            if self._waiting > self._idle and self._threads < self.size:
                self._threads += 1
                threading.Thread(target=self._serve, name="llm-sender", daemon=True).start()
        return item.wait()

    @property
    def threads(self) -> int:
        return self._threads

    def _serve(self):
        while (item := self._next()) is not None:
            try:
                self._send_on_one_slot(item)
            except Exception:  # not expected (every outcome is handed back); the thread carries on
                logger.exception("An LLM sender thread failed")

    def _next(self, block: bool = True) -> Send | None:
        """The next queued request; None when there is none (after IDLE_SECONDS if `block`,
        and then this thread is counted out: it must end)."""
        idle = 1 if block else 0  # a thread that blocks counts as idle while it waits
        while True:
            with self._lock:
                self._idle += idle
            try:
                item = self._queue.get(timeout=IDLE_SECONDS) if block else self._queue.get_nowait()
            except queue.Empty:
                item = None
            with self._lock:
                self._idle -= idle
                if item is not None:
                    self._waiting -= 1
                    return item
                if not block:
                    return None
                if not self._waiting:
                    # Counted out under the lock `run` reads: a request queued from now on
                    # starts a new thread.
                    self._threads -= 1
                    return None
            # A request came just as the wait ended: wait again (it is this thread's or another's).

    def _send_on_one_slot(self, item: Send):
        try:
            permit = self.limiter.acquire(item.tokens, token=item.token)
        except BaseException as exc:  # noqa: BLE001 - the store failed or the call was cancelled: the caller gets it
            item._future.set_exception(exc)
            return
        while True:
            if cancel.is_cancelled(item.token):  # cancelled while queued behind a kept slot: never sent
                item._future.set_exception(cancel.Cancelled())
                break
            item.started = time.monotonic()
            try:
                item._future.set_result(item.context.run(item.send, item))
                answered = True
            except BaseException as exc:  # noqa: BLE001 - the caller classifies and records it
                item._future.set_exception(exc)
                answered = False  # a 429 or an outage: the next call goes through the store
            if answered and self.limiter.may_keep(permit):
                following = self._next(block=False)
                if following is not None:
                    item = following
                    continue
            break
        try:
            self.limiter.release(permit, item.actual_tokens)
        except Exception:  # the lease frees the slot in time; this thread carries on
            logger.exception("Giving an LLM endpoint's slot back failed")


_pools: dict = {}
_pools_lock = threading.Lock()


def senders_for(limiter) -> Senders:
    """This process's senders for the endpoint `limiter` guards: one pool per set of limits and
    shared store (a pool's threads take their slots from the store of the limiter it was made with)."""
    key = (os.getpid(), limiter.limits, limiter.store.key)
    with _pools_lock:
        pool = _pools.get(key)
        if pool is None:
            for old_key in [k for k, old in _pools.items() if old.threads == 0]:
                del _pools[old_key]  # no thread left: nothing refers to it any more
            pool = _pools[key] = Senders(limiter, limiter.limits.max_concurrency or DEFAULT_SIZE)
        return pool
