"""Stopping calls that wait: a run's cancel, and a process that shuts down.

A call can wait a long time without sending anything: out a provider's ``Retry-After`` (up to
300 s per 429, up to LlmConfig.rate_limit_max_wait_seconds in all), for the endpoint's cooldown
or per-minute budget in the limiter, or in its back-off between attempts. Every one of those waits
goes through `pause`, which wakes as soon as the call is cancelled, and no attempt is sent once
it is: the call ends with `Cancelled` (`llm.CallCancelled` from `send_request`).

Two things cancel a call:

- its `CancelToken`: the caller (a run's chunk loop, grading/runs/engine.py) makes one per chunk, hands
  it to the threads that make the calls (`with_cancel`, as `observe.with_label` hands a label on;
  the sender threads get it with the request) and calls ``token.cancel()`` when the run is
  cancelled or moved to another epoch. A token may also carry a ``check`` function (e.g. "is the
  run still live?"), asked at most every ``every`` seconds, and only by the thread that made the
  token (it may touch a database connection of that thread);
- the process shutting down (`shut_down`: a Celery worker's warm shutdown), which cancels every
  call of the process: a stopping worker must not wait out rate-limit pauses.

A call already sent is not interrupted: it ends within its deadline (reply_limit).
"""
from __future__ import annotations

import contextvars
import functools
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager

POLL_SECONDS = 0.25  # how often a wait looks at its token and at the shutdown flag

_shutdown = threading.Event()
_current: contextvars.ContextVar[CancelToken | None] = contextvars.ContextVar("llm_cancel_token", default=None)


class Cancelled(Exception):
    """A wait ended because its call was cancelled (the run stopped, or the process shuts down)."""

    def __init__(self, reason=""):
        super().__init__(reason or why())


class CancelToken:
    """Set once the calls made under it must stop: `cancel()`, or `check()` answering True."""

    def __init__(self, check: Callable[[], bool] | None = None, every: float = 0.5):
        self._event = threading.Event()
        self._check, self._every = check, every
        self._owner = threading.get_ident()
        self._checked = float("-inf")

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        if self._event.is_set():
            return True
        if self._check is not None and threading.get_ident() == self._owner:
            now = time.monotonic()
            if now - self._checked >= self._every:
                self._checked = now
                if self._check():
                    self._event.set()
                    return True
        return False


def current() -> CancelToken | None:
    """The token of the calls this thread makes now (None: only a shutdown stops them)."""
    return _current.get()


def is_cancelled(token: CancelToken | None = None) -> bool:
    token = token if token is not None else current()
    return _shutdown.is_set() or (token is not None and token.cancelled)


def why() -> str:
    if _shutdown.is_set():
        return "the worker is shutting down; the call was not sent again (its work is taken over later)"
    return "the run was cancelled; the call was not sent again"


def raise_if_cancelled(token: CancelToken | None = None) -> None:
    if is_cancelled(token):
        raise Cancelled()


def pause(seconds: float, token: CancelToken | None = None) -> None:
    """Sleep `seconds`, or raise Cancelled as soon as the call is cancelled (checked every POLL_SECONDS)."""
    token = token if token is not None else current()
    deadline = time.monotonic() + max(0.0, seconds)
    while True:
        raise_if_cancelled(token)
        left = deadline - time.monotonic()
        if left <= 0:
            return
        if _shutdown.wait(min(left, POLL_SECONDS)):
            raise Cancelled()


@contextmanager
def cancellable(token: CancelToken | None):
    """Calls made in this block (in this thread) stop when `token` is cancelled."""
    reset = _current.set(token)
    try:
        yield token
    finally:
        _current.reset(reset)


def with_cancel(fn: Callable, token: CancelToken | None) -> Callable:
    """`fn` run under `token` (for a call handed to another thread, e.g. the call pool)."""
    @functools.wraps(fn)
    def run(*args, **kwargs):
        with cancellable(token):
            return fn(*args, **kwargs)

    return run


def shut_down() -> None:
    """Cancel every call of this process, now and from now on (a worker that stops)."""
    _shutdown.set()


def shutting_down() -> bool:
    return _shutdown.is_set()


def reset_shutdown() -> None:
    """Undo `shut_down` (tests; a process that stays)."""
    _shutdown.clear()
