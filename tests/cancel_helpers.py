"""A call run in a thread under a cancel token, and a bounded wait: the cancel tests of the LLM
transport (tests/llm/test_cancel.py) and of the vision OCR engine (tests/ocr/test_vision_retries.py)."""
import threading
import time

import llm


def run_in_thread(fn, token=None):
    """`fn()` under `token` in a thread; returns (thread, outcome list)."""
    outcome = []

    def run():
        try:
            with llm.cancellable(token):
                outcome.append(fn())
        except Exception as exc:  # noqa: BLE001 - the test looks at it
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def wait_until(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False
