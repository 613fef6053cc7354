"""The vision engine through the real openai client against a tiny OpenAI-compatible server on 127.0.0.1."""
import base64
import io
import json
import math
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from PIL import Image

from ocr import synthetic
from ocr.engines import EngineFailed, EngineUnavailable, get_engine
from ocr.models import OcrRun

from .conftest import png_bytes

ANSWER = "解：由 $a_1=2$，$d=3$ 得 $a_n=3n-1$"


class VisionHandler(BaseHTTPRequestHandler):
    """Answers /v1/chat/completions like a vision model; the test scripts its behaviour."""

    script = {"mode": "ok"}
    requests = []

    def log_message(self, *args):
        pass

    def do_POST(self):  # noqa: N802 - http.server's naming
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        if self.path != "/v1/chat/completions":
            return self._send(404, {"error": {"message": "not found"}})
        if self.headers.get("Authorization") != "Bearer vision-test-key":
            return self._send(401, {"error": {"message": "bad key"}})
        if self.script["mode"] == "error":
            return self._send(500, {"error": {"message": "model crashed"}})
        if self.script["mode"] == "huge":
            return self._send(200, {"choices": [{"index": 0, "message": {"role": "assistant", "content": "x" * 300_000}}]})
        content = "```markdown\n" + ANSWER + "\n```"
        pieces = ["```markdown\n", "解：由 ", "$a_1=2$", "，", "$d=3$", " 得 ", "$a_n=3n-1$", "\n```"]
        logprobs = [{"token": p, "logprob": math.log(0.3 if p == "，" else 0.98), "bytes": None, "top_logprobs": []}
                    for p in pieces]
        self._send(200, {
            "id": "cmpl-1", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop", "logprobs": {"content": logprobs},
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
        })

    def _send(self, status, payload):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def vision_server(settings, monkeypatch):
    VisionHandler.requests = []
    VisionHandler.script = {"mode": "ok"}
    server = ThreadingHTTPServer(("127.0.0.1", 0), VisionHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    settings.OCR_VISION_BASE_URL = f"http://127.0.0.1:{server.server_port}/v1"
    settings.OCR_VISION_MODEL = "test-vision"
    settings.OCR_VISION_API_KEY_ENV = "REALMATH_LLM_KEY_OCR_TEST"
    settings.OCR_VISION_MAX_RETRIES = 0
    monkeypatch.setenv("REALMATH_LLM_KEY_OCR_TEST", "vision-test-key")
    yield VisionHandler
    server.shutdown()
    server.server_close()


def test_vision_engine_sends_the_page_and_reads_markdown_with_confidences(vision_server):
    engine = get_engine("vision")
    assert engine.availability() is None
    image = synthetic.render_page(["解：由 a_1=2"], width=400)
    result = engine.recognise(image)
    assert result.text == ANSWER
    sent = vision_server.requests[-1]
    assert sent["auth"] == "Bearer vision-test-key"
    assert sent["body"]["model"] == "test-vision" and sent["body"]["logprobs"] is True
    image_part = sent["body"]["messages"][0]["content"][1]["image_url"]["url"]
    assert image_part.startswith("data:image/jpeg;base64,")
    decoded = Image.open(io.BytesIO(base64.b64decode(image_part.split(",", 1)[1])))
    assert decoded.size == image.size
    low = [t for t in result.tokens if t.confidence < 0.5]
    assert [result.text[t.offset : t.offset + t.length] for t in low] == ["，"]
    assert all(t.box is None for t in result.tokens)
    assert "test-vision" in engine.version() and "127.0.0.1" in engine.version()


def test_vision_engine_explains_what_is_missing(settings, monkeypatch):
    settings.OCR_VISION_BASE_URL = ""
    settings.OPENAI_BASE_URL = ""
    assert "OCR_VISION_BASE_URL" in get_engine("vision").availability()
    settings.OCR_VISION_BASE_URL = "http://127.0.0.1:9/v1"
    settings.OCR_VISION_MODEL = "m"
    settings.OCR_VISION_API_KEY_ENV = "REALMATH_LLM_KEY_OCR_NO_SUCH"
    monkeypatch.delenv("REALMATH_LLM_KEY_OCR_NO_SUCH", raising=False)
    with pytest.raises(EngineUnavailable, match="REALMATH_LLM_KEY_OCR_NO_SUCH"):
        get_engine("vision").recognise(Image.new("L", (64, 64), 255))


def test_vision_batch_page_is_ocrd_and_a_server_error_fails_only_that_run(vision_server, make_batch, run_tasks):
    first = synthetic.render_page(["第一页"], width=400)
    with run_tasks():
        batch, _ = make_batch([("s1_3-17_1.png", png_bytes(first))], engine="vision")
    run = OcrRun.objects.get(page__batch=batch)
    assert run.status == "done" and run.raw_text == ANSWER
    assert run.page.transcript.text == ANSWER
    assert "REALMATH_LLM_KEY_OCR_TEST" not in json.dumps(run.tokens) and "vision-test-key" not in run.engine_version

    vision_server.script["mode"] = "error"
    second = synthetic.render_page(["第二页"], width=400)
    with run_tasks():
        batch2, _ = make_batch([("s2_3-17_1.png", png_bytes(second))], engine="vision")
    failed = OcrRun.objects.get(page__batch=batch2)
    assert failed.status == "failed"
    assert "vision endpoint refused the page" in failed.error
    assert OcrRun.objects.get(pk=run.pk).status == "done"


def test_a_vision_answer_over_the_byte_cap_is_not_read(vision_server, settings):
    settings.LLM_MAX_REPLY_BYTES = 100_000
    vision_server.script["mode"] = "huge"
    with pytest.raises(EngineFailed, match="REALMATH_LLM_MAX_REPLY_BYTES"):
        get_engine("vision").recognise(Image.new("L", (64, 64), 255))


def test_vision_engine_failure_is_an_engine_error(vision_server):
    vision_server.script["mode"] = "error"
    with pytest.raises(EngineFailed, match="model crashed"):
        get_engine("vision").recognise(Image.new("L", (64, 64), 255))


@pytest.mark.parametrize("name", ["HOME", "DJANGO_SECRET_KEY"])
def test_vision_engine_reads_only_allowed_key_variables(vision_server, settings, monkeypatch, name):
    monkeypatch.setenv(name, "vision-test-key")  # the value the server accepts: a leak would succeed
    settings.OCR_VISION_API_KEY_ENV = name
    engine = get_engine("vision")
    assert "not an allowed API key variable" in engine.availability()
    with pytest.raises(EngineUnavailable, match="not an allowed API key variable"):
        engine.recognise(Image.new("L", (64, 64), 255))
    assert vision_server.requests == []


def test_vision_engine_calls_only_allowed_hosts(vision_server, settings):
    settings.LLM_ALLOWED_HOSTS = ["llm.example.org"]
    with pytest.raises(EngineUnavailable, match="REALMATH_LLM_ALLOWED_HOSTS"):
        get_engine("vision").recognise(Image.new("L", (64, 64), 255))
    assert vision_server.requests == []
    settings.LLM_ALLOWED_HOSTS = ["127.0.0.1"]
    assert get_engine("vision").availability() is None


def test_a_vision_redirect_is_not_followed(vision_llm_server, settings):
    from tests.llm_server import LlmServer, Reply

    settings.LLM_ALLOWED_HOSTS = ["127.0.0.1"]
    with LlmServer() as elsewhere:
        vision_llm_server.script(None, Reply(status=307, headers={"Location": f"http://localhost:{elsewhere.port}/v1/x"}))
        with pytest.raises(EngineFailed, match=f"307, a redirect to http://localhost:{elsewhere.port}.*not followed"):
            get_engine("vision").recognise(Image.new("L", (64, 64), 255))
        assert elsewhere.request_count == 0  # the page image went nowhere else


def test_a_trickling_vision_endpoint_fails_at_the_deadline(vision_llm_server, settings):
    import time

    from tests.llm_server import Reply

    settings.OCR_ENGINE_TIMEOUT = 1
    vision_llm_server.script(None, Reply("text", trickle=0.3))
    started = time.monotonic()
    with pytest.raises(EngineFailed, match="did not answer in time.*deadline of 1 s"):
        get_engine("vision").recognise(Image.new("L", (64, 64), 255))
    assert time.monotonic() - started < 3


def test_a_vision_answer_that_is_no_chat_completion_is_an_engine_error(vision_llm_server):
    from tests.llm_server import Reply

    vision_llm_server.script(None, Reply(body=b"<html>proxy error</html>", content_type="text/html"),
                             Reply(body=b'{"object": "chat.completion"}'))
    for _ in range(2):
        with pytest.raises(EngineFailed, match="unreadable"):
            get_engine("vision").recognise(Image.new("L", (64, 64), 255))
