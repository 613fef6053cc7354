"""What leaves the machine: every HTTP request the transport sends, reported to the host's observer.

Every request to a provider goes through the one HTTP client `client.bounded_http_client` builds
(chat completions, embeddings, completions, the model list, the OCR vision engine's calls, and
any files or batches request made on an `openai` client of this package), and so through its
transport (`reply_limit.DeadlineTransport`), which hands each request to `reply_limit.watch`. It notes
the host, method and path, the bytes of the request's body, the answer's status and the bytes of
its body (counted as it is read), the time, and the *tag* of the call (a `CallTag`: its purpose and the ids
of the answers or pages it is about), and gives a `CallRecord` to the observer, once the answer's
body is closed (or the request failed). Never the content: no prompt, image or answer.

The host application registers its observer once (`set_observer`, the `egress` app at start)
and labels its calls (`labelled`, a context manager, or `with_label` for a function handed to
a thread pool). A tag is a context variable: it follows the call onto the sender thread that
sends it (`senders.Send` runs its request in the caller's context). A call without a tag is
recorded with purpose "" (the host shows it as unlabelled).

Observing must never make a call fail or wait: the observer is called after the answer is read,
any exception it raises is logged and dropped, and it is expected to return at once (the egress
app appends to a buffer written in batches). Without an observer, the transport only sends.

Plain Python: no Django, no project app.
"""
from __future__ import annotations

import contextvars
import functools
import logging
import time
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from dataclasses import dataclass

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CallTag:
    """What a call is for: a purpose ("judge", "vision-ocr", ...) and the ids it concerns."""

    purpose: str = ""
    answer_ids: tuple[int, ...] = ()
    page_ids: tuple[int, ...] = ()


@dataclass(frozen=True)
class CallRecord:
    """One HTTP request to a provider, without its content."""

    host: str  # host[:port] as the URL names it
    method: str
    path: str  # the URL's path, without its query
    purpose: str
    answer_ids: tuple[int, ...]
    page_ids: tuple[int, ...]
    bytes_sent: int  # the request's body
    bytes_received: int  # the answer's body as read (0 when none came)
    status: int  # the HTTP status; 0 when no answer came
    error: str  # the exception's class when the request failed (a timeout, a refused connection...)
    started: float  # time.time() when the request left
    duration_ms: int


_tag: contextvars.ContextVar[CallTag | None] = contextvars.ContextVar("llm_call_tag", default=None)
_observer: Callable[[CallRecord], None] | None = None


def set_observer(observer: Callable[[CallRecord], None] | None) -> None:
    """Register the function given every CallRecord (None: stop observing)."""
    global _observer
    _observer = observer


def _ids(values: Iterable | None) -> tuple[int, ...]:
    return tuple(int(v) for v in (values or ()) if v is not None)


@contextmanager
def labelled(purpose: str, *, answer_ids: Iterable | None = (), page_ids: Iterable | None = ()):
    """Label the calls made inside the block (in this thread, and on the sender threads that send them)."""
    token = _tag.set(CallTag(purpose, _ids(answer_ids), _ids(page_ids)))
    try:
        yield
    finally:
        _tag.reset(token)


def with_label(function: Callable, purpose: str, *, answer_ids: Iterable | None = (), page_ids: Iterable | None = ()):
    """`function`, its calls labelled: for a function handed to another thread (a pool's `submit`),
    where the caller's context does not follow."""
    tag = CallTag(purpose, _ids(answer_ids), _ids(page_ids))

    @functools.wraps(function)
    def run(*args, **kwargs):
        token = _tag.set(tag)
        try:
            return function(*args, **kwargs)
        finally:
            _tag.reset(token)

    return run


def current_tag() -> CallTag | None:
    return _tag.get()


def observer() -> Callable[[CallRecord], None] | None:
    return _observer


def report(observer, base, sent, status, received, error, started, clock) -> None:
    """Give the observer one CallRecord; `base` is (host, method, path, label). Never raises."""
    host, method, path, label = base
    record = CallRecord(host=host, method=method, path=path, purpose=label.purpose, answer_ids=label.answer_ids,
                        page_ids=label.page_ids, bytes_sent=sent, bytes_received=received, status=status,
                        error=error, started=started, duration_ms=int((time.monotonic() - clock) * 1000))
    try:
        observer(record)
    except Exception:  # noqa: BLE001 - observing never makes a call fail
        logger.exception("The LLM call observer failed; the call goes on")
