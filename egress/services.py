"""Writing the provider-call log: the transport's records, buffered in memory, written in batches.

`record_call` is the observer `llm` calls after each request (on whichever thread sent it: a
sender thread, an OCR worker, a web request). It only appends to this process's buffer: no
database work on the call's path, so the log costs a call nothing measurable (docs/security.md
has the figures) and can never make it fail. `flush` writes the buffer in one insert from a
thread that owns a database connection: at the end of every web request (`request_finished`),
of every Celery task (`task_postrun`: a judge chunk, an OCR page), when a worker process stops,
and when the process exits (`atexit`: management commands). A process killed outright loses
what it had not written yet: at most the calls of the task it was running.

A write that fails is logged and its records are kept for the next one (up to MAX_BUFFERED
records; beyond that the oldest are dropped and the count is logged).
"""
from __future__ import annotations

import atexit
import logging
import threading
from collections import deque
from datetime import UTC, datetime

from celery.signals import task_postrun, worker_process_shutdown
from django.core.signals import request_finished
from django.db import DatabaseError, transaction

import llm

from .models import ProviderCall

logger = logging.getLogger(__name__)

MAX_BUFFERED = 100_000
MAX_IDS = 1000  # ids kept per call (a batch request may concern thousands of answers)

_lock = threading.Lock()
_buffer: deque = deque()
_dropped = 0


def record_call(record: llm.CallRecord) -> None:
    """The transport's observer: keep `record` for the next write."""
    global _dropped
    with _lock:
        if len(_buffer) >= MAX_BUFFERED:
            _buffer.popleft()
            _dropped += 1
        _buffer.append(record)


def pending() -> int:
    """Records waiting to be written."""
    return len(_buffer)


def flush(**_signal_arguments) -> int:
    """Write every buffered record in one insert; the number written. Never raises."""
    global _dropped
    with _lock:
        if not _buffer and not _dropped:
            return 0
        records, dropped = list(_buffer), _dropped
        _buffer.clear()
        _dropped = 0
    if dropped:
        logger.error("The provider-call log dropped %s records: its buffer was full (writes failing?)", dropped)
    if not records:
        return 0
    try:
        with transaction.atomic():  # a savepoint inside a caller's transaction: a failure spoils nothing else
            ProviderCall.objects.bulk_create([_row(record) for record in records], batch_size=500)
    except (DatabaseError, ValueError, TypeError):
        logger.exception("Writing %s provider-call records failed; they are kept for the next write", len(records))
        with _lock:
            room = MAX_BUFFERED - len(_buffer)
            _buffer.extendleft(reversed(records[-room:] if room > 0 else []))
        return 0
    return len(records)


def discard() -> int:
    """Forget the buffered records unwritten (tests: what one test's calls left is not written in the next)."""
    global _dropped
    with _lock:
        count = len(_buffer)
        _buffer.clear()
        _dropped = 0
    return count


def _row(record):
    return ProviderCall(
        host=record.host[:255], method=record.method[:10], path=record.path[:500], purpose=(record.purpose or "")[:40],
        answer_ids=list(record.answer_ids[:MAX_IDS]), page_ids=list(record.page_ids[:MAX_IDS]),
        bytes_sent=max(0, record.bytes_sent), bytes_received=max(0, record.bytes_received), status=record.status,
        error=record.error[:100], started=datetime.fromtimestamp(record.started, tz=UTC),
        duration_ms=max(0, record.duration_ms),
    )


def install() -> None:
    """Observe the transport and write the log at the end of each request, task and process (idempotent)."""
    llm.set_observer(record_call)
    request_finished.connect(flush, dispatch_uid="egress.flush.request")
    task_postrun.connect(flush, dispatch_uid="egress.flush.task", weak=False)
    worker_process_shutdown.connect(flush, dispatch_uid="egress.flush.worker", weak=False)
    if not getattr(install, "_at_exit", False):
        atexit.register(flush)
        install._at_exit = True
