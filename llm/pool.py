"""This process's threads for LLM calls, kept from one chunk of work to the next."""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

CALL_THREADS = 256

_call_pool: tuple[int, ThreadPoolExecutor] | None = None
_call_pool_lock = threading.Lock()


def call_pool() -> ThreadPoolExecutor:
    """This process's threads for LLM calls, kept from one chunk to the next.

    A chunk that started its own 32 threads spent a tenth of its process's CPU starting them,
    at the moment its first calls should go out. Idle threads are reused; the caller bounds
    what it submits (its width), this pool only caps the total. Made per process id, so a
    forked worker never inherits its parent's threads.
    """
    global _call_pool
    with _call_pool_lock:
        if _call_pool is None or _call_pool[0] != os.getpid():
            _call_pool = (os.getpid(), ThreadPoolExecutor(max_workers=CALL_THREADS, thread_name_prefix="llm-call"))
        return _call_pool[1]
