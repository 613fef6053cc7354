"""The vision engine's retries are the LLM transport's (issue 40, item 11): its `openai` client
retries nothing, `llm.retrying` waits out 429s through `llm.cancel.pause`, so a worker's shutdown
(or a cancel token) wakes the wait at once and nothing more is sent. Before, the SDK's own retries
slept out the Retry-After in `time.sleep`, which neither could wake, then sent the page again.
Against the scripted OpenAI-compatible server on 127.0.0.1 (tests/llm_server.py)."""
import threading
import time

import pytest
from PIL import Image

import llm
from llm import cancel
from ocr import synthetic
from ocr.engines import get_engine
from ocr.models import OcrRun
from tests.cancel_helpers import run_in_thread, wait_until
from tests.llm_server import Reply

from .conftest import png_bytes


@pytest.fixture(autouse=True)
def _fast_back_off(settings):
    settings.LLM_RETRY_BASE_SECONDS = 0.01
    settings.LLM_RETRY_MAX_SECONDS = 0.05
    yield
    cancel.reset_shutdown()


def recognise_in_thread(token=None):
    return run_in_thread(lambda: get_engine("vision").recognise(Image.new("L", (64, 64), 255)), token)


@pytest.mark.parametrize("stop", ["shutdown", "cancel"])
def test_a_vision_call_waiting_out_a_429_stops_at_a_shutdown_or_cancel_and_sends_nothing_more(
        vision_llm_server, settings, stop):
    settings.OCR_VISION_MAX_RETRIES = 2
    vision_llm_server.default = Reply(status=429, retry_after=60)
    token = llm.CancelToken() if stop == "cancel" else None
    thread, outcome = recognise_in_thread(token)
    assert wait_until(lambda: vision_llm_server.request_count == 1)
    time.sleep(0.5)  # now waiting out the Retry-After
    stopped_at = time.monotonic()
    if stop == "cancel":
        token.cancel()
    else:
        llm.shut_down()
    thread.join(5)
    assert not thread.is_alive(), "the vision call kept waiting out the 429"
    assert time.monotonic() - stopped_at < 2  # well under the Retry-After of 60 s
    assert isinstance(outcome[0], llm.CallCancelled)
    assert [e["kind"] for e in outcome[0].errors] == ["http", "cancelled"]
    time.sleep(1.0)
    assert vision_llm_server.request_count == 1  # the page was not sent again


def test_a_vision_429_is_waited_out_and_the_page_read_after_it(vision_llm_server, settings):
    """A 429 is the provider pacing us (the transport's rule): it uses up none of
    OCR_VISION_MAX_RETRIES (0 here), and its Retry-After is waited out before the next attempt."""
    settings.OCR_VISION_MAX_RETRIES = 0
    vision_llm_server.script(None, Reply(status=429, retry_after=1))
    started = time.monotonic()
    result = get_engine("vision").recognise(synthetic.render_page(["解"], width=200))
    assert result.text
    first, second = vision_llm_server.requests
    assert first.status == 429 and second.status == 200
    assert second.started - first.started >= 1.0 and time.monotonic() - started >= 1.0


def test_a_worker_shutting_down_leaves_a_vision_page_to_be_taken_over(vision_llm_server, settings, make_batch,
                                                                      run_tasks):
    """The page's run stays claimed (running, no error) for its watchdog, instead of failing."""
    settings.OCR_VISION_MAX_RETRIES = 2
    vision_llm_server.default = Reply(status=429, retry_after=60)
    stopped_at = []

    def shut_down_once_waiting():  # the worker's warm shutdown, once the page waits out its 429
        if wait_until(lambda: vision_llm_server.request_count == 1, timeout=60):
            time.sleep(0.5)
            stopped_at.append(time.monotonic())
            llm.shut_down()

    stopper = threading.Thread(target=shut_down_once_waiting, daemon=True)
    stopper.start()
    page = synthetic.render_page(["第一页"], width=400)
    with run_tasks():
        batch, _ = make_batch([("s1_3-17_1.png", png_bytes(page))], engine="vision")
    assert stopped_at and time.monotonic() - stopped_at[0] < 5
    run = OcrRun.objects.get(page__batch=batch)
    assert run.status == "running" and run.error == ""
    assert vision_llm_server.request_count == 1
